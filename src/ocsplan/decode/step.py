"""A decode step on a fabric file, planned and priced (paper App. B.4, B.6).

The step's demand becomes an instance, the fabric's technology prices its
collectives (:data:`~ocsplan.decode.technology.PRICERS`: the planner's
plan on all-OCS, native schedules on EPS and hybrid), and the workload model
adds kernels, launches and power (:class:`ocsplan.workload.step.Step`).
Choosing the split is :mod:`ocsplan.decode.ranking`.
"""

from __future__ import annotations

from ..errors import InstanceError
from ..plan import Plan
from ..realization.circuits import Circuits, require_realizes
from ..realization.fabrics import FabricSpec
from ..realization.technologies import TECHNOLOGIES, technology
from ..workload.accelerator import Accelerator
from ..workload.demand import COMM, Precision, demand_rows
from ..workload.kernels import compute_time, memory_per_rank, require_fit
from ..workload.model import Model
from ..workload.power import fabric_power
from ..workload.splits import Split, check_split, check_world
from ..workload.step import CollectiveTime, Step
from .cache import PlanCache
from .pricing import NETWORKS, price_realized
from .simulated import planned_runs, prefetch
from .technology import PRICERS, StepDemand

__all__ = ["check_spray", "decode_step", "plan_for"]


def plan_for(model: Model, spec: FabricSpec, world: int, split: Split, batch: int,
             precision: Precision = COMM["fp4"], cache: PlanCache | None = None) -> Plan:
    """The planner's plan of the step's demand on ``spec`` (cached by demand: context does not enter)."""
    demand = StepDemand(model, world, split, batch, precision)
    return (cache if cache is not None else PlanCache()).plan(demand.planned_text(spec))


def _check_fabric(spec: FabricSpec, world: int) -> None:
    serving = min(spec.serving, spec.accelerators)
    if world > serving:
        raise InstanceError(spec.source or spec.name, "accelerators",
                            f"world {world} exceeds the {serving} accelerators the fabric serves")


def _check_circuits(circuits: Circuits, plan: Plan, spec: FabricSpec, tech: str) -> None:
    """The circuits realize this step's plan on this fabric (InstanceError naming ``--circuits``)."""
    if not TECHNOLOGIES[tech].circuits:
        raise InstanceError("--circuits", "", f"the {tech} fabric {spec.name} carries no circuits file")
    require_realizes(circuits, plan, spec, plan_context="not a realization of this step's plan (split, batch and "
                                                     "precision as deployed): ")


def check_spray(spray: str, network: str, spec: FabricSpec) -> None:
    """A granularity other than the default needs Simlette and a packet switch (InstanceError naming ``spray``)."""
    if spray != "message" and (network != "simlette" or not TECHNOLOGIES[technology(spec)].packet_switches):
        raise InstanceError("spray", "", f"{spray!r} needs network simlette on a fabric with packet switches "
                                         f"(network {network}, {technology(spec)} fabric {spec.name})")


def decode_step(model: Model, acc: Accelerator, spec: FabricSpec, world: int, split: Split, batch: int,
                context: int, *, network: str = "analytical", precision: Precision = COMM["fp4"],
                check_memory: bool = True, cache: PlanCache | None = None, tokens_per_step: int = 1,
                accept_rate: float = 1.0, circuits: Circuits | None = None, spray: str = "message",
                jobs: int | None = 1) -> Step:
    """Time one decode step; InfeasibleError when the batch does not fit in HBM.

    ``cache`` keeps the plans (default: a fresh one, memory only). ``circuits``: an all-OCS
    fabric's realization of the step's plan (deployed or repaired), priced on its real paths.
    ``spray``: Simlette's granularity over equal EPS links (``network="simlette"``, EPS or hybrid).
    ``jobs``: worker processes for the step's distinct Simlette runs on EPS or hybrid (None: one
    per core; :func:`~ocsplan.decode.simulated.prefetch`); the same step whatever it is."""
    check_world(world)
    check_split(model, world, split)
    if network not in NETWORKS:
        raise InstanceError("network", "", f"unknown network {network!r} (use {', '.join(NETWORKS)})")
    check_spray(spray, network, spec)
    tech = technology(spec)
    _check_fabric(spec, world)
    memory = memory_per_rank(model, acc, world, split, batch, context, precision)
    if check_memory:
        require_fit(memory, batch)
    rows_batch = batch * tokens_per_step  # k tokens per user: every payload scales by k
    rows = demand_rows(model, world, split, rows_batch, precision)
    if circuits is None:
        demand = StepDemand(model, world, split, rows_batch, precision)
        plans = cache if cache is not None else PlanCache()
        if jobs != 1 and network == "simlette" and TECHNOLOGIES[tech].packet_switches:
            with planned_runs() as runs:  # the native runs the pricing makes, made at once
                PRICERS[tech].price(demand, rows, spec, network, plans, spray)
            prefetch(runs, jobs)
        priced = PRICERS[tech].price(demand, rows, spec, network, plans, spray)
    else:
        plan = plan_for(model, spec, world, split, rows_batch, precision, cache)
        _check_circuits(circuits, plan, spec, tech)
        priced = price_realized(plan, spec, circuits, network)
    collectives = tuple(CollectiveTime(r, *priced.times[(r.region, r.axis)]) for r in rows if r.calls)
    power = fabric_power(spec, acc.power)
    return Step(model.name, acc.name, spec.name, tech, network, precision.name, world, split, batch, context,
                compute_time(model, acc, world, split, batch, context, precision, tokens_per_step), memory,
                collectives, power.total, spec.accelerators, tokens_per_step, accept_rate)
