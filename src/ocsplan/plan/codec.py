"""A plan's JSON form: one codec per schema (:mod:`.v1` shared-host, :mod:`.v2` stacked),
chosen by the plan's kind when writing and by the file's ``schema`` when reading."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..errors import PlanError
from ..fields import Fields
from ..files import read_json, read_text, write_atomic
from ..limits import MAX_JSON_BYTES, MAX_TOTAL_DEMANDS
from .constructions import CONSTRUCTIONS, SCHEMA, SCHEMA_STACKED, SHARED_HOST, STACKED
from .types import Plan, plan_kind
from .v1 import shared_host_from_dict, shared_host_to_dict
from .v2 import stacked_from_dict, stacked_to_dict

__all__ = ["DECODERS", "ENCODERS", "dumps_plan", "load_plan", "loads_plan", "plan_from_dict", "plan_to_dict",
           "write_plan"]

ENCODERS: dict[str, Callable[[Plan], dict[str, Any]]] = {
    SHARED_HOST: shared_host_to_dict,
    STACKED: stacked_to_dict,
}
DECODERS: dict[str, Callable[[Mapping[str, Any], Fields], Plan]] = {
    SHARED_HOST: shared_host_from_dict,
    STACKED: stacked_from_dict,
}
_CONSTRUCTION_WORDS = " or ".join(map(repr, CONSTRUCTIONS))  # "'shared-host' or 'stacked'"


def plan_to_dict(plan: Plan) -> dict[str, Any]:
    return ENCODERS[plan_kind(plan)](plan)


def dumps_plan(plan: Plan) -> str:
    return json.dumps(plan_to_dict(plan), indent=1, ensure_ascii=False) + "\n"


def plan_from_dict(data: Mapping[str, Any], source: str = "<plan>") -> Plan:
    """Read a plan dict (as written by :func:`plan_to_dict`); raises PlanError.

    Every field is type-checked and bounded (world, ports, multiplicities, payloads,
    finite times), so a hostile plan is refused before any tool works on it."""
    f = Fields(lambda field, message: PlanError(f"{source}: {field}: {message}"), top="plan")
    schema = data.get("schema")
    if schema not in (SCHEMA, SCHEMA_STACKED):
        raise PlanError(f"{source}: schema: expected {SCHEMA!r} or {SCHEMA_STACKED!r}, got {str(schema)[:40]!r}")
    construction = data.get("construction", SHARED_HOST) if schema == SCHEMA_STACKED else SHARED_HOST
    if construction not in CONSTRUCTIONS:
        raise f.fail("construction", f"expected {_CONSTRUCTION_WORDS}, got {str(construction)[:40]!r}")
    demands = _demand_count(data)
    if demands > MAX_TOTAL_DEMANDS:
        raise f.fail("meshes", f"{demands} demands in all, the limit is {MAX_TOTAL_DEMANDS} (as of an instance)")
    return DECODERS[construction](data, f)


def _demand_count(data: Mapping[str, Any]) -> int:
    """Demands of a plan's meshes, counted before the typed walk (anything malformed counts 0 and is
    named by the reader)."""
    meshes = data.get("meshes")
    total = 0
    for mesh in meshes if isinstance(meshes, list) else ():
        axes = mesh.get("axes") if isinstance(mesh, Mapping) else None
        for axis in axes if isinstance(axes, list) else ():
            demands = axis.get("demands") if isinstance(axis, Mapping) else None
            total += len(demands) if isinstance(demands, list) else 0
    return total


def loads_plan(text: str, source: str = "<plan>") -> Plan:
    return plan_from_dict(read_json(text, source), source)


def load_plan(path: str | Path) -> Plan:
    """A plan file, at most :data:`~ocsplan.limits.MAX_JSON_BYTES` (refused unread beyond)."""
    return loads_plan(read_text(path, lambda msg: PlanError(f"{path}: {msg}"), MAX_JSON_BYTES), str(path))


def write_plan(plan: Plan, path: str | Path) -> None:
    write_atomic(path, dumps_plan(plan))
