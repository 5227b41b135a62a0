"""`ocsplan deploy`: one command from a model to a deployment directory (issue 39)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import InstanceError
from ..units import format_time
from .app import app, err, handle_errors, out
from .checks import check_apart, check_count, check_time_limit
from .options import FABRIC_HELP
from .workload import AccOpt, BatchOpt, CommOpt, ContextOpt, ModelArg, VerboseOpt, WorldOpt, _resolve

if TYPE_CHECKING:
    from rich.table import Table

    from ..deploy.bundle import Deployment

__all__ = ["deploy_command", "deploy_table"]


def _out_error(message: str) -> InstanceError:
    return InstanceError("--out", "", message)


def deploy_table(d: Deployment, out_dir: Path) -> Table:
    """The summary: split, the step on the fabric and on the baseline, circuits, ports, files."""
    from rich.table import Table

    a, b = d.step, d.baseline
    table = Table(title=f"{a.model} on {a.world} x {a.accelerator}, batch {a.batch}, context {a.context}: "
                        f"deployment in {out_dir}", title_justify="left")
    table.add_column("", justify="left")
    table.add_column(f"{a.fabric} ({a.technology})", justify="right")
    table.add_column(f"{b.fabric} ({b.technology}, baseline)", justify="right")
    how = f"best of {d.timed} splits" if d.timed else "given"
    table.add_row("split (KVP,TPA,EP,TPE)", f"{a.split} ({how})", str(b.split))
    table.add_row("step time", format_time(a.step_s), format_time(b.step_s))
    table.add_row("  of which communication", format_time(a.comm_s), format_time(b.comm_s))
    table.add_row("tokens/s/user", f"{a.tokens_per_s_user:.1f}", f"{b.tokens_per_s_user:.1f}")
    table.add_row("tokens/s/MW", f"{a.tokens_per_s_mw:.0f}", f"{b.tokens_per_s_mw:.0f}")
    c = d.circuits
    table.add_row(*_exact_row(d))
    table.add_row("circuits", f"{len(c.circuits)} on {len(c.devices)} OCS devices", "-")
    table.add_row("ports used per accelerator", f"{c.ports_used} of {c.fabric.ports}", "-")
    s = d.faults.summary
    worst = s.worst_running
    table.add_row("circuit faults analysed", f"{s.count}{' (sampled)' if d.faults.sampled else ''}, "
                                             f"{s.stopped} stop a demand", "-")
    if worst is not None and d.faults.healthy:
        table.add_row("  worst that stops nothing", f"{worst.objective / d.faults.healthy:.4g} x healthy", "-")
    table.add_row("files", f"{len(d.files) + 1}, each in manifest.json with its schema and SHA-256", "")
    table.caption = "files: " + ", ".join(_grouped(d.files))
    table.caption_justify = "left"
    return table


def _exact_row(d: Deployment) -> tuple[str, str, str]:
    """The exact check's row: proved optimal, the gap to CP-SAT's bound, or why there is none."""
    e = d.exact
    head = f"exact check (CP-SAT, {e.time_limit:g} s)" if e.time_limit else "exact check"
    if e.status == "skipped":
        return head, f"skipped: {e.reason}", "-"
    if e.gap is None:
        return head, f"{e.status}, no bound proven (raise --time-limit)", "-"
    if e.status == "optimal":
        return head, f"the plan is proved optimal (gap {e.gap:.2g})", "-"
    better = "" if e.objective_s is None or e.objective_s >= d.plan.objective_s else \
        f"; CP-SAT holds a plan of {format_time(e.objective_s)}"
    return head, f"{e.status}: the plan is within {e.gap:.2%} of the optimum{better}", "-"


def _grouped(files: dict[str, str]) -> list[str]:
    """File names, one entry per folder (``msccl/: 5 XML + index.json``), and the manifest."""
    names = [n for n in sorted(files) if "/" not in n] + ["manifest.json"]
    folders = sorted({n.split("/", 1)[0] for n in files if "/" in n})
    for folder in folders:
        inside = [n.split("/", 1)[1] for n in files if n.startswith(f"{folder}/")]
        xml = sum(1 for n in inside if n.endswith(".xml"))
        if xml:
            names.append(f"{folder}/ ({xml} XML checked, {len(inside) - xml} other)")
        else:
            names.append(f"{folder}/ ({len(inside)} files: cross-connects per device, cabling, host graphs)")
    return names


@app.command("deploy")
@handle_errors
def deploy_command(
    model: ModelArg,
    fabric: Annotated[str, typer.Option(help=FABRIC_HELP + "; every level OCS")],
    out_dir: Annotated[Path, typer.Option("--out", help="the deployment directory to create")],
    accelerator: AccOpt = "rx00",
    world: WorldOpt = 512,
    batch: BatchOpt = 1,
    context: ContextOpt = "5M",
    split: Annotated[str, typer.Option(help="auto (the best feasible split, as decode) or KVP,TPA,EP,TPE")] = "auto",
    baseline: Annotated[str, typer.Option(help="the electronic fabric to compare with (decode on it)")] = "all-eps",
    comm: CommOpt = "fp4",
    faults: Annotated[int | None, typer.Option(
        "--faults", help="circuit faults to analyse (default: all up to 2048, else a sample of 2048, seed 0)")] = None,
    time_limit: Annotated[float, typer.Option(
        help="seconds for the exact check of the plan (CP-SAT: its gap to the optimum); 0 skips it")] = 30.0,
    force: Annotated[bool, typer.Option(help="replace an existing non-empty --out directory")] = False,
    quiet: Annotated[bool, typer.Option(help="no progress bar (there is none unless stderr is a terminal)")] = False,
    verbose: VerboseOpt = False,
) -> None:
    """From a model to a deployment directory: split, instance, plan, circuits (validated), MSCCL
    (checked), decode on the fabric and on an all-EPS baseline, faults, report.html, manifest.json."""
    from ..deploy.bundle import MANIFEST, build_deployment, check_fabric, manifest_text
    from ..deploy.faults import MAX_FAULTS
    from ..files import check_directory, write_directory
    from ..realization.fabrics import load_fabric
    from ..report.provenance import page_date
    from ..workload import check_split, parse_split
    from .console import Bar

    check_apart(((out_dir, "--out"),), ((model, "MODEL"), (accelerator, "--accelerator"), (fabric, "--fabric"),
                                        (baseline, "--baseline")))
    m, acc, world, batch, tokens, precision = _resolve(model, accelerator, world, batch, context, comm, verbose)
    spec = load_fabric(fabric, "--fabric")
    check_fabric(spec)
    other = load_fabric(baseline, "--baseline")
    chosen = None if split == "auto" else check_split(m, world, parse_split(split))
    check_count(faults, "--faults", 1, MAX_FAULTS)
    if time_limit != 0:
        check_time_limit(time_limit)
    check_directory(out_dir, _out_error, force)
    with Bar(err.console, "deploy: splits", quiet=quiet or chosen is not None) as bar:
        d = build_deployment(m, acc, spec, other, world, batch, tokens, precision, chosen, faults=faults,
                             progress=bar.update, date=page_date(os.environ.get("SOURCE_DATE_EPOCH")),
                             time_limit=time_limit)
    inputs = {"model": m.name, "accelerator": acc.name, "fabric": spec.name, "baseline": other.name,
              "world": world, "batch": batch, "context": tokens, "comm": precision.name,
              "split": split, "time_limit": time_limit}
    files = {**d.files, MANIFEST: manifest_text(d, inputs)}

    def fill(tmp: Path) -> None:
        for name, text in sorted(files.items()):
            target = tmp / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")

    write_directory(out_dir, fill, _out_error, replace=force)
    out.print(deploy_table(d, out_dir))
    for note in d.notes:
        out.print(f"note: {note}", markup=False)
