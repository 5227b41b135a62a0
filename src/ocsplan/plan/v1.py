"""Schema ``ocsplan.plan/1``: shared-host plans, Cayley generators of (Z2)^n as bit masks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..cayley import mask_to_str
from ..fields import Fields, KeySpec
from ..limits import (
    MAX_AXES,
    MAX_DEMANDS,
    MAX_MESHES,
    MAX_PAYLOAD,
    MAX_PORTS,
    MAX_TREE_ROUTE_RANKS,
    MAX_WEIGHT,
    MAX_WORLD,
    check_int,
)
from .constructions import SCHEMA
from .header import BIG, HEADER_KEYS, footer_to_dict, header_from_dict, header_to_dict, read_mask
from .kinds import PLAN_KINDS
from .types import AxisPlan, DemandPlan, GeneratorPlan, MeshPlan, Plan

__all__ = ["KEYS", "shared_host_from_dict", "shared_host_to_dict"]

_KIND_WORDS = f"{', '.join(PLAN_KINDS[:-1])} or {PLAN_KINDS[-1]}"  # "cube, fold or ring"

_DEMAND: KeySpec = dict.fromkeys(("collective", "payload_bytes", "weight", "schedule", "layers", "fold", "uses",
                                  "phases", "volume_bytes", "multiplicity", "time_s"))
_AXIS: KeySpec = {"size": None, "topology": None, "degree": None, "ring": None, "demands": (_DEMAND,)}
_MESH: KeySpec = {"name": None, "shape": None, "bits": None, "axes": (_AXIS,)}
# every key a shared-host plan may have (unknown ones are refused with the nearest known)
KEYS: KeySpec = {**dict.fromkeys(HEADER_KEYS), "generators": (dict.fromkeys(("mask", "multiplicity", "kind")),),
                 "meshes": (_MESH,)}


def shared_host_to_dict(plan: Plan) -> dict[str, Any]:
    """A shared-host plan as its JSON object."""
    n = plan.n
    return {
        "schema": SCHEMA,
        **header_to_dict(plan),
        "generators": [
            {"mask": mask_to_str(g.mask, n), "multiplicity": g.multiplicity, "kind": g.kind}
            for g in plan.generators
        ],
        "meshes": [
            {
                "name": mesh.name,
                "shape": list(mesh.shape),
                "bits": [list(axis.bits) for axis in mesh.axes],
                "axes": [
                    {
                        "size": axis.size,
                        "topology": axis.topology,
                        "degree": axis.degree,
                        **({"ring": True} if axis.ring else {}),
                        "demands": [
                            {
                                "collective": d.collective,
                                "payload_bytes": d.payload_bytes,
                                "weight": d.weight,
                                "schedule": d.schedule,
                                "layers": [list(g) for g in d.groups],
                                **({"fold": [mask_to_str(g, n) for g in d.fold]} if d.fold else {}),
                                "uses": [mask_to_str(u, n) for u in d.uses],
                                "phases": d.phases,
                                "volume_bytes": d.volume_bytes,
                                "multiplicity": d.multiplicity,
                                "time_s": d.time_s,
                            }
                            for d in axis.demands
                        ],
                    }
                    for axis in mesh.axes
                ],
            }
            for mesh in plan.meshes
        ],
        **footer_to_dict(plan),
    }


def shared_host_from_dict(data: Mapping[str, Any], f: Fields) -> Plan:
    """A shared-host plan from its JSON object; every field typed and bounded, no unknown key."""
    f.tree(data, KEYS)
    world = f.integer(data, "world", "", 2, MAX_WORLD)
    if world & (world - 1):
        raise f.fail("world", f"{world} is not a power of two")
    n = world.bit_length() - 1
    ports = f.integer(data, "ports", "", 1, MAX_PORTS)
    generators = []
    for j, g in enumerate(f.items(data, "generators", "", 2 * MAX_PORTS)):
        where = f"generators[{j}]"
        kind = f.string(g, "kind", where)
        if kind not in PLAN_KINDS:
            raise f.fail(f"{where}.kind", f"expected {_KIND_WORDS}, got {kind[:20]!r}")
        mask = read_mask(f, f.get(g, "mask", where), f"{where}.mask", n)
        generators.append(GeneratorPlan(mask, f.integer(g, "multiplicity", where, 1, ports), kind))
    meshes = []
    for mi, mesh in enumerate(f.items(data, "meshes", "", MAX_MESHES)):
        mw = f"meshes[{mi}]"
        axes_raw = f.items(mesh, "axes", mw, MAX_AXES)
        bits_raw = f.items(mesh, "bits", mw, MAX_AXES)
        shape = f.items(mesh, "shape", mw, MAX_AXES)
        if len(bits_raw) != len(axes_raw):
            raise f.fail(f"{mw}.bits", f"{len(bits_raw)} bit lists for {len(axes_raw)} axes")
        axes = []
        for ai, (axis, bits) in enumerate(zip(axes_raw, bits_raw, strict=True)):
            aw = f"{mw}.axes[{ai}]"
            if not isinstance(bits, list) or len(bits) > n:
                raise f.fail(f"{mw}.bits[{ai}]", f"expected a list of at most {n} bit positions")
            demands = []
            for k, d in enumerate(f.items(axis, "demands", aw, MAX_DEMANDS)):
                dw = f"{aw}.demands[{k}]"
                layers = f.items(d, "layers", dw, n)
                uses = f.items(d, "uses", dw, 2 * MAX_PORTS)
                fold = f.items(d, "fold", dw, 2 * MAX_PORTS) if isinstance(d, Mapping) and "fold" in d else []
                schedule = f.string(d, "schedule", dw)
                if schedule == "tree-route" and len(bits) > MAX_TREE_ROUTE_RANKS.bit_length() - 1:
                    raise f.fail(f"{dw}.schedule", f"tree-route is limited to axes of at most {MAX_TREE_ROUTE_RANKS}"
                                 f" ranks (this one has 2^{len(bits)})")
                demands.append(DemandPlan(
                    collective=f.string(d, "collective", dw),
                    payload_bytes=f.integer(d, "payload_bytes", dw, 1, MAX_PAYLOAD),
                    weight=f.number(d, "weight", dw, 0.0, MAX_WEIGHT),
                    schedule=schedule,
                    groups=tuple(
                        tuple(check_int(b, f.fail, f"{dw}.layers[{li}]", 0, n - 1) for b in _items(g, f, dw))
                        for li, g in enumerate(layers)
                    ),
                    uses=tuple(read_mask(f, u, f"{dw}.uses[{ui}]", n) for ui, u in enumerate(uses)),
                    phases=f.integer(d, "phases", dw, 0, 1 << 30),
                    volume_bytes=f.number(d, "volume_bytes", dw, 0.0, BIG),
                    multiplicity=f.integer(d, "multiplicity", dw, 1, ports),
                    time_s=f.number(d, "time_s", dw, 0.0, BIG),
                    fold=tuple(read_mask(f, u, f"{dw}.fold[{ui}]", n) for ui, u in enumerate(fold)),
                ))
            ring = axis.get("ring", False)
            if not isinstance(ring, bool):
                raise f.fail(f"{aw}.ring", "expected true or false")
            axes.append(AxisPlan(
                size=f.integer(axis, "size", aw, 1, world),
                bits=tuple(check_int(b, f.fail, f"{mw}.bits[{ai}]", 0, n - 1) for b in bits),
                topology=f.string(axis, "topology", aw),
                degree=f.integer(axis, "degree", aw, 0, 2 * MAX_PORTS),
                demands=tuple(demands),
                ring=ring,
            ))
        meshes.append(MeshPlan(
            f.string(mesh, "name", mw),
            tuple(check_int(s, f.fail, f"{mw}.shape", 1, world) for s in shape),
            tuple(axes),
        ))
    return Plan(generators=tuple(generators), meshes=tuple(meshes), **header_from_dict(data, f, world, ports))


def _items(value: object, f: Fields, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise f.fail(f"{where}.layers", "expected lists of bit positions")
    return value
