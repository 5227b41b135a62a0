"""Planning commands: solve, schedules, frontier and compare."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from ..cayley import Topology, fold_name, mask_to_str, str_to_mask
from ..errors import InstanceError
from ..instance import load_instance
from ..plan import dumps_plan
from ..planning.frontier import EXHAUSTIVE_BITS, diameter_frontier, schedulable_frontier
from ..planning.registry import PLANNERS
from ..planning.registry import solve as run_planner
from ..schedules import COLLECTIVES, SCHEDULES, ideal_cost, verify
from ..studies.results import EXACT_METHODS
from ..units import format_bytes, format_time, parse_bytes, parse_rate, parse_time
from .app import app, emit_json, err, handle_errors, out, parse_option
from .render import compare_table, plan_table

__all__ = ["compare", "frontier", "parse_methods", "schedules", "solve"]


@app.command()
@handle_errors
def solve(
    instance: Annotated[Path, typer.Argument(help="instance TOML file")],
    method: Annotated[str, typer.Option(help="planner: " + ", ".join(PLANNERS))] = "heuristic",
    json_out: Annotated[str | None, typer.Option("--json", help="write the plan JSON to PATH, or - for stdout")] = None,
    time_limit: Annotated[float | None, typer.Option(help="seconds (exact methods)")] = None,
    workers: Annotated[int | None, typer.Option(help="solver threads (exact methods)")] = None,
    export: Annotated[
        Path | None, typer.Option(help="write the exact model first: .mps, .lp, .pb.txt")
    ] = None,
    realize_fabric: Annotated[
        Path | None, typer.Option("--realize", help="also realize the plan on this fabric file")] = None,
    circuits_out: Annotated[
        str | None, typer.Option("--circuits", help="with --realize: write circuits JSON to PATH, or -")] = None,
    placement: Annotated[str, typer.Option(help="with --realize: contiguous, bits or bits:4,3,2,1,0")] = "contiguous",
) -> None:
    """Plan a deployment and print the fabric, axis by axis."""
    from .realize import realize_plan, report_realization

    inst = load_instance(instance)
    options: dict[str, Any] = {}
    if time_limit is not None:
        options["time_limit"] = time_limit
    if workers is not None:
        options["workers"] = workers
    if export is not None:
        options["export"] = _export_target(export, method)
    if json_out == "-" and circuits_out == "-":
        raise InstanceError("--circuits", "", "only one of --json and --circuits can write to stdout")
    plan = run_planner(inst, method, **options)
    realized = realize_plan(plan, realize_fabric, placement) if realize_fabric is not None else None
    (err if json_out == "-" else out).print(plan_table(plan))
    for note in plan.notes:
        (err if json_out == "-" else out).print(f"note: {note}", markup=False)
    emit_json(dumps_plan(plan), json_out)
    if realized is not None:
        report_realization(realized, circuits_out, quiet=json_out == "-")


def _topology(bits: int, folds: str | None, profile: str | None) -> Topology:
    if profile:
        sizes = tuple(int(x) for x in profile.split(",") if x.strip())
        if sum(sizes) != bits or any(k < 1 for k in sizes):
            raise InstanceError("--profile", "", f"sizes {profile!r} do not add up to {bits} bits")
        return Topology.from_profile(sizes)
    extra = []
    for text in (folds or "").split(","):
        text = text.strip()
        if not text:
            continue
        try:
            mask = str_to_mask(text)
        except ValueError as exc:
            raise InstanceError("--folds", "", str(exc)) from None
        if len(text) != bits or mask == 0:
            raise InstanceError("--folds", "", f"{text!r} is not a non-zero mask of {bits} bits")
        extra.append(mask)
    return Topology.with_folds(bits, extra)


@app.command()
@handle_errors
def schedules(
    bits: Annotated[int, typer.Option(help="axis bits a (size 2**a)")],
    payload: Annotated[str, typer.Option(help="buffer size sigma, e.g. 4KiB")] = "4KiB",
    folds: Annotated[str | None, typer.Option(help="extra generators, e.g. 1100,0011")] = None,
    profile: Annotated[str | None, typer.Option(help="block fold sub-block sizes, e.g. 3,3")] = None,
    collective: Annotated[str | None, typer.Option(help="only this collective")] = None,
    latency: Annotated[str, typer.Option(help="lambda per phase")] = "0.52us",
    link: Annotated[str, typer.Option(help="R per circuit")] = "400Gb/s",
    check: Annotated[bool, typer.Option(help="execute and verify each schedule (a <= 8)")] = True,
) -> None:
    """List every schedule's validity, h, v, u and T (p = 1) on one axis topology."""
    if not 0 <= bits <= 12:
        raise InstanceError("--bits", "", f"must be between 0 and 12, got {bits}")
    sigma = parse_option(parse_bytes, payload, "--payload")
    lam = parse_option(parse_time, latency, "--latency")
    rate = parse_option(parse_rate, link, "--link")
    topo = _topology(bits, folds, profile)
    if not topo.connected:
        raise InstanceError("--folds", "", f"{topo.name} is not connected")
    table = Table(
        title=f"{topo.name}: degree {topo.degree}, diameter {topo.diameter}, payload {format_bytes(sigma)}",
        title_justify="left",
    )
    for col in ("collective", "schedule", "valid", "h", "v", "v/sigma", "u", "T (p=1)", "verified"):
        table.add_column(col, justify="left" if col in ("collective", "schedule", "verified") else "right")
    for sched in sorted(SCHEDULES.values(), key=lambda x: COLLECTIVES.index(x.collective)):
        if collective and sched.collective != collective:
            continue
        if not sched.valid(topo):
            table.add_row(sched.collective, sched.name, "no", *[""] * 6, style="dim")
            continue
        form = sched.cost(topo)
        v = form.volume(sigma)
        verdict = ""
        if check and bits <= 8:
            program = sched.build(topo, sigma)
            verify(program, topo)
            ideal = ideal_cost(program)
            same = (ideal.h, ideal.v, ideal.u) == (form.h, form.v_factor * sigma, form.u)
            verdict = "ok" if same else f"MISMATCH h={ideal.h} v={float(ideal.v):g}"
        table.add_row(
            sched.collective, sched.name, "yes", str(form.h), format_bytes(v),
            str(form.v_factor), str(form.u), format_time(form.h * lam + v / rate), verdict,
        )
    out.print(table)


