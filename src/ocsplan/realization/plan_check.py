"""Circuits against their plan (``ocsplan validate --plan``): the generators, ports and
plan reference the file restates, a circuit under every transfer of every schedule
(re-derived from the schedules, circulant programs for a stacked plan), and routing
tables that list exactly the peers each phase sends to.
"""

from __future__ import annotations

import math
import operator
from collections import Counter, defaultdict
from collections.abc import Callable

from ..cayley import compress, expand, mask_of
from ..circulant import Circulant
from ..plan import Plan, demand_topology
from ..schedules import SCHEDULES, link_pattern
from ..schedules.circulant import circulant_program
from .circuits import Circuits, circulant_label, generator_label
from .fault import FaultLog

__all__ = ["against_plan", "plan_generators", "restated"]


def _circulant_axes(plan: Plan) -> list[tuple[int, int, int]]:
    """(mesh index, axis index, stride) of each circulant axis of a stacked plan, in slot order."""
    return [(m, i, math.prod(mesh.shape[i + 1:])) for m, mesh in enumerate(plan.meshes)
            for i, axis in enumerate(mesh.axes) if axis.circulant is not None]


def plan_generators(plan: Plan) -> tuple[tuple[str, int], ...]:
    """The (label, multiplicity) pairs a circuits file of ``plan`` lists: a shared-host plan's
    masks (``ring:`` for a ring), a stacked plan's circulant sets (one per offset s <= N/2)."""
    if not plan.stacked:
        return tuple((generator_label(g.mask, g.kind, plan.n), g.multiplicity) for g in plan.generators)
    sets: list[tuple[str, int]] = []
    for slot, (m, i, stride) in enumerate(_circulant_axes(plan)):
        axis = plan.meshes[m].axes[i]
        assert axis.circulant is not None
        sets += [(circulant_label(slot, axis.size, stride, s), axis.circulant.multiplicity)
                 for s in axis.circulant.offsets if 2 * s <= axis.size]
    return tuple(sets)


def restated(c: Circuits, plan: Plan) -> list[str]:
    """How what a circuits file restates of ``plan`` differs from it (empty: it agrees): the generators
    or circulant sets and their multiplicities (plan reference and generator table), the ports used,
    and for a shared-host plan the plan reference. The one such check: ``validate --plan`` reports
    each, :func:`ocsplan.deploy.faults.check_match` refuses on the first."""
    want = plan_generators(plan)
    what = "circulant sets" if plan.stacked else "generators"
    found = []
    if tuple(c.plan.generators) != want or {g.label: g.multiplicity for g in c.generators} != dict(want):
        found.append(f"{what} or multiplicities differ from the plan")
    if not plan.stacked and plan.ports_used > plan.ports:
        found.append(f"plan uses {plan.ports_used} ports of {plan.ports}")
    if c.ports_used != plan.ports_used + c.reserved_ports:
        found.append(f"{c.ports_used} ports used, plan needs {plan.ports_used} + {c.reserved_ports} reserved")
    ref = (c.plan.instance, c.plan.method, c.plan.world, c.plan.ports, c.plan.ports_used, c.plan.objective_s)
    if not plan.stacked and ref != (plan.instance, plan.method, plan.world, plan.ports, plan.ports_used,
                                    plan.objective_s):
        found.append("the file's plan reference (instance, method, world, ports, ports used, objective) "
                     "differs from the plan")
    return found


def against_plan(log: FaultLog, plan: Plan) -> None:
    """The faults of ``log``'s circuits against ``plan``: what the file restates of it,
    a circuit for every transfer of every schedule, the routing tables."""
    c = log.c
    if plan.world != log.world:
        log.fault(f"plan has {plan.world} nodes, circuits file {log.world}")
        return
    for message in restated(c, plan):
        log.fault(message)
    if plan.stacked:
        _against_stacked(log, plan)
        return
    listed = [(r.mesh, r.axis, r.demand) for r in c.routes]
    wanted = [(mesh.name, a, k) for mesh in plan.meshes for a, axis in enumerate(mesh.axes)
              for k in range(len(axis.demands))]
    if sorted(listed) != sorted(wanted):
        log.fault(f"routing tables for {len(listed)} demands, the plan has {len(wanted)} (or others)")
    pairs: Counter[tuple[int, int]] = Counter()
    for circ in c.circuits:
        pairs[(min(circ.a, circ.b), max(circ.a, circ.b))] += 1
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
                expect = [{(src, dst) for src, dsts in phase.items() for dst in dsts} for phase in pattern]
                sent = set().union(*expect)
                _coverage(log, name, axis.ring, axis.bits, glob, bases, sent, pairs, d.multiplicity, port_of)
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
                _route_matches(log, name, route.table, expect, glob, bases)


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
            expect = [{(t.src, t.dst) for t in phase} for phase in program.phases]
            for src, dst in sorted(set().union(*expect)):
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


def _coverage(log: FaultLog, name: str, ring: bool, bits: tuple[int, ...], glob: list[int], bases: list[int],
              sent: set[tuple[int, int]], pairs: Counter[tuple[int, int]], mult: int,
              port_of: dict[str, int]) -> None:
    """Every (src, dst) the schedule sends on, in every coset, has ``mult`` circuits."""
    if ring:
        for base in bases:
            for s, t in sorted(sent):
                x, y = base | glob[s], base | glob[t]
                if pairs[(min(x, y), max(x, y))] < mult:
                    log.fault(f"missing circuit: {name} sends to node {y} but fewer than {mult} "
                               "circuit(s) join them", x)
        return
    by_gen: dict[int, set[int]] = defaultdict(set)
    for s, t in sent:
        by_gen[s ^ t].add(s)
    for g, srcs in sorted(by_gen.items()):
        big = expand(g, bits)
        short = [x for x in range(log.world) if pairs[(min(x, x ^ big), max(x, x ^ big))] < mult]
        label = generator_label(big, "cube" if big.bit_count() == 1 else "fold", log.n)
        for x in short:
            if compress(x & mask_of(bits), bits) in srcs:
                log.fault(f"missing circuit: {name} sends to node {x ^ big} over generator {label} "
                           f"but fewer than {mult} circuit(s) join them", x, port_of.get(label))


def _route_matches(log: FaultLog, name: str, table: tuple[tuple[tuple[tuple[int, tuple[int, ...]], ...], ...], ...],
                   expect: list[set[tuple[int, int]]], glob: list[int], bases: list[int],
                   join: Callable[[int, int], int] = operator.or_) -> None:
    if len(table) != log.world:
        return
    dst_of: list[dict[int, set[int]]] = []
    for wanted in expect:
        by_src: dict[int, set[int]] = defaultdict(set)
        for src, dst in wanted:
            by_src[src].add(dst)
        dst_of.append(by_src)
    for base in bases:
        for local, offset in enumerate(glob):
            x = join(base, offset)
            phases = table[x]
            if len(phases) != len(expect):
                log.fault(f"routing table of {name} has {len(phases)} phases, the schedule {len(expect)}", x)
                continue
            for ph, by_src in enumerate(dst_of):
                want = {join(base, glob[t]) for t in by_src.get(local, ())}
                got = {peer for peer, _ in phases[ph]}
                if want != got:
                    log.fault(f"routing table of {name} phase {ph} lists peers {sorted(got)}, "
                               f"the schedule sends to {sorted(want)}", x)
