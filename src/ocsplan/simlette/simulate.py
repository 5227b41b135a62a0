"""Simlette entry points: simulate a plan's demands, or drive one program directly.

A plan is simulated by its kind's simulator (:data:`SIMULATORS`, keyed like the
realizers by :func:`ocsplan.plan.plan_kind`): shared-host plans in
:mod:`ocsplan.simlette.shared_host`, stacked-link plans in
:mod:`ocsplan.simlette.stacked`. The modes are :data:`ocsplan.simlette.runs.MODES`.
"""

from __future__ import annotations

from collections.abc import Callable

from ..plan import SHARED_HOST, STACKED, Plan, plan_kind
from ..realization.fabrics import FabricSpec
from ..realization.technologies import technology
from ..schedules import Program
from .circuitmap import Realization
from .report import DemandResult, SimReport
from .requests import Selector, SimRequest
from .runs import SimOptions, simulate_workload
from .shared_host import simulate_shared_host
from .stacked import simulate_stacked
from .technology import NETWORK_PIECES, network_factory
from .traffic import program_workload

__all__ = ["SIMULATORS", "PlanSimulator", "simulate_plan", "simulate_program"]


PlanSimulator = Callable[[Plan, FabricSpec, SimOptions, SimRequest], SimReport]
"""Simulate every selected demand of one kind of plan (what :func:`simulate_plan` asks, as a request)."""

SIMULATORS: dict[str, PlanSimulator] = {
    SHARED_HOST: simulate_shared_host,
    STACKED: simulate_stacked,
}


def simulate_plan(
    plan: Plan,
    spec: FabricSpec,
    options: SimOptions,
    *,
    circuits: Realization | None = None,
    only: Selector | None = None,
    payload: int | None = None,
    placement: str = "contiguous",
) -> SimReport:
    """Simulate every demand of ``plan`` on ``spec``, one demand at a time.

    On an OCS fabric the circuits are ``circuits`` (a realization of this plan,
    e.g. read with ``ocsplan.realization.load_circuits``) or else realized here
    with ``placement``. ``only(mesh, axis, demand)`` selects demands;
    ``payload`` replaces their payloads (the closed form is re-evaluated for it).
    """
    options.check()
    return SIMULATORS[plan_kind(plan)](plan, spec, options, SimRequest(circuits, only, payload, placement))


def simulate_program(
    program: Program,
    spec: FabricSpec,
    options: SimOptions,
    *,
    ports: int,
    multiplicity: int = 1,
    latency: float | None = None,
) -> DemandResult:
    """Drive one executable schedule on ``2**program.bits`` accelerators directly.

    OCS: every generator the program uses gets ``multiplicity`` circuits (one
    group, ranks = accelerators). EPS and hybrid: the program's messages are
    sprayed over ``ports`` ports per accelerator. ``latency`` is the ideal
    mode's lambda (default: the fabric's OCS hop).
    """
    options.check()
    bits = tuple(range(program.bits))
    workload = program_workload(program, bits, program.size, options.order)
    gens = sorted({t.gen for phase in program.phases for t in phase})
    budget = options.latency or spec.latency
    mult = dict.fromkeys(gens, multiplicity)
    lam = budget.hop(ocs=1) if latency is None else latency
    pieces = None
    if options.on_fabric:
        pieces = NETWORK_PIECES[technology(spec)].program_pieces(gens, multiplicity, program.size, spec)
    factory = network_factory(spec, options, ports=ports,
                              circuits=pieces.circuits if pieces is not None else None,
                              ideal=(lam, spec.link, mult))
    return simulate_workload(workload, factory, mode=options.mode, rate=spec.link,
                             multiplicity=multiplicity, payload=program.payload,
                             collective=program.collective, lookahead=options.lookahead,
                             barrier=options.barrier)
