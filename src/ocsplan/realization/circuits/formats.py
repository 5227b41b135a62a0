"""Which schema a circuits file has: the one entry that writes and reads either ``ocsplan.circuits/1``
(:mod:`.codec`) or the columnar ``ocsplan.circuits/2`` (:mod:`.columnar`), and the size limits that
go with each."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...errors import PlanError
from ...files import read_head, read_json, read_text, write_atomic
from ...limits import MAX_CIRCUITS, MAX_COLUMNAR_BYTES, MAX_JSON_BYTES
from .codec import SCHEMA, circuits_from_dict_1, dumps_1
from .columnar import COLUMNAR_HEAD, SCHEMA_2, circuits_from_columns, dumps_columnar
from .types import Circuits

__all__ = [
    "FORMATS",
    "circuits_from_dict",
    "dumps_circuits",
    "load_circuits",
    "loads_circuits",
    "write_circuits",
]

FORMATS = ("auto", "1", "2")
_HEAD = 256  # bytes (characters) of a file's beginning that tell a columnar one


def dumps_circuits(c: Circuits, circuits_format: str = "auto") -> str:
    """JSON text of ``ocsplan.circuits/1`` (format "1"), of the columnar ``ocsplan.circuits/2``
    (format "2") or, by default ("auto"), /1 when the realization fits /1's limits and /2 beyond.

    A realization beyond what the reader accepts of the format (/1: :data:`~ocsplan.limits.MAX_CIRCUITS`
    circuits, :data:`~ocsplan.limits.MAX_JSON_BYTES` of text; /2: :func:`.columnar.dumps_columnar`) is
    a PlanError, so no file is written that ``validate``, ``simulate`` or ``faults`` would refuse."""
    if circuits_format not in FORMATS:
        raise ValueError(f"circuits format {circuits_format!r}, expected one of {', '.join(FORMATS)}")
    if circuits_format != "2":
        if len(c.circuits) <= MAX_CIRCUITS:
            text = dumps_1(c)
            if len(text) <= MAX_JSON_BYTES:
                return text
            if circuits_format == "1":
                raise PlanError(f"circuits: {len(text) >> 20} MiB of JSON, a circuits file holds at most "
                                f"{MAX_JSON_BYTES >> 20} MiB")
        elif circuits_format == "1":
            raise PlanError(f"circuits: {len(c.circuits)} circuits, a circuits file holds at most {MAX_CIRCUITS}")
    return dumps_columnar(c)


def write_circuits(c: Circuits, path: str | Path, circuits_format: str = "auto") -> None:
    write_atomic(path, dumps_circuits(c, circuits_format))


def circuits_from_dict(data: Mapping[str, Any], source: str = "<circuits>", size: int | None = None) -> Circuits:
    """Read a circuits dict of either schema (as :func:`.codec.circuits_to_dict` or
    :func:`.columnar.circuits_to_columns` writes it); PlanError if malformed or if it has a key the
    schema does not know. ``size`` (the characters of the file's text) bounds what a columnar file's
    routing tables expand to."""
    if data.get("schema") == SCHEMA_2:
        return circuits_from_columns(data, source, size)
    if data.get("schema") != SCHEMA:
        raise PlanError(f"{source}: schema: expected {SCHEMA!r} or {SCHEMA_2!r}, got {data.get('schema')!r}")
    return circuits_from_dict_1(data, source)


def _limit(head: str) -> int:
    """The size a circuits file may have: /2's (:data:`~ocsplan.limits.MAX_COLUMNAR_BYTES`) if it begins
    as a /2 file does (its schema key first), else :data:`~ocsplan.limits.MAX_JSON_BYTES`."""
    return MAX_COLUMNAR_BYTES if COLUMNAR_HEAD.match(head) else MAX_JSON_BYTES


def loads_circuits(text: str, source: str = "<circuits>") -> Circuits:
    return circuits_from_dict(read_json(text, source, _limit(text[:_HEAD])), source, len(text))


def load_circuits(path: str | Path) -> Circuits:
    """A circuits file of either schema, at most :data:`~ocsplan.limits.MAX_JSON_BYTES`, or
    :data:`~ocsplan.limits.MAX_COLUMNAR_BYTES` for a columnar one (refused unread beyond)."""
    limit = _limit(read_head(path, _HEAD).decode("utf-8", "replace"))
    return loads_circuits(read_text(path, lambda msg: PlanError(f"{path}: {msg}"), limit), str(path))
