"""Command line: thin commands over the library, rich tables on the terminal.

Exit status: 0 success, 1 other ocsplan errors, 2 bad input (file and field
named on one line), 3 infeasible.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.table import Table

from .cayley import Topology, fold_name, mask_to_str, str_to_mask
from .circuits import Circuits, dumps_circuits, load_circuits
from .errors import InfeasibleError, InstanceError, OcsplanError, PlanError
from .fabrics import load_fabric
from .files import write_atomic
from .instance import load_instance
from .plan import Plan, check_plan, dumps_plan, load_plan
from .planners import PLANNERS
from .planners import solve as run_planner
from .realize import realize as realize_circuits
from .schedules import COLLECTIVES, SCHEDULES, ideal_cost, verify
from .study import EXACT_METHODS
from .units import format_bytes, format_time, parse_bytes, parse_rate, parse_time
from .validate import validate as validate_circuits

__all__ = ["app", "main"]

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Plan workload-static OCS scale-up fabrics for LLM inference decode.",
)
# Wide enough for the plan table when piped; a terminal keeps its own width.
out = Console(highlight=False, width=None if sys.stdout.isatty() else 200)
err = Console(stderr=True, highlight=False, width=None if sys.stderr.isatty() else 200)

F = TypeVar("F", bound=Callable[..., Any])


def _fail(message: str, code: int) -> typer.Exit:
    err.print(message, markup=False, soft_wrap=True)
    return typer.Exit(code)


def handle_errors(func: F) -> F:
    """Map ocsplan errors to one line on stderr and the documented exit status."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (InstanceError, PlanError) as exc:
            raise _fail(str(exc), 2) from None
        except InfeasibleError as exc:
            raise _fail(f"infeasible: {exc}", 3) from None
        except OcsplanError as exc:
            raise _fail(f"error: {exc}", 1) from None

    return wrapper  # type: ignore[return-value]


def _value(parse: Callable[[str], Any], text: str, option: str) -> Any:
    try:
        return parse(text)
    except ValueError as exc:
        raise InstanceError(option, "", str(exc)) from None


def emit_json(text: str, target: str | None) -> None:
    """Write JSON to a path (atomically) or to stdout for ``-``."""
    if target is None:
        return
    if target == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        write_atomic(target, text)


def plan_table(plan: Plan) -> Table:
    status = "" if plan.status == plan.method else f" ({plan.status})"
    table = Table(title=f"{plan.instance}: {plan.method}{status}", title_justify="left")
    for col in ("mesh", "axis", "bits", "topology", "deg", "collective", "payload", "w",
                "schedule", "h", "p", "T"):
        table.add_column(col, justify="right" if col in ("axis", "deg", "w", "h", "p", "T") else "left")
    for mesh in plan.meshes:
        for i, axis in enumerate(mesh.axes):
            bits = ",".join(map(str, axis.bits))
            if not axis.demands:
                table.add_row(mesh.name, str(i), bits, "-", "-", "none", "", "", "", "", "", "",
                              style="dim")
            for d in axis.demands:
                table.add_row(
                    mesh.name, str(i), bits, axis.topology, str(axis.degree), d.collective,
                    format_bytes(d.payload_bytes), f"{d.weight:g}", d.schedule, str(d.phases),
                    str(d.multiplicity), format_time(d.time_s),
                )
    folds = sum(1 for g in plan.generators if g.kind == "fold")
    cubes = sum(1 for g in plan.generators if g.kind == "cube")
    rings = sum(1 for g in plan.generators if g.kind == "ring")
    table.caption = (
        f"objective sum w*T = {format_time(plan.objective_s)}; ports {plan.ports_used} of "
        f"{plan.ports}; {cubes} cube + {folds} fold generators"
        + (f" + {rings} ring" if rings else "")
        + (f"; bound {format_time(plan.bound_s)}" if plan.bound_s is not None else "")
        + (f" (gap {plan.gap:.3%})" if plan.gap is not None else "")
        + f"; solved in {plan.solve_seconds:.3g} s"
    )
    table.caption_justify = "left"
    return table


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
    realized = _realize_plan(plan, realize_fabric, placement) if realize_fabric is not None else None
    (err if json_out == "-" else out).print(plan_table(plan))
    for note in plan.notes:
        (err if json_out == "-" else out).print(f"note: {note}", markup=False)
    emit_json(dumps_plan(plan), json_out)
    if realized is not None:
        _report_realization(realized, circuits_out, quiet=json_out == "-")


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
    sigma = _value(parse_bytes, payload, "--payload")
    lam = _value(parse_time, latency, "--latency")
    rate = _value(parse_rate, link, "--link")
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
    search = topo.tiling_search
    if not search.proven:
        out.print(f"note: no tiling with fewer than {search.layer_count} layers found within the bound "
                  f"(TILING_BUDGET); the layered schedules use {search.layer_count} layers", markup=False)


