"""Realization: a plan as port-colored circuits and OCS cross-connects (DESIGN §6).

Color = port (paper App. A.1): the edges of one Cayley generator g form a
perfect matching, so each of its p_g circuit copies takes its own port index
on every node. A ring generator (single-mesh deployment) is no Cayley graph of
(Z2)^n; its Gray-code cycles are edge-colored (:func:`ocsplan.coloring.edge_coloring`:
König, exactly 2p ports, since the cycles are even). Port index k is rail k of
the rail-optimized fabric (:mod:`ocsplan.wiring`), so a circuit stays on one
rail. A circuit inside a level-1 device's domain (a rack) crosses one OCS;
one between racks crosses level 1, level 2 and level 1 again, and the
level-2 devices of each rail are assigned by bipartite edge coloring so that
no device port carries two circuits (König; an Euler split first when the
rack graph has odd cycles, paper App. C.7). Anything the fabric cannot carry
raises :class:`RealizationError`.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from itertools import combinations

from ..cayley import bits_of, compress, coset_bases, expand, mask_of
from ..errors import InstanceError, RealizationError
from ..plan import Plan, demand_topology
from ..schedules import SCHEDULES
from ..schedules.allreduce import gray_cycle
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
    generator_label,
)
from .coloring import balanced_orientation, bipartite_edge_coloring, edge_coloring, is_bipartite
from .fabrics import FabricSpec
from .wiring import Inventory, LevelCount, Wiring, converters, inventory, wiring

__all__ = ["PLACEMENTS", "Logical", "place", "realize", "route_rail", "wire_circuits"]

PLACEMENTS = ("contiguous", "bits", "bits:<b,b,...>")

# (a, b, port, label): one circuit before it is routed
Logical = tuple[int, int, int, str]


# -- placement ------------------------------------------------------------------------


def _slot_bits(plan: Plan, count: int) -> tuple[int, ...]:
    """The ``count`` rank bits that keep the most circuit ports inside a rack.

    Exhaustive over bit subsets; a generator is intra-rack when its support
    lies in the subset. Ties go to the lexicographically lowest bit tuple.
    """
    best: tuple[int, tuple[int, ...]] = (-1, ())
    for subset in combinations(range(plan.n), count):
        inside = mask_of(subset)
        score = sum(g.ports for g in plan.generators if g.mask & ~inside == 0)
        if score > best[0]:
            best = (score, subset)
    return best[1]


def place(plan: Plan, fabric: FabricSpec, method: str = "contiguous") -> Placement:
    """Ranks to accelerators of the serving racks.

    ``contiguous``: rank x on accelerator x (rack x // rack size). ``bits``:
    the rank bits that index the slot in a rack are chosen by :func:`_slot_bits`;
    ``bits:4,3,2,1,0`` names them. Bad options raise InstanceError (exit 2).
    """
    n, world = plan.n, plan.world
    if method == "contiguous":
        return Placement("contiguous", None, tuple(range(world)))
    if method != "bits" and not method.startswith("bits:"):
        raise InstanceError("--placement", "", f"unknown placement {method!r} (use {', '.join(PLACEMENTS)})")
    domain = wiring(fabric).domain
    if domain & (domain - 1):
        raise InstanceError("--placement", "", f"'bits' needs a power-of-two rack size, not {domain}")
    count = min(domain.bit_length() - 1, n)
    if method == "bits":
        slot = _slot_bits(plan, count)
    else:
        try:
            slot = tuple(sorted({int(b) for b in method[5:].split(",") if b.strip()}))
        except ValueError:
            raise InstanceError("--placement", "", f"malformed bit list in {method!r}") from None
        if len(slot) != count or any(not 0 <= b < n for b in slot):
            raise InstanceError("--placement", "", f"name {count} distinct rank bits below {n}, got {method[5:]!r}")
    inside = mask_of(slot)
    rest = [b for b in range(n) if not inside >> b & 1]
    accelerator = tuple(compress(x & ~inside, rest) * domain + compress(x & inside, slot) for x in range(world))
    return Placement("bits", tuple(sorted(slot, reverse=True)), accelerator)


# -- ports ----------------------------------------------------------------------------


def _ring_edges(mask: int, world: int, copies: int) -> list[tuple[int, int]]:
    """Forward edges x -> next(x) of the Gray-code ring of every coset, ``copies`` times each."""
    bits = sorted(bits_of(mask))
    order = [expand(label, bits) for label in gray_cycle(len(bits))]
    edges = []
    for base in coset_bases(bits, world.bit_length() - 1):
        for i, x in enumerate(order):
            y = order[(i + 1) % len(order)]
            edges.extend([(base | x, base | y)] * copies)
    return edges


RingPorts = dict[tuple[int, int], list[int]]  # forward ring edge (x, next x) -> ports of its copies


def _assign_ports(plan: Plan) -> tuple[list[Logical], dict[str, tuple[int, ...]], RingPorts, int, list[str]]:
    """Port indices of every generator copy, the circuits, ring edge ports, Vizing reserve."""
    n, world = plan.n, plan.world
    logical: list[Logical] = []
    ports_of: dict[str, tuple[int, ...]] = {}
    ring_ports: RingPorts = defaultdict(list)
    notes: list[str] = []
    reserved = 0
    next_port = 0
    for g in plan.generators:
        label = generator_label(g.mask, g.kind, n)
        if g.kind != "ring":
            ports = tuple(range(next_port, next_port + g.multiplicity))
            for port in ports:
                logical.extend((x, x ^ g.mask, port, label) for x in range(world) if x < x ^ g.mask)
        else:
            edges = _ring_edges(g.mask, world, g.multiplicity)
            colors = edge_coloring(edges) if edges else []
            palette = max(colors, default=-1) + 1
            ports = tuple(range(next_port, next_port + palette))
            extra = palette - g.ports
            reserved += max(0, extra)
            how = "König (even cycles, bipartite)" if is_bipartite(edges) else "Vizing/greedy"
            notes.append(f"ring {label}: {len(edges)} circuits edge-colored with {palette} ports by {how}"
                         + (f"; {extra} port(s) reserved beyond 2 x {g.multiplicity}" if extra > 0 else ""))
            for (x, y), c in zip(edges, colors, strict=True):
                logical.append((min(x, y), max(x, y), next_port + c, label))
                ring_ports[(x, y)].append(next_port + c)
        ports_of[label] = ports
        next_port += len(ports)
    return logical, ports_of, ring_ports, reserved, notes


# -- level-2 routing ------------------------------------------------------------------


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


# -- the realizer ---------------------------------------------------------------------


def _check_fabric(plan: Plan, fabric: FabricSpec) -> Wiring:
    for i, level in enumerate(fabric.levels):
        if level.technology != "ocs":
            raise RealizationError(f"fabric {fabric.name}: level {i + 1} is {level.technology}; "
                                   "circuits need OCS devices on every level")
    if plan.world > fabric.serving:
        raise RealizationError(f"plan needs {plan.world} accelerators, fabric {fabric.name} "
                               f"serves {fabric.serving}")
    return wiring(fabric)


def _fabric_ref(fabric: FabricSpec, wire: Wiring) -> FabricRef:
    return FabricRef(fabric.name, fabric.source, fabric.accelerators, fabric.ports, fabric.link,
                     fabric.rack_size, fabric.serving_racks, fabric.levels, wire.domain, wire.groups,
                     wire.down, wire.up, wire.spines, wire.fanout)


def _routes(plan: Plan, ports_of: dict[str, tuple[int, ...]], ring_ports: RingPorts) -> tuple[Route, ...]:
    """Routing table of every demand: its schedule's transfers on every coset, with ports."""
    n, world = plan.n, plan.world
    cayley = {g.mask: ports_of[generator_label(g.mask, g.kind, n)] for g in plan.generators if g.kind != "ring"}
    routes = []
    for mesh in plan.meshes:
        for a, axis in enumerate(mesh.axes):
            glob = [expand(local, axis.bits) for local in range(axis.size)]
            bases = coset_bases(axis.bits, n)
            for k, d in enumerate(axis.demands):
                program = SCHEDULES[d.schedule].build(demand_topology(d.groups, axis.bits, d.fold), d.payload_bytes)
                sends: list[dict[int, list[int]]] = []
                for phase in program.phases:
                    by_src: dict[int, list[int]] = {}
                    for t in phase:
                        dsts = by_src.setdefault(t.src, [])
                        if t.dst not in dsts:
                            dsts.append(t.dst)
                    sends.append(by_src)
                table: list[list[tuple[tuple[int, tuple[int, ...]], ...]]] = [[() for _ in sends] for _ in range(world)]
                for base in bases:
                    for ph, by_src in enumerate(sends):
                        for src, dsts in by_src.items():
                            x = base | glob[src]
                            entries = []
                            for dst in dsts:
                                y = base | glob[dst]
                                ports = ring_ports.get((x, y)) if axis.ring else cayley.get(x ^ y)
                                if not ports or len(ports) < d.multiplicity:
                                    raise RealizationError(
                                        f"mesh {mesh.name} axis {a} {d.schedule}: node {x} sends to {y} "
                                        f"in phase {ph} but the plan has no {d.multiplicity} circuit(s) between them")
                                entries.append((y, tuple(ports[: d.multiplicity])))
                            table[x][ph] = tuple(entries)
                routes.append(Route(mesh.name, a, k, d.collective, d.schedule, d.multiplicity, axis.bits,
                                    tuple(tuple(row) for row in table)))
    return tuple(routes)


def wire_circuits(
    logical: Sequence[Logical], accelerator: Sequence[int], wire: Wiring, fabric: FabricSpec,
    label_of_port: dict[int, str],
) -> tuple[tuple[Circuit, ...], tuple[Device, ...]]:
    """Paths of the circuits through the OCS devices: one device in a rack (or on a
    single level), level 1, level 2, level 1 between racks (level 2 by :func:`route_rail`)."""
    acc = accelerator
    meta: dict[str, tuple[int, int, int]] = {}  # device id -> (level, rail, index)

    def l1(rail: int, group: int) -> str:
        ident = wire.l1_id(rail, group)
        meta[ident] = (1, rail, group)
        return ident

    def l2(rail: int, spine: int) -> str:
        ident = wire.l2_id(rail, spine)
        meta[ident] = (2, rail, spine)
        return ident

    paths: list[tuple[Hop, ...]] = [()] * len(logical)
    scopes = ["single-level" if not wire.two_level else "intra-rack"] * len(logical)
    inter: dict[int, list[int]] = defaultdict(list)  # rail -> circuit indices
    for i, (a, b, port, label) in enumerate(logical):
        (ga, sa), (gb, sb) = wire.attach(acc[a]), wire.attach(acc[b])
        if ga == gb:
            paths[i] = (Hop(l1(port, ga), sa, sb),)
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
        for i, (ga, gb), (spine, ja, jb) in zip(idx, pairs, routed, strict=True):
            a, b = logical[i][0], logical[i][1]
            up_a, l2_a = wire.uplink(ga, spine, ja)
            up_b, l2_b = wire.uplink(gb, spine, jb)
            paths[i] = (Hop(l1(port, ga), wire.attach(acc[a])[1], up_a),
                        Hop(l2(port, spine), l2_a, l2_b),
                        Hop(l1(port, gb), up_b, wire.attach(acc[b])[1]))
            scopes[i] = "inter-rack"
    circuits = tuple(Circuit(a, port, b, port, label, scopes[i], paths[i])
                     for i, (a, b, port, label) in enumerate(logical))
    return circuits, _devices(circuits, meta, fabric)


def realize(plan: Plan, fabric: FabricSpec, placement: str = "contiguous", routing: bool = True) -> Circuits:
    """Map every circuit of ``plan`` onto ports and OCS devices of ``fabric``.

    ``routing=False`` leaves the routing tables out (``routes`` empty): the
    simulator reads only circuits, and the tables are most of the time.

    Raises RealizationError (exit status 3) when the fabric cannot carry the
    plan: EPS levels, too few accelerators or ports, circuits between devices
    of a single level, more inter-rack circuits than uplinks. Stacked plans go to
    :func:`ocsplan.realization.stacked.realize_stacked`.
    """
    if plan.stacked:
        from .stacked import realize_stacked

        return realize_stacked(plan, fabric, placement)
    n, world = plan.n, plan.world
    wire = _check_fabric(plan, fabric)
    place_ = place(plan, fabric, placement)
    logical, ports_of, ring_ports, reserved, notes = _assign_ports(plan)
    used_ports = sum(len(p) for p in ports_of.values())
    if used_ports > fabric.ports:
        raise RealizationError(f"plan needs {used_ports} ports per node, fabric {fabric.name} has {fabric.ports}")
    if not math.isclose(plan.link_Bps, fabric.link):
        notes.append(f"plan assumes {plan.link_Bps:g} B/s per circuit, fabric {fabric.name} has {fabric.link:g}")
    label_of_port = {port: label for label, ports in ports_of.items() for port in ports}
    circuits, devices = wire_circuits(logical, place_.accelerator, wire, fabric, label_of_port)
    nodes: list[list[NodePort]] = [[] for _ in range(world)]
    for c in circuits:
        nodes[c.a].append(NodePort(c.a_port, c.b, c.b_port, c.generator))
        nodes[c.b].append(NodePort(c.b_port, c.a, c.a_port, c.generator))
    generators = []
    per_label = Counter(c.generator for c in circuits)
    inter_label = Counter(c.generator for c in circuits if c.scope == "inter-rack")
    for g in plan.generators:
        label = generator_label(g.mask, g.kind, n)
        total, crossing = per_label[label], inter_label[label]
        scope = ("single-level" if not wire.two_level else "inter-rack" if crossing == total
                 else "intra-rack" if crossing == 0 else "mixed")
        generators.append(GeneratorUse(label, g.mask, g.kind, g.multiplicity, ports_of[label], total, crossing, scope))
    if wire.two_level:
        intra = sum(len(g.ports) for g in generators if g.scope == "intra-rack")
        notes.append(f"placement {place_.method}: {intra} of {used_ports} ports per node stay inside a rack")
    routes = _routes(plan, ports_of, ring_ports) if routing else ()
    counts = _counts(fabric, circuits, devices, world, used_ports)
    return Circuits(
        plan=PlanRef(plan.instance, plan.method, world, plan.ports, plan.ports_used, plan.objective_s,
                     tuple((generator_label(g.mask, g.kind, n), g.multiplicity) for g in plan.generators)),
        fabric=_fabric_ref(fabric, wire),
        placement=place_,
        ports_used=used_ports,
        reserved_ports=reserved,
        generators=tuple(generators),
        nodes=tuple(tuple(sorted(node, key=lambda e: e.port)) for node in nodes),
        circuits=circuits,
        devices=devices,
        routes=routes,
        counts=counts,
        notes=tuple(notes),
    )


def _devices(circuits: Sequence[Circuit], meta: dict[str, tuple[int, int, int]],
             fabric: FabricSpec) -> tuple[Device, ...]:
    pairs: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for c in circuits:
        for hop in c.path:
            pairs[hop.device].append((min(hop.enter, hop.leave), max(hop.enter, hop.leave)))
    out = []
    for ident in sorted(pairs):
        level, rail, index = meta[ident]
        out.append(Device(ident, level, rail, index, fabric.levels[level - 1].radix, tuple(sorted(pairs[ident]))))
    return tuple(out)


def _counts(fabric: FabricSpec, circuits: Sequence[Circuit], devices: Sequence[Device],
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

