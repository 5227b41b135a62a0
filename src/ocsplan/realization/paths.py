"""Circuits through the OCS levels, shared by every plan kind (DESIGN §6).

A circuit inside a level-1 device's domain (a rack) crosses one OCS; one
between racks crosses level 1, level 2 and level 1 again, and the level-2
devices of each rail are assigned by bipartite edge coloring so that no device
port carries two circuits (König; an Euler split first when the rack graph has
odd cycles, paper App. C.7). The realizers of the plan kinds
(:mod:`ocsplan.realization.shared_host`, :mod:`ocsplan.realization.stacked`)
choose the ports; this module routes the circuits, lists the devices and counts
the hardware. Anything the fabric cannot carry raises :class:`RealizationError`.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..errors import RealizationError
from ..plan import Plan
from .circuits import (
    Circuit,
    Circuits,
    Counts,
    Device,
    FabricRef,
    GeneratorUse,
    Hop,
    NodePort,
    Placement,
    PlanRef,
    Route,
)
from .coloring import balanced_orientation, bipartite_edge_coloring, is_bipartite
from .fabrics import FabricSpec
from .wiring import Inventory, LevelCount, Wiring, converters, inventory, wiring

__all__ = [
    "Logical",
    "PortAssignment",
    "Wired",
    "check_fabric",
    "count_hardware",
    "devices_of",
    "fabric_ref",
    "node_table",
    "route_circuit",
    "route_rail",
    "scope_of",
    "wire_circuits",
    "wire_plan",
]

# (a, b, port, label): one circuit before it is routed
Logical = tuple[int, int, int, str]


@dataclass(frozen=True)
class PortAssignment:
    """What a realizer derives from the plan alone, whatever the fabric and placement: the plan's
    reference, every generator label's port indices (plan order), the ports reserved beyond the
    plan's, and the routing tables (empty when asked for none). The OCS import
    (:mod:`ocsplan.deploy.ocs_import`) takes from it what the exported files do not say."""

    plan: PlanRef
    ports: Mapping[str, tuple[int, ...]]
    reserved: int
    routes: tuple[Route, ...]


def route_rail(pairs: Sequence[tuple[int, int]], spines: int, fanout: int) -> list[tuple[int, int, int]]:
    """Level-2 device and cable indices (spine, j_a, j_b) for inter-rack circuits of one rail.

    ``pairs`` are the (rack a, rack b) of the circuits. Each rack has ``fanout``
    cables to each of the ``spines`` devices; a cable carries one circuit. The
    caller checks that no rack has more circuits than spines x fanout. The rack
    multigraph is edge-colored with spines x fanout colors (König) when it is
    bipartite; otherwise an Euler split orients it and the bipartite graph
    (rack as sender, rack as receiver) is colored with half as many colors,
    senders on the first half of a device's cables. An odd fan-out on a rack
    graph with odd cycles is edge coloring in general (NP-hard), so a greedy
    assignment tries and a RealizationError reports failure.
    """
    cap = spines * fanout
    edges = [(("r", a), ("r", b)) for a, b in pairs]
    if is_bipartite(edges):
        colors = bipartite_edge_coloring(edges, palette=cap)
        return [(c // fanout, c % fanout, c % fanout) for c in colors]
    if fanout % 2 == 0:
        half = fanout // 2
        keep = balanced_orientation(edges)
        directed = [(("out", a), ("in", b)) if k else (("out", b), ("in", a))
                    for (a, b), k in zip(pairs, keep, strict=True)]
        colors = bipartite_edge_coloring(directed, palette=spines * half)
        out = []
        for c, k in zip(colors, keep, strict=True):
            spine, j = divmod(c, half)
            out.append((spine, j, half + j) if k else (spine, half + j, j))
        return out
    free: dict[tuple[int, int], list[int]] = {}
    out = []
    for a, b in pairs:
        for spine in range(spines):
            fa = free.setdefault((spine, a), list(range(fanout)))
            fb = free.setdefault((spine, b), list(range(fanout)))
            if fa and fb:
                out.append((spine, fa.pop(0), fb.pop(0)))
                break
        else:
            raise RealizationError(
                f"level 2 cannot route a circuit between racks {a} and {b}: the rack graph has odd cycles "
                f"and the fan-out {fanout} is odd, and a greedy assignment ran out of devices")
    return out


def route_circuit(wire: Wiring, rail: int, a: int, b: int, cable: tuple[int, int, int] | None = None
                  ) -> tuple[Hop, ...]:
    """The path of a circuit on ``rail`` between accelerators ``a`` and ``b``: without ``cable``,
    one cross-connect on the level-1 device they share; with ``cable`` (spine, j_a, j_b), level 1,
    the level-2 device ``spine`` of the rail and level 1 again over cable j_a of a's level-1 device
    and cable j_b of b's (two cables of one device: a hairpin)."""
    (ga, sa), (gb, sb) = wire.attach(a), wire.attach(b)
    if cable is None:
        if ga != gb:
            raise ValueError(f"accelerators {a} and {b} are under different level-1 devices: give a cable")
        return (Hop(wire.l1_id(rail, ga), sa, sb),)
    spine, ja, jb = cable
    up_a, l2_a = wire.uplink(ga, spine, ja)
    up_b, l2_b = wire.uplink(gb, spine, jb)
    return (Hop(wire.l1_id(rail, ga), sa, up_a), Hop(wire.l2_id(rail, spine), l2_a, l2_b),
            Hop(wire.l1_id(rail, gb), up_b, sb))