@app.command()
@handle_errors
def frontier(
    bits: Annotated[int, typer.Option(help="axis bits a (size 2**a)")],
    max_degree: Annotated[int | None, typer.Option(help="last degree to print")] = None,
) -> None:
    """Print the diameter frontier and the schedulable frontier of an axis (m <= 9, issue 10)."""
    from .planning.covering import COVERING_MAX_BITS, frontier_rows

    if not 1 <= bits <= COVERING_MAX_BITS:
        raise InstanceError("--bits", "", f"must be between 1 and {COVERING_MAX_BITS}, got {bits}")
    if max_degree is not None and max_degree < 1:
        raise InstanceError("--max-degree", "", f"must be at least 1, got {max_degree}")
    table = Table(title=f"frontiers of an axis of {1 << bits} ({bits} bits); least known diameter per degree",
                  title_justify="left")
    for col in ("degree", "diameter", "proof", "source", "example folds", "coset layers", "block fold"):
        table.add_column(col, justify="right" if col in ("degree", "diameter", "coset layers") else "left")
    for row in frontier_rows(bits, max_degree):
        folds = [mask_to_str(g, bits) for g in row.generators if g & (g - 1)]
        shown = ",".join(folds[:4]) + (f",... (+{len(folds) - 4})" if len(folds) > 4 else "")
        degrees = str(row.degree) if row.last_degree == row.degree else f"{row.degree}-{row.last_degree}"
        proof = row.proof if row.proof != "open" else f"open (>= {row.lower_bound})"
        table.add_row(degrees, str(row.diameter), proof, row.source, shown, str(row.coset_layers),
                      fold_name(row.block_shape))
    out.print(table)


# -- exact planning, comparisons, instance families and studies (issue 3) ------------------


def _export_target(path: Path, method: str) -> Path:
    from .exact.export import EXPORT_FORMATS

    if method not in EXACT_METHODS:
        raise InstanceError("--export", "", f"needs an exact method (cpsat, milp), not {method!r}")
    if not str(path).lower().endswith(EXPORT_FORMATS):
        known = ", ".join(EXPORT_FORMATS)
        raise InstanceError("--export", "", f"{path}: unknown model format (use {known})")
    return path


def _methods(text: str) -> list[str]:
    methods = [m.strip() for m in text.split(",") if m.strip()]
    unknown = [m for m in methods if m not in PLANNERS]
    if not methods or unknown:
        what, known = ", ".join(unknown) or repr(text), ", ".join(PLANNERS)
        raise InstanceError("--methods", "", f"unknown method {what} (known: {known})")
    return list(dict.fromkeys(methods))


def _seconds(value: float | None) -> str:
    return "" if value is None else format_time(value)


def _percent(value: float | None) -> str:
    return "" if value is None else f"{value:.3%}"


def _compare_table(name: str, rows: list[dict[str, Any]]) -> Table:
    table = Table(title=name, title_justify="left")
    for col in ("method", "status", "objective", "bound", "gap", "ports", "time", "flag"):
        table.add_column(col, justify="left" if col in ("method", "status", "flag") else "right")
    for row in rows:
        ports = "" if row["ports_used"] is None else f"{row['ports_used']}/{row['L']}"
        table.add_row(
            row["method"], row["status"], _seconds(row["objective_s"]), _seconds(row["bound_s"]),
            _percent(row["gap"]), ports, f"{row['seconds']:.3g} s", row["flag"] or row["error"],
            style="bold red" if row["flag"] else None,
        )
    table.caption = "gap: to the proven optimum of this instance (when a method proved one)"
    table.caption_justify = "left"
    return table


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
    from .study import instance_digest, run_method, table_rows, write_results

    chosen = _methods(methods)
    loaded = [(str(p), load_instance(p)) for p in instances]
    results = []
    flagged = 0
    for path, inst in loaded:
        mine = [run_method(inst, path, m, time_limit, workers) for m in chosen]
        results.extend(mine)
        rows = table_rows(mine)
        flagged += sum(1 for row in rows if row["flag"])
        out.print(_compare_table(f"{inst.name} ({instance_digest(inst)})", rows))
    if csv_out is not None:
        write_results(results, csv_out)
    if flagged:
        err.print(f"{flagged} plan(s) worse than a proven optimum", markup=False)


