"""The set-up of simulations of one plan on one fabric, computed once and reused.

Realizing the plan on an OCS fabric (circuits and their paths), a hybrid's
level-2 routes, the wiring of every port (name, wire and credit latencies)
and the demands' workloads depend on the plan, the fabric and the placement,
not on the mode, the buffers or the demand being run. :func:`prepare` keeps
them in a small per-process cache keyed by a content hash of (plan, fabric,
placement), so simulating several demands, modes or sweep points pays the
set-up once; each executor worker process holds its own cache.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Any

from ..plan import Plan, dumps_plan
from ..realization.fabrics import FabricSpec
from ..realization.technologies import technology
from .circuitmap import CircuitMap, RackRoutes, Realization, circuits_from_realization, hybrid_uplinks
from .circuits_net import CircuitWiring
from .runner import paused_gc
from .timing import Stages
from .traffic import Workload, demand_workload

__all__ = ["CACHE_SIZE", "Setup", "clear_cache", "prepare", "setup_key"]

# set-ups kept per process (least recently used dropped), and workloads per set-up
CACHE_SIZE = 4
WORKLOADS = 16

_CACHE: OrderedDict[str, Setup] = OrderedDict()


def setup_key(plan: Plan, spec: FabricSpec, placement: str) -> str:
    """Content hash of what a set-up depends on (the plan's JSON, the fabric, the placement)."""
    digest = hashlib.sha256()
    for part in (dumps_plan(plan), repr(spec), placement):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:16]


class Setup:
    """What simulations of ``plan`` on ``spec`` share; every part is built on first use."""

    def __init__(self, plan: Plan, spec: FabricSpec, placement: str = "contiguous",
                 circuits: Realization | None = None, key: str = "") -> None:
        self.plan = plan
        self.spec = spec
        self.placement = placement
        self.key = key
        self.technology = technology(spec)
        self._realization = circuits
        self._circuits: CircuitMap | None = None
        self._routes: RackRoutes | None = None
        self.wirings: dict[Stages, CircuitWiring] = {}
        self._workloads: OrderedDict[tuple[Any, ...], Workload] = OrderedDict()
        self.hits = 0  # workloads served from the cache (tests and benchmarks read it)

    def circuits(self) -> CircuitMap:
        """OCS: the circuits of the given realization, or of one made here with the placement."""
        if self._circuits is None:
            with paused_gc(keep=True):  # many small objects, none in cycles
                real = self._realization
                if real is None:
                    from ..realization.realize import realize

                    real = realize(self.plan, self.spec, self.placement, routing=False)
                self._circuits = circuits_from_realization(real)
        return self._circuits

    def routes(self) -> RackRoutes:
        """Hybrid: the level-2 OCS circuits between racks."""
        if self._routes is None:
            self._routes = hybrid_uplinks(self.plan, self.spec)
        return self._routes

    def wiring(self, stages: Stages) -> CircuitWiring:
        """OCS port wiring, hop latencies and resources, shared by every run with these stages."""
        found = self.wirings.get(stages)
        if found is None:
            found = self.wirings[stages] = CircuitWiring()
        return found

    def workload(self, mesh: int, axis: int, demand: int, order: str = "program",
                 payload: int | None = None, schedule: str | None = None) -> Workload:
        """:func:`~ocsplan.simlette.traffic.demand_workload`, cached (workloads are never mutated)."""
        key = (mesh, axis, demand, order, payload, schedule)
        found = self._workloads.get(key)
        if found is not None:
            self._workloads.move_to_end(key)
            self.hits += 1
            return found
        with paused_gc(keep=True):  # hundreds of thousands of tuples, none in cycles
            built = demand_workload(self.plan, mesh, axis, demand, order, payload, schedule)
        self._workloads[key] = built
        if len(self._workloads) > WORKLOADS:
            self._workloads.popitem(last=False)
        return built


def prepare(plan: Plan, spec: FabricSpec, placement: str = "contiguous",
            circuits: Realization | None = None) -> Setup:
    """The cached set-up of (plan, fabric, placement); a given realization is not cached."""
    if circuits is not None:
        return Setup(plan, spec, placement, circuits)
    key = setup_key(plan, spec, placement)
    found = _CACHE.get(key)
    if found is not None:
        _CACHE.move_to_end(key)
        return found
    made = _CACHE[key] = Setup(plan, spec, placement, key=key)
    if len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)
    return made


def clear_cache() -> None:
    _CACHE.clear()
