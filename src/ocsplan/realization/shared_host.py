"""Realization of shared-host plans: Cayley generators of (Z2)^n as port-colored circuits (DESIGN §6).

Color = port (paper App. A.1): the edges of one Cayley generator g form a
perfect matching, so each of its p_g circuit copies takes its own port index
on every node. A ring generator (single-mesh deployment) is no Cayley graph of
(Z2)^n; its Gray-code cycles are edge-colored (:func:`ocsplan.coloring.edge_coloring`:
König, exactly 2p ports, since the cycles are even). Port index k is rail k of
the rail-optimized fabric (:mod:`ocsplan.wiring`), so a circuit stays on one
rail; the circuits' paths through the OCS levels are :mod:`ocsplan.realization.paths`'.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Mapping, Sequence
from itertools import combinations

import numpy as np

from ..cayley import bits_of, compress, coset_bases, expand, mask_of
from ..errors import InstanceError, RealizationError
from ..plan import DemandPlan, Plan, demand_topology
from ..schedules import SCHEDULES, link_pattern
from ..schedules.allreduce import gray_cycle
from .circuits import Circuits, Placement, PlanRef, Route, generator_label
from .coloring import edge_coloring, is_bipartite
from .fabrics import FabricSpec
from .paths import Logical, PortAssignment, check_fabric, wire_plan
from .wiring import wiring

__all__ = ["PLACEMENTS", "place", "realize_shared_host", "shared_host_ports"]

PLACEMENTS = ("contiguous", "bits", "bits:<b,b,...>")


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
        if g.host:
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


# -- the realizer ---------------------------------------------------------------------


def _missing(mesh: str, axis: int, d: DemandPlan, ph: int, x: int, y: int) -> RealizationError:
    return RealizationError(f"mesh {mesh} axis {axis} {d.schedule}: node {x} sends to {y} in phase {ph} "
                            f"but the plan has no {d.multiplicity} circuit(s) between them")


Entry = tuple[int, tuple[int, ...]]  # (peer, ports) in a routing table
Table = tuple[tuple[tuple[Entry, ...], ...], ...]  # node -> phase -> entries


def _routes(plan: Plan, ports_of: dict[str, tuple[int, ...]], ring_ports: RingPorts) -> tuple[Route, ...]:
    """Routing table of every demand: its schedule's transfers on every coset, with ports.

    The tables of a Cayley axis share one (peer, ports) entry per peer and ports (most of
    their memory): a generator's ports depend on x ^ y alone, so each transfer of the
    schedule is checked once, on the first coset."""
    n, world = plan.n, plan.world
    cayley = {g.mask: ports_of[generator_label(g.mask, g.kind, n)] for g in plan.generators if g.host}
    entries: dict[tuple[int, ...], list[Entry]] = {}  # ports -> the entry of every peer
    routes = []
    for mesh in plan.meshes:
        for a, axis in enumerate(mesh.axes):
            glob = [expand(local, axis.bits) for local in range(axis.size)]
            bases = coset_bases(axis.bits, n)
            for k, d in enumerate(axis.demands):
                sends = link_pattern(SCHEDULES[d.schedule], demand_topology(d.groups, axis.bits, d.fold),
                                     d.payload_bytes)
                table: list[list[tuple[Entry, ...]]] = [[() for _ in sends] for _ in range(world)]
                if axis.ring:
                    for base in bases:
                        for ph, by_src in enumerate(sends):
                            for src, dsts in by_src.items():
                                x = base | glob[src]
                                cells = []
                                for dst in dsts:
                                    y = base | glob[dst]
                                    ports = ring_ports.get((x, y))
                                    if not ports or len(ports) < d.multiplicity:
                                        raise _missing(mesh.name, a, d, ph, x, y)
                                    cells.append((y, tuple(ports[: d.multiplicity])))
                                table[x][ph] = tuple(cells)
                else:
                    found = _steps(sends, glob, cayley, entries, d.multiplicity, world)
                    if isinstance(found, tuple):  # on the first coset: x ^ y names the ports
                        ph, src, dst = found
                        raise _missing(mesh.name, a, d, ph, bases[0] | glob[src], bases[0] | glob[dst])
                    by_xor = found
                    rows = _cayley_table(sends, glob, bases, by_xor, world)
                    if rows is not None:
                        routes.append(Route(mesh.name, a, k, d.collective, d.schedule, d.multiplicity,
                                            axis.bits, rows))
                        continue
                    for base in bases:
                        for ph, by_src in enumerate(sends):
                            for src, dsts in by_src.items():
                                x = base | glob[src]
                                table[x][ph] = tuple([by_xor[x ^ y][y] for y in [base | glob[dst] for dst in dsts]])
                routes.append(Route(mesh.name, a, k, d.collective, d.schedule, d.multiplicity, axis.bits,
                                    tuple([tuple(phases) for phases in table])))
    return tuple(routes)


def _steps(sends: Sequence[Mapping[int, Sequence[int]]], glob: list[int], cayley: dict[int, tuple[int, ...]],
           entries: dict[tuple[int, ...], list[Entry]], mult: int, world: int
           ) -> dict[int, list[Entry]] | tuple[int, int, int]:
    """x ^ y -> the entry of each peer y (from ``entries``, shared by ports), for every step
    x ^ y the schedule takes; or the first transfer (phase, local source, local destination)
    whose step has fewer than ``mult`` ports in ``cayley``."""
    offsets = np.array(glob, dtype=np.int64)
    per_phase = []
    for by_src in sends:
        count = np.fromiter(map(len, by_src.values()), np.int64, len(by_src))
        src = np.repeat(np.fromiter(by_src, np.int64, len(by_src)), count)
        dst = np.fromiter(itertools.chain.from_iterable(by_src.values()), np.int64, int(count.sum()))
        per_phase.append((src, dst, offsets[src] ^ offsets[dst]))
    taken = np.flatnonzero(np.bincount(np.concatenate([step for _, _, step in per_phase]) if per_phase
                                       else np.zeros(0, np.int64))).tolist()
    ok = {g: len(cayley.get(g, ())) >= max(mult, 1) for g in taken}
    if not all(ok.values()):
        for ph, (src, dst, step) in enumerate(per_phase):
            bad = [i for i, g in enumerate(step.tolist()) if not ok[g]]
            if bad:
                return ph, int(src[bad[0]]), int(dst[bad[0]])
    by_xor = {}
    for g in taken:
        mine = cayley[g][:mult]
        if mine not in entries:
            entries[mine] = [(y, mine) for y in range(world)]
        by_xor[g] = entries[mine]
    return by_xor


def _cayley_table(sends: Sequence[Mapping[int, Sequence[int]]], glob: list[int], bases: list[int],
                  by_xor: dict[int, list[Entry]], world: int) -> Table | None:
    """The routing table of a Cayley axis on arrays: per phase, every (coset, source, destination)
    entry ``by_xor[x ^ y][y]`` picked from one pool, then grouped per node (None when the
    sources of a phase differ in their number of destinations or do not cover the nodes: the
    caller walks them). The pool is an object array, so picking and grouping are numpy's loops:
    Python touches each node's cell once (a tuple), not each entry."""
    steps = sorted(by_xor)
    pool = np.fromiter(itertools.chain.from_iterable(by_xor[step] for step in steps), dtype=object,
                       count=len(steps) * world)  # step index * world + y -> the shared entry
    index_of = np.zeros(max(steps, default=0) + 1, dtype=np.int64)
    index_of[steps] = np.arange(len(steps))
    offsets, base = np.array(glob, dtype=np.int64), np.array(bases, dtype=np.int64)[:, None]
    cols: list[list[tuple[Entry, ...]]] = []
    for by_src in sends:
        fan = {len(dsts) for dsts in by_src.values()}
        if len(by_src) != len(glob) or len(fan) > 1:
            return None
        width = fan.pop() if fan else 0
        if width == 0:
            cols.append([()] * world)
            continue
        src = np.fromiter(by_src, np.int64, len(by_src))
        dst = np.fromiter(itertools.chain.from_iterable(by_src.values()), np.int64, len(by_src) * width)
        x = (base | offsets[src]).ravel()  # (coset, source) -> node: every node once (the cosets tile the world)
        step = offsets[np.repeat(src, width)] ^ offsets[dst]
        y = base | offsets[dst]  # (coset, transfer) -> peer
        picked = (index_of[step] * world + y).reshape(len(x), width)  # (coset, source) -> its entries' pool slots
        row_of = np.empty_like(x)
        row_of[x] = np.arange(len(x))  # node -> its (coset, source) row
        cols.append(list(map(tuple, pool[picked[row_of]].tolist())))
    return tuple(zip(*cols, strict=True)) if cols else ((),) * world


