"""Planning commands: solve, schedules, frontier and compare."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..errors import InstanceError
from ..limits import MAX_JOBS, MAX_PAYLOAD, MAX_SEED
from ..planning.registry import EXACT_METHODS, PLANNERS, method_info
from ..units import format_bytes, format_time, parse_bytes, parse_rate, parse_time
from .app import app, emit_json, err, handle_errors, out
from .checks import check_count, check_outputs, check_time_limit, parse_option, refuse_unused
from .options import DEFAULT_CONNECT_TIMEOUT, ConnectTimeoutOpt
from .rows import RowsJsonOpt, dumps_rows

if TYPE_CHECKING:
    from ..cayley import Topology
    from ..plan import Plan
    from .render import Cell

# The core (instance, plan, cayley, schedules, realization) is imported by the commands that use it:
# `ocsplan --help` and the other commands do not pay for it (tests/test_cli_startup.py).

__all__ = ["MAX_WORKERS", "circulant", "compare", "frontier", "parse_methods", "schedules", "solve"]

MAX_WORKERS = 1024  # solver threads


@app.command()
@handle_errors
def solve(
    instance: Annotated[Path, typer.Argument(help="instance TOML file")],
    method: Annotated[str, typer.Option(help="planner: " + ", ".join(PLANNERS))] = "heuristic",
    json_out: Annotated[str | None, typer.Option("--json", help="write the plan JSON to PATH, or - for stdout")] = None,
    time_limit: Annotated[float | None, typer.Option(
        help="seconds (exact methods; the heuristic stops at the limit with its best plan so far)")] = None,
    workers: Annotated[int | None, typer.Option(help="solver threads (exact methods)")] = None,
    export: Annotated[
        Path | None, typer.Option(help="write the exact model first: .mps, .lp, .pb.txt")
    ] = None,
    realize_fabric: Annotated[
        str | None, typer.Option("--realize", help="also realize the plan on this fabric (a catalogue name or "
                                                   "a TOML file)")] = None,
    circuits_out: Annotated[
        str | None, typer.Option("--circuits", help="with --realize: write circuits JSON to PATH, or -")] = None,
    placement: Annotated[
        str | None, typer.Option(help="with --realize: contiguous (default), bits or bits:4,3,2,1,0")] = None,
    seed: Annotated[int | None, typer.Option(help="seed of the sampled circulant search (--method stacked)")] = None,
    irregular: Annotated[bool, typer.Option(
        "--irregular/--no-irregular",
        help="also try irregular (covering-code) folds; --no-irregular keeps to the paper's block folds")] = True,
    reserve_ports: Annotated[int, typer.Option(
        help="keep K ports per accelerator out of the budget: spare ports that repair uses")] = 0,
    resilience: Annotated[bool, typer.Option(
        "--resilience", help="price every single circuit fault; the worst goes in the plan JSON and the table")
    ] = False,
) -> None:
    """Plan a deployment and print the fabric, axis by axis."""
    from dataclasses import replace

    from ..instance import load_instance
    from ..plan import dumps_plan
    from ..planning.registry import solve as run_planner
    from ..realization.fabrics import load_fabric
    from .realize import realize_plan, report_realization
    from .render import plan_table

    if method not in PLANNERS:
        raise InstanceError("--method", "", f"unknown method {method!r} (known: {', '.join(PLANNERS)})")
    takes = method_info(method).options
    refuse_unused("--time-limit", time_limit is not None and "time_limit" not in takes,
                  f"with --method {method} (exact methods and the heuristic only)")
    refuse_unused("--workers", workers is not None and "workers" not in takes,
                  f"with --method {method} (exact methods only)")
    refuse_unused("--circuits", circuits_out is not None and realize_fabric is None, "without --realize")
    refuse_unused("--placement", placement is not None and realize_fabric is None, "without --realize")
    check_time_limit(time_limit)
    check_count(workers, "--workers", 1, MAX_WORKERS)
    check_outputs((json_out, "--json"), (circuits_out, "--circuits"), (export, "--export"),
                  inputs=((instance, "INSTANCE"), (realize_fabric, "--realize")))
    inst = load_instance(instance)
    check_count(reserve_ports, "--reserve-ports", 0, inst.budget.ports - 1)
    refuse_unused("--resilience", resilience and method == "stacked",
                  "with --method stacked (the faults analysis prices shared-host plans)")
    if reserve_ports:
        inst = replace(inst, budget=replace(inst.budget, ports=inst.budget.ports - reserve_ports))
    if realize_fabric is not None:
        load_fabric(realize_fabric, "--realize")  # a bad fabric file is refused before the solve
    options: dict[str, Any] = {}
    if time_limit is not None:
        options["time_limit"] = time_limit
    if workers is not None:
        options["workers"] = workers
    if export is not None:
        options["export"] = _export_target(export, method)
    if seed is not None:
        check_count(seed, "--seed", 0, MAX_SEED)
        if "seed" not in takes:
            raise InstanceError("--seed", "", f"only --method stacked samples, not {method!r}")
        options["seed"] = seed
    if not irregular:
        refuse_unused("--no-irregular", "irregular" not in takes,
                      f"with --method {method} (circulant axes have no folds)")
        options["irregular"] = False
    if json_out == "-" and circuits_out == "-":
        raise InstanceError("--circuits", "", "only one of --json and --circuits can write to stdout")
    plan = run_planner(inst, method, **options)
    if reserve_ports:
        plan = replace(plan, notes=(*plan.notes, f"{reserve_ports} port(s) per accelerator reserved for "
                                                 f"repairs: planned on {plan.ports} of {plan.ports + reserve_ports}"))
    if resilience:
        from ..deploy.resilience import resilience as price_faults

        plan = replace(plan, resilience=price_faults(plan))
    realized = (None if realize_fabric is None
                else realize_plan(plan, realize_fabric, placement or "contiguous", "--realize"))
    (err if json_out == "-" else out).print(plan_table(plan))
    for note in plan.notes:
        (err if json_out == "-" else out).print(f"note: {note}", markup=False)
    emit_json(dumps_plan(plan), json_out)
    if realized is not None:
        report_realization(realized, circuits_out, quiet=json_out == "-")


def _topology(bits: int, folds: str | None, profile: str | None) -> Topology:
    from ..cayley import Topology, str_to_mask

    if profile:
        try:
            sizes = tuple(int(x) for x in profile.split(",") if x.strip())
        except ValueError:
            raise InstanceError("--profile", "", f"expected sizes such as 3,3, got {profile!r}") from None
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
    json_out: RowsJsonOpt = None,
) -> None:
    """List every schedule's validity, h, v, u and T (p = 1) on one axis topology."""
    from rich.table import Table

    from ..cost import phase_time
    from ..schedules import COLLECTIVES, SCHEDULES, ideal_cost, program, verify
    from .render import add_rows

    check_outputs((json_out, "--json"))
    check_count(bits, "--bits", 1, 12)
    if collective is not None and collective not in COLLECTIVES:
        raise InstanceError("--collective", "", f"unknown collective {collective!r} (use {', '.join(COLLECTIVES)})")
    refuse_unused("--folds", bool(folds) and bool(profile), "with --profile (give one of them)")
    sigma = parse_option(parse_bytes, payload, "--payload")
    if sigma > MAX_PAYLOAD:
        raise InstanceError("--payload", "", f"must be at most {MAX_PAYLOAD} bytes (1 PiB)")
    lam = parse_option(parse_time, latency, "--latency")
    rate = parse_option(parse_rate, link, "--link")
    topo = _topology(bits, folds, profile)
    if not topo.connected:
        raise InstanceError("--folds", "", f"{topo.name} is not connected")
    title = f"{topo.name}: degree {topo.degree}, diameter {topo.diameter}, payload {format_bytes(sigma)}"
    table = Table(title=title, title_justify="left")
    for col in ("collective", "schedule", "valid", "h", "v", "v/sigma", "u", "T (p=1)", "verified"):
        table.add_column(col, justify="left" if col in ("collective", "schedule", "verified") else "right")
    rows: list[dict[str, Any]] = []
    cells: list[list[Cell]] = []
    styles: list[str | None] = []
    for sched in sorted(SCHEDULES.values(), key=lambda x: COLLECTIVES.index(x.collective)):
        if collective and sched.collective != collective:
            continue
        if not sched.valid(topo):
            cells.append([sched.collective, sched.name, "no", *[""] * 6])
            styles.append("dim")
            rows.append({"collective": sched.collective, "schedule": sched.name, "valid": False})
            continue
        form = sched.cost(topo)
        v = form.volume(sigma)
        verdict = ""
        if check and bits <= 8:
            built = program(sched.name, topo, sigma)
            verify(built, topo)
            ideal = ideal_cost(built)
            same = (ideal.h, ideal.v, ideal.u) == (form.h, form.v_factor * sigma, form.u)
            verdict = "ok" if same else f"MISMATCH h={ideal.h} v={float(ideal.v):g}"
        t = phase_time(form.h, v, 1, lam, rate)
        cells.append([sched.collective, sched.name, "yes", str(form.h), float(v), str(form.v_factor), str(form.u),
                      format_time(t), verdict])
        styles.append(None)
        rows.append({"collective": sched.collective, "schedule": sched.name, "valid": True, "h": form.h,
                     "v_bytes": float(v), "v_over_sigma": str(form.v_factor), "u": form.u, "T_s": t,
                     "verified": verdict or None})
    add_rows(table, cells, [4], styles)
    console = err if json_out == "-" else out
    console.print(table)
    search = topo.tiling_search
    notes = []
    if not search.proven:
        notes.append(f"no tiling with fewer than {search.layer_count} layers found within the bound "
                     f"(TILING_BUDGET); the layered schedules use {search.layer_count} layers")
        console.print(f"note: {notes[-1]}", markup=False)
    emit_json(dumps_rows("schedules", title, rows, notes), json_out)


