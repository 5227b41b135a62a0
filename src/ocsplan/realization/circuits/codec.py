"""Circuit files as JSON (schema ``ocsplan.circuits/1``): the writer and the bounded reader, and the
header both schemas share (the columnar ``ocsplan.circuits/2``, :mod:`.columnar`, builds on this
module; :mod:`.formats` picks between them)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from ...errors import PlanError
from ...fields import KeySpec, strict_tree
from ...gcpause import paused_gc
from ...limits import MAX_CIRCUITS, MAX_PORTS, MAX_WORLD, check_int
from ..fabrics import Level
from ..wiring import Inventory, LevelCount
from .labels import CIRCULANT, parse_circulant, parse_label
from .types import Circuit, Circuits, Counts, Device, FabricRef, GeneratorUse, Hop, NodePort, Placement, PlanRef, Route

__all__ = [
    "KEYS",
    "SCHEMA",
    "circuits_from_dict_1",
    "circuits_to_dict",
    "dumps_1",
    "header_from_dict",
    "header_to_dict",
]

SCHEMA = "ocsplan.circuits/1"
_MAX_INT = 1 << 40  # any integer field; the limits below are tighter where it matters


# -- writer ---------------------------------------------------------------------------


def _inventory(inv: Inventory) -> dict[str, Any]:
    return {
        "accelerators": inv.accelerators,
        "accelerator_ports": inv.accelerator_ports,
        "levels": [
            {"level": lv.level, "technology": lv.technology, "devices": lv.devices, "ports": lv.ports,
             "logical": lv.logical, "links_below": lv.links_below, "medium": lv.medium}
            for lv in inv.levels
        ],
        "converters": inv.converters,
        "converter_kind": inv.converter_kind,
    }


def header_to_dict(c: Circuits, schema: str = SCHEMA) -> dict[str, Any]:
    """The keys every circuits file begins with (``schema`` to ``generators``), as /1 writes them."""
    f = c.fabric
    return {
        "schema": schema,
        "plan": {
            "instance": c.plan.instance, "method": c.plan.method, "world": c.plan.world,
            "ports": c.plan.ports, "ports_used": c.plan.ports_used, "objective_s": c.plan.objective_s,
            "generators": [[label, p] for label, p in c.plan.generators],
        },
        "fabric": {
            "name": f.name, "source": f.source, "accelerators": f.accelerators, "ports": f.ports,
            "link_Bps": f.link_Bps, "rack_size": f.rack_size, "serving_racks": f.serving_racks,
            "levels": [{"technology": lv.technology, "radix": lv.radix, "down": lv.down, "up": lv.up}
                       for lv in f.levels],
            "wiring": {"domain": f.domain, "groups": f.groups, "down": f.down, "up": f.up,
                       "spines": f.spines, "fanout": f.fanout},
        },
        "placement": {
            "method": c.placement.method,
            "slot_bits": None if c.placement.slot_bits is None else list(c.placement.slot_bits),
            "accelerator": list(c.placement.accelerator),
        },
        "ports_used": c.ports_used,
        "reserved_ports": c.reserved_ports,
        "counts": {
            "nodes": c.counts.nodes, "ports_per_node": c.counts.ports_per_node,
            "circuits": c.counts.circuits, "intra_rack": c.counts.intra_rack,
            "inter_rack": c.counts.inter_rack,
            "installed": _inventory(c.counts.installed), "used": _inventory(c.counts.used),
        },
        "notes": list(c.notes),
        "generators": [
            {"generator": g.label, "kind": g.kind, "multiplicity": g.multiplicity, "ports": list(g.ports),
             "circuits": g.circuits, "inter_rack": g.inter_rack, "scope": g.scope}
            for g in c.generators
        ],
    }


def circuits_to_dict(c: Circuits) -> dict[str, Any]:
    return {
        **header_to_dict(c),
        "nodes": [[[e.port, e.peer, e.peer_port, e.generator] for e in node] for node in c.nodes],
        "circuits": [
            {"a": [x.a, x.a_port], "b": [x.b, x.b_port], "generator": x.generator, "scope": x.scope,
             "path": [[h.device, h.enter, h.leave] for h in x.path]}
            for x in c.circuits
        ],
        "devices": [
            {"id": d.id, "level": d.level, "rail": d.rail, "index": d.index, "radix": d.radix,
             "cross_connects": [list(pair) for pair in d.cross_connects]}
            for d in c.devices
        ],
        "routes": [
            {"mesh": r.mesh, "axis": r.axis, "demand": r.demand, "collective": r.collective,
             "schedule": r.schedule, "multiplicity": r.multiplicity, "bits": list(r.bits),
             "phases": r.phases,
             "table": [[[[peer, list(ports)] for peer, ports in phase] for phase in node] for node in r.table]}
            for r in c.routes
        ],
    }


# json.dumps(value, separators=(",", ":"), ensure_ascii=False) without a new encoder per call
# (a file writes one per line: hundreds of thousands for a large realization)
_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def _compact(value: Any) -> str:
    return _COMPACT(value)


def dumps_1(c: Circuits) -> str:
    """JSON text of ``ocsplan.circuits/1``, one list element per line for the long lists (nodes,
    circuits, devices, routing-table rows); :func:`.formats.dumps_circuits` checks /1's limits."""
    with paused_gc():  # a million short-lived lists and strings: no collection pass over the realization
        return _dumps(c)