def _plan_ref(plan: Plan) -> PlanRef:
    return PlanRef(plan.instance, plan.method, plan.world, plan.ports, plan.ports_used, plan.objective_s,
                   tuple((generator_label(g.mask, g.kind, plan.n), g.multiplicity) for g in plan.generators))


def shared_host_ports(plan: Plan, routing: bool = True) -> PortAssignment:
    """The ports and routing tables :func:`realize_shared_host` gives ``plan`` on any fabric."""
    _, ports_of, ring_ports, reserved, _ = _assign_ports(plan)
    return PortAssignment(_plan_ref(plan), ports_of, reserved,
                          _routes(plan, ports_of, ring_ports) if routing else ())


def realize_shared_host(plan: Plan, fabric: FabricSpec, placement: str = "contiguous",
                        routing: bool = True) -> Circuits:
    """Circuits, cross-connects and (unless ``routing=False``) routing tables of a shared-host plan."""
    n = plan.n
    wire = check_fabric(plan, fabric)
    place_ = place(plan, fabric, placement)
    logical, ports_of, ring_ports, reserved, notes = _assign_ports(plan)
    wired = wire_plan(plan, fabric, wire, logical, place_.accelerator, ports_of, notes)
    generators = []
    for g in plan.generators:
        label = generator_label(g.mask, g.kind, n)
        generators.append(wired.generator(label, g.mask, g.kind, g.multiplicity, ports_of[label]))
    if wire.two_level:
        intra = sum(len(g.ports) for g in generators if g.scope == "intra-rack")
        notes.append(f"placement {place_.method}: {intra} of {wired.ports_used} ports per node stay inside a rack")
    routes = _routes(plan, ports_of, ring_ports) if routing else ()
    return wired.circuits_file(_plan_ref(plan), place_, reserved, generators, routes, notes)
