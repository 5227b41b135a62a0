"""Realization commands: realize a plan on a fabric file, validate circuits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .app import app, emit_json, err, fail, handle_errors, out
from .checks import check_outputs
from .options import FABRIC_HELP
from .streams import write_stdout

if TYPE_CHECKING:
    from ..plan import Plan
    from ..realization.circuits import Circuits

# the plan and realization modules (networkx among them) are imported by the commands that use them

__all__ = ["BAR_CIRCUITS", "BAR_FILE_BYTES", "fabrics_command", "realize_command", "realize_plan",
           "report_realization", "validate_command"]

# A progress bar on a terminal (stderr; never with --quiet) above these sizes: realize from
# N L / 2 circuits of the plan (the paper's N = 512, L = 35 plan: 8960 circuits, about 0.7 s to
# realize and write), validate from the circuits file's size (that plan's: 2.7 MB, 2 s to read and check)
BAR_CIRCUITS = 4096
BAR_FILE_BYTES = 1 << 20
QUIET_HELP = (f"no progress bar (there is none unless stderr is a terminal, nor below {BAR_CIRCUITS} circuits "
              f"or a {BAR_FILE_BYTES >> 20} MiB circuits file)")


def realize_plan(plan: Plan, fabric: str | Path, placement: str, option: str = "--fabric") -> Circuits:
    from ..realization.fabrics import load_fabric
    from ..realization.realize import realize

    return realize(plan, load_fabric(fabric, option), placement)


def report_realization(c: Circuits, target: str | None, quiet: bool = False, text: str | None = None) -> None:
    """The realization's tables (on stderr when ``quiet`` or the JSON goes to stdout) and its JSON
    (``text``, if already serialized) to ``target``."""
    from ..realization.circuits import dumps_circuits
    from .render import realization_tables

    console = err if quiet or target == "-" else out
    for table in realization_tables(c):
        console.print(table)
    for note in c.notes:
        console.print(f"note: {note}", markup=False)
    if target is not None:
        emit_json(dumps_circuits(c) if text is None else text, target)


@app.command("realize")
@handle_errors
def realize_command(
    plan_path: Annotated[Path, typer.Argument(metavar="PLAN", help="plan JSON (ocsplan solve --json)")],
    fabric: Annotated[str, typer.Option(help=FABRIC_HELP)],
    out_path: Annotated[str | None, typer.Option("--out", help="write circuits JSON to PATH, or - for stdout")] = None,
    placement: Annotated[
        str, typer.Option(help="contiguous, bits (the plan's generators pick the rack bits) or bits:4,3,2,1,0")
    ] = "contiguous",
    quiet: Annotated[bool, typer.Option(help=QUIET_HELP)] = False,
    circuits_format: Annotated[str, typer.Option(
        "--circuits-format", help="auto (ocsplan.circuits/1 within its limits, the columnar /2 beyond), 1 or 2")
    ] = "auto",
) -> None:
    """Map a plan onto ports and OCS cross-connects of a fabric, with routing tables."""
    from ..errors import InstanceError
    from ..plan import load_plan
    from ..planning.check import require_valid
    from ..realization.circuits import FORMATS, dumps_circuits
    from .console import Bar

    if circuits_format not in FORMATS:
        raise InstanceError("--circuits-format", "", f"expected one of {', '.join(FORMATS)}, got "
                            f"{circuits_format[:40]!r}")
    check_outputs((out_path, "--out"), inputs=((plan_path, "PLAN"), (fabric, "--fabric")))
    plan = load_plan(plan_path)
    require_valid(plan, str(plan_path))
    circuits = plan.world * plan.ports_used // 2
    with Bar(err.console, f"realize: {circuits} circuits", 2, quiet=quiet or circuits < BAR_CIRCUITS) as bar:
        realized = realize_plan(plan, fabric, placement)
        bar.update(1, description="realize: the circuits JSON")
        text = None if out_path is None else dumps_circuits(realized, circuits_format)
        bar.update(2)
    report_realization(realized, out_path, text=text)


@app.command("validate")
@handle_errors
def validate_command(
    circuits_path: Annotated[Path, typer.Argument(metavar="CIRCUITS", help="circuits JSON (ocsplan realize --out)")],
    plan_path: Annotated[
        Path | None, typer.Option("--plan", help="also check every schedule transfer of this plan")] = None,
    fabric: Annotated[
        str | None, typer.Option(help="also check the fabric fields and hardware counts against this fabric "
                                      "(a catalogue name or a TOML file)")
    ] = None,
    json_out: Annotated[str | None, typer.Option(
        "--json", help="write the verdict (ocsplan.validation/1: valid, counts, faults) to PATH, or - for stdout; "
                       "written also when there are faults")] = None,
    quiet: Annotated[bool, typer.Option(help=QUIET_HELP)] = False,
) -> None:
    """Check a circuits file independently of the realizer; faults one per line, exit 1."""
    from ..plan import load_plan
    from ..planning.check import require_valid
    from ..realization.circuits import load_circuits
    from ..realization.fabric_check import fabric_faults
    from ..realization.fabrics import load_fabric
    from ..realization.validate import validate as validate_circuits
    from .console import Bar

    check_outputs((json_out, "--json"), inputs=((circuits_path, "CIRCUITS"), (plan_path, "--plan"),
                                                (fabric, "--fabric")))
    try:
        small = circuits_path.stat().st_size < BAR_FILE_BYTES
    except OSError:  # the reader names a missing file
        small = True
    with Bar(err.console, f"validate: reading {circuits_path.name}", quiet=quiet or small) as bar:
        circuits = load_circuits(circuits_path)
        plan = load_plan(plan_path) if plan_path is not None else None
        if plan is not None:
            require_valid(plan, str(plan_path))
        spec = load_fabric(fabric, "--fabric") if fabric is not None else None
        bar.update(0, description=f"validate: {len(circuits.circuits)} circuits")
        faults = ([] if spec is None else fabric_faults(circuits, spec)) + validate_circuits(
            circuits, plan, progress=lambda done, total: bar.update(done, total))
    demands = sum(1 for _ in circuits.routes)
    console = err if json_out == "-" else out
    verdict = {"schema": "ocsplan.validation/1", "circuits_file": circuits_path.name,
               "plan_file": None if plan_path is None else plan_path.name, "fabric": fabric,
               "valid": not faults, "nodes": circuits.plan.world, "circuits": len(circuits.circuits),
               "devices": len(circuits.devices), "ports_used": circuits.ports_used, "routing_tables": demands,
               "faults": [str(fault) for fault in faults]}
    emit_json(json.dumps(verdict, indent=1) + "\n", json_out)
    if faults:  # one print: rich costs about 0.2 ms a call, and a hostile file may have 131,082 faults
        console.print("\n".join(map(str, faults)), markup=False, soft_wrap=True)
        raise fail(f"{circuits_path}: {len(faults)} fault(s)", 1)
    console.print(f"{circuits_path}: valid: {circuits.plan.world} nodes, {len(circuits.circuits)} circuits, "
              f"{len(circuits.devices)} devices, {circuits.ports_used} ports per node, {demands} routing tables"
              + (f", every transfer of {plan_path} has a circuit" if plan is not None else "")
              + (f", matches {fabric}" if spec is not None else ""), markup=False)


@app.command("fabrics")
@handle_errors
def fabrics_command(
    json_out: Annotated[bool, typer.Option("--json", help="print the catalogue as JSON on stdout")] = False,
) -> None:
    """List the shipped fabrics: the names every --fabric accepts (a TOML path works too)."""
    import json

    from rich.table import Table

    from ..realization.fabrics import CATALOGUE_PREFIX, fabric_names, load_fabric

    rows = []
    for name in fabric_names():
        spec = load_fabric(name)
        rows.append({
            "name": name,
            "aliases": [spec.name] if spec.name != name else [],
            "accelerators": spec.accelerators,
            "serving": spec.serving,
            "ports": spec.ports,
            "link_Gbps": round(spec.link * 8 / 1e9, 6),
            "rack_size": spec.rack_size,
            "racks": spec.racks,
            "levels": len(spec.levels),
            "technology": "/".join(level.technology for level in spec.levels),
            "description": spec.description,
        })
    if json_out:
        write_stdout(json.dumps({"fabrics": rows}, indent=1) + "\n")
        return
    table = Table(title=f"{len(rows)} shipped fabrics (a name with the {CATALOGUE_PREFIX} prefix works too)",
                  title_justify="left")
    for col in ("name", "accelerators", "serving", "ports", "link", "racks", "levels", "technology",
                "description"):
        table.add_column(col, justify="right" if col in ("accelerators", "serving", "ports", "levels") else "left")
    for r in rows:
        racks = f"{r['racks']} x {r['rack_size']}" if r["levels"] == 2 else "-"
        table.add_row(str(r["name"]), str(r["accelerators"]), str(r["serving"]), str(r["ports"]),
                      f"{r['link_Gbps']:g} Gb/s", racks, str(r["levels"]), str(r["technology"]),
                      str(r["description"]))
    out.print(table)