def check_fabric(plan: Plan, fabric: FabricSpec) -> Wiring:
    for i, level in enumerate(fabric.levels):
        if level.technology != "ocs":
            raise RealizationError(f"fabric {fabric.name}: level {i + 1} is {level.technology}; "
                                   "circuits need OCS devices on every level")
    if plan.world > fabric.serving:
        raise RealizationError(f"plan needs {plan.world} accelerators, fabric {fabric.name} "
                               f"serves {fabric.serving}")
    return wiring(fabric)


def fabric_ref(fabric: FabricSpec, wire: Wiring) -> FabricRef:
    return FabricRef(fabric.name, fabric.source, fabric.accelerators, fabric.ports, fabric.link,
                     fabric.rack_size, fabric.serving_racks, fabric.levels, wire.domain, wire.groups,
                     wire.down, wire.up, wire.spines, wire.fanout)


def scope_of(total: int, crossing: int, two_level: bool) -> str:
    """A generator's scope from its circuits and those of them between racks."""
    return ("single-level" if not two_level else "inter-rack" if crossing == total
            else "intra-rack" if crossing == 0 else "mixed")


def node_table(circuits: Sequence[Circuit], world: int) -> tuple[tuple[NodePort, ...], ...]:
    """Every node's ports, each with its peer and the peer's port, by port."""
    nodes: list[list[NodePort]] = [[] for _ in range(world)]
    for c in circuits:
        nodes[c.a].append(NodePort(c.a_port, c.b, c.b_port, c.generator))
        nodes[c.b].append(NodePort(c.b_port, c.a, c.a_port, c.generator))
    return tuple(tuple(sorted(node, key=lambda e: e.port)) for node in nodes)


def wire_circuits(
    logical: Sequence[Logical], accelerator: Sequence[int], wire: Wiring, fabric: FabricSpec,
    label_of_port: dict[int, str],
) -> tuple[tuple[Circuit, ...], tuple[Device, ...]]:
    """Paths of the circuits through the OCS devices: one device in a rack (or on a
    single level), level 1, level 2, level 1 between racks (level 2 by :func:`route_rail`)."""
    acc = accelerator
    paths: list[tuple[Hop, ...]] = [()] * len(logical)
    scopes = ["single-level" if not wire.two_level else "intra-rack"] * len(logical)
    inter: dict[int, list[int]] = defaultdict(list)  # rail -> circuit indices
    for i, (a, b, port, label) in enumerate(logical):
        ga, gb = wire.attach(acc[a])[0], wire.attach(acc[b])[0]
        if ga == gb:
            paths[i] = route_circuit(wire, port, acc[a], acc[b])
        elif not wire.two_level:
            raise RealizationError(
                f"generator {label} joins node {a} (device {ga}) and node {b} (device {gb}) of rail {port}, "
                f"but single-level devices of fabric {fabric.name} take only {wire.domain} accelerators")
        else:
            inter[port].append(i)
    for port in sorted(inter):
        idx = inter[port]
        pairs = [(wire.attach(acc[logical[i][0]])[0], wire.attach(acc[logical[i][1]])[0]) for i in idx]
        load = Counter(g for pair in pairs for g in pair)
        rack, need = min(load.items(), key=lambda kv: (-kv[1], kv[0]))
        if need > wire.up:
            raise RealizationError(
                f"rail {port} (generator {label_of_port[port]}): rack {rack} needs {need} uplinks to level 2, "
                f"fabric {fabric.name} has {wire.up}")
        try:
            routed = route_rail(pairs, wire.spines, wire.fanout)
        except RealizationError as exc:
            raise RealizationError(f"rail {port} (generator {label_of_port[port]}): {exc}") from None
        for i, cable in zip(idx, routed, strict=True):
            paths[i] = route_circuit(wire, port, acc[logical[i][0]], acc[logical[i][1]], cable)
            scopes[i] = "inter-rack"
    circuits = tuple(Circuit(a, port, b, port, label, scopes[i], paths[i])
                     for i, (a, b, port, label) in enumerate(logical))
    return circuits, devices_of(circuits, fabric)


