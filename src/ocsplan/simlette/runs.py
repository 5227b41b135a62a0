"""One run of the simulator: its options, and a workload on a network to completion (DESIGN §7).

Modes (paper App. C.5):

- ``ideal``: the closed form's assumptions made executable. Each logical edge
  is one link of p_g * R, every message costs the plan's lambda plus its bytes
  over that rate, no flits, no credits, no switches. With p = 1 it reproduces
  h * lambda + v / (p R) exactly (the conformance check of paper App. A.2).
- ``message``: the optimized mode. DL flits, credits, switches and the
  fabric's Table 9 latency, one event per piece of a message per port.
- ``flit``: the same model with one event per DL flit per port.

Every plan kind's simulation (:mod:`ocsplan.simlette.shared_host`,
:mod:`ocsplan.simlette.stacked`) runs its demands through :func:`simulate_workload`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from ..errors import InstanceError, OcsplanError
from ..plan import DemandPlan
from ..realization.fabrics import LatencyBudget
from .devices import MAX_SPRAY_FLITS, parse_spray
from .engine import Engine, Message
from .ideal import IdealNetwork
from .network import Network
from .report import DemandResult, LinkStat, analytical
from .runner import Runner, paused_gc
from .timing import DL_FLIT
from .traffic import ORDERS, Workload

__all__ = ["FLIT_LIMIT", "MODES", "SIM_MODES", "Factory", "Mode", "SimOptions", "simulate_demand",
           "simulate_workload"]


@dataclass(frozen=True)
class Mode:
    """A simulation mode and its capability: ``fabric``, it runs on the fabric's network (its
    pieces, link rate, buffers, latency preset, spraying); else on an ideal network at the
    plan's own lambda and R."""

    name: str
    fabric: bool


SIM_MODES: dict[str, Mode] = {m.name: m for m in (Mode("ideal", False), Mode("message", True), Mode("flit", True))}
MODES = tuple(SIM_MODES)
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
    spray: str = "message"  # EPS switches' granularity over equal links: packet, message or flit-K

    @property
    def on_fabric(self) -> bool:
        """The mode runs on the fabric's network (:data:`SIM_MODES`); ideal runs on the plan's lambda and R."""
        return SIM_MODES[self.mode].fabric

    def check(self) -> SimOptions:
        if self.mode not in MODES:
            raise InstanceError("--mode", "",
                                f"unknown mode {self.mode!r} (use {', '.join(MODES)})")
        if self.order not in ORDERS:
            raise InstanceError("--order", "",
                                f"unknown order {self.order!r} (use {', '.join(ORDERS)})")
        if parse_spray(self.spray) is None:
            raise InstanceError("--spray", "", f"unknown granularity {self.spray!r} "
                                f"(use packet, message or flit-K, K from 1 to {MAX_SPRAY_FLITS} DL flits)")
        for name, value in (("--buffer", self.buffer), ("--switch-buffer", self.switch_buffer)):
            if value is not None and value < DL_FLIT:
                raise InstanceError(name, "", f"{value} B holds no {DL_FLIT} B DL flit")
        return self


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


def simulate_demand(workload: Workload, factory: Factory, options: SimOptions, rate: float, demand: DemandPlan,
                    payload: int, closed_form: float, where: tuple[str, int, int]) -> DemandResult:
    """One demand of a plan (every plan kind's simulator): :func:`simulate_workload` with the demand's
    multiplicity and collective, the options' mode, look-ahead and barrier, the result named by
    ``where`` (mesh, axis, demand index)."""
    result = simulate_workload(workload, factory, mode=options.mode, rate=rate, multiplicity=demand.multiplicity,
                               payload=payload, collective=demand.collective, closed_form=closed_form,
                               lookahead=options.lookahead, barrier=options.barrier)
    mesh, axis, k = where
    return replace(result, mesh=mesh, axis=axis, demand=k)
