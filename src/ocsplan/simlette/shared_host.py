"""Simlette on shared-host plans: every demand on every coset of its axis (DESIGN §7).

All collective groups of a demand's axis run together. On an OCS fabric the
circuits are a realization of the plan (given, or made by the set-up with the
placement: ports, one OCS device per circuit in a rack or on one level, three
between racks); that realization and the workloads are cached per (plan,
fabric, placement) (:func:`ocsplan.simlette.setup.prepare`). A sweep runs its
points here or on an executor, each worker with its own set-up cache.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from ..cayley import expand
from ..cost import phase_time
from ..errors import InstanceError, OcsplanError
from ..plan import Plan, demand_topology
from ..realization.fabrics import FabricSpec
from ..schedules import SCHEDULES, closed_form
from .circuitmap import check_fit
from .report import SimReport, SweepRow
from .requests import SimRequest, SweepRequest
from .runs import SimOptions, simulate_demand, simulate_workload
from .setup import prepare
from .technology import NETWORK_PIECES, Pieces, network_factory

if TYPE_CHECKING:
    from ..executor import Failure

__all__ = ["simulate_shared_host", "sweep_shared_host"]


def simulate_shared_host(plan: Plan, spec: FabricSpec, options: SimOptions, request: SimRequest) -> SimReport:
    """Simulate every selected demand of a shared-host plan, one demand at a time."""
    setup = prepare(plan, spec, request.placement, request.circuits)
    tech = setup.technology
    pieces = Pieces()
    if options.on_fabric:
        pieces = NETWORK_PIECES[tech].pieces(setup)
        check_fit(plan, spec)
    source = pieces.circuits.source if pieces.circuits is not None else ""
    mult = {g.mask: g.multiplicity for g in plan.generators if g.host}
    factory = network_factory(spec, options, ports=plan.ports, circuits=pieces.circuits, routes=pieces.routes,
                              ideal=(plan.latency_s, plan.link_Bps, mult), setup=setup)
    rate = spec.link if options.on_fabric else plan.link_Bps
    results = []
    notes = []
    for m, mesh in enumerate(plan.meshes):
        for i, axis in enumerate(mesh.axes):
            for k, d in enumerate(axis.demands):
                if not request.selects(m, i, k):
                    continue
                if axis.ring or d.schedule == "ring":
                    notes.append(f"{mesh.name}[{i}].{k}: ring not simulated (planning only)")
                    continue
                workload = setup.workload(m, i, k, options.order, request.payload)
                topology = demand_topology(d.groups, axis.bits, d.fold)
                sigma, closed = request.priced(plan, d, partial(closed_form, d.schedule, topology))
                results.append(simulate_demand(workload, factory, options, rate, d, sigma, closed, (mesh.name, i, k)))
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


def _schedules(plan: Plan, m: int, i: int, k: int, which: str) -> list[str]:
    axis = plan.meshes[m].axes[i]
    d = axis.demands[k]
    if which == "plan":
        return [d.schedule]
    topo = demand_topology(d.groups, axis.bits, d.fold)
    if which == "all":
        return [s.name for s in SCHEDULES.values()
                if s.collective == d.collective and s.name != "ring" and s.valid(topo)]
    names = [x.strip() for x in which.split(",") if x.strip()]
    for name in names:
        sched = SCHEDULES.get(name)
        if sched is None or sched.collective != d.collective or name == "ring":
            raise InstanceError("--schedules", "",
                                f"{name!r} cannot run {d.collective} in the simulator")
        if not sched.valid(topo):
            raise InstanceError("--schedules", "", f"{name} is not valid on {topo.name}")
    return names


@dataclass(frozen=True)
class _Point:
    """One simulation of a sweep: demand (mesh, axis, k) x schedule x payload."""

    plan: Plan
    spec: FabricSpec
    options: SimOptions
    placement: str
    mesh: int
    axis: int
    demand: int
    schedule: str
    payload: int


def _run_point(point: _Point) -> SweepRow:
    """Simulate one sweep point; the set-up (realization, wiring, workloads) comes from this
    process's cache, so the points of one plan and fabric pay it once per process."""
    plan, spec, options = point.plan, point.spec, point.options
    setup = prepare(plan, spec, point.placement)
    pieces = Pieces()
    if options.on_fabric:
        check_fit(plan, spec)
        pieces = NETWORK_PIECES[setup.technology].pieces(setup)
    mult = {g.mask: g.multiplicity for g in plan.generators if g.host}
    factory = network_factory(spec, options, ports=plan.ports, circuits=pieces.circuits, routes=pieces.routes,
                              ideal=(plan.latency_s, plan.link_Bps, mult), setup=setup)
    rate = spec.link if options.on_fabric else plan.link_Bps
    mesh = plan.meshes[point.mesh]
    axis = mesh.axes[point.axis]
    d = axis.demands[point.demand]
    name, sigma = point.schedule, point.payload
    topo = demand_topology(d.groups, axis.bits, d.fold)
    used = [expand(g, sorted(axis.bits)) for g in SCHEDULES[name].uses(topo)]
    p = min((mult[g] for g in used), default=1)
    form = closed_form(name, topo)
    workload = setup.workload(point.mesh, point.axis, point.demand, options.order, sigma, name)
    result = simulate_workload(
        workload, factory, mode=options.mode, rate=rate, multiplicity=p,
        payload=sigma, collective=d.collective, lookahead=options.lookahead,
        barrier=options.barrier)
    closed = phase_time(form.h, form.volume(sigma), p, plan.latency_s, plan.link_Bps)
    return SweepRow(
        demand=f"{mesh.name}[{point.axis}].{point.demand} {d.collective}", schedule=name,
        payload_bytes=sigma, multiplicity=p, phases=workload.phases,
        closed_form_s=closed, analytical_s=result.analytical_s,
        simulated_s=result.simulated_s, ratio=result.ratio,
        credit_stall_s=result.credit_stall_s,
    )


def sweep_shared_host(plan: Plan, spec: FabricSpec, options: SimOptions, request: SweepRequest) -> list[SweepRow]:
    """Every selected demand x schedule x payload of a shared-host plan, here or on ``request.executor``."""
    on_row = request.on_row
    if options.on_fabric:
        check_fit(plan, spec)
    points = []
    for m, mesh in enumerate(plan.meshes):
        for i, axis in enumerate(mesh.axes):
            if axis.ring:
                continue
            for k, _ in enumerate(axis.demands):
                if not request.selects(m, i, k):
                    continue
                for name in _schedules(plan, m, i, k, request.schedules):
                    for sigma in request.payloads:
                        points.append(_Point(plan, spec, options, request.placement, m, i, k, name, sigma))
    executor = request.executor
    if executor is None:  # here, in order; an error stops the sweep as it is
        done = []
        for point in points:
            done.append(_run_point(point))
            if on_row is not None:
                on_row(done[-1])
        return done
    from ..executor import Failure

    rows: list[SweepRow | None] = [None] * len(points)
    failed: list[str] = []

    def record(index: int, outcome: SweepRow | Failure) -> None:
        if isinstance(outcome, Failure):
            p = points[index]
            failed.append(f"{plan.meshes[p.mesh].name}[{p.axis}].{p.demand} {p.schedule} "
                          f"{p.payload} B: {outcome.error}")
            return
        rows[index] = outcome
        if on_row is not None:
            on_row(outcome)

    executor.run(_run_point, points, record)
    if failed:
        raise OcsplanError(f"{len(failed)} sweep point(s) failed; first: {failed[0]}")
    return [row for row in rows if row is not None]