@app.command()
@handle_errors
def frontier(
    bits: Annotated[int, typer.Option(help="axis bits a (size 2**a)")],
    max_degree: Annotated[int | None, typer.Option(help="last degree to print")] = None,
    json_out: RowsJsonOpt = None,
) -> None:
    """Print the diameter frontier and the schedulable frontier of an axis (m <= 9)."""
    from rich.table import Table

    from ..cayley import fold_name, mask_to_str
    from ..planning.covering import COVERING_MAX_BITS
    from ..planning.frontier import frontier_rows

    check_outputs((json_out, "--json"))
    if not 1 <= bits <= COVERING_MAX_BITS:
        raise InstanceError("--bits", "", f"must be between 1 and {COVERING_MAX_BITS}, got {bits}")
    check_count(max_degree, "--max-degree", 1, (1 << bits) - 1)
    title = f"frontiers of an axis of {1 << bits} ({bits} bits); least known diameter per degree"
    table = Table(title=title, title_justify="left")
    for col in ("degree", "diameter", "proof", "source", "example folds", "coset layers", "block fold"):
        table.add_column(col, justify="right" if col in ("degree", "diameter", "coset layers") else "left")
    rows: list[dict[str, Any]] = []
    for row in frontier_rows(bits, max_degree):
        folds = [mask_to_str(g, bits) for g in row.generators if g & (g - 1)]
        shown = ",".join(folds[:4]) + (f",... (+{len(folds) - 4})" if len(folds) > 4 else "")
        degrees = str(row.degree) if row.last_degree == row.degree else f"{row.degree}-{row.last_degree}"
        proof = row.proof if row.proof != "open" else f"open (>= {row.lower_bound})"
        table.add_row(degrees, str(row.diameter), proof, row.source, shown, str(row.coset_layers),
                      fold_name(row.block_shape))
        rows.append({"degree": row.degree, "last_degree": row.last_degree, "diameter": row.diameter,
                     "proof": row.proof, "lower_bound": row.lower_bound, "source": row.source,
                     "generators": [mask_to_str(g, bits) for g in row.generators],
                     "coset_layers": row.coset_layers, "block_fold": fold_name(row.block_shape)})
    (err if json_out == "-" else out).print(table)
    emit_json(dumps_rows("frontier", title, rows), json_out)


