"""Schema ``ocsplan.plan/2``: stacked-link plans, a circulant per axis and no host generators."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..fields import Fields, KeySpec
from ..limits import MAX_AXES, MAX_DEMANDS, MAX_MESHES, MAX_PAYLOAD, MAX_PORTS, MAX_WEIGHT, MAX_WORLD, check_int
from .constructions import SCHEMA_STACKED, STACKED
from .header import BIG, HEADER_KEYS, footer_to_dict, header_from_dict, header_to_dict
from .types import RANKS, AxisPlan, CirculantPlan, DemandPlan, MeshPlan, Plan

__all__ = ["KEYS", "stacked_from_dict", "stacked_to_dict"]

_DEMAND: KeySpec = dict.fromkeys(("collective", "payload_bytes", "weight", "schedule", "uses", "phases",
                                  "volume_bytes", "multiplicity", "time_s"))
_CIRCULANT: KeySpec = dict.fromkeys(("offsets", "multiplicity", "ports", "diameter", "search", "lower_bound"))
_AXIS: KeySpec = {"size": None, "topology": None, "degree": None, "circulant": _CIRCULANT, "demands": (_DEMAND,)}
# every key a stacked plan may have (unknown ones are refused with the nearest known)
KEYS: KeySpec = {**dict.fromkeys(HEADER_KEYS), "construction": None, "generators": None,
                 "meshes": ({"name": None, "shape": None, "ranks": None, "axes": (_AXIS,)},)}


def _stacked_axis(axis: AxisPlan) -> dict[str, Any]:
    circ = axis.circulant
    return {
        "size": axis.size,
        "topology": axis.topology,
        "degree": axis.degree,
        "circulant": None if circ is None else {
            "offsets": list(circ.offsets),
            "multiplicity": circ.multiplicity,
            "ports": circ.ports,
            "diameter": circ.diameter,
            "search": circ.search,
            "lower_bound": circ.lower_bound,
        },
        "demands": [
            {
                "collective": d.collective,
                "payload_bytes": d.payload_bytes,
                "weight": d.weight,
                "schedule": d.schedule,
                "uses": list(d.uses),
                "phases": d.phases,
                "volume_bytes": d.volume_bytes,
                "multiplicity": d.multiplicity,
                "time_s": d.time_s,
            }
            for d in axis.demands
        ],
    }


def stacked_to_dict(plan: Plan) -> dict[str, Any]:
    """A stacked plan as its JSON object."""
    return {
        "schema": SCHEMA_STACKED,
        "construction": plan.construction,
        **header_to_dict(plan),
        "generators": [],
        "meshes": [
            {"name": mesh.name, "shape": list(mesh.shape), "ranks": RANKS,
             "axes": [_stacked_axis(axis) for axis in mesh.axes]}
            for mesh in plan.meshes
        ],
        **footer_to_dict(plan),
    }


def stacked_from_dict(data: Mapping[str, Any], f: Fields) -> Plan:
    """A stacked plan (schema ``ocsplan.plan/2``): circulant axes, no host generators;
    every field typed and bounded as in the shared-host reader, no unknown key."""
    f.tree(data, KEYS)
    world = f.integer(data, "world", "", 2, MAX_WORLD)
    ports = f.integer(data, "ports", "", 1, MAX_PORTS)
    if f.items(data, "generators", "", 2 * MAX_PORTS):
        raise f.fail("generators", "a stacked plan has no cube or fold generators")
    meshes = []
    for mi, mesh in enumerate(f.items(data, "meshes", "", MAX_MESHES)):
        mw = f"meshes[{mi}]"
        if not isinstance(mesh, Mapping):
            raise f.fail(mw, "expected an object")
        if mesh.get("ranks", RANKS) != RANKS:
            raise f.fail(f"{mw}.ranks", f"only {RANKS!r} is known")
        axes = []
        for ai, axis in enumerate(f.items(mesh, "axes", mw, MAX_AXES)):
            aw = f"{mw}.axes[{ai}]"
            size = f.integer(axis, "size", aw, 1, world)
            raw = axis.get("circulant") if isinstance(axis, Mapping) else None
            circ = None
            if raw is not None:
                cw = f"{aw}.circulant"
                circ = CirculantPlan(
                    offsets=tuple(
                        check_int(x, f.fail, f"{cw}.offsets", 1, max(size - 1, 1))
                        for x in f.items(raw, "offsets", cw, MAX_PORTS)
                    ),
                    multiplicity=f.integer(raw, "multiplicity", cw, 1, ports),
                    diameter=f.integer(raw, "diameter", cw, 0, size),
                    search=f.string(raw, "search", cw),
                    lower_bound=f.integer(raw, "lower_bound", cw, 0, size),
                )
            demands = []
            for k, d in enumerate(f.items(axis, "demands", aw, MAX_DEMANDS)):
                dw = f"{aw}.demands[{k}]"
                demands.append(DemandPlan(
                    collective=f.string(d, "collective", dw),
                    payload_bytes=f.integer(d, "payload_bytes", dw, 1, MAX_PAYLOAD),
                    weight=f.number(d, "weight", dw, 0.0, MAX_WEIGHT),
                    schedule=f.string(d, "schedule", dw),
                    groups=(),
                    uses=tuple(
                        check_int(u, f.fail, f"{dw}.uses", 0, world) for u in f.items(d, "uses", dw, 2 * MAX_PORTS)
                    ),
                    phases=f.integer(d, "phases", dw, 0, 1 << 30),
                    volume_bytes=f.number(d, "volume_bytes", dw, 0.0, BIG),
                    multiplicity=f.integer(d, "multiplicity", dw, 1, ports),
                    time_s=f.number(d, "time_s", dw, 0.0, BIG),
                ))
            axes.append(AxisPlan(
                size=size,
                bits=(),
                topology=f.string(axis, "topology", aw),
                degree=f.integer(axis, "degree", aw, 0, 2 * MAX_PORTS),
                demands=tuple(demands),
                circulant=circ,
            ))
        shape = f.items(mesh, "shape", mw, MAX_AXES)
        meshes.append(MeshPlan(
            f.string(mesh, "name", mw), tuple(check_int(x, f.fail, f"{mw}.shape", 1, world) for x in shape), tuple(axes)
        ))
    return Plan(generators=(), meshes=tuple(meshes), construction=STACKED, **header_from_dict(data, f, world, ports))
