"""``--json`` for the commands whose answer is one table (``ocsplan.rows/1``).

The rows carry the table's quantities as numbers in SI units (seconds, bytes, watts) and the
labels as strings, one object per row, keyed by the column's name in the JSON; the schema is
``ocsplan schema rows-1``. Commands with a richer answer have their own format (plan, decode,
compare, ...).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

import typer

__all__ = ["ROWS_SCHEMA", "RowsJsonOpt", "dumps_rows"]

ROWS_SCHEMA = "ocsplan.rows/1"

RowsJsonOpt = Annotated[str | None, typer.Option(
    "--json", help="write the table's rows (ocsplan.rows/1, numbers in SI units) to PATH, or - for stdout")]


def _value(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def dumps_rows(command: str, title: str, rows: Sequence[Mapping[str, Any]], notes: Sequence[str] = ()) -> str:
    """The rows JSON of one command's table; non-finite numbers become null."""
    value = {"schema": ROWS_SCHEMA, "command": command, "title": title,
             "rows": [{k: _value(v) for k, v in row.items()} for row in rows], "notes": list(notes)}
    return json.dumps(value, indent=1, allow_nan=False) + "\n"