@app.command()
@handle_errors
def circulant(
    size: Annotated[int, typer.Option(help="axis size N (ranks of Z_N)")],
    degree: Annotated[int, typer.Option(help="ports per rank |S| (odd needs N even)")],
    payload: Annotated[str, typer.Option(help="buffer size sigma, e.g. 8kB")] = "8kB",
    latency: Annotated[str, typer.Option(help="lambda per phase")] = "0.52us",
    link: Annotated[str, typer.Option(help="R per circuit")] = "400Gb/s",
    seed: Annotated[int, typer.Option(help="seed of the sampled search (large axes)")] = 0,
    json_out: RowsJsonOpt = None,
) -> None:
    """The least-diameter circulant of a degree on Z_N and its one-shot schedules (stacked axes)."""
    check_outputs((json_out, "--json"))
    from rich.table import Table

    from ..planning.circulant import MAX_SIZE, degree_problem, least_diameter
    from ..schedules import ideal_cost, verify
    from ..schedules.circulant import CIRCULANT_CATALOGUE, circulant_cost, circulant_program
    from .render import add_rows

    check_count(size, "--size", 2, MAX_SIZE)
    check_count(seed, "--seed", 0, MAX_SEED)
    problem = degree_problem(size, degree)
    if problem is not None:
        raise InstanceError("--degree", "", problem)
    sigma = parse_option(parse_bytes, payload, "--payload")
    lam = parse_option(parse_time, latency, "--latency")
    rate = parse_option(parse_rate, link, "--link")
    choice = least_diameter(size, degree, seed=seed)
    proof = "minimal" if choice.exact else f"upper bound, Moore-type bound {choice.lower_bound}"
    title = (f"{choice.graph.name}: degree {degree}, diameter {choice.diameter} ({choice.method} search of "
             f"{choice.candidates} sets; {proof}), payload {format_bytes(sigma)}")
    table = Table(title=title, title_justify="left")
    rows: list[dict[str, Any]] = []
    for col in ("collective", "schedule", "h", "v", "v/sigma", "u", "T (p=1)", "verified"):
        table.add_column(col, justify="left" if col in ("collective", "schedule", "verified") else "right")
    cells: list[list[Cell]] = []
    for collective, names in CIRCULANT_CATALOGUE.items():
        for name in names:
            form = circulant_cost(name, choice.graph, collective)
            v = form.volume(sigma)
            verdict = ""
            if size <= 128:
                program = circulant_program(name, choice.graph, sigma, collective)
                verify(program, choice.graph)
                ideal = ideal_cost(program)
                same = (ideal.h, ideal.v, ideal.u) == (form.h, form.v_factor * sigma, form.u)
                verdict = "ok" if same else f"MISMATCH h={ideal.h} v={float(ideal.v):g}"
            t = form.h * lam + v / rate
            cells.append([collective, name, str(form.h), float(v), str(form.v_factor), str(form.u), format_time(t),
                          verdict])
            rows.append({"collective": collective, "schedule": name, "h": form.h, "v_bytes": float(v),
                         "v_over_sigma": str(form.v_factor), "u": form.u, "T_s": t, "verified": verdict or None})
    add_rows(table, cells, [3])
    console = err if json_out == "-" else out
    console.print(table)
    offsets = f"offsets: {', '.join(map(str, choice.graph.offsets))}"
    console.print(offsets, markup=False)
    emit_json(dumps_rows("circulant", title, rows, [offsets]), json_out)