def devices_of(circuits: Sequence[Circuit], fabric: FabricSpec) -> tuple[Device, ...]:
    """The OCS devices the circuits' paths cross, by id: each with its cross-connects (port pairs, lower
    port first, sorted), its level, rail and index read from its id (:meth:`Wiring.parse_id`) and
    its level's radix."""
    pairs: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for c in circuits:
        for hop in c.path:
            pairs[hop.device].append((min(hop.enter, hop.leave), max(hop.enter, hop.leave)))
    out = []
    for ident in sorted(pairs):
        level, rail, index = Wiring.parse_id(ident)
        out.append(Device(ident, level, rail, index, fabric.levels[level - 1].radix, tuple(sorted(pairs[ident]))))
    return tuple(out)


def count_hardware(fabric: FabricSpec, circuits: Sequence[Circuit], devices: Sequence[Device],
            world: int, ports_per_node: int) -> Counts:
    """Circuits and hardware in use; a level-2 logical switch is a (rail, uplink index)."""
    total = len(circuits)
    crossing = sum(1 for c in circuits if c.scope == "inter-rack")
    levels = []
    for level in range(1, len(fabric.levels) + 1):
        mine = [d for d in devices if d.level == level]
        ports = 2 * sum(len(d.cross_connects) for d in mine)
        if level == 1:
            logical, below, medium = len(mine), 2 * total, "fiber"
        else:
            rail_of = {d.id: d.rail for d in devices}
            logical = len({(rail_of[c.path[0].device], c.path[0].leave) for c in circuits if c.stages == 3}
                          | {(rail_of[c.path[2].device], c.path[2].enter) for c in circuits if c.stages == 3})
            below, medium = 2 * crossing, "fiber"
        levels.append(LevelCount(level, fabric.levels[level - 1].technology, len(mine), ports, logical, below, medium))
    count, kind = converters(fabric, 2 * total, 2 * crossing)
    used = Inventory(world, 2 * total, tuple(levels), count, kind)
    return Counts(world, ports_per_node, total, total - crossing, crossing, inventory(fabric), used)


@dataclass(frozen=True)
class Wired:
    """A plan's logical circuits wired through a fabric: what every realizer assembles its circuits
    file from (the generator table and the file itself, here once)."""

    fabric: FabricSpec
    wire: Wiring
    world: int
    circuits: tuple[Circuit, ...]
    devices: tuple[Device, ...]
    ports_used: int
    total: Counter[str]  # circuits per generator label
    crossing: Counter[str]  # of them between racks

    def generator(self, label: str, mask: int, kind: str, multiplicity: int,
                  ports: tuple[int, ...]) -> GeneratorUse:
        """The generator table's row of ``label``: its circuits, those between racks, its scope."""
        total, crossing = self.total[label], self.crossing[label]
        return GeneratorUse(label, mask, kind, multiplicity, ports, total, crossing,
                            scope_of(total, crossing, self.wire.two_level))

    def circuits_file(self, plan: PlanRef, placement: Placement, reserved: int,
                      generators: Sequence[GeneratorUse], routes: tuple[Route, ...],
                      notes: Sequence[str]) -> Circuits:
        """The circuits file: these circuits and devices, their node table and hardware counts."""
        return Circuits(
            plan=plan,
            fabric=fabric_ref(self.fabric, self.wire),
            placement=placement,
            ports_used=self.ports_used,
            reserved_ports=reserved,
            generators=tuple(generators),
            nodes=node_table(self.circuits, self.world),
            circuits=self.circuits,
            devices=self.devices,
            routes=routes,
            counts=count_hardware(self.fabric, self.circuits, self.devices, self.world, self.ports_used),
            notes=tuple(notes),
        )


def wire_plan(plan: Plan, fabric: FabricSpec, wire: Wiring, logical: Sequence[Logical],
              accelerator: Sequence[int], ports_of: Mapping[str, tuple[int, ...]], notes: list[str]) -> Wired:
    """Wire ``logical`` (port indices ``ports_of`` per label) for ranks on ``accelerator``;
    RealizationError when the plan needs more ports than the fabric has, a note added to ``notes``
    when the fabric's link rate is not the plan's."""
    used_ports = sum(len(p) for p in ports_of.values())
    if used_ports > fabric.ports:
        raise RealizationError(f"plan needs {used_ports} ports per node, fabric {fabric.name} has {fabric.ports}")
    if not math.isclose(plan.link_Bps, fabric.link):
        notes.append(f"plan assumes {plan.link_Bps:g} B/s per circuit, fabric {fabric.name} has {fabric.link:g}")
    label_of_port = {port: label for label, ports in ports_of.items() for port in ports}
    circuits, devices = wire_circuits(logical, accelerator, wire, fabric, label_of_port)
    return Wired(fabric, wire, plan.world, circuits, devices, used_ports,
                 Counter(c.generator for c in circuits),
                 Counter(c.generator for c in circuits if c.scope == "inter-rack"))
