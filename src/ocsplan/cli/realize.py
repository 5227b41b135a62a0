"""Realization commands: realize a plan on a fabric file, validate circuits."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import PlanError
from ..plan import Plan, load_plan
from .app import app, emit_json, err, fail, handle_errors, out

if TYPE_CHECKING:
    from ..realization.circuits import Circuits

# the realization modules (networkx among them) are imported by the commands that use them

__all__ = ["realize_command", "realize_plan", "report_realization", "validate_command"]


def realize_plan(plan: Plan, fabric_path: Path, placement: str) -> Circuits:
    from ..realization.fabrics import load_fabric
    from ..realization.realize import realize

    return realize(plan, load_fabric(fabric_path), placement)


def report_realization(c: Circuits, target: str | None, quiet: bool = False) -> None:
    from ..realization.circuits import dumps_circuits
    from .render import realization_tables

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
    from ..planning.check import check_plan

    plan = load_plan(plan_path)
    problems = check_plan(plan)
    if problems:
        raise PlanError(f"{plan_path}: {problems[0]}")
    report_realization(realize_plan(plan, fabric, placement), out_path)


@app.command("validate")
@handle_errors
def validate_command(
    circuits_path: Annotated[Path, typer.Argument(metavar="CIRCUITS", help="circuits JSON (ocsplan realize --out)")],
    plan_path: Annotated[
        Path | None, typer.Option("--plan", help="also check every schedule transfer of this plan")] = None,
) -> None:
    """Check a circuits file independently of the realizer; faults one per line, exit 1."""
    from ..realization.circuits import load_circuits
    from ..realization.validate import validate as validate_circuits

    circuits = load_circuits(circuits_path)
    plan = load_plan(plan_path) if plan_path is not None else None
    faults = validate_circuits(circuits, plan)
    for fault in faults:
        out.print(str(fault), markup=False, soft_wrap=True)
    if faults:
        raise fail(f"{circuits_path}: {len(faults)} fault(s)", 1)
    demands = sum(1 for _ in circuits.routes)
    out.print(f"{circuits_path}: valid: {circuits.plan.world} nodes, {len(circuits.circuits)} circuits, "
              f"{len(circuits.devices)} devices, {circuits.ports_used} ports per node, {demands} routing tables"
              + (f", every transfer of {plan_path} has a circuit" if plan is not None else ""), markup=False)