def _export_target(path: Path, method: str) -> Path:
    from ..planning.exact.export import EXPORT_FORMATS
    if "export" not in method_info(method).options:
        raise InstanceError("--export", "", f"needs an exact method (cpsat, milp), not {method!r}")
    if not str(path).lower().endswith(EXPORT_FORMATS):
        known = ", ".join(EXPORT_FORMATS)
        raise InstanceError("--export", "", f"{path}: unknown model format (use {known})")
    return path


def parse_methods(text: str) -> list[str]:
    methods = [m.strip() for m in text.split(",") if m.strip()]
    unknown = [m for m in methods if m not in PLANNERS]
    repeated = sorted({m for m in methods if methods.count(m) > 1})
    if repeated:
        raise InstanceError("--methods", "", f"method {repeated[0]!r} given twice")
    if not methods or unknown:
        what, known = ", ".join(unknown) or repr(text), ", ".join(PLANNERS)
        raise InstanceError("--methods", "", f"unknown method {what} (known: {known})")
    return list(dict.fromkeys(methods))


def resilience_rows(instance: str, methods: list[str], plans: dict[str, Plan]) -> list[dict[str, Any]]:
    """Each method's plan's worst single circuit fault (:func:`ocsplan.deploy.resilience.resilience`);
    a plan it cannot price (stacked, ring, too many circuits) gets the reason instead."""
    from ..deploy.resilience import resilience

    rows: list[dict[str, Any]] = []
    for method in methods:
        plan = plans.get(method)
        row: dict[str, Any] = {"instance": instance, "method": method, "faults": None, "stopped": None,
                               "worst_s": None, "worst_x": None, "worst": "", "error": ""}
        if plan is None:
            row["error"] = "no plan"
        else:
            try:
                r = resilience(plan)
            except InstanceError as exc:
                row["error"] = str(exc).removeprefix("--resilience: ")
            else:
                row.update(faults=r.faults, stopped=r.stopped, worst_s=r.worst_s, worst=r.worst,
                           worst_x=None if r.worst_s is None or not plan.objective_s
                           else r.worst_s / plan.objective_s)
        rows.append(row)
    return rows


