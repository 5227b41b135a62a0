"""Circuits against their plan (``ocsplan validate --plan``): the generators, ports and
plan reference the file restates, a circuit under every transfer of every schedule
(re-derived from the schedules, circulant programs for a stacked plan), and routing
tables that list exactly the peers each phase sends to.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ..cayley import compress, expand, mask_of
from ..circulant import Circulant
from ..errors import PlanError
from ..plan import CIRCULANT, SHARED_HOST, STACKED, Plan, construction, demand_topology, host_kind, plan_kind
from ..schedules import SCHEDULES, link_pattern
from ..schedules.circulant import circulant_program
from .circuits import Circuits, circulant_label, generator_label
from .fault import FaultLog

__all__ = ["AGAINST_PLAN", "PLAN_GENERATORS", "AxisUse", "against_plan", "axis_uses", "plan_generators", "restated"]


def _circulant_axes(plan: Plan) -> list[tuple[int, int, int]]:
    """(mesh index, axis index, stride) of each circulant axis of a stacked plan, in slot order."""
    return [(m, i, math.prod(mesh.shape[i + 1:])) for m, mesh in enumerate(plan.meshes)
            for i, axis in enumerate(mesh.axes) if axis.circulant is not None]


def plan_generators(plan: Plan) -> tuple[tuple[str, int], ...]:
    """The (label, multiplicity) pairs a circuits file of ``plan`` lists (:data:`PLAN_GENERATORS`)."""
    return PLAN_GENERATORS[plan_kind(plan)](plan)


def _host_generators(plan: Plan) -> tuple[tuple[str, int], ...]:
    """A shared-host plan's masks (``ring:`` for a ring)."""
    return tuple((generator_label(g.mask, g.kind, plan.n), g.multiplicity) for g in plan.generators)


def _circulant_sets(plan: Plan) -> tuple[tuple[str, int], ...]:
    """A stacked plan's circulant sets (one per offset s <= N/2)."""
    sets: list[tuple[str, int]] = []
    for slot, (m, i, stride) in enumerate(_circulant_axes(plan)):
        axis = plan.meshes[m].axes[i]
        assert axis.circulant is not None
        sets += [(circulant_label(slot, axis.size, stride, s), axis.circulant.multiplicity)
                 for s in axis.circulant.offsets if 2 * s <= axis.size]
    return tuple(sets)


@dataclass(frozen=True)
class AxisUse:
    """A generator or circulant set an axis's demands use, as a circuits file names it, and
    the ports per accelerator it takes (a ring or a set s < N/2 two per circuit multiplicity)."""

    label: str
    kind: str
    multiplicity: int
    ports: int


def axis_uses(plan: Plan) -> list[tuple[str, int, tuple[AxisUse, ...]]]:
    """Per mesh axis (mesh name, axis index, uses in first-use order): what its demands use. A
    shared-host demand uses generator masks; a stacked one its circulant's offsets, each set
    s <= N/2 named once (``-s`` is ``N - s``). PlanError for a mask the plan does not list."""
    gens = {g.mask: g for g in plan.generators}
    slots = {(m, i): (slot, stride) for slot, (m, i, stride) in enumerate(_circulant_axes(plan))}
    out: list[tuple[str, int, tuple[AxisUse, ...]]] = []
    for m, mesh in enumerate(plan.meshes):
        for i, axis in enumerate(mesh.axes):
            found: dict[str, AxisUse] = {}
            for demand in axis.demands:
                for use in demand.uses:
                    if axis.circulant is not None:
                        slot, stride = slots[(m, i)]
                        s = min(use, axis.size - use)
                        label = circulant_label(slot, axis.size, stride, s)
                        mult = axis.circulant.multiplicity
                        found.setdefault(label, AxisUse(label, CIRCULANT, mult, mult * (1 if 2 * s == axis.size
                                                                                         else 2)))
                        continue
                    g = gens.get(use)
                    if g is None:
                        raise PlanError(f"plan: demand uses generator {use!r} not in generators")
                    label = generator_label(g.mask, g.kind, plan.n)
                    found.setdefault(label, AxisUse(label, g.kind, g.multiplicity, g.ports))
            out.append((mesh.name, i, tuple(found.values())))
    return out


