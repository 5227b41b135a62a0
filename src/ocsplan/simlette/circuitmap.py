"""What the simulator needs to know of a fabric, whoever built it.

The network layer reads circuits through one small type, :class:`CircuitMap`:
for every (rank, generator) the circuits it owns, each with its port and the
OCS devices and cables on its path. Two builders fill it:

- :func:`circuits_from_plan`: straight from a plan. Every copy c of a host
  generator g is a circuit on its own port between x and x XOR g (the
  coloring of paper App. A.1, ports in the plan's generator order). On a
  single-level fabric it crosses one OCS; on a two-level one it crosses one
  OCS inside a rack and three (level 1, level 2, level 1) between racks.
- :func:`circuits_from_realization`: from the realizer's output (per node and
  port the peer and generator, per circuit its path), read through the
  structural protocols below so this module needs nothing from it.

:func:`hybrid_uplinks` assigns the level-2 OCS circuits of a hybrid fabric
(EPS racks, OCS between them): every rail's leaf uplinks go to rack offsets
(XOR of rack indices) chosen so the circuits the plan's generators need load
the busiest uplink least (App. C.7: worker placement balances the level-2
demand; :mod:`ocsplan.simlette.uplinks`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from ..cayley import str_to_mask
from ..errors import InstanceError, RealizationError
from ..plan import Plan
from ..realization.fabrics import FabricSpec
from .uplinks import balanced_uplinks

__all__ = [
    "CircuitMap",
    "Link",
    "RackRoutes",
    "Realization",
    "check_fit",
    "circuits_for_generators",
    "circuits_from_plan",
    "circuits_from_realization",
    "hybrid_uplinks",
    "plan_generators",
    "rack_of",
]


@dataclass(frozen=True)
class Link:
    """One circuit seen from one end: its port there, OCS devices and cables crossed."""

    port: int
    ocs: int
    cables: int
    peer: int | None = None  # the far rank when it is not rank XOR generator (stacked plans)


@dataclass(frozen=True)
class CircuitMap:
    """Circuits per (rank, generator mask); a rank's accelerator is ``accelerator[rank]``."""

    links: Mapping[tuple[int, int], tuple[Link, ...]]
    source: str  # "plan" or "realization"

    def of(self, rank: int, gen: int) -> tuple[Link, ...]:
        found = self.links.get((rank, gen))
        if not found:
            raise RealizationError(f"rank {rank} has no circuit for generator {gen:b}")
        return found


def rack_of(rank: int, spec: FabricSpec) -> int:
    return rank // spec.rack_size


def check_fit(plan: Plan, spec: FabricSpec) -> None:
    """The plan's ranks and ports must fit the fabric's serving accelerators."""
    where = spec.source or spec.name
    serving = min(spec.serving, spec.accelerators)
    if plan.world > serving:
        raise InstanceError(where, "accelerators", f"plan has {plan.world} ranks, the fabric serves {serving}")
    if plan.ports > spec.ports:
        raise InstanceError(where, "ports", f"plan uses {plan.ports} ports per accelerator, "
                                            f"the fabric has {spec.ports}")


def plan_generators(plan: Plan) -> tuple[tuple[int, int, int], ...]:
    """What a plan's circuits are made of: (mask, copies, ports skipped) per generator in order
    (a ring generator skips its ports): plans with the same ones (and world) have the same circuits."""
    return tuple((g.mask, g.multiplicity if g.host else 0, 0 if g.host else g.ports)
                 for g in plan.generators)


def circuits_from_plan(plan: Plan, spec: FabricSpec) -> CircuitMap:
    """Every generator copy on its own port; OCS stages from the rack structure."""
    check_fit(plan, spec)
    return circuits_for_generators(plan_generators(plan), plan.world, spec)