@app.command()
@handle_errors
def generate(
    family: Annotated[str, typer.Option(help="random, helix, latency or bandwidth")],
    out_dir: Annotated[Path, typer.Option("--out", help="directory for the instance files")],
    count: Annotated[int, typer.Option(help="how many instances")] = 10,
    seed: Annotated[int, typer.Option(help="random seed (same seed, same files)")] = 0,
    min_bits: Annotated[int, typer.Option(help="smallest n (world 2**n)")] = 4,
    max_bits: Annotated[int, typer.Option(help="largest n")] = 9,
) -> None:
    """Write generated instances of a family (valid instance files, deterministic)."""
    from .families import FAMILIES, write_family
    from .families import generate as make

    if family not in FAMILIES:
        known = ", ".join(FAMILIES)
        raise InstanceError("--family", "", f"unknown family {family!r} (known: {known})")
    if count < 0:
        raise InstanceError("--count", "", f"must be >= 0, got {count}")
    if not 2 <= min_bits <= max_bits <= 16:
        raise InstanceError(
            "--min-bits", "", f"need 2 <= min bits <= max bits <= 16, got {min_bits}..{max_bits}"
        )
    paths = write_family(make(family, count, seed, min_bits, max_bits), out_dir)
    out.print(f"wrote {len(paths)} {family} instances to {out_dir}", markup=False)