def restated(c: Circuits, plan: Plan) -> list[str]:
    """How what a circuits file restates of ``plan`` differs from it (empty: it agrees): the generators
    or circulant sets and their multiplicities (plan reference and generator table), the ports used,
    and for a shared-host plan the plan reference. The one such check: ``validate --plan`` reports
    each, :func:`ocsplan.deploy.faults.check_match` refuses on the first."""
    want = plan_generators(plan)
    what, cayley = construction(plan).generators, construction(plan).cayley
    found = []
    if tuple(c.plan.generators) != want or {g.label: g.multiplicity for g in c.generators} != dict(want):
        found.append(f"{what} or multiplicities differ from the plan")
    if cayley and plan.ports_used > plan.ports:
        found.append(f"plan uses {plan.ports_used} ports of {plan.ports}")
    if c.ports_used != plan.ports_used + c.reserved_ports:
        found.append(f"{c.ports_used} ports used, plan needs {plan.ports_used} + {c.reserved_ports} reserved")
    ref = (c.plan.instance, c.plan.method, c.plan.world, c.plan.ports, c.plan.ports_used, c.plan.objective_s)
    if cayley and ref != (plan.instance, plan.method, plan.world, plan.ports, plan.ports_used,
                          plan.objective_s):
        found.append("the file's plan reference (instance, method, world, ports, ports used, objective) "
                     "differs from the plan")
    return found

Ints = npt.NDArray[np.int64]
Pattern = Sequence[Mapping[int, Collection[int]]]  # per phase, each local source's local destinations


def against_plan(log: FaultLog, plan: Plan) -> None:
    """The faults of ``log``'s circuits against ``plan``: what the file restates of it,
    a circuit for every transfer of every schedule, the routing tables."""
    c = log.c
    if plan.world != log.world:
        log.fault(f"plan has {plan.world} nodes, circuits file {log.world}")
        return
    for message in restated(c, plan):
        log.fault(message)
    AGAINST_PLAN[plan_kind(plan)](log, plan)


def _against_shared_host(log: FaultLog, plan: Plan) -> None:
    c = log.c
    listed = [(r.mesh, r.axis, r.demand) for r in c.routes]
    wanted = [(mesh.name, a, k) for mesh in plan.meshes for a, axis in enumerate(mesh.axes)
              for k in range(len(axis.demands))]
    if sorted(listed) != sorted(wanted):
        log.fault(f"routing tables for {len(listed)} demands, the plan has {len(wanted)} (or others)")
    pairs = _Pairs(log)
    port_of = {g.label: g.ports[0] for g in c.generators if g.ports}
    routes = {(r.mesh, r.axis, r.demand): r for r in c.routes}
    for mesh in plan.meshes:
        for a, axis in enumerate(mesh.axes):
            block = mask_of(axis.bits)
            glob = [expand(local, axis.bits) for local in range(axis.size)]
            bases = [x for x in range(log.world) if not x & block]
            for k, d in enumerate(axis.demands):
                name = f"{d.schedule} (mesh {mesh.name} axis {a} demand {k})"
                pattern = link_pattern(SCHEDULES[d.schedule], demand_topology(d.groups, axis.bits, d.fold),
                                       d.payload_bytes)
                expect: Pattern = list(pattern)
                flat = _flat_pattern(expect)
                _coverage(log, name, axis.ring, axis.bits, glob, bases, expect, pairs, d.multiplicity, port_of, flat)
                route = routes.get((mesh.name, a, k))
                if route is None:
                    log.fault(f"no routing table for {name}")
                    continue
                head = (route.collective, route.schedule, route.multiplicity, tuple(sorted(route.bits)))
                if head != (d.collective, d.schedule, d.multiplicity, tuple(sorted(axis.bits))):
                    log.fault(f"routing table of {name} says {route.collective}/{route.schedule}, "
                               f"multiplicity {route.multiplicity}, bits {list(route.bits)}; the plan "
                               f"{d.collective}/{d.schedule}, multiplicity {d.multiplicity}, "
                               f"bits {list(axis.bits)}")
                _route_matches(log, name, route.table, expect, glob, bases, flat=flat)


