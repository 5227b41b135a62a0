"""The report's inputs checked before a page is drawn: each file holds to its schema, within
bounds, and belongs to the plan the page is about.

Pure: takes the plan (a :class:`~ocsplan.plan.Plan`), the already-read JSON objects and the
option and path each came from; a file that breaks a rule is one
:class:`~ocsplan.errors.InstanceError` naming the option, the file and the field (exit 2). The
plan and the circuits are read by their own readers (``load_plan``, ``load_circuits``) in the
CLI; simulation, decode and faults files are held to their JSON Schemas here (``ocsplan schema
NAME`` prints them), then decode and faults files are read into a Step (``step_from_dict``, which
re-derives every number a decode file restates) and a FaultReport.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import InstanceError
from ..limits import MAX_TOTAL_DEMANDS
from ..plan import Plan

__all__ = [
    "MAX_REPORT_DECODES",
    "MAX_REPORT_FAULTS",
    "check_decode",
    "check_faults",
    "check_schema",
    "check_simulation",
]

MAX_REPORT_FAULTS = 20_000  # fault rows of a faults file (``faults --sample`` draws at most as many)
MAX_REPORT_DECODES = 16  # --decode files of one page
_MAX_ROWS = MAX_TOTAL_DEMANDS  # demands of one plan (as of an instance), hence of its simulation


def check_schema(data: Mapping[str, Any], name: str, option: str, path: str) -> None:
    """``data`` valid under the shipped schema ``name`` (e.g. ``faults-1``), else the first error."""
    from ..schemas import first_error

    error = first_error(data, name)
    if error is not None:
        raise InstanceError(option, "", f"{path}: {error[0]}: {error[1]}")


def _demand_keys(plan: Plan) -> list[tuple[str, int, int, str, int]]:
    """(mesh, axis, demand, collective, payload bytes) of every demand of the plan, in file order."""
    return [(mesh.name, a, d, demand.collective, demand.payload_bytes)
            for mesh in plan.meshes for a, axis in enumerate(mesh.axes) for d, demand in enumerate(axis.demands)]


def check_simulation(sim: Mapping[str, Any], plan: Plan, option: str, path: str) -> None:
    """A simulation of this plan: same instance, one row per demand, each row a demand of the plan
    (mesh, axis, index) with its collective and payload."""
    rows = sim.get("demands")
    if isinstance(rows, list) and len(rows) > _MAX_ROWS:  # before the schema walks every row
        raise InstanceError(option, "", f"{path}: demands: {len(rows)} rows, the plan has "
                                        f"{len(_demand_keys(plan))} demands")
    check_schema(sim, "simulation-1", option, path)
    if sim.get("faults"):
        raise InstanceError(option, "", f"{path}: faults: a simulation of the fabric with "
                                        f"{str(sim['faults'][0])[:40]} failed, not of the healthy plan")
    if sim["plan"] != plan.instance:
        raise InstanceError(option, "", f"{path}: plan: simulates {str(sim['plan'])[:80]!r}, "
                                        f"not {plan.instance[:80]!r}")
    rows, want = len(sim["demands"]), len(_demand_keys(plan))
    if rows > _MAX_ROWS or rows != want:
        raise InstanceError(option, "", f"{path}: demands: {rows} rows, the plan has {want} demands")
    demands = {(m, a, d): (c, p) for m, a, d, c, p in _demand_keys(plan)}
    seen = set()
    for i, row in enumerate(sim["demands"]):
        key = (row["mesh"], row["axis"], row["demand"])
        if key not in demands or key in seen:
            raise InstanceError(option, "", f"{path}: demands[{i}]: the plan has no demand {str(key[0])[:40]}"
                                            f"[{key[1]}].{key[2]} (or it is listed twice)")
        seen.add(key)
        if (row["collective"], row["payload_bytes"]) != demands[key]:
            raise InstanceError(option, "", f"{path}: demands[{i}]: {str(row['collective'])[:40]} of "
                                            f"{row['payload_bytes']} B, the plan's demand is {demands[key][0]} of "
                                            f"{demands[key][1]} B (a simulation of another plan)")


def check_faults(faults: Mapping[str, Any], plan: Plan, option: str, path: str) -> None:
    """A faults analysis of this plan: at most :data:`MAX_REPORT_FAULTS` rows, the plan's healthy
    objective, and demands the plan has."""
    rows = faults.get("faults")
    if isinstance(rows, list) and len(rows) > MAX_REPORT_FAULTS:  # before the schema walks every row
        raise InstanceError(option, "", f"{path}: faults: {len(rows)} rows exceed the limit of {MAX_REPORT_FAULTS}")
    check_schema(faults, "faults-1", option, path)
    rows = faults["faults"]
    healthy, objective = faults["healthy"]["objective"], plan.objective_s
    if not (isinstance(healthy, int | float) and math.isfinite(healthy)
            and math.isclose(healthy, objective, rel_tol=1e-9, abs_tol=1e-18)):
        raise InstanceError(option, "", f"{path}: healthy.objective: {healthy!r} is not the plan's objective "
                                        f"{objective!r} (a faults file of another plan)")
    known = {(m, a, d) for m, a, d, _, _ in _demand_keys(plan)}
    for i, fault in enumerate(rows):
        for j, demand in enumerate(fault["demands"]):
            if (demand["mesh"], demand["axis"], demand["demand"]) not in known:
                raise InstanceError(option, "", f"{path}: faults[{i}].demands[{j}]: the plan has no demand "
                                                f"{str(demand['mesh'])[:40]}[{demand['axis']}].{demand['demand']}")


def check_decode(steps: Sequence[tuple[str, Mapping[str, Any]]], plan: Plan, option: str) -> None:
    """Decode steps of this plan's deployment: the plan's world, and a split whose attention
    (KVP x TPA) and FFN (TPE x EP) meshes are the plan's (as ``workload --emit`` writes them)."""
    if len(steps) > MAX_REPORT_DECODES:
        raise InstanceError(option, "", f"{len(steps)} files exceed the limit of {MAX_REPORT_DECODES}")
    shapes = {m.name: list(m.shape) for m in plan.meshes}
    for path, step in steps:
        check_schema(step, "decode-1", option, path)
        if step["world"] != plan.world:
            raise InstanceError(option, "", f"{path}: world: {step['world']} ranks, the plan has {plan.world}")
        split = step["split"]
        want = {"attention": [split["kvp"], split["tpa"]], "ffn": [split["tpe"], split["ep"]]}
        for mesh, shape in want.items():
            if shapes.get(mesh) != shape:
                have = shapes.get(mesh)
                raise InstanceError(option, "", f"{path}: split: (KVP, TPA, EP, TPE) = ({split['kvp']}, "
                                                f"{split['tpa']}, {split['ep']}, {split['tpe']}) needs mesh {mesh} "
                                                f"of shape {shape}, the plan's is {have if have else 'missing'}")
