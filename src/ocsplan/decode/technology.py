"""How each fabric technology prices a decode step's collectives (paper §5.4, App. B.4).

One table registered against the keys of :data:`ocsplan.realization.technologies.TECHNOLOGIES`
(the fabric's technology, :func:`~ocsplan.realization.technologies.technology`):
all-OCS prices the planner's plan on its circuits, all-EPS the native K_M schedules
on the switches, hybrid the native schedules with the inter-rack traffic on the
OCS uplinks. A new technology is one more entry there and here. (A level's power comes from its
technology's port tables, :data:`ocsplan.workload.power.EPS_PORT_W` and
:data:`~ocsplan.workload.power.OCS_PORT_W`, in :func:`~ocsplan.workload.power.fabric_power`.)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from ..instance import loads_instance
from ..planning.bound import objective_bound
from ..realization.fabrics import FabricSpec
from ..realization.technologies import EPS, HYBRID, OCS
from ..simlette.circuitmap import hybrid_uplinks
from ..workload.demand import DemandRow, Precision, instance_toml
from ..workload.model import Model
from ..workload.splits import Split
from .cache import PlanCache
from .pricing import Priced, native_routes, price_native

__all__ = ["PRICERS", "Bound", "Pricer", "StepDemand", "Technology"]


@dataclass(frozen=True)
class StepDemand:
    """The collective demand of one decode step (the context does not enter)."""

    model: Model
    world: int
    split: Split
    batch: int
    precision: Precision

    def instance_text(self, spec: FabricSpec, name: str = "") -> str:
        """The demand as instance TOML on ``spec``'s ports, OCS hop latency and link rate."""
        return instance_toml(self.model, self.world, self.split, self.batch, ports=spec.ports,
                             latency=spec.latency.hop(ocs=1), link=spec.link, precision=self.precision, name=name)

    def planned_text(self, spec: FabricSpec) -> str:
        """The instance the planner plans (and the plan cache keys by)."""
        return self.instance_text(spec, f"{self.model.name}-gxnet")


# (demand, its rows, fabric, network, plan cache, Simlette's spraying) -> time of one call of every demand
Pricer = Callable[[StepDemand, Sequence[DemandRow], FabricSpec, str, PlanCache, str], Priced]


# (demand, fabric) -> a lower bound on the step's communication seconds (Pareto pruning)
Bound = Callable[[StepDemand, FabricSpec], float]


def _no_bound(demand: StepDemand, spec: FabricSpec) -> float:
    return 0.0


@dataclass(frozen=True)
class Technology:
    """A fabric technology: its name, how it prices a step's collectives, and a lower bound
    on that price (``comm_bound``; 0 where pricing is cheap enough to need none)."""

    name: str
    price: Pricer
    comm_bound: Bound = _no_bound


def _planned(demand: StepDemand, rows: Sequence[DemandRow], spec: FabricSpec, network: str,
             cache: PlanCache, spray: str) -> Priced:
    """All-OCS: no packet switch, ``spray`` does not apply (``decode_step`` refuses it)."""
    return cache.prices(demand.planned_text(spec), spec, network)


def _planned_bound(demand: StepDemand, spec: FabricSpec) -> float:
    """The planner's :func:`~ocsplan.planning.bound.objective_bound` of the demand's instance:
    its plan's sum w*T, whose weights are the calls per step, and the OCS price of every
    demand is Eq. 1 on the plan's circuits, a hop at least the instance's latency."""
    return objective_bound(loads_instance(demand.planned_text(spec), "<workload>"))


def _native_key(tech: str, text: str, rows: Sequence[DemandRow], spec: FabricSpec) -> str:
    """What native prices depend on: the technology, the instance, the demand rows and the fabric."""
    return f"{tech}\n{text}\n{tuple(rows)!r}\n{spec!r}"


def _native(demand: StepDemand, rows: Sequence[DemandRow], spec: FabricSpec, network: str,
            cache: PlanCache, spray: str) -> Priced:
    text = demand.instance_text(spec)

    def price() -> Priced:
        return price_native(loads_instance(text, "<workload>"), rows, spec, network, spray=spray)

    return cache.native_prices(_native_key("eps", text, rows, spec), network, price)


def _native_uplinks(demand: StepDemand, rows: Sequence[DemandRow], spec: FabricSpec, network: str,
                    cache: PlanCache, spray: str) -> Priced:
    text = demand.instance_text(spec)

    def price() -> Priced:
        instance = loads_instance(text, "<workload>")
        routes = hybrid_uplinks(native_routes(instance, spec), spec)
        return price_native(instance, rows, spec, network, routes, spray)

    return cache.native_prices(_native_key("hybrid", text, rows, spec), network, price)


PRICERS: Mapping[str, Technology] = MappingProxyType({t.name: t for t in (
    Technology(OCS, _planned, _planned_bound),
    Technology(EPS, _native),
    Technology(HYBRID, _native_uplinks),
)})