@app.command()
@handle_errors
def frontier(
    bits: Annotated[int, typer.Option(help="axis bits a (size 2**a)")],
    max_degree: Annotated[int | None, typer.Option(help="last degree to print")] = None,
) -> None:
    """Print the diameter frontier and the schedulable frontier of an axis."""
    if not 1 <= bits <= 8:
        raise InstanceError("--bits", "", f"must be between 1 and 8, got {bits}")
    top = (1 << bits) - 1 if max_degree is None else min(max_degree, (1 << bits) - 1)
    sched = schedulable_frontier(bits)
    points = [p for p in diameter_frontier(bits) if p.degree <= top]
    method = "exhaustive" if bits <= EXHAUSTIVE_BITS else "local search (upper bound) / sphere bound"
    table = Table(title=f"frontiers of an axis of {1 << bits} ({bits} bits); diameter by {method}",
                  title_justify="left")
    for col in ("degree", "diameter", "proof", "example folds", "coset layers", "block fold"):
        table.add_column(col, justify="right" if col in ("degree", "diameter", "coset layers") else "left")
    for p in points:
        layers = min((count for count, deg, _ in sched if deg <= p.degree), default=None)
        shape = next((s for count, deg, s in sched if count == layers), ())
        folds = [mask_to_str(g, bits) for g in p.generators if g & (g - 1)]
        shown = ",".join(folds[:4]) + (f",... (+{len(folds) - 4})" if len(folds) > 4 else "")
        proof = "exact" if p.exact else f">= {p.lower_bound}"
        table.add_row(str(p.degree), str(p.diameter), proof, shown, str(layers), fold_name(shape))
    out.print(table)


def _export_target(path: Path, method: str) -> Path:
    from ..planning.exact.export import EXPORT_FORMATS

    if method not in EXACT_METHODS:
        raise InstanceError("--export", "", f"needs an exact method (cpsat, milp), not {method!r}")
    if not str(path).lower().endswith(EXPORT_FORMATS):
        known = ", ".join(EXPORT_FORMATS)
        raise InstanceError("--export", "", f"{path}: unknown model format (use {known})")
    return path


def parse_methods(text: str) -> list[str]:
    methods = [m.strip() for m in text.split(",") if m.strip()]
    unknown = [m for m in methods if m not in PLANNERS]
    if not methods or unknown:
        what, known = ", ".join(unknown) or repr(text), ", ".join(PLANNERS)
        raise InstanceError("--methods", "", f"unknown method {what} (known: {known})")
    return list(dict.fromkeys(methods))


@app.command()
@handle_errors
def compare(
    instances: Annotated[list[Path], typer.Argument(help="instance TOML files")],
    methods: Annotated[str, typer.Option(help="comma-separated planners")] = "heuristic,cpsat,milp",
    time_limit: Annotated[float | None, typer.Option(help="seconds per exact solve")] = None,
    workers: Annotated[int | None, typer.Option(help="solver threads (exact methods)")] = None,
    csv_out: Annotated[Path | None, typer.Option("--csv", help="write the rows as CSV")] = None,
) -> None:
    """Solve instances with several methods, one table each; flag plans worse than an optimum."""
    from ..studies.results import instance_digest, table_rows, write_results
    from ..studies.runner import run_method

    chosen = parse_methods(methods)
    loaded = [(str(p), load_instance(p)) for p in instances]
    results = []
    flagged = 0
    for path, inst in loaded:
        mine = [run_method(inst, path, m, time_limit, workers) for m in chosen]
        results.extend(mine)
        rows = table_rows(mine)
        flagged += sum(1 for row in rows if row["flag"])
        out.print(compare_table(f"{inst.name} ({instance_digest(inst)})", rows))
    if csv_out is not None:
        write_results(results, csv_out)
    if flagged:
        err.print(f"{flagged} plan(s) worse than a proven optimum", markup=False)
