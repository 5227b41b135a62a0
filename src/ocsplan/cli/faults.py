"""Fault commands: what each single fault costs a realized plan (``faults``), and the repair of
failed accelerators onto spares or of failed circuits and devices through free ports (``repair``)."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import InstanceError, PlanError
from ..limits import MAX_SEED
from ..units import format_time
from .app import app, emit_json, err, handle_errors, out
from .checks import check_apart, check_count, check_outputs, refuse_unused
from .rows import RowsJsonOpt, dumps_rows

if TYPE_CHECKING:
    from rich.table import Table

    from ..deploy.faults import FaultOutcome, FaultReport
    from ..deploy.repair import Move, Repath
    from ..plan import Plan
    from ..realization.circuits import Circuits
    from ..realization.fabrics import FabricSpec

__all__ = ["faults_command", "faults_tables", "repair_command", "repair_table", "repath_table", "step_table",
           "step_times"]

WORST = 10


def _objective(f: FaultOutcome) -> str:
    return format_time(f.objective) + (" (partial)" if f.stopped else "")


def faults_tables(r: FaultReport) -> list[Table]:
    """The summary and the worst faults (stopping ones first): what the terminal shows."""
    from rich.table import Table

    from ..deploy.faults import ranked

    s = r.summary
    summary = Table(title=f"{s.count} {r.kind} fault(s){' (sampled)' if r.sampled else ''}", title_justify="left")
    summary.add_column("", justify="left")
    summary.add_column("fault", justify="left")
    summary.add_column("sum w*T", justify="right")
    summary.add_column("x healthy", justify="right")
    summary.add_row("healthy", "-", format_time(r.healthy), "1")
    for label, f in (("worst", s.worst), ("worst that stops nothing", s.worst_running)):
        if f is not None:
            ratio = "-" if f.stopped or not r.healthy else f"{f.objective / r.healthy:.4g}"
            summary.add_row(label, f.id, _objective(f), ratio)
    if s.median is not None:
        summary.add_row("median of the faults that stop nothing", "-", format_time(s.median),
                        f"{s.median / r.healthy:.4g}" if r.healthy else "-")
    summary.add_row("faults that stop a demand", str(s.stopped), "", "")
    worst = Table(title=f"worst {min(WORST, s.count)} (a stopped demand is reported apart, never priced)",
                  title_justify="left")
    for col in ("rank", "fault", "sum w*T of the running demands", "stopped demands", "degraded demands"):
        worst.add_column(col, justify="right" if col == "rank" else "left")
    for i, f in enumerate(ranked(r)[:WORST]):
        hows = Counter(d.how for d in f.demands if d.how not in ("intact", "stopped"))
        degraded = ", ".join(f"{n} {how}" for how, n in sorted(hows.items()))
        worst.add_row(str(i + 1), f.id, _objective(f), ", ".join(f.stopped) or "-", degraded or "-")
    return [summary, worst]


@app.command("faults")
@handle_errors
def faults_command(
    circuits_path: Annotated[Path, typer.Argument(metavar="CIRCUITS", help="circuits JSON (ocsplan realize --out)")],
    plan_path: Annotated[Path, typer.Option("--plan", help="the plan the circuits realize")],
    kind: Annotated[str, typer.Option("--kind", help="circuit, device (an OCS) or accelerator")] = "circuit",
    json_out: Annotated[str | None, typer.Option("--json", help="write ocsplan.faults/1 JSON to PATH, or -")] = None,
    sample: Annotated[int | None, typer.Option("--sample", help="analyse N faults drawn at random (1..20000)")] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="seed of --sample, 0..2^63-1 (default 0)")] = None,
) -> None:
    """Every single fault of a kind: per demand intact, parallel, relay, fallback or stopped, and Eq. 1 T."""
    from ..deploy.faults import MAX_FAULTS, analyse_faults, check_match, report_to_dict
    from ..plan import load_plan
    from ..planning.check import require_valid
    from ..realization.circuits import load_circuits
    from ..realization.validate import validate as validate_circuits

    check_outputs((json_out, "--json"), inputs=((circuits_path, "CIRCUITS"), (plan_path, "--plan")))
    refuse_unused("--seed", seed is not None and sample is None, "without --sample")
    check_count(sample, "--sample", 1, MAX_FAULTS)
    check_count(seed, "--seed", 0, MAX_SEED)
    circuits = load_circuits(circuits_path)
    plan = load_plan(plan_path)
    require_valid(plan, str(plan_path))
    check_match(circuits, plan, f"--plan {plan_path}", str(circuits_path))
    # the healthy fabric must be what the analysis assumes: a file validate rejects is refused
    found = validate_circuits(circuits, plan)
    if found:
        raise InstanceError(str(circuits_path), "", f"{len(found)} fault(s) found by ocsplan validate, the first: "
                                                    f"{str(found[0])[:160]}")
    start = time.perf_counter()
    report = analyse_faults(circuits, plan, kind, sample, seed or 0)
    elapsed = time.perf_counter() - start
    if json_out != "-":
        for table in faults_tables(report):
            out.print(table)
        out.print(f"{report.summary.count} {kind} fault(s) of {len(circuits.circuits)} circuits analysed in "
                  f"{elapsed:.3g} s", markup=False)
    emit_json(json.dumps(report_to_dict(report), indent=1) + "\n", json_out)


def repair_table(moves: Sequence[Move], changes: int, devices: int) -> Table:
    from rich.table import Table

    table = Table(title=f"repair: {changes} cross-connect change(s) on {devices} OCS device(s)",
                  title_justify="left")
    for col in ("failed", "spare", "ranks", "circuits re-pathed", "cross-connect changes", "OCS hops before",
                "after"):
        table.add_column(col, justify="right")
    for m in moves:
        table.add_row(str(m.failed), str(m.spare), ",".join(map(str, m.ranks)), str(m.circuits), str(m.changes),
                      str(m.hops_before), str(m.hops_after))
    return table


REPATH_ROWS = 20


def repath_table(repaths: Sequence[Repath], changes: int, devices: int) -> Table:
    """The re-pathed circuits (the first :data:`REPATH_ROWS`): OCS devices before and after."""
    from rich.table import Table

    table = Table(title=f"repair: {len(repaths)} circuit(s) re-pathed, {changes} cross-connect change(s) on "
                        f"{devices} OCS device(s)", title_justify="left")
    for col in ("circuit", "ranks", "generator", "port", "OCS devices before", "after", "changes"):
        table.add_column(col, justify="right" if col in ("circuit", "changes") else "left")
    for r in repaths[:REPATH_ROWS]:
        port = str(r.port_before) if r.port_after == r.port_before else f"{r.port_before} > {r.port_after} (spare)"
        table.add_row(str(r.circuit), f"{r.a}-{r.b}", r.generator, port, " > ".join(r.before), " > ".join(r.after),
                      str(r.changes))
    if len(repaths) > REPATH_ROWS:
        table.caption = f"and {len(repaths) - REPATH_ROWS} more (--diff lists every one)"
        table.caption_justify = "left"
    return table


@app.command("repair")
@handle_errors
def repair_command(
    circuits_path: Annotated[Path, typer.Argument(metavar="CIRCUITS", help="circuits JSON (ocsplan realize --out)")],
    plan_path: Annotated[Path, typer.Option("--plan", help="the plan the circuits realize")],
    fabric: Annotated[str, typer.Option("--fabric", help="the fabric the circuits were realized on: a catalogue "
                                                          "name or a TOML file")],
    failed: Annotated[list[str], typer.Option("--failed", help="accelerator:ID (onto a spare), or circuit:ID / "
                                                               "device:ID (re-pathed through free level-2 ports); "
                                                               "repeat for more, one kind per repair")],
    out_path: Annotated[str, typer.Option("--out", help="write the repaired circuits JSON to PATH, or -")],
    diff_path: Annotated[str | None, typer.Option("--diff", help="write the per-device cross-connect diff "
                                                                 "(JSON) to PATH, or -")] = None,
    diff_dir: Annotated[Path | None, typer.Option("--diff-dir", help="write the diff as an OCS controller applies "
                                                                     "it: devices/<id>.csv (action,in_port,out_port) "
                                                                     "and diff.json, in a new directory")] = None,
    simulate: Annotated[bool, typer.Option(
        "--simulate/--no-simulate", help="price the healthy and the repaired fabric with Simlette (message mode) "
                                         "and Eq. 1 on their real OCS paths")] = True,
    json_out: RowsJsonOpt = None,
) -> None:
    """Repair failed accelerators (their ranks onto spares) or failed circuits and level-2 devices (the
    circuits re-pathed through free ports); fewest cross-connect changes, every other one stays."""
    from ..deploy.faults import check_match
    from ..deploy.repair import diff_files, diff_to_dict, parse_failed, repair
    from ..deploy.repath import parse_faults, repath
    from ..files import check_directory, write_atomic_all
    from ..plan import load_plan
    from ..planning.check import require_valid
    from ..realization.circuits import dumps_circuits, load_circuits
    from ..realization.fabric_check import fabric_faults
    from ..realization.fabrics import load_fabric

    inputs = ((circuits_path, "CIRCUITS"), (plan_path, "--plan"), (fabric, "--fabric"))
    check_outputs((out_path, "--out"), (diff_path, "--diff"), (json_out, "--json"), inputs=inputs)
    check_apart(((diff_dir, "--diff-dir"),), inputs)
    if diff_dir is not None:
        check_directory(diff_dir, PlanError, option="--diff-dir")
    circuits = load_circuits(circuits_path)
    plan = load_plan(plan_path)
    require_valid(plan, str(plan_path))
    check_match(circuits, plan, f"--plan {plan_path}", str(circuits_path))
    spec = load_fabric(fabric, "--fabric")
    mismatch = fabric_faults(circuits, spec)
    if mismatch:
        raise InstanceError("--fabric", "", f"{fabric} is not the fabric of {circuits_path}: {mismatch[0]}")
    console = err if "-" in (out_path, diff_path, json_out) else out
    kinds = {value.partition(":")[0] == "accelerator" for value in failed}
    if len(kinds) > 1:
        raise InstanceError("--failed", "", "accelerator faults and circuit/device faults are repaired apart "
                            "(one repair per kind, the second on the first's output)")
    notes: list[str] = []
    if kinds == {False}:
        result = repath(circuits, spec, parse_faults(failed, circuits))
        table = repath_table(result.repaths, result.changes, len(result.diff))
        rows = [asdict(r) for r in result.repaths]
    else:
        ids = parse_failed(failed, circuits)
        result = repair(circuits, spec, ids)
        table = repair_table(result.moves, result.changes, len(result.diff))
        rows = [asdict(m) for m in result.moves]
        notes = [f"accelerator {a} ran no rank: it only leaves the spares" for a in ids
                 if a not in {m.failed for m in result.moves}]
    console.print(table)
    for note in notes:
        console.print(note, markup=False)
    if simulate:
        times = step_times(plan, spec, circuits, result.circuits)
        console.print(step_table(times))
        notes += [f"{label}: sum w*T healthy {before!r} s, repaired {after!r} s" for label, before, after in times]
    texts = [(out_path, dumps_circuits(result.circuits))]
    if diff_path is not None:
        texts.append((diff_path, json.dumps(diff_to_dict(result, circuits), indent=1) + "\n"))
    if json_out is not None:
        texts.append((json_out, dumps_rows("repair", str(table.title), rows, notes)))
    if diff_dir is None:
        write_atomic_all([(path, text) for path, text in texts if path != "-"])  # every file or none
    else:
        _write_with_directory(diff_dir, diff_files(result, circuits), [(p, t) for p, t in texts if p != "-"])
    for path, text in texts:
        if path == "-":
            emit_json(text, path)


def step_times(plan: Plan, spec: FabricSpec, healthy: Circuits, repaired: Circuits) -> list[tuple[str, float, float]]:
    """sum w*T before and after a repair, in seconds: the plan's Eq. 1, Eq. 1 on the circuits' real OCS
    paths (a moved circuit's extra hops), and Simlette in message mode."""
    from ..simlette import SimOptions, simulate_plan
    from ..simlette.report import weighted

    weights = {(m.name, j, k): d.weight for m in plan.meshes for j, a in enumerate(m.axes)
               for k, d in enumerate(a.demands)}
    runs = [weighted(simulate_plan(plan, spec, SimOptions(mode="message"), circuits=c), weights)
            for c in (healthy, repaired)]
    return [("Eq. 1, the plan (lambda per phase)", plan.objective_s, plan.objective_s),
            *((label, runs[0][i], runs[1][i])
              for i, label in ((0, "Eq. 1 on the circuits' OCS paths"), (1, "Simlette, message mode")))]


def step_table(times: Sequence[tuple[str, float, float]]) -> Table:
    """:func:`step_times` as a table with the ratio of each."""
    from rich.table import Table

    table = Table(title="the step's communication, sum w*T, healthy and repaired", title_justify="left")
    for col in ("", "healthy", "repaired", "x healthy"):
        table.add_column(col, justify="left" if not col else "right")
    for n, (label, before, after) in enumerate(times):
        ratio = "1" if n == 0 else f"{after / before:.4g}" if before else "-"
        table.add_row(label, format_time(before), format_time(after), ratio)
    return table


def _write_with_directory(target: Path, files: dict[str, str], texts: list[tuple[str, str]]) -> None:
    """The directory (atomically), then the files (all or none); the directory is taken back if
    the files cannot be written: every output or none."""
    import shutil

    from ..files import write_atomic_all, write_directory

    def fill(tmp: Path) -> None:
        for name, text in sorted(files.items()):
            path = tmp / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")

    write_directory(target, fill, PlanError, option="--diff-dir")
    try:
        write_atomic_all(texts)
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)
        raise