def _dumps(c: Circuits) -> str:
    data = circuits_to_dict(c)
    parts = []
    for key, value in data.items():
        if key in ("generators", "nodes", "circuits", "devices") and value:
            body = ",\n".join("  " + _compact(v) for v in value)
            parts.append(f" {_compact(key)}: [\n{body}\n ]")
        elif key == "routes" and value:
            routes = []
            for route in value:
                head = {k: v for k, v in route.items() if k != "table"}
                rows = ",\n".join("    " + _compact(row) for row in route["table"])
                routes.append(f"  {_compact(head)[:-1]},\"table\":[\n{rows}\n  ]}}")
            parts.append(f" {_compact(key)}: [\n" + ",\n".join(routes) + "\n ]")
        else:
            parts.append(f" {_compact(key)}: {json.dumps(value, ensure_ascii=False)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


# -- reader ---------------------------------------------------------------------------


def _int(value: object) -> int:
    """A JSON integer, strictly (no bool, float or string), of a sane size."""
    if type(value) is int and -1 <= value <= _MAX_INT:  # the common case, first: a plain int in range
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an integer, got {repr(value)[:40]}")
    if not -1 <= value <= _MAX_INT:
        raise ValueError(f"integer of {value.bit_length()} bits out of range")
    return value


def _float(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise TypeError(f"expected a finite number, got {repr(value)[:40]}")
    return float(value)


def _str(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {repr(value)[:40]}")
    return value


def _first(exc: BaseException) -> str:
    if isinstance(exc, KeyError):
        return f"field {exc.args[0]!r} missing"
    return f"{type(exc).__name__}: {str(exc)[:120]}"


def _list(value: object) -> list[Any]:
    """A JSON array, strictly (an object or string is not iterated as one)."""
    if not isinstance(value, list):
        raise TypeError(f"expected a list, got {repr(value)[:40]}")
    return value


def _ints(values: object) -> tuple[int, ...]:
    return tuple(map(_int, _list(values)))


def _pair(value: object) -> tuple[int, int]:
    """A ``[node, port]`` pair."""
    items = _list(value)
    if len(items) != 2:
        raise ValueError(f"expected [node, port], got {len(items)} items")
    return _int(items[0]), _int(items[1])


def bounded(c: Circuits, source: str) -> Circuits:
    """The size limits (README "Limits") on the numbers the validator iterates over."""

    def fail(field: str, message: str) -> PlanError:
        return PlanError(f"{source}: {field}: {message}")

    check_int(c.plan.world, fail, "plan.world", 2, MAX_WORLD)
    check_int(c.plan.ports, fail, "plan.ports", 1, MAX_PORTS)
    check_int(c.fabric.ports, fail, "fabric.ports", 1, MAX_PORTS)
    check_int(c.fabric.accelerators, fail, "fabric.accelerators", 2, MAX_WORLD)
    check_int(c.fabric.rack_size, fail, "fabric.rack_size", 1, MAX_WORLD)
    check_int(c.fabric.serving_racks, fail, "fabric.serving_racks", 1, MAX_WORLD)
    check_int(c.fabric.domain, fail, "fabric.wiring.domain", 1, MAX_WORLD)
    two = len(c.fabric.levels) == 2
    check_int(c.fabric.fanout, fail, "fabric.wiring.fanout", 1 if two else 0, MAX_WORLD)
    for name in ("groups", "down", "up", "spines"):
        check_int(getattr(c.fabric, name), fail, f"fabric.wiring.{name}", 0, MAX_WORLD)
    if not 1 <= len(c.fabric.levels) <= 2:
        raise fail("fabric.levels", f"expected one or two levels, got {len(c.fabric.levels)}")
    for i, level in enumerate(c.fabric.levels):
        check_int(level.radix, fail, f"fabric.levels[{i}].radix", 2, 1 << 16)
    n = c.plan.world.bit_length() - 1
    for g in c.generators:
        check_int(g.multiplicity, fail, f"generators[{g.label[:20]}].multiplicity", 1, c.fabric.ports)
        if g.label.startswith(CIRCULANT):
            try:
                size, stride, _ = parse_circulant(g.label)
            except ValueError as exc:
                raise fail(f"generators[{g.label[:20]}]", str(exc)) from None
            if size * stride > c.plan.world:
                raise fail(f"generators[{g.label[:20]}]", f"axis of {size} x stride {stride} exceeds the world")
        elif len(g.label.removeprefix("ring:")) != n:
            raise fail(f"generators[{g.label[:20]}]", f"not a mask of {n} bits (world {c.plan.world})")
    if len(c.nodes) > c.fabric.accelerators:
        raise fail("nodes", f"{len(c.nodes)} nodes on a fabric of {c.fabric.accelerators} accelerators")
    for i, node in enumerate(c.nodes):  # a port per entry; circuits on one port are the validator's faults
        if len(node) > c.fabric.ports:
            raise fail(f"nodes[{i}]", f"{len(node)} ports, more than fabric.ports = {c.fabric.ports}")
    for r in c.routes:
        check_int(r.multiplicity, fail, f"routes[{r.mesh}:{r.axis}:{r.demand}].multiplicity", 1, c.fabric.ports)
    return c


def _inventory_from(data: Mapping[str, Any]) -> Inventory:
    return Inventory(
        accelerators=_int(data["accelerators"]),
        accelerator_ports=_int(data["accelerator_ports"]),
        levels=tuple(
            LevelCount(_int(lv["level"]), _str(lv["technology"]), _int(lv["devices"]), _int(lv["ports"]),
                       _int(lv["logical"]), _int(lv["links_below"]), _str(lv["medium"]))
            for lv in _list(data["levels"])
        ),
        converters=_int(data["converters"]),
        converter_kind=_str(data["converter_kind"]),
    )


_INVENTORY: KeySpec = {
    "accelerators": None, "accelerator_ports": None, "converters": None, "converter_kind": None,
    "levels": (dict.fromkeys(("level", "technology", "devices", "ports", "logical", "links_below", "medium")),),
}
# every key a circuits file may have (what :func:`circuits_to_dict` writes); others are refused
KEYS: KeySpec = {
    "schema": None,
    "plan": dict.fromkeys(("instance", "method", "world", "ports", "ports_used", "objective_s", "generators")),
    "fabric": {
        **dict.fromkeys(("name", "source", "accelerators", "ports", "link_Bps", "rack_size", "serving_racks")),
        "levels": (dict.fromkeys(("technology", "radix", "down", "up")),),
        "wiring": dict.fromkeys(("domain", "groups", "down", "up", "spines", "fanout")),
    },
    "placement": dict.fromkeys(("method", "slot_bits", "accelerator")),
    "ports_used": None,
    "reserved_ports": None,
    "counts": {**dict.fromkeys(("nodes", "ports_per_node", "circuits", "intra_rack", "inter_rack")),
               "installed": _INVENTORY, "used": _INVENTORY},
    "notes": None,
    "generators": (dict.fromkeys(("generator", "kind", "multiplicity", "ports", "circuits", "inter_rack", "scope")),),
    "nodes": None,
    "circuits": (dict.fromkeys(("a", "b", "generator", "scope", "path")),),
    "devices": (dict.fromkeys(("id", "level", "rail", "index", "radix", "cross_connects")),),
    "routes": (dict.fromkeys(("mesh", "axis", "demand", "collective", "schedule", "multiplicity", "bits", "phases",
                              "table")),),
}


def circuits_from_dict_1(data: Mapping[str, Any], source: str = "<circuits>") -> Circuits:
    """Read an ``ocsplan.circuits/1`` dict (as :func:`circuits_to_dict` writes it); PlanError if
    malformed or if it has a key :data:`KEYS` does not know."""
    if data.get("schema") != SCHEMA:
        raise PlanError(f"{source}: schema: expected {SCHEMA!r}, got {data.get('schema')!r}")
    strict_tree(data, KEYS, lambda field, message: PlanError(f"{source}: {field}: {message}"))
    for name, limit in (("circuits", MAX_CIRCUITS), ("nodes", MAX_WORLD)):
        if isinstance(data.get(name), list) and len(data[name]) > limit:
            raise PlanError(f"{source}: {name}: {len(data[name])} entries, the limit is {limit}")
    try:
        with paused_gc(keep=True):  # hundreds of thousands of small frozen dataclasses and tuples, all kept
            return bounded(_circuits(data), source)
    except (KeyError, TypeError, ValueError, IndexError, OverflowError) as exc:
        raise malformed(data, exc, source, "circuits-1") from None


def malformed(data: Mapping[str, Any], exc: BaseException, source: str, schema: str) -> PlanError:
    """The error of a file the reader could not read: the field the schema ``schema`` finds at fault, if any."""
    from ...schemas import first_error  # the error path only: name the field the schema finds

    found = first_error(data, schema)
    where = f"{found[0]}: " if found is not None else ""
    return PlanError(f"{source}: {where}malformed circuits file: {_first(exc)}")


def header_from_dict(data: Mapping[str, Any]) -> dict[str, Any]:
    """The header of a circuits file (``plan`` to ``generators``, as :func:`header_to_dict` writes it)
    as keyword arguments of :class:`Circuits`; KeyError, TypeError or ValueError if malformed."""
    p, f, w = data["plan"], data["fabric"], data["fabric"]["wiring"]
    counts = data["counts"]
    slot_bits = data["placement"]["slot_bits"]
    return dict(
        plan=PlanRef(_str(p["instance"]), _str(p["method"]), _int(p["world"]), _int(p["ports"]),
                     _int(p["ports_used"]), _float(p["objective_s"]),
                     tuple((_str(label), _int(mult)) for label, mult in _list(p["generators"]))),
        fabric=FabricRef(
            name=_str(f["name"]), source=_str(f["source"]), accelerators=_int(f["accelerators"]),
            ports=_int(f["ports"]), link_Bps=_float(f["link_Bps"]), rack_size=_int(f["rack_size"]),
            serving_racks=_int(f["serving_racks"]),
            levels=tuple(Level(_str(lv["technology"]), _int(lv["radix"]), _int(lv["down"]), _int(lv["up"]))
                         for lv in _list(f["levels"])),
            domain=_int(w["domain"]), groups=_int(w["groups"]), down=_int(w["down"]), up=_int(w["up"]),
            spines=_int(w["spines"]), fanout=_int(w["fanout"]),
        ),
        placement=Placement(_str(data["placement"]["method"]),
                            None if slot_bits is None else _ints(slot_bits),
                            _ints(data["placement"]["accelerator"])),
        ports_used=_int(data["ports_used"]),
        reserved_ports=_int(data["reserved_ports"]),
        generators=tuple(
            GeneratorUse(_str(g["generator"]), *parse_label(_str(g["generator"])), _int(g["multiplicity"]),
                         _ints(g["ports"]), _int(g["circuits"]), _int(g["inter_rack"]), _str(g["scope"]))
            for g in _list(data["generators"])
        ),
        counts=Counts(_int(counts["nodes"]), _int(counts["ports_per_node"]), _int(counts["circuits"]),
                      _int(counts["intra_rack"]), _int(counts["inter_rack"]),
                      _inventory_from(counts["installed"]), _inventory_from(counts["used"])),
        notes=tuple(_str(x) for x in _list(data.get("notes", []))),
    )


def _circuits(data: Mapping[str, Any]) -> Circuits:
    return Circuits(
        **header_from_dict(data),
        nodes=tuple(
            tuple(NodePort(_int(e[0]), _int(e[1]), _int(e[2]), _str(e[3])) for e in _list(node))
            for node in _list(data["nodes"])
        ),
        circuits=tuple(
            Circuit(*_pair(x["a"]), *_pair(x["b"]), _str(x["generator"]),
                    _str(x["scope"]), tuple(Hop(_str(h[0]), _int(h[1]), _int(h[2])) for h in _list(x["path"])))
            for x in _list(data["circuits"])
        ),
        devices=tuple(
            Device(_str(d["id"]), _int(d["level"]), _int(d["rail"]), _int(d["index"]), _int(d["radix"]),
                   tuple((_int(a), _int(b)) for a, b in _list(d["cross_connects"])))
            for d in _list(data["devices"])
        ),
        routes=tuple(
            Route(_str(r["mesh"]), _int(r["axis"]), _int(r["demand"]), _str(r["collective"]),
                  _str(r["schedule"]), _int(r["multiplicity"]), _ints(r["bits"]),
                  tuple(tuple(tuple((_int(peer), _ints(ports)) for peer, ports in _list(phase))
                              for phase in _list(node))
                        for node in _list(r["table"])))
            for r in _list(data["routes"])
        ),
    )
