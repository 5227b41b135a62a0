"""Circuit files (schema ``ocsplan.circuits/1``): a realized plan, its data and JSON.

What :func:`ocsplan.realize.realize` returns and ``ocsplan realize`` writes,
and all that :mod:`ocsplan.validate` and the simulator read: per node and port
the peer and generator; every circuit with its path through the OCS devices
(so each hop can be priced with ``fabric.latency.hop(ocs=stages, cables=...)``);
per device its cross-connects; per demand the routing table of its schedule;
Figure-25-style counts. Nodes are plan ranks; ``placement.accelerator[x]`` is
the fabric accelerator that runs rank x.

The reader only checks the shape of the file (PlanError, exit status 2): a
file that parses may still be wrong, which is the validator's business.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..cayley import mask_to_str, str_to_mask
from ..errors import PlanError
from ..files import read_json, read_text, write_atomic
from .fabrics import LatencyBudget, Level
from .wiring import Inventory, LevelCount

__all__ = [
    "CIRCULANT",
    "SCHEMA",
    "Circuit",
    "Circuits",
    "Counts",
    "Device",
    "FabricRef",
    "GeneratorUse",
    "Hop",
    "NodePort",
    "Placement",
    "PlanRef",
    "Route",
    "by_port",
    "circuits_from_dict",
    "circuits_to_dict",
    "circulant_label",
    "dumps_circuits",
    "generator_label",
    "load_circuits",
    "loads_circuits",
    "parse_circulant",
    "parse_label",
    "shift",
    "write_circuits",
]

SCHEMA = "ocsplan.circuits/1"


def generator_label(mask: int, kind: str, n: int) -> str:
    """How files name a generator: its mask bits, ``ring:<mask>`` for a ring."""
    bits = mask_to_str(mask, n)
    return f"ring:{bits}" if kind == "ring" else bits


CIRCULANT = "circulant:"


def circulant_label(slot: int, size: int, stride: int, offset: int) -> str:
    return f"{CIRCULANT}{slot}:{size}:{stride}:{offset}"


def parse_circulant(label: str) -> tuple[int, int, int]:
    """(N, stride, s) of a circulant label; ValueError if it is not one."""
    if not label.startswith(CIRCULANT):
        raise ValueError(f"not a circulant label: {label!r}")
    parts = label[len(CIRCULANT):].split(":")
    if len(parts) != 4 or not all(p.isdigit() for p in parts):
        raise ValueError(f"not a circulant label: {label!r}")
    _, size, stride, offset = (int(p) for p in parts)
    if size < 2 or stride < 1 or not 0 < offset <= size // 2:
        raise ValueError(f"not a circulant label: {label!r}")
    return size, stride, offset


def shift(x: int, size: int, stride: int, delta: int) -> int:
    """The rank whose axis coordinate is x's plus ``delta`` (mod size), other coordinates kept."""
    c = (x // stride) % size
    return x + ((c + delta) % size - c) * stride


def parse_label(label: str) -> tuple[int, str]:
    """(mask, kind) of a generator label; ValueError if it is not one.

    A stacked plan's ``circulant:A:N:stride:s`` gives (s, "circulant")."""
    if label.startswith(CIRCULANT):
        return parse_circulant(label)[2], "circulant"
    ring = label.startswith("ring:")
    mask = str_to_mask(label[5:] if ring else label)
    if ring:
        return mask, "ring"
    return mask, "cube" if mask.bit_count() == 1 else "fold"


@dataclass(frozen=True)
class Hop:
    """One OCS device on a circuit's path: entered at port ``enter``, left at ``leave``."""

    device: str
    enter: int
    leave: int


@dataclass(frozen=True)
class Circuit:
    """A duplex circuit from node ``a`` port ``a_port`` to node ``b`` port ``b_port``."""

    a: int
    a_port: int
    b: int
    b_port: int
    generator: str  # label, see generator_label
    scope: str  # "single-level", "intra-rack" or "inter-rack"
    path: tuple[Hop, ...]  # devices from a to b

    @property
    def stages(self) -> int:
        """OCS devices crossed (1 in a rack or single level, 3 between racks)."""
        return len(self.path)

    @property
    def cables(self) -> int:
        return len(self.path) + 1

    def latency(self, budget: LatencyBudget) -> float:
        """One accelerator-to-accelerator hop over this circuit under a Table 9 budget."""
        return budget.hop(ocs=self.stages, cables=self.cables)


@dataclass(frozen=True)
class NodePort:
    """What one port of a node connects to."""

    port: int
    peer: int
    peer_port: int
    generator: str


@dataclass(frozen=True)
class Device:
    """An OCS device and its cross-connects (pairs of its ports)."""

    id: str
    level: int
    rail: int
    index: int  # rack (level 1 of two) or device number within the rail
    radix: int
    cross_connects: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class GeneratorUse:
    """A host generator: its port indices, circuits and how many leave a rack."""

    label: str
    mask: int
    kind: str
    multiplicity: int
    ports: tuple[int, ...]
    circuits: int
    inter_rack: int
    scope: str  # "single-level", "intra-rack", "inter-rack" or "mixed"


@dataclass(frozen=True)
class Route:
    """Routing table of one demand: ``table[node][phase]`` = ((peer, ports), ...) it sends on."""

    mesh: str
    axis: int
    demand: int
    collective: str
    schedule: str
    multiplicity: int
    bits: tuple[int, ...]
    table: tuple[tuple[tuple[tuple[int, tuple[int, ...]], ...], ...], ...]

    @property
    def phases(self) -> int:
        return len(self.table[0]) if self.table else 0


@dataclass(frozen=True)
class PlanRef:
    """Which plan was realized (enough to tell a mismatched ``--plan``)."""

    instance: str
    method: str
    world: int
    ports: int
    ports_used: int
    objective_s: float
    generators: tuple[tuple[str, int], ...]  # (label, multiplicity)


@dataclass(frozen=True)
class FabricRef:
    """The fabric the circuits were realized on, with its wiring numbers."""

    name: str
    source: str
    accelerators: int
    ports: int
    link_Bps: float
    rack_size: int
    serving_racks: int
    levels: tuple[Level, ...]
    domain: int
    groups: int
    down: int
    up: int
    spines: int
    fanout: int


@dataclass(frozen=True)
class Placement:
    """Ranks to accelerators: ``accelerator[x]`` runs rank x (rack = accelerator // rack size)."""

    method: str
    slot_bits: tuple[int, ...] | None  # rank bits that index the slot in a rack ("bits")
    accelerator: tuple[int, ...]


@dataclass(frozen=True)
class Counts:
    """Figure-25-style counts: circuits, and hardware installed and used."""

    nodes: int
    ports_per_node: int
    circuits: int
    intra_rack: int
    inter_rack: int
    installed: Inventory
    used: Inventory


@dataclass(frozen=True)
class Circuits:
    """A realized plan (schema ``ocsplan.circuits/1``)."""

    plan: PlanRef
    fabric: FabricRef
    placement: Placement
    ports_used: int
    reserved_ports: int  # ports beyond the plan's, reserved by edge coloring (Vizing)
    generators: tuple[GeneratorUse, ...]
    nodes: tuple[tuple[NodePort, ...], ...]
    circuits: tuple[Circuit, ...]
    devices: tuple[Device, ...]
    routes: tuple[Route, ...]
    counts: Counts
    notes: tuple[str, ...] = field(default=())


def by_port(c: Circuits) -> dict[tuple[int, int], Circuit]:
    """Every circuit under both of its ends (node, port), for lookups from routing tables."""
    index = {}
    for circuit in c.circuits:
        index[(circuit.a, circuit.a_port)] = circuit
        index[(circuit.b, circuit.b_port)] = circuit
    return index


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


def circuits_to_dict(c: Circuits) -> dict[str, Any]:
    f = c.fabric
    return {
        "schema": SCHEMA,
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


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def dumps_circuits(c: Circuits) -> str:
    """JSON text, one list element per line for the long lists (nodes, circuits, devices)."""
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


def write_circuits(c: Circuits, path: str | Path) -> None:
    write_atomic(path, dumps_circuits(c))


# -- reader ---------------------------------------------------------------------------


def _ints(values: Sequence[Any]) -> tuple[int, ...]:
    return tuple(map(int, values))


def _inventory_from(data: Mapping[str, Any]) -> Inventory:
    return Inventory(
        accelerators=int(data["accelerators"]),
        accelerator_ports=int(data["accelerator_ports"]),
        levels=tuple(
            LevelCount(int(lv["level"]), str(lv["technology"]), int(lv["devices"]), int(lv["ports"]),
                       int(lv["logical"]), int(lv["links_below"]), str(lv["medium"]))
            for lv in data["levels"]
        ),
        converters=int(data["converters"]),
        converter_kind=str(data["converter_kind"]),
    )


def circuits_from_dict(data: Mapping[str, Any], source: str = "<circuits>") -> Circuits:
    """Read a circuits dict (as :func:`circuits_to_dict` writes it); PlanError if malformed."""
    if data.get("schema") != SCHEMA:
        raise PlanError(f"{source}: schema: expected {SCHEMA!r}, got {data.get('schema')!r}")
    try:
        p, f, w = data["plan"], data["fabric"], data["fabric"]["wiring"]
        counts = data["counts"]
        slot_bits = data["placement"]["slot_bits"]
        return Circuits(
            plan=PlanRef(str(p["instance"]), str(p["method"]), int(p["world"]), int(p["ports"]),
                         int(p["ports_used"]), float(p["objective_s"]),
                         tuple((str(label), int(mult)) for label, mult in p["generators"])),
            fabric=FabricRef(
                name=str(f["name"]), source=str(f["source"]), accelerators=int(f["accelerators"]),
                ports=int(f["ports"]), link_Bps=float(f["link_Bps"]), rack_size=int(f["rack_size"]),
                serving_racks=int(f["serving_racks"]),
                levels=tuple(Level(str(lv["technology"]), int(lv["radix"]), int(lv["down"]), int(lv["up"]))
                             for lv in f["levels"]),
                domain=int(w["domain"]), groups=int(w["groups"]), down=int(w["down"]), up=int(w["up"]),
                spines=int(w["spines"]), fanout=int(w["fanout"]),
            ),
            placement=Placement(str(data["placement"]["method"]),
                                None if slot_bits is None else _ints(slot_bits),
                                _ints(data["placement"]["accelerator"])),
            ports_used=int(data["ports_used"]),
            reserved_ports=int(data["reserved_ports"]),
            generators=tuple(
                GeneratorUse(str(g["generator"]), *parse_label(str(g["generator"])), int(g["multiplicity"]),
                             _ints(g["ports"]), int(g["circuits"]), int(g["inter_rack"]), str(g["scope"]))
                for g in data["generators"]
            ),
            nodes=tuple(
                tuple(NodePort(int(e[0]), int(e[1]), int(e[2]), str(e[3])) for e in node)
                for node in data["nodes"]
            ),
            circuits=tuple(
                Circuit(int(x["a"][0]), int(x["a"][1]), int(x["b"][0]), int(x["b"][1]), str(x["generator"]),
                        str(x["scope"]), tuple(Hop(str(h[0]), int(h[1]), int(h[2])) for h in x["path"]))
                for x in data["circuits"]
            ),
            devices=tuple(
                Device(str(d["id"]), int(d["level"]), int(d["rail"]), int(d["index"]), int(d["radix"]),
                       tuple((int(a), int(b)) for a, b in d["cross_connects"]))
                for d in data["devices"]
            ),
            routes=tuple(
                Route(str(r["mesh"]), int(r["axis"]), int(r["demand"]), str(r["collective"]),
                      str(r["schedule"]), int(r["multiplicity"]), _ints(r["bits"]),
                      tuple(tuple(tuple((int(peer), _ints(ports)) for peer, ports in phase) for phase in node)
                            for node in r["table"]))
                for r in data["routes"]
            ),
            counts=Counts(int(counts["nodes"]), int(counts["ports_per_node"]), int(counts["circuits"]),
                          int(counts["intra_rack"]), int(counts["inter_rack"]),
                          _inventory_from(counts["installed"]), _inventory_from(counts["used"])),
            notes=tuple(str(x) for x in data.get("notes", [])),
        )
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise PlanError(f"{source}: malformed circuits file: {exc!r}") from None


def loads_circuits(text: str, source: str = "<circuits>") -> Circuits:
    return circuits_from_dict(read_json(text, source), source)


def load_circuits(path: str | Path) -> Circuits:
    return loads_circuits(read_text(path, lambda msg: PlanError(f"{path}: {msg}")), str(path))
