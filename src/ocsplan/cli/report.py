"""`ocsplan report`: one self-contained HTML page for a plan (and its simulation)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import InstanceError, OcsplanError, PlanError
from ..files import read_json, read_text, write_atomic
from ..limits import MAX_COLUMNAR_BYTES, MAX_JSON_BYTES
from .app import app, handle_errors
from .checks import check_outputs, check_suffix
from .streams import write_stdout

__all__ = ["report", "schema"]


def _text(path: Path, option: str, texts: dict[Path, str], limit: int = MAX_JSON_BYTES) -> str:
    """The file's text, kept in ``texts`` (for the page's provenance: each file is read once more,
    never twice more); with ``option``, an error names it too."""
    try:
        texts[path] = read_text(path, lambda m: PlanError(f"{path}: {m}"), limit)
        return texts[path]
    except OcsplanError as exc:
        if not option:
            raise
        raise InstanceError(option, "", str(exc)) from None


def _read(path: Path, option: str, texts: dict[Path, str]) -> dict[str, Any]:
    """The file's JSON object (see :func:`_text`)."""
    text = _text(path, option, texts)
    try:
        return read_json(text, str(path))
    except OcsplanError as exc:
        if not option:
            raise
        raise InstanceError(option, "", str(exc)) from None


@app.command()
@handle_errors
def report(
    plan: Annotated[Path, typer.Argument(help="plan JSON (solve --json)")],
    out: Annotated[Path, typer.Option("--out", help="the HTML file to write")],
    simulation: Annotated[Path | None, typer.Option("--simulation", help="simulate --json output")] = None,
    circuits: Annotated[Path | None, typer.Option("--circuits", help="realize --out output")] = None,
    decode: Annotated[list[Path] | None, typer.Option(
        "--decode", help="decode --json output (repeat: one per fabric, e.g. OCS and EPS)")] = None,
    faults: Annotated[Path | None, typer.Option("--faults", help="faults JSON (ocsplan.faults/1)")] = None,
) -> None:
    """Write one HTML page: summary, port budget, demands, host graphs, decode, faults.

    Every input is read by its reader or held to its schema, and must belong to the plan:
    a file of another plan or deployment is refused naming its option."""
    from ..deploy.faults import report_from_dict
    from ..plan import load_plan
    from ..planning.check import require_valid
    from ..realization.circuits import load_circuits, plan_mismatch
    from ..report import build_report
    from ..report.inputs import check_decode, check_faults, check_simulation
    from ..workload.step import step_from_dict

    check_suffix(out, "--out", (".html", ".htm"))
    check_outputs((out, "--out"), inputs=((plan, "PLAN"), (simulation, "--simulation"), (circuits, "--circuits"),
                                          (faults, "--faults"), *((d, "--decode") for d in decode or ())))
    the_plan = load_plan(plan)
    require_valid(the_plan, str(plan))
    texts: dict[Path, str] = {}
    _text(plan, "", texts)
    sim_data = None if simulation is None else _read(simulation, "--simulation", texts)
    if sim_data is not None:
        check_simulation(sim_data, the_plan, "--simulation", str(simulation))
    realized = None
    if circuits is not None:
        try:
            realized = load_circuits(circuits)
        except OcsplanError as exc:
            raise InstanceError("--circuits", "", str(exc)) from None
        differs = plan_mismatch(realized.plan, the_plan)
        if differs:
            raise InstanceError("--circuits", "", f"{circuits}: {differs}")
        _text(circuits, "--circuits", texts, MAX_COLUMNAR_BYTES)  # read above by its reader, within its limit
    steps = [(str(p), _read(p, "--decode", texts)) for p in decode or ()]
    check_decode(steps, the_plan, "--decode")
    try:
        read_steps = [(Path(p).name, step_from_dict(d, p)) for p, d in steps]
    except OcsplanError as exc:
        raise InstanceError("--decode", "", str(exc)) from None
    analysis = None
    if faults is not None:
        faults_data = _read(faults, "--faults", texts)
        check_faults(faults_data, the_plan, "--faults", str(faults))
        analysis = report_from_dict(faults_data)
    inputs = [("PLAN", plan), ("--simulation", simulation), ("--circuits", circuits),
              *(("--decode", p) for p in decode or ()), ("--faults", faults)]
    from .. import __version__
    from ..report.provenance import Provenance, page_date, source

    sources = tuple(source(option, path.name, texts[path].encode("utf-8"))
                    for option, path in inputs if path is not None)
    provenance = Provenance(__version__, page_date(os.environ.get("SOURCE_DATE_EPOCH")), sources)
    page = build_report(the_plan, sim_data, circuits=realized, decode=read_steps, faults=analysis,
                        provenance=provenance)
    write_atomic(out, page)


@app.command()
@handle_errors
def schema(
    name: Annotated[str | None, typer.Argument(help="schema name, e.g. plan-1; none lists them")] = None,
) -> None:
    """Print the JSON Schema of one file format ocsplan writes (or list the names)."""
    from ..schemas import schema_names, schema_text

    if name is None:
        write_stdout("".join(f"{n}\n" for n in schema_names()))
    else:
        write_stdout(schema_text(name))