@app.command()
@handle_errors
def study(
    paths: Annotated[list[Path], typer.Argument(help="instance files or directories")],
    out_csv: Annotated[Path, typer.Option("--out", help="CSV of results (also the cache)")],
    methods: Annotated[str, typer.Option(help="comma-separated planners")] = "heuristic,cpsat",
    time_limit: Annotated[float | None, typer.Option(help="seconds per exact solve")] = 60.0,
    jobs: Annotated[int, typer.Option(help="instances solved in parallel")] = 1,
    workers: Annotated[int | None, typer.Option(help="solver threads per job")] = None,
    plot: Annotated[
        Path | None, typer.Option(help="write a gap-vs-size figure (PNG, PDF, SVG)")
    ] = None,
    fresh: Annotated[bool, typer.Option(help="ignore cached rows in the CSV")] = False,
) -> None:
    """Batch study: every method on every instance, a CSV row each, a summary, a figure."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from .study import collect_paths, default_workers, plot_gaps, run_study, summarize

    chosen = _methods(methods)
    files = collect_paths(paths)
    if not files:
        raise InstanceError("PATHS", "", "no instance files found")
    if jobs < 1:
        raise InstanceError("--jobs", "", f"must be >= 1, got {jobs}")
    progress = Progress(
        TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TimeElapsedColumn(), console=err, transient=False,
    )
    state: dict[str, Any] = {}

    def on_start(total: int, cached: int) -> None:
        state["task"] = progress.add_task(f"study ({cached} cached)", total=total)

    def on_result(result: Any, cached: bool) -> None:
        state["cached"] = state.get("cached", 0) + cached
        progress.update(state["task"], advance=1, description=f"{result.instance} {result.method}")

    with progress:
        results, interrupted = run_study(
            files, chosen, out_csv, time_limit=time_limit, jobs=jobs,
            workers=workers if workers is not None else default_workers(jobs), fresh=fresh,
            on_start=on_start, on_result=on_result,
        )
    cached = state.get("cached", 0)
    err.print(f"{len(results)} rows ({cached} cached, {len(results) - cached} solved) in {out_csv}",
              markup=False)
    out.print(_summary_table(summarize(results), len(files)))
    if plot is not None and results:
        plot_gaps(results, plot)
    if interrupted:
        err.print(f"interrupted: {len(results)} rows kept in {out_csv}", markup=False)
        raise typer.Exit(130)


def _summary_table(summaries: list[Any], instances: int) -> Table:
    table = Table(title=f"study of {instances} instances", title_justify="left")
    for col in ("method", "runs", "optimal", "feasible", "failed", "at optimum", "mean gap",
                "median gap", "max gap", "time p50", "time p90", "time max"):
        table.add_column(col, justify="left" if col == "method" else "right")
    for s in summaries:
        table.add_row(
            s.method, str(s.runs), str(s.optimal), str(s.feasible), str(s.failed),
            f"{s.at_optimum}/{s.compared}", _percent(s.mean_gap), _percent(s.median_gap),
            _percent(s.max_gap), f"{s.time_p50:.3g} s", f"{s.time_p90:.3g} s",
            f"{s.time_max:.3g} s",
        )
    table.caption = "gaps to proven optima (instances where cpsat or milp proved one)"
    table.caption_justify = "left"
    return table


# -- end of issue 3 block -------------------------------------------------------------------


# -- realization and validation (issue 4) -------------------------------------------


def _realize_plan(plan: Plan, fabric_path: Path, placement: str) -> Circuits:
    return realize_circuits(plan, load_fabric(fabric_path), placement)


def realization_tables(c: Circuits) -> tuple[Table, Table]:
    """Generators with their ports and scope; Figure-25-style hardware counts."""
    gens = Table(title=f"{c.plan.instance} on {c.fabric.name}: {c.ports_used} of {c.fabric.ports} ports "
                 f"per node, placement {c.placement.method}", title_justify="left")
    for col in ("generator", "kind", "p", "ports", "circuits", "inter-rack", "scope"):
        gens.add_column(col, justify="right" if col in ("p", "circuits", "inter-rack") else "left")
    for g in c.generators:
        ports = ",".join(map(str, g.ports)) if len(g.ports) <= 4 else f"{g.ports[0]}-{g.ports[-1]}"
        gens.add_row(g.label, g.kind, str(g.multiplicity), ports, str(g.circuits), str(g.inter_rack), g.scope)
    k = c.counts
    counts = Table(title=f"counts: {k.circuits} circuits, {k.intra_rack} through one OCS, "
                   f"{k.inter_rack} through three (inter-rack)", title_justify="left")
    for col in ("", "installed", "used"):
        counts.add_column(col, justify="left" if not col else "right")
    inst, used = k.installed, k.used
    counts.add_row("accelerators", str(inst.accelerators), str(used.accelerators))
    counts.add_row("accelerator ports", str(inst.accelerator_ports), str(used.accelerator_ports))
    for a, b in zip(inst.levels, used.levels, strict=True):
        below = "accelerator" if a.level == 1 else f"level {a.level - 1}"
        counts.add_row(f"level {a.level} {a.technology} devices", str(a.devices), str(b.devices))
        counts.add_row(f"level {a.level} device ports", str(a.ports), str(b.ports))
        counts.add_row(f"level {a.level} logical switches", str(a.logical), str(b.logical))
        counts.add_row(f"{below} - level {a.level} {a.medium} links", str(a.links_below), str(b.links_below))
    counts.add_row(f"converters ({inst.converter_kind})", str(inst.converters), str(used.converters))
    return gens, counts


def _report_realization(c: Circuits, target: str | None, quiet: bool = False) -> None:
    console = err if quiet or target == "-" else out
    for table in realization_tables(c):
        console.print(table)
    for note in c.notes:
        console.print(f"note: {note}", markup=False)
    emit_json(dumps_circuits(c), target)


@app.command("realize")
@handle_errors
def realize_command(
    plan_path: Annotated[Path, typer.Argument(metavar="PLAN", help="plan JSON (ocsplan solve --json)")],
    fabric: Annotated[Path, typer.Option(help="fabric TOML file (simulate/fabrics/)")],
    out_path: Annotated[str | None, typer.Option("--out", help="write circuits JSON to PATH, or - for stdout")] = None,
    placement: Annotated[
        str, typer.Option(help="contiguous, bits (the plan's generators pick the rack bits) or bits:4,3,2,1,0")
    ] = "contiguous",
) -> None:
    """Map a plan onto ports and OCS cross-connects of a fabric, with routing tables."""
    plan = load_plan(plan_path)
    problems = check_plan(plan)
    if problems:
        raise PlanError(f"{plan_path}: {problems[0]}")
    _report_realization(_realize_plan(plan, fabric, placement), out_path)


@app.command("validate")
@handle_errors
def validate_command(
    circuits_path: Annotated[Path, typer.Argument(metavar="CIRCUITS", help="circuits JSON (ocsplan realize --out)")],
    plan_path: Annotated[
        Path | None, typer.Option("--plan", help="also check every schedule transfer of this plan")] = None,
) -> None:
    """Check a circuits file independently of the realizer; faults one per line, exit 1."""
    circuits = load_circuits(circuits_path)
    plan = load_plan(plan_path) if plan_path is not None else None
    faults = validate_circuits(circuits, plan)
    for fault in faults:
        out.print(str(fault), markup=False, soft_wrap=True)
    if faults:
        raise _fail(f"{circuits_path}: {len(faults)} fault(s)", 1)
    demands = sum(1 for _ in circuits.routes)
    out.print(f"{circuits_path}: valid: {circuits.plan.world} nodes, {len(circuits.circuits)} circuits, "
              f"{len(circuits.devices)} devices, {circuits.ports_used} ports per node, {demands} routing tables"
              + (f", every transfer of {plan_path} has a circuit" if plan is not None else ""), markup=False)


# -- simlette (issue 5): simulate and sweep ------------------------------------------------


def _sim_options(mode: str, buffer: str | None, switch_buffer: str | None, order: str,
                 barrier: bool, latency: str | None) -> Any:
    from .fabrics import LATENCY_PRESETS
    from .simlette import SimOptions

    if latency is not None and latency not in LATENCY_PRESETS:
        raise InstanceError("--latency", "", f"unknown preset {latency!r} (use {', '.join(LATENCY_PRESETS)})")
    return SimOptions(
        mode=mode,
        buffer=None if buffer is None else _value(parse_bytes, buffer, "--buffer"),
        switch_buffer=None if switch_buffer is None else _value(parse_bytes, switch_buffer, "--switch-buffer"),
        order=order,
        barrier=barrier,
        latency=None if latency is None else LATENCY_PRESETS[latency],
    ).check()


def _select(plan: Plan, demand: str | None) -> Callable[[int, int, int], bool] | None:
    """``--demand MESH[:AXIS[:K]]`` (mesh by name or index) as a filter on (mesh, axis, k)."""
    if demand is None:
        return None
    parts = demand.split(":")
    names = [m.name for m in plan.meshes]
    if len(parts) > 3 or not parts[0]:
        raise InstanceError("--demand", "", f"expected MESH[:AXIS[:K]], got {demand!r}")
    mesh = names.index(parts[0]) if parts[0] in names else parts[0]
    try:
        want = [int(mesh)] + [int(p) for p in parts[1:]]
    except ValueError:
        raise InstanceError("--demand", "", f"no mesh {parts[0]!r} (meshes: {', '.join(names)})") from None
    return lambda m, i, k: (m, i, k)[: len(want)] == tuple(want)


@app.command()
@handle_errors
def simulate(
    plan_path: Annotated[Path, typer.Argument(metavar="PLAN.json", help="plan written by solve --json")],
    fabric: Annotated[Path, typer.Option(help="fabric file, e.g. simulate/fabrics/ocs-single.toml")],
    mode: Annotated[str, typer.Option(help="ideal, message or flit")] = "message",
    buffer: Annotated[
        str | None, typer.Option(help="receive buffer per accelerator port and channel (default unlimited)")
    ] = None,
    switch_buffer: Annotated[str | None, typer.Option(help="input buffer per switch port (default unlimited)")] = None,
    order: Annotated[str, typer.Option(help="send order in a phase: program or rank")] = "program",
    barrier: Annotated[bool, typer.Option(help="all nodes start each phase together")] = False,
    demand: Annotated[str | None, typer.Option(help="only MESH[:AXIS[:K]] (indices)")] = None,
    circuits: Annotated[
        Path | None, typer.Option(help="OCS: a realization of the plan (ocsplan realize --out); default: realize now")
    ] = None,
    placement: Annotated[str, typer.Option(help="OCS: placement when realizing now")] = "contiguous",
    latency: Annotated[str | None, typer.Option(help="Table 9 preset: low, nominal or high")] = None,
    json_out: Annotated[
        str | None, typer.Option("--json", help="write the report JSON to PATH, or - for stdout")
    ] = None,
) -> None:
    """Simulate every demand of a plan on a fabric (Simlette) against the analytical model."""
    from .simlette import dumps_report, simulate_plan

    plan = load_plan(plan_path)
    spec = load_fabric(fabric)
    realized = None
    if circuits is not None:
        realized = load_circuits(circuits)
        if (realized.plan.instance, realized.plan.world) != (plan.instance, plan.world):
            raise PlanError(f"{circuits}: realizes {realized.plan.instance} ({realized.plan.world} ranks), "
                            f"not {plan.instance} ({plan.world})")
    report = simulate_plan(plan, spec, _sim_options(mode, buffer, switch_buffer, order, barrier, latency),
                           circuits=realized, only=_select(plan, demand), placement=placement)
    console = err if json_out == "-" else out
    title = f"{plan.instance} on {spec.name} ({report.technology}), {report.mode} mode"
    if report.buffer_bytes is not None:
        title += f", buffer {format_bytes(report.buffer_bytes)}/port"
    table = Table(title=title, title_justify="left")
    for col in ("demand", "schedule", "payload", "groups", "p", "T plan", "T analytical", "T simulated",
                "sim/ana", "credit stall", "busiest link", "load"):
        table.add_column(col, justify="left" if col in ("demand", "schedule", "busiest link") else "right")
    for d in report.demands:
        busiest = d.busiest
        table.add_row(
            f"{d.mesh}[{d.axis}].{d.demand} {d.collective}", d.schedule, format_bytes(d.payload_bytes),
            f"{d.groups}x{d.group_size}", str(d.multiplicity),
            format_time(d.closed_form_s) if d.closed_form_s is not None else "",
            format_time(d.analytical_s), format_time(d.simulated_s), f"{d.ratio:.3f}",
            format_time(d.credit_stall_s), busiest.name if busiest else "",
            format_bytes(busiest.bytes) if busiest else "",
        )
    console.print(table)
    for note in report.notes:
        console.print(f"note: {note}", markup=False)
    emit_json(dumps_report(report), json_out)


@app.command()
@handle_errors
def sweep(
    plan_path: Annotated[Path, typer.Argument(metavar="PLAN.json", help="plan written by solve --json")],
    fabric: Annotated[Path, typer.Option(help="fabric file")],
    csv_out: Annotated[Path, typer.Option("--csv", help="write the rows to this CSV file")],
    png: Annotated[Path | None, typer.Option(help="also plot completion time against payload")] = None,
    payloads: Annotated[str, typer.Option(help="LOW:HIGH, powers of two in between")] = "1KiB:1MiB",
    schedules: Annotated[str, typer.Option(help="plan, all, or a comma list")] = "plan",
    mode: Annotated[str, typer.Option(help="ideal, message or flit")] = "message",
    buffer: Annotated[str | None, typer.Option(help="receive buffer per accelerator port and channel")] = None,
    switch_buffer: Annotated[str | None, typer.Option(help="input buffer per switch port")] = None,
    order: Annotated[str, typer.Option(help="program or rank")] = "program",
    barrier: Annotated[bool, typer.Option(help="all nodes start each phase together")] = False,
    demand: Annotated[str | None, typer.Option(help="only MESH[:AXIS[:K]] (indices)")] = None,
    placement: Annotated[str, typer.Option(help="OCS: placement of the realization")] = "contiguous",
    latency: Annotated[str | None, typer.Option(help="Table 9 preset: low, nominal or high")] = None,
) -> None:
    """Completion time against buffer size and schedule: CSV (and PNG)."""
    from .simlette.sweep import payload_range, write_csv, write_plot
    from .simlette.sweep import sweep as run_sweep

    low, _, high = payloads.partition(":")
    sizes = payload_range(_value(parse_bytes, low, "--payloads"), _value(parse_bytes, high or low, "--payloads"))
    plan = load_plan(plan_path)
    spec = load_fabric(fabric)
    rows = run_sweep(plan, spec, _sim_options(mode, buffer, switch_buffer, order, barrier, latency), sizes,
                     schedules, only=_select(plan, demand), placement=placement)
    write_csv(rows, csv_out)
    if png is not None:
        write_plot(rows, png, f"{plan.instance} on {spec.name}, {mode} mode")
    table = Table(title=f"{plan.instance} on {spec.name}: {len(rows)} runs -> {csv_out}", title_justify="left")
    for col in ("demand", "schedule", "payload", "T analytical", "T simulated", "sim/ana"):
        table.add_column(col, justify="left" if col in ("demand", "schedule") else "right")
    for r in rows:
        table.add_row(r.demand, r.schedule, format_bytes(r.payload_bytes), format_time(r.analytical_s),
                      format_time(r.simulated_s), f"{r.ratio:.3f}")
    out.print(table)


# -- end simlette ----------------------------------------------------------------------------


def main() -> None:
    """Console entry point."""
    app()


if __name__ == "__main__":
    main()
