"""Simlette entry points: simulate a plan's demands, or drive one program directly.

Modes (DESIGN §7, paper App. C.5):

- ``ideal``: the closed form's assumptions made executable. Each logical edge
  is one link of p_g * R, every message costs the plan's lambda plus its bytes
  over that rate, no flits, no credits, no switches. With p = 1 it reproduces
  h * lambda + v / (p R) exactly (the conformance check of paper App. A.2).
- ``message``: the optimized mode. DL flits, credits, switches and the
  fabric's Table 9 latency, one event per piece of a message per port.
- ``flit``: the same model with one event per DL flit per port.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from ..cost import phase_time
from ..errors import InstanceError, OcsplanError
from ..plan import Plan, demand_topology
from ..realization.fabrics import FabricSpec, LatencyBudget
from ..schedules import Program, closed_form
from .circuitmap import (
    CircuitMap,
    RackRoutes,
    Realization,
    check_fit,
    circuits_for_generators,
    technology,
)
from .engine import Engine, Message
from .network import CircuitNetwork, CircuitWiring, IdealNetwork, Network, SwitchedNetwork
from .report import DemandResult, LinkStat, SimReport, analytical
from .runner import Runner, paused_gc
from .setup import Setup, prepare
from .timing import DL_FLIT, TL_FLIT, Stages
from .traffic import ORDERS, Workload, program_workload

__all__ = [
    "FLIT_LIMIT",
    "MODES",
    "SimOptions",
    "simulate_plan",
    "simulate_program",
    "simulate_workload",
]

MODES = ("ideal", "message", "flit")
# Flit mode refuses workloads beyond this many DL flits (hours of simulation).
FLIT_LIMIT = 50_000_000

Factory = Callable[[Engine, Callable[[Message], None]], Network]


@dataclass(frozen=True)
class SimOptions:
    """How to simulate: mode, buffers (bytes per port and channel; None = unlimited), send order."""

    mode: str = "message"
    buffer: int | None = None  # receive buffer of every accelerator port
    switch_buffer: int | None = None  # input buffer of every switch port
    order: str = "program"
    latency: LatencyBudget | None = None  # overrides the fabric's budget
    lookahead: bool = True  # batch decisions that cannot be overtaken (same results, fewer events)
    barrier: bool = False  # all nodes start a phase together (else data-driven, per node)

    def check(self) -> SimOptions:
        if self.mode not in MODES:
            raise InstanceError("--mode", "",
                                f"unknown mode {self.mode!r} (use {', '.join(MODES)})")
        if self.order not in ORDERS:
            raise InstanceError("--order", "",
                                f"unknown order {self.order!r} (use {', '.join(ORDERS)})")
        for name, value in (("--buffer", self.buffer), ("--switch-buffer", self.switch_buffer)):
            if value is not None and value < DL_FLIT:
                raise InstanceError(name, "", f"{value} B holds no {DL_FLIT} B DL flit")
        return self


def _flits(nbytes: int | None) -> int | None:
    return None if nbytes is None else nbytes // DL_FLIT


def _rsp(nbytes: int | None) -> int | None:
    return None if nbytes is None else nbytes // TL_FLIT


def network_factory(
    spec: FabricSpec,
    options: SimOptions,
    *,
    ports: int,
    circuits: CircuitMap | None = None,
    routes: RackRoutes | None = None,
    ideal: tuple[float, float, dict[int, int]] | None = None,
    setup: Setup | None = None,
) -> Factory:
    """Build the network of a run; ``ideal`` = (lambda, R, multiplicity per generator).

    ``setup``: share the port wiring with every other run of that set-up.
    """
    if options.mode == "ideal":
        if ideal is None:
            raise OcsplanError("ideal mode needs lambda, R and the multiplicities")
        lam, rate, mult = ideal
        return lambda eng, deliver: IdealNetwork(eng, lam, rate, mult, deliver)
    stages = Stages.from_budget(options.latency or spec.latency)
    tech = technology(spec)
    buffer, switch = _flits(options.buffer), _flits(options.switch_buffer)
    rsp = _rsp(options.buffer)
    if tech == "ocs":
        if circuits is None:
            raise OcsplanError("an OCS fabric needs circuits")
        cmap = circuits
        wiring = setup.wiring(stages) if setup is not None else CircuitWiring()  # shared by the runs
        return lambda eng, deliver: CircuitNetwork(
            eng, stages, spec.link, deliver, cmap, buffer, rsp, wiring)
    if tech == "hybrid" and routes is None:
        raise OcsplanError("a hybrid fabric needs its level-2 circuits")
    return lambda eng, deliver: SwitchedNetwork(
        eng, stages, spec.link, deliver, spec, ports, buffer, switch, rsp,
        routes if tech == "hybrid" else None)


def simulate_workload(
    workload: Workload,
    factory: Factory,
    *,
    mode: str,
    rate: float,
    multiplicity: int = 1,
    payload: int = 0,
    collective: str = "",
    closed_form: float | None = None,
    lookahead: bool = True,
    barrier: bool = False,
) -> DemandResult:
    """Run one workload to completion and collect its figures."""
    if mode == "flit" and workload.flits > FLIT_LIMIT:
        raise OcsplanError(
            f"{workload.name}: {workload.flits} DL flits is too many for flit mode "
            f"(limit {FLIT_LIMIT}); use message mode")
    eng = Engine(DL_FLIT / rate, mode == "flit", horizon=1e-6 if lookahead else 0.0, events=False)
    runner = Runner(workload, eng, factory, barrier)
    start = time.perf_counter()
    done = runner.run()
    wall = time.perf_counter() - start
    net = runner.net
    with paused_gc():
        model = analytical(workload, net)
    busiest: LinkStat | None = None
    stall_port, stall_max, stall_total = "", 0.0, 0.0
    if isinstance(net, IdealNetwork):
        load = net.load
        if load:
            key = max(load, key=lambda k: (load[k], -k[0], -k[1]))
            nbytes = float(load[key])
            busiest = LinkStat(f"acc {key[0]} gen {key[1]:b}", nbytes,
                               nbytes / (net.multiplicity[key[1]] * rate), 0.0)
    else:
        ports = list(net.port_list())
        if ports:
            top = max(ports, key=lambda p: p.flits)
            busy = top.flits * eng.flit_time
            busiest = LinkStat(top.name, float(top.flits * DL_FLIT), busy, top.stall)
            worst = max(ports, key=lambda p: p.stall)
            if worst.stall > 0:
                stall_port, stall_max = worst.name, worst.stall
            stall_total = sum(p.stall for p in ports)
    net.close()
    return DemandResult(
        name=workload.name,
        collective=collective,
        schedule=workload.schedule,
        payload_bytes=payload,
        groups=workload.groups,
        group_size=workload.group_size,
        multiplicity=multiplicity,
        phases=workload.phases,
        messages=workload.messages,
        flits=workload.flits,
        closed_form_s=closed_form,
        analytical_s=model,
        simulated_s=done,
        acked_s=max(net.acked, done),
        credit_stall_s=stall_max,
        credit_stall_total_s=stall_total,
        stalled_link=stall_port,
        busiest=busiest,
        events=eng.events,
        wall_s=wall,
    )


def simulate_plan(
    plan: Plan,
    spec: FabricSpec,
    options: SimOptions,
    *,
    circuits: Realization | None = None,
    only: Callable[[int, int, int], bool] | None = None,
    payload: int | None = None,
    placement: str = "contiguous",
) -> SimReport:
    """Simulate every demand of ``plan`` on ``spec``, one demand at a time.

    All collective groups of the demand's axis run together. On an OCS fabric
    the circuits are ``circuits`` (a realization of this plan, e.g. read with
    ``ocsplan.circuits.load_circuits``) or else realized here with
    :func:`ocsplan.realize.realize` and ``placement``: ports, and one OCS
    device per circuit in a rack or on one level, three between racks. That
    realization and the workloads are cached per (plan, fabric, placement)
    (:func:`ocsplan.simlette.setup.prepare`).
    ``only(mesh, axis, demand)`` selects demands; ``payload`` replaces their
    payloads (the closed form is re-evaluated for it). Stacked plans run through
    :func:`ocsplan.simlette.stacked.simulate_stacked` (circulant axes, circuits
    from ``circuits`` or realized now; ``placement`` is contiguous).
    """
    options.check()
    if plan.stacked:
        from ..realization.circuits import Circuits
        from .stacked import simulate_stacked

        given = circuits if isinstance(circuits, Circuits) else None
        return simulate_stacked(plan, spec, options, simulate_workload, network_factory, circuits=given,
                                only=only, payload=payload)
    setup = prepare(plan, spec, placement, circuits)
    tech = setup.technology
    cmap: CircuitMap | None = None
    routes: RackRoutes | None = None
    source = ""
    if options.mode != "ideal":
        if tech == "ocs":
            cmap = setup.circuits()
            source = cmap.source
        elif tech == "hybrid":
            routes = setup.routes()
        check_fit(plan, spec)
    mult = {g.mask: g.multiplicity for g in plan.generators if g.kind != "ring"}
    factory = network_factory(spec, options, ports=plan.ports, circuits=cmap, routes=routes,
                              ideal=(plan.latency_s, plan.link_Bps, mult), setup=setup)
    rate = plan.link_Bps if options.mode == "ideal" else spec.link
    results = []
    notes = []
    for m, mesh in enumerate(plan.meshes):
        for i, axis in enumerate(mesh.axes):
            for k, d in enumerate(axis.demands):
                if only is not None and not only(m, i, k):
                    continue
                if axis.ring or d.schedule == "ring":
                    notes.append(f"{mesh.name}[{i}].{k}: ring not simulated (planning only)")
                    continue
                workload = setup.workload(m, i, k, options.order, payload)
                sigma, closed = d.payload_bytes, d.time_s
                if payload is not None:
                    form = closed_form(d.schedule, demand_topology(d.groups, axis.bits, d.fold))
                    sigma = payload
                    closed = phase_time(form.h, form.volume(payload), d.multiplicity,
                                        plan.latency_s, plan.link_Bps)
                result = simulate_workload(
                    workload, factory, mode=options.mode, rate=rate, multiplicity=d.multiplicity,
                    payload=sigma, collective=d.collective, closed_form=closed,
                    lookahead=options.lookahead, barrier=options.barrier)
                results.append(replace(result, mesh=mesh.name, axis=i, demand=k))
    return SimReport(
        plan=plan.instance,
        fabric=spec.name,
        technology=tech,
        mode=options.mode,
        buffer_bytes=options.buffer,
        switch_buffer_bytes=options.switch_buffer,
        order=options.order,
        circuits=source,
        demands=tuple(results),
        notes=tuple(notes),
    )


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
    cmap = None
    if options.mode != "ideal" and technology(spec) == "ocs":
        cmap = circuits_for_generators([(g, multiplicity, 0) for g in gens], program.size, spec)
    factory = network_factory(spec, options, ports=ports, circuits=cmap,
                              ideal=(lam, spec.link, mult))
    return simulate_workload(workload, factory, mode=options.mode, rate=spec.link,
                             multiplicity=multiplicity, payload=program.payload,
                             collective=program.collective, lookahead=options.lookahead,
                             barrier=options.barrier)
