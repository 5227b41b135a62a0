"""`ocsplan report`: one self-contained HTML page for a plan (and its simulation)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..errors import PlanError
from ..files import read_json, read_text, write_atomic
from .app import app, check_outputs, check_suffix, handle_errors
from .console import write_stdout

__all__ = ["report", "schema"]


def _load(path: Path) -> dict[str, object]:
    return read_json(read_text(path, lambda m: PlanError(f"{path}: {m}")), str(path))


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
    """Write one HTML page: summary, port budget, demands, host graphs, decode, faults."""
    from ..report import build_report

    check_suffix(out, "--out", (".html", ".htm"))
    check_outputs((out, "--out"))
    page = build_report(_load(plan), None if simulation is None else _load(simulation),
                        circuits=None if circuits is None else _load(circuits),
                        decode=[(p.name, _load(p)) for p in decode or ()],
                        faults=None if faults is None else _load(faults))
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