def circuits_for_generators(
    gens: Sequence[tuple[int, int, int]], world: int, spec: FabricSpec
) -> CircuitMap:
    """Circuits of (mask, copies, ports skipped) in order: copy c of g on the next port.

    A circuit crosses one OCS in a rack (or on a single level) and three
    between racks; a rail with more inter-rack circuits per rack than level 1
    has uplinks cannot be realized.
    """
    two = spec.two_level
    links: dict[tuple[int, int], tuple[Link, ...]] = {}
    port = 0
    crossing: Counter[int] = Counter()  # inter-rack circuits per rail
    for mask, copies, skip in gens:
        port += skip
        if copies <= 0:
            continue
        inter = [two and rack_of(x, spec) != rack_of(x ^ mask, spec) for x in range(world)]
        ports = range(port, port + copies)
        # one (frozen) Link per port and kind, shared by every rank: all copies of a rank at once
        near, far = tuple(Link(p, 1, 2) for p in ports), tuple(Link(p, 3, 4) for p in ports)
        for x in range(world):
            key = (x, mask)
            added = far if inter[x] else near
            before = links.get(key)
            links[key] = added if before is None else before + added
        for p in ports:
            crossing[p] += sum(inter)
        port += copies
    if port > spec.ports:
        raise RealizationError(
            f"the circuits need {port} ports per accelerator, the fabric has {spec.ports}")
    if two:
        up = spec.levels[0].up
        racks = max(1, world // spec.rack_size)
        for rail, count in sorted(crossing.items()):
            if count and -(-count // racks) > up:
                raise RealizationError(
                    f"rail {rail}: {-(-count // racks)} circuits leave a rack, "
                    f"level 1 has {up} uplinks")
    return CircuitMap(links, "plan")


# -- the realizer's output, read structurally --------------------------------------------


class NodePortLike(Protocol):
    @property
    def port(self) -> int: ...

    @property
    def peer(self) -> int: ...

    @property
    def generator(self) -> str: ...


class CircuitLike(Protocol):
    @property
    def a(self) -> int: ...

    @property
    def a_port(self) -> int: ...

    @property
    def b(self) -> int: ...

    @property
    def b_port(self) -> int: ...

    @property
    def stages(self) -> int: ...

    @property
    def cables(self) -> int: ...


class Realization(Protocol):
    """What the adapter reads of ``ocsplan.realize.realize(...)``: ``ocsplan.circuits.Circuits``."""

    @property
    def nodes(self) -> Sequence[Sequence[NodePortLike]]: ...

    @property
    def circuits(self) -> Sequence[CircuitLike]: ...


def circuits_from_realization(real: Realization) -> CircuitMap:
    """Adapter over ``ocsplan.realize``'s result (``Circuits``): ports, peers, paths.

    ``nodes[x]`` lists (port, peer, peer_port, generator label) of rank x;
    every circuit gives its OCS devices (``stages``) and ``cables``. Ring
    generators are skipped (not simulated).
    """
    path: dict[tuple[int, int], tuple[int, int]] = {}
    for c in real.circuits:
        path[(c.a, c.a_port)] = (c.stages, c.cables)
        path[(c.b, c.b_port)] = (c.stages, c.cables)
    links: dict[tuple[int, int], list[Link]] = {}
    masks: dict[str, int] = {}  # a few generator labels on every node
    for x, ports in enumerate(real.nodes):
        for e in ports:
            if e.generator.startswith("ring:"):
                continue
            gen = masks.get(e.generator)
            if gen is None:
                gen = masks[e.generator] = str_to_mask(e.generator)
            if e.peer != x ^ gen:
                raise RealizationError(
                    f"rank {x} port {e.port}: peer {e.peer} is not x XOR {e.generator}")
            stages, cables = path.get((x, e.port), (1, 2))
            links.setdefault((x, gen), []).append(Link(e.port, stages, cables))
    ordered = {k: tuple(sorted(v, key=lambda link: link.port)) for k, v in links.items()}
    return CircuitMap(ordered, "realization")


# -- hybrid: level-2 OCS circuits between EPS racks ----------------------------------------


@dataclass(frozen=True)
class RackRoutes:
    """Uplink u of every leaf goes to the leaf of rack r XOR ``masks[u]`` (same rail);
    ``next_hop[delta]`` is the first rack offset on a shortest way to rack r XOR delta."""

    masks: tuple[int, ...]
    next_hop: Mapping[int, int]
    hops: Mapping[int, int]


def hybrid_uplinks(plan: Plan, spec: FabricSpec) -> RackRoutes:
    """Each leaf's uplinks over the rack offsets the plan's circuits need, the level-2 load
    balanced (:func:`~ocsplan.simlette.uplinks.balanced_uplinks`)."""
    check_fit(plan, spec)
    up = spec.levels[0].up
    racks = spec.serving_racks
    if spec.rack_size & (spec.rack_size - 1) or racks & (racks - 1):
        raise InstanceError(spec.source or spec.name, "racks",
                            "a hybrid fabric needs power-of-two rack size and serving racks")
    shift = spec.rack_size.bit_length() - 1
    need: Counter[int] = Counter()
    for g in plan.generators:
        if not g.host:
            continue
        offset = g.mask >> shift
        if offset:
            need[offset] += g.multiplicity * spec.rack_size
    found = balanced_uplinks(need, up, racks)
    if found is None:
        raise RealizationError(
            f"hybrid fabric: the rack offsets {sorted(need)} cannot be reached over {up} uplinks")
    masks, next_hop, hops = found
    return RackRoutes(masks, dict(next_hop), dict(hops))  # copies: the solver caches its own