def _against_stacked(log: FaultLog, plan: Plan) -> None:
    c = log.c
    axes = _circulant_axes(plan)
    pairs: Counter[tuple[int, int]] = Counter()
    for circ in c.circuits:
        pairs[(min(circ.a, circ.b), max(circ.a, circ.b))] += 1
    routes = {(r.mesh, r.axis, r.demand): r for r in c.routes}
    for m, a, stride in axes:
        mesh, axis = plan.meshes[m], plan.meshes[m].axes[a]
        assert axis.circulant is not None
        graph = Circulant(axis.size, axis.circulant.offsets)
        bases = [x for x in range(log.world) if (x // stride) % axis.size == 0]
        glob = [local * stride for local in range(axis.size)]
        for k, d in enumerate(axis.demands):
            name = f"{d.schedule} (mesh {mesh.name} axis {a} demand {k})"
            program = circulant_program(d.schedule, graph, d.payload_bytes, d.collective)
            expect = _by_src([{(t.src, t.dst) for t in phase} for phase in program.phases])
            for src, dst in sorted({(s, t) for by_src in expect for s, dsts in by_src.items() for t in dsts}):
                for base in bases:
                    x, y = base + glob[src], base + glob[dst]
                    if pairs[(min(x, y), max(x, y))] < d.multiplicity:
                        log.fault(f"missing circuit: {name} sends to node {y} but fewer than "
                                   f"{d.multiplicity} circuit(s) join them", x)
            route = routes.get((mesh.name, a, k))
            if route is None:
                log.fault(f"no routing table for {name}")
                continue
            _route_matches(log, name, route.table, expect, glob, bases, operator.add)


class _Pairs:
    """Circuits per unordered node pair, counted once from the file's circuits."""

    def __init__(self, log: FaultLog) -> None:
        self.world = log.world
        self.count: Counter[tuple[int, int]] = Counter()
        for circ in log.c.circuits:
            self.count[(min(circ.a, circ.b), max(circ.a, circ.b))] += 1
        self._by_xor: dict[int, Ints] = {}
        self._arrays: tuple[Ints, Ints, Ints] | None = None

    def __getitem__(self, pair: tuple[int, int]) -> int:
        return self.count[pair]

    def along(self, g: int) -> Ints:
        """Circuits joining x and x ^ g, for every node x (an array over the nodes)."""
        if g not in self._by_xor:
            if self._arrays is None:  # the pairs within the nodes: lower end, XOR, circuits
                inside = [(lo, hi ^ lo, k) for (lo, hi), k in self.count.items() if lo >= 0 and hi < self.world]
                table = np.array(inside, dtype=np.int64).reshape(-1, 3)
                self._arrays = (table[:, 0], table[:, 1], table[:, 2])
            lows, xors, times = self._arrays
            mine = xors == g
            per_low = np.bincount(lows[mine], times[mine], minlength=self.world)
            x = np.arange(self.world, dtype=np.int64)
            self._by_xor[g] = per_low[np.minimum(x, x ^ g)]
        return self._by_xor[g]


# construction -> the (label, multiplicity) pairs its circuits files list; its coverage and routing checks
PLAN_GENERATORS: dict[str, Callable[[Plan], tuple[tuple[str, int], ...]]] = {
    SHARED_HOST: _host_generators,
    STACKED: _circulant_sets,
}
AGAINST_PLAN: dict[str, Callable[[FaultLog, Plan], None]] = {
    SHARED_HOST: _against_shared_host,
    STACKED: _against_stacked,
}


def _by_src(expect: list[set[tuple[int, int]]]) -> Pattern:
    """Per phase, each source's destinations."""
    out: list[dict[int, set[int]]] = []
    for wanted in expect:
        by_src: dict[int, set[int]] = defaultdict(set)
        for src, dst in wanted:
            by_src[src].add(dst)
        out.append(by_src)
    return out


def _flat_pattern(expect: Pattern) -> list[tuple[Ints, Ints]]:
    """Per phase, the (local source, local destination) of each transfer as two arrays."""
    out = []
    for by_src in expect:
        dsts = list(by_src.values())
        count = np.fromiter(map(len, dsts), np.int64, len(dsts))
        src = np.repeat(np.fromiter(by_src, np.int64, len(dsts)), count)
        out.append((src, np.fromiter(itertools.chain.from_iterable(dsts), np.int64, int(count.sum()))))
    return out


def _coverage(log: FaultLog, name: str, ring: bool, bits: tuple[int, ...], glob: list[int], bases: list[int],
              expect: Pattern, pairs: _Pairs, mult: int, port_of: dict[str, int],
              flat: list[tuple[Ints, Ints]]) -> None:
    """Every (src, dst) the schedule sends on, in every coset, has ``mult`` circuits (``flat``:
    :func:`_flat_pattern` of ``expect``)."""
    if ring:
        sent = sorted({(s, t) for by_src in expect for s, dsts in by_src.items() for t in dsts})
        for base in bases:
            for s, t in sent:
                x, y = base | glob[s], base | glob[t]
                if pairs[(min(x, y), max(x, y))] < mult:
                    log.fault(f"missing circuit: {name} sends to node {y} but fewer than {mult} "
                               "circuit(s) join them", x)
        return
    src = np.concatenate([s for s, _ in flat]) if flat else np.zeros(0, np.int64)
    step = src ^ (np.concatenate([t for _, t in flat]) if flat else src)
    block = mask_of(bits)
    for g in np.flatnonzero(np.bincount(step)).tolist():  # the steps taken, ascending
        big = expand(g, bits)
        short = np.flatnonzero(pairs.along(big) < mult).tolist()
        if not short:
            continue
        srcs = set(src[step == g].tolist())
        label = generator_label(big, host_kind(big), log.n)
        for x in short:
            if compress(x & block, bits) in srcs:
                log.fault(f"missing circuit: {name} sends to node {x ^ big} over generator {label} "
                           f"but fewer than {mult} circuit(s) join them", x, port_of.get(label))


def _route_matches(log: FaultLog, name: str, table: tuple[tuple[tuple[tuple[int, tuple[int, ...]], ...], ...], ...],
                   expect: Pattern, glob: list[int], bases: list[int],
                   join: Callable[[int, int], int] = operator.or_, flat: list[tuple[Ints, Ints]] | None = None
                   ) -> None:
    """Every node's phases list exactly the peers the schedule sends to; checked on arrays
    first (:func:`_routes_equal`), entry by entry when that finds a difference."""
    if len(table) != log.world:
        return
    xor = join is operator.or_  # the coset's nodes are base | offset (disjoint bits), else base + offset
    if _routes_equal(table, _flat_pattern(expect) if flat is None else flat, glob, bases, xor):
        return
    # per phase, each local rank's destinations as offsets from its coset's base
    empty: frozenset[int] = frozenset()
    want_of = [{local: frozenset(map(glob.__getitem__, dsts)) for local, dsts in by_src.items()} for by_src in expect]
    for base in bases:
        for local, offset in enumerate(glob):
            x = join(base, offset)
            phases = table[x]
            if len(phases) != len(expect):
                log.fault(f"routing table of {name} has {len(phases)} phases, the schedule {len(expect)}", x)
                continue
            for ph, sends in enumerate(phases):
                want = want_of[ph].get(local, empty)
                got = {peer ^ base for peer, _ in sends} if xor else {peer - base for peer, _ in sends}
                if want != got:
                    log.fault(f"routing table of {name} phase {ph} lists peers "
                               f"{sorted({peer for peer, _ in sends})}, the schedule sends to "
                               f"{sorted(join(base, t) for t in want)}", x)


def _routes_equal(table: tuple[tuple[tuple[tuple[int, tuple[int, ...]], ...], ...], ...],
                  flat: list[tuple[Ints, Ints]], glob: list[int], bases: list[int], xor: bool) -> bool:
    """Whether ``table`` lists, at every node and phase, the set of peers the schedule's
    ``flat`` pattern sends to (its offsets ``glob`` from every coset base): then
    :func:`_route_matches` has no fault to report. Compared in the schedule's order first
    (the realizer's), else as sorted unique keys (node, phase, offset from the node's base)."""
    world, phases = len(table), len(flat)
    if not bases or any(len(row) != phases for row in table):
        return False
    offsets, base = np.array(glob, dtype=np.int64), np.array(bases, dtype=np.int64)
    nodes = (base[:, None] | offsets[None, :]) if xor else (base[:, None] + offsets[None, :])
    if nodes.min() < 0 or nodes.max() >= world or np.any(np.bincount(nodes.ravel(), minlength=world) != 1):
        return False  # the cosets do not tile the nodes
    for src, dst in flat:
        if len(src) and (min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) >= len(glob)):
            return False
    base_of = np.empty(world, dtype=np.int64)
    base_of[nodes] = base[:, None]
    rows = list(itertools.chain.from_iterable(table))  # (node, phase) -> ((peer, ports), ...)
    count = np.fromiter(map(len, rows), np.int64, len(rows))
    got = np.fromiter(map(operator.itemgetter(0), itertools.chain.from_iterable(rows)), np.int64, int(count.sum()))
    if xor:
        got ^= np.repeat(np.repeat(base_of, phases), count)
    else:
        got -= np.repeat(np.repeat(base_of, phases), count)
    if len(got) and (got.min() < 0 or got.max() >= world):
        return False  # a peer outside its coset
    if _in_order(got, count, flat, nodes, offsets):
        return True
    row = np.repeat(np.arange(len(rows), dtype=np.int64), count)
    keys = [((nodes[:, src] * phases + ph) * world + offsets[dst][None, :]).ravel()
            for ph, (src, dst) in enumerate(flat)]
    want = _distinct(np.concatenate(keys)) if keys else np.zeros(0, np.int64)
    return bool(np.array_equal(_distinct(row * world + got), want))


def _in_order(got: Ints, count: Ints, flat: list[tuple[Ints, Ints]], nodes: Ints, offsets: Ints) -> bool:
    """Whether the table's offsets ``got`` (``count`` per node and phase, node-major) are the
    schedule's in its order, one phase at a time."""
    phases = len(flat)
    want_count = np.zeros(len(count), np.int64)
    for ph, (src, _) in enumerate(flat):
        fan = np.bincount(src, minlength=nodes.shape[1])  # destinations per local source
        want_count[(nodes * phases + ph).ravel()] = np.broadcast_to(fan, nodes.shape).ravel()
    if not np.array_equal(want_count, count):
        return False
    start = np.cumsum(count) - count  # each row's first entry
    for ph, (src, dst) in enumerate(flat):
        if not len(src):
            continue
        first = np.flatnonzero(np.concatenate(([True], src[1:] != src[:-1])))
        place = np.arange(len(src)) - np.repeat(first, np.diff(np.append(first, len(src))))
        at = start[nodes[:, src] * phases + ph] + place  # (base, transfer) -> entry
        if not np.array_equal(got[at], np.broadcast_to(offsets[dst], at.shape)):
            return False
    return True


def _distinct(values: Ints) -> Ints:
    """The distinct values, sorted (by sorting: numpy's hashing ``unique`` is 10x slower here)."""
    out = np.sort(values)
    return out[np.concatenate(([True], out[1:] != out[:-1]))] if len(out) else out