@app.command()
@handle_errors
def compare(
    instances: Annotated[list[Path], typer.Argument(help="instance TOML files")],
    methods: Annotated[str, typer.Option(help="comma-separated planners")] = "heuristic,cpsat,milp",
    time_limit: Annotated[float | None, typer.Option(help="seconds per exact solve")] = None,
    workers: Annotated[int | None, typer.Option(help="solver threads (exact methods)")] = None,
    csv_out: Annotated[Path | None, typer.Option("--csv", help="write the rows as CSV")] = None,
    demands_out: Annotated[
        Path | None, typer.Option("--demands", help="write one CSV row per demand: each method's time, better")
    ] = None,
    jobs: Annotated[int, typer.Option(help="solves run in parallel (local processes)")] = 1,
    scheduler: Annotated[
        str | None, typer.Option(help="run on a Dask cluster: scheduler ADDRESS, or local (needs ocsplan[cluster])")
    ] = None,
    json_out: Annotated[
        str | None, typer.Option("--json", help="write the rows as JSON (ocsplan.compare/1) to PATH, or - for stdout")
    ] = None,
    quiet: Annotated[bool, typer.Option(help="no progress bar (there is none unless stderr is a terminal)")] = False,
    connect_timeout: ConnectTimeoutOpt = DEFAULT_CONNECT_TIMEOUT,
    resilience: Annotated[bool, typer.Option(
        "--resilience", help="also price each plan's worst single circuit fault (as solve --resilience) "
                             "and compare the plans on it")] = False,
) -> None:
    """Solve instances with several methods, one table each; flag plans worse than an optimum."""
    from ..executor import Executor
    from ..files import write_atomic
    from ..instance import load_instance
    from ..studies.results import (
        demand_rows,
        dumps_compare_json,
        dumps_demand_rows,
        instance_digest,
        table_rows,
        write_results,
    )
    from ..studies.runner import run_method, solve_all
    from .console import Bar
    from .render import compare_table

    for option, given in (("--demands", demands_out is not None), ("--resilience", resilience)):
        if given and (jobs != 1 or scheduler is not None):
            raise InstanceError(option, "", "compares the plans in this process: use it with --jobs 1, no --scheduler")

    check_count(jobs, "--jobs", 1, MAX_JOBS)
    executor = Executor(jobs=jobs, scheduler=scheduler, connect_timeout=connect_timeout).check()
    chosen = parse_methods(methods)
    exact = any(m in EXACT_METHODS for m in chosen)
    refuse_unused("--time-limit", time_limit is not None and not exact, "without an exact method")
    refuse_unused("--workers", workers is not None and not exact, "without an exact method")
    check_time_limit(time_limit)
    check_count(workers, "--workers", 1, MAX_WORKERS)
    check_outputs((csv_out, "--csv"), (demands_out, "--demands"), (json_out, "--json"),
                  inputs=[(p, "INSTANCES") for p in instances])
    console = err if json_out == "-" else out
    loaded = [(str(p), load_instance(p)) for p in instances]
    results: list[Any] = []
    per_demand: list[dict[str, Any]] = []
    worst: list[dict[str, Any]] = []
    flagged = 0
    bar = Bar(err.console, "compare", len(loaded) * len(chosen), quiet=quiet)
    with bar:
        if demands_out is None and not resilience:
            results = solve_all(loaded, chosen, executor, time_limit, workers,
                                on_result=lambda r: bar.advance(description=f"{r.instance} {r.method}"))
        else:
            for path, inst in loaded:
                plans: dict[str, Plan] = {}
                for m in chosen:

                    def keep(plan: Plan, method: str = m, into: dict[str, Plan] = plans) -> None:
                        into[method] = plan

                    results.append(run_method(inst, path, m, time_limit, workers, on_plan=keep))
                    bar.advance(description=f"{inst.name} {m}")
                if demands_out is not None:
                    per_demand.extend(demand_rows(inst, plans))
                if resilience:
                    worst.extend(resilience_rows(inst.name, chosen, plans))
    for index, (_, inst) in enumerate(loaded):
        mine = results[index * len(chosen):(index + 1) * len(chosen)]
        rows = table_rows(mine)
        flagged += sum(1 for row in rows if row["flag"])
        faults = {r["method"]: r for r in worst if r["instance"] == inst.name} if resilience else None
        console.print(compare_table(f"{inst.name} ({instance_digest(inst)})", rows, faults))
    if csv_out is not None:
        write_results(results, csv_out)
    if demands_out is not None:
        write_atomic(demands_out, dumps_demand_rows(per_demand))
        wins = [row["better"] for row in per_demand]
        counts = ", ".join(f"{m} {wins.count(m)}" for m in chosen) + f", tie {wins.count('tie')}"
        console.print(f"per demand, better: {counts} (of {len(wins)}) -> {demands_out}", markup=False)
    emit_json(dumps_compare_json(results, per_demand if demands_out is not None else None,
                                 worst if resilience else None), json_out)
    if flagged:
        err.print(f"{flagged} plan(s) worse than a proven optimum", markup=False)
