"""Simlette commands: simulate a plan on a fabric, sweep payloads and schedules."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..errors import InstanceError
from ..limits import MAX_JOBS, MAX_PAYLOAD
from ..units import format_bytes, format_time, parse_bytes
from .app import app, emit_json, err, handle_errors, out
from .checks import check_count, check_outputs, check_suffix, parse_option, refuse_unused
from .options import DEFAULT_CONNECT_TIMEOUT, FABRIC_HELP, SPRAY_HELP, ConnectTimeoutOpt, refuse_spray, renamed_as
from .rows import RowsJsonOpt, dumps_rows

if TYPE_CHECKING:
    from ..plan import Plan
    from .render import Cell

# the plan, realization and Simlette modules are imported by the commands that use them

__all__ = ["simulate", "sweep"]

LatencyPresetOpt = Annotated[str | None, typer.Option("--latency-preset",
                                                      help="Table 9 preset: low, nominal or high")]
OldLatencyOpt = Annotated[str | None, typer.Option("--latency", hidden=True, help="old name of --latency-preset")]


def _sim_options(mode: str, buffer: str | None, switch_buffer: str | None, order: str,
                 barrier: bool, latency: str | None, latency_option: str = "--latency-preset",
                 spray: str | None = None) -> Any:
    from ..realization.fabrics import LATENCY_PRESETS
    from ..simlette import SimOptions

    for option, value in (("--buffer", buffer), ("--switch-buffer", switch_buffer), (latency_option, latency),
                          ("--spray", spray)):
        refuse_unused(option, mode == "ideal" and value is not None, "in ideal mode (the plan's lambda and R)")
    if latency is not None and latency not in LATENCY_PRESETS:
        raise InstanceError(latency_option, "", f"unknown preset {latency!r} (use {', '.join(LATENCY_PRESETS)})")
    return SimOptions(
        mode=mode,
        buffer=None if buffer is None else parse_option(parse_bytes, buffer, "--buffer"),
        switch_buffer=None if switch_buffer is None else parse_option(parse_bytes, switch_buffer, "--switch-buffer"),
        order=order,
        barrier=barrier,
        latency=None if latency is None else LATENCY_PRESETS[latency],
        spray="message" if spray is None else spray,
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
    every = [(m, i, k) for m, me in enumerate(plan.meshes) for i, ax in enumerate(me.axes)
             for k in range(len(ax.demands))]
    if not any(key[: len(want)] == tuple(want) for key in every):
        raise InstanceError("--demand", "", f"{demand!r} selects no demand of the plan "
                            f"(meshes: {', '.join(f'{j}={name}' for j, name in enumerate(names))})")
    return lambda m, i, k: (m, i, k)[: len(want)] == tuple(want)


@app.command()
@handle_errors
def simulate(
    plan_path: Annotated[Path, typer.Argument(metavar="PLAN.json", help="plan written by solve --json")],
    fabric: Annotated[str, typer.Option(help=FABRIC_HELP)],
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
    placement: Annotated[str | None, typer.Option(help="OCS: placement when realizing now (contiguous)")] = None,
    latency_preset: LatencyPresetOpt = None,
    spray: Annotated[str | None, typer.Option(help=SPRAY_HELP)] = None,
    json_out: Annotated[
        str | None, typer.Option("--json", help="write the report JSON to PATH, or - for stdout")
    ] = None,
    fail: Annotated[
        list[str] | None, typer.Option("--fail", metavar="circuit:ID|device:ID",
                                       help="with --circuits: run with these failed together, each demand "
                                            "as ocsplan faults says it runs (repeatable)")
    ] = None,
    latency: OldLatencyOpt = None,
) -> None:
    """Simulate every demand of a plan on a fabric (Simlette) against the analytical model."""
    from rich.table import Table

    from ..plan import load_plan
    from ..planning.check import require_valid
    from ..realization.circuits import load_circuits, require_realizes
    from ..realization.fabrics import load_fabric
    from ..simlette import dumps_report, simulate_plan
    from ..simlette.runner import paused_gc
    from .render import add_rows

    preset, preset_option = renamed_as("simulate", "--latency", latency, latency_preset)
    refuse_unused("--placement", placement is not None and circuits is not None, "with --circuits")
    if fail and circuits is None:
        raise InstanceError("--fail", "", "needs --circuits (fault ids name that file's circuits and devices)")
    check_outputs((json_out, "--json"), inputs=((plan_path, "PLAN"), (fabric, "--fabric"), (circuits, "--circuits")))
    # the set-up, workloads and runs are ~10^6 small objects, none in cycles (runs break
    # theirs): no collector pass over them, and afterwards they count as old
    with paused_gc(keep=True):
        plan = load_plan(plan_path)
        require_valid(plan, str(plan_path))
        spec = load_fabric(fabric, "--fabric")
        realized = None
        if circuits is not None:
            refuse_unused("--circuits", all(level.technology == "eps" for level in spec.levels),
                          f"on the electronic fabric {fabric} (no OCS level to carry circuits)")
            realized = load_circuits(circuits)
            require_realizes(realized, plan, spec, prefix=f"{circuits}: ", fabric=fabric)
        options = _sim_options(mode, buffer, switch_buffer, order, barrier, preset, preset_option, spray)
        refuse_spray(spray, spec, fabric)
        if fail:
            from ..deploy.degraded import simulate_faults
            from ..deploy.faults import check_match

            assert realized is not None
            check_match(realized, plan, f"--circuits {circuits}", str(circuits))
            report = simulate_faults(plan, spec, options, realized, fail, only=_select(plan, demand))
        else:
            report = simulate_plan(plan, spec, options, circuits=realized, only=_select(plan, demand),
                                   placement=placement or "contiguous")
        console = err if json_out == "-" else out
        title = f"{plan.instance} on {spec.name} ({report.technology}), {report.mode} mode"
        if report.faults:
            title += f", {', '.join(report.faults)} failed"
        if report.buffer_bytes is not None:
            title += f", buffer {format_bytes(report.buffer_bytes)}/port"
        if spray is not None:
            title += f", spray {spray}"
        table = Table(title=title, title_justify="left")
        for col in ("demand", "schedule", "payload", "groups", "p", "T plan", "T analytical", "T simulated",
                    "sim/ana", "credit stall", "busiest link", "load"):
            table.add_column(col, justify="left" if col in ("demand", "schedule", "busiest link") else "right")
        rows: list[list[Cell]] = []
        for d in report.demands:
            busiest = d.busiest
            rows.append([
                f"{d.mesh}[{d.axis}].{d.demand} {d.collective}",
                d.schedule if d.how in ("", "intact") else f"{d.schedule} ({d.how})", d.payload_bytes,
                f"{d.groups}x{d.group_size}", str(d.multiplicity),
                format_time(d.closed_form_s) if d.closed_form_s is not None else "",
                format_time(d.analytical_s), format_time(d.simulated_s), f"{d.ratio:.3f}",
                format_time(d.credit_stall_s), busiest.name if busiest else "",
                busiest.bytes if busiest else "",
            ])
        add_rows(table, rows, [2, 11])
        console.print(table)
        for note in report.notes:
            console.print(f"note: {note}", markup=False)
        emit_json(dumps_report(report), json_out)


@app.command()
@handle_errors
def sweep(
    plan_path: Annotated[Path, typer.Argument(metavar="PLAN.json", help="plan written by solve --json")],
    fabric: Annotated[str, typer.Option(help=FABRIC_HELP)],
    csv_out: Annotated[Path, typer.Option("--csv", help="write the rows to this CSV file")],
    plot: Annotated[Path | None, typer.Option("--plot", help="also plot completion time against payload (PNG)")] = None,
    payloads: Annotated[str, typer.Option(help="LOW:HIGH, powers of two in between")] = "1KiB:1MiB",
    schedules: Annotated[str, typer.Option(help="plan, all, or a comma list")] = "plan",
    mode: Annotated[str, typer.Option(help="ideal, message or flit")] = "message",
    buffer: Annotated[str | None, typer.Option(help="receive buffer per accelerator port and channel")] = None,
    switch_buffer: Annotated[str | None, typer.Option(help="input buffer per switch port")] = None,
    order: Annotated[str, typer.Option(help="program or rank")] = "program",
    barrier: Annotated[bool, typer.Option(help="all nodes start each phase together")] = False,
    demand: Annotated[str | None, typer.Option(help="only MESH[:AXIS[:K]] (indices)")] = None,
    placement: Annotated[str, typer.Option(help="OCS: placement of the realization")] = "contiguous",
    latency_preset: LatencyPresetOpt = None,
    spray: Annotated[str | None, typer.Option(help=SPRAY_HELP)] = None,
    jobs: Annotated[int, typer.Option(help="simulations run in parallel (local processes)")] = 1,
    scheduler: Annotated[
        str | None, typer.Option(help="run on a Dask cluster: scheduler ADDRESS, or local (needs ocsplan[cluster])")
    ] = None,
    quiet: Annotated[bool, typer.Option(help="no progress bar (there is none unless stderr is a terminal)")] = False,
    connect_timeout: ConnectTimeoutOpt = DEFAULT_CONNECT_TIMEOUT,
    json_out: RowsJsonOpt = None,
    latency: OldLatencyOpt = None,
    png: Annotated[Path | None, typer.Option("--png", hidden=True, help="old name of --plot")] = None,
) -> None:
    """Completion time against buffer size and schedule: CSV (and PNG)."""
    from dataclasses import asdict

    from rich.table import Table

    from ..executor import Executor
    from ..files import write_atomic_all
    from ..plan import load_plan
    from ..planning.check import require_valid
    from ..realization.fabrics import load_fabric
    from ..simlette.sweep import payload_range, plot_png, sweep_csv
    from ..simlette.sweep import sweep as run_sweep
    from .console import Bar
    from .render import add_rows

    preset, preset_option = renamed_as("sweep", "--latency", latency, latency_preset)
    plot, plot_option = renamed_as("sweep", "--png", png, plot)
    check_suffix(plot, plot_option, (".png",))
    check_outputs((csv_out, "--csv"), (plot, plot_option), (json_out, "--json"),
                  inputs=((plan_path, "PLAN"), (fabric, "--fabric")))
    low, _, high = payloads.partition(":")
    first = parse_option(parse_bytes, low, "--payloads")
    last = parse_option(parse_bytes, high or low, "--payloads")
    if max(first, last) > MAX_PAYLOAD:
        raise InstanceError("--payloads", "", f"must be at most {MAX_PAYLOAD} bytes (1 PiB)")
    sizes = payload_range(first, last)
    plan = load_plan(plan_path)
    require_valid(plan, str(plan_path))
    spec = load_fabric(fabric, "--fabric")
    options = _sim_options(mode, buffer, switch_buffer, order, barrier, preset, preset_option, spray)
    refuse_spray(spray, spec, fabric)
    check_count(jobs, "--jobs", 1, MAX_JOBS)
    executor = Executor(jobs=jobs, scheduler=scheduler, connect_timeout=connect_timeout).check()
    with Bar(err.console, f"sweep ({mode})", quiet=quiet) as bar:  # total unknown: demands x schedules x payloads
        rows = run_sweep(plan, spec, options, sizes,
                         schedules, only=_select(plan, demand), placement=placement,
                         executor=executor if executor.parallel > 1 or scheduler is not None else None,
                         on_row=lambda row: bar.advance(description=f"{row.demand} {row.schedule}"))
    outputs: list[tuple[Path, str | bytes]] = [(csv_out, sweep_csv(rows))]
    if plot is not None:
        outputs.append((plot, plot_png(rows, f"{plan.instance} on {spec.name}, {mode} mode")))
    write_atomic_all(outputs)  # all or none
    title = f"{plan.instance} on {spec.name}: {len(rows)} runs -> {csv_out}"
    if spray is not None:
        title += f" (spray {spray})"
    table = Table(title=title, title_justify="left")
    for col in ("demand", "schedule", "payload", "T analytical", "T simulated", "sim/ana"):
        table.add_column(col, justify="left" if col in ("demand", "schedule") else "right")
    add_rows(table, [[r.demand, r.schedule, r.payload_bytes, format_time(r.analytical_s), format_time(r.simulated_s),
                      f"{r.ratio:.3f}"] for r in rows], [2])
    (err if json_out == "-" else out).print(table)
    emit_json(dumps_rows("sweep", title, [asdict(r) for r in rows]), json_out)
