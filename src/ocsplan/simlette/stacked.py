"""Simlette on stacked-link plans: circulant axes over row-major ranks (paper App. A.6).

A stacked plan's axis i of shape (N_0, ..., N_k) is a circulant on coordinate
i: rank r and the rank whose coordinate i is (c_i + s) mod N_i are joined for
every offset s. Each demand runs its one-shot program
(:func:`ocsplan.schedules.circulant.circulant_program`) on every collective
group at once. A message's generator key is ``(axis slot + 1) << 16 | s``, so
the networks tell the directed links of different axes apart.

Circuits (message and flit modes on OCS fabrics) are a realization of the plan
(:func:`ocsplan.realization.stacked.realize_stacked`, given or made now): per axis
and circuit copy, the offset pair {s, -s} is a union of cycles edge-colored,
color = port, N/2 a matching; a circuit between racks crosses three OCS devices.
Limited receive buffers (credits) are refused: their responses would need each
offset's reverse link.
"""

from __future__ import annotations

from functools import partial

from ..circulant import Circulant
from ..cost import phase_time
from ..errors import InstanceError, PlanError, RealizationError
from ..plan import AxisPlan, Plan
from ..realization.circuits import Circuits, parse_circulant, shift
from ..realization.fabrics import FabricSpec
from ..realization.stacked import realize_stacked
from ..realization.technologies import TECHNOLOGIES, technology
from ..schedules.circulant import CIRCULANT_CATALOGUE, circulant_cost, circulant_program
from .circuitmap import CircuitMap, Link, check_fit
from .report import SimReport, SweepRow
from .requests import SimRequest, SweepRequest
from .runs import SimOptions, simulate_demand, simulate_workload
from .technology import network_factory
from .timing import dl_flits
from .traffic import ORDERS, Send, Workload, collect

__all__ = [
    "circuits_from_stacked",
    "gen_key",
    "simulate_stacked",
    "stacked_circuits",
    "stacked_workload",
    "sweep_stacked",
]

_SLOT = 16  # offsets stay below 2**16 (axes of at most 4,096 ranks)


def gen_key(slot: int, offset: int) -> int:
    """The generator key of offset ``offset`` on the ``slot``-th circulant axis of the plan."""
    return (slot + 1) << _SLOT | offset


def _strides(shape: tuple[int, ...]) -> list[int]:
    out, step = [], 1
    for size in reversed(shape):
        out.append(step)
        step *= size
    return out[::-1]


def _axes(plan: Plan) -> list[tuple[int, int, AxisPlan]]:
    """(mesh, axis, plan) of every circulant axis, in plan order (its slot)."""
    return [(m, i, axis) for m, mesh in enumerate(plan.meshes) for i, axis in enumerate(mesh.axes)
            if axis.circulant is not None]


def _groups(plan: Plan, m: int, i: int) -> tuple[list[int], int]:
    """Base ranks (coordinate i = 0) of the groups of axis i, and its stride."""
    shape = plan.meshes[m].shape
    stride = _strides(shape)[i]
    bases = [r for r in range(plan.world) if (r // stride) % shape[i] == 0]
    return bases, stride


def _rank(base: int, local: int, stride: int) -> int:
    return base + local * stride


def stacked_workload(
    plan: Plan, mesh: int, axis: int, demand: int, order: str = "program", payload: int | None = None,
    schedule: str | None = None,
) -> Workload:
    """Every group of one demand of a stacked plan running its circulant program
    (or ``schedule``, another one-shot)."""
    if order not in ORDERS:
        raise ValueError(f"unknown order {order!r} (use {', '.join(ORDERS)})")
    slots = {(m, i): s for s, (m, i, _) in enumerate(_axes(plan))}
    ax = plan.meshes[mesh].axes[axis]
    d = ax.demands[demand]
    if ax.circulant is None or (mesh, axis) not in slots:
        raise PlanError(f"mesh {plan.meshes[mesh].name} axis {axis}: no circulant to run on")
    graph = Circulant(ax.size, ax.circulant.offsets)
    program = circulant_program(d.schedule if schedule is None else schedule, graph,
                                d.payload_bytes if payload is None else payload, d.collective)
    bases, stride = _groups(plan, mesh, axis)
    slot = slots[(mesh, axis)]
    h = len(program.phases)
    sends: dict[int, list[list[Send]]] = {}
    expect: dict[int, list[int]] = {}
    for base in bases:
        for x in range(ax.size):
            sends[_rank(base, x, stride)] = [[] for _ in range(h)]
            expect[_rank(base, x, stride)] = [0] * h
    for k, phase in enumerate(program.phases):
        for t in phase:
            if t.nbytes <= 0:
                continue
            flits = dl_flits(t.nbytes)
            for base in bases:
                src, dst = _rank(base, t.src, stride), _rank(base, t.dst, stride)
                sends[src][k].append(Send(dst, gen_key(slot, t.gen), t.nbytes, flits, float(t.nbytes)))
                expect[dst][k] += 1
    return collect(f"{plan.meshes[mesh].name}[{axis}].{demand} {d.collective}", program, sends, expect, order,
                   len(bases))


def circuits_from_stacked(real: Circuits, plan: Plan) -> CircuitMap:
    """Circuit map of a stacked plan's realization: each node's port of set
    ``circulant:A:N:S:s`` serves offset +s or -s of axis A, whichever its peer is."""
    path: dict[tuple[int, int], tuple[int, int]] = {}
    for c in real.circuits:
        path[(c.a, c.a_port)] = (c.stages, c.cables)
        path[(c.b, c.b_port)] = (c.stages, c.cables)
    links: dict[tuple[int, int], list[Link]] = {}
    for x, ports in enumerate(real.nodes):
        for e in ports:
            try:
                size, stride, s = parse_circulant(e.generator)
                slot = int(e.generator.split(":")[1])
            except ValueError:
                raise RealizationError(f"rank {x} port {e.port}: {e.generator!r} is no circulant set") from None
            up, down = shift(x, size, stride, s), shift(x, size, stride, -s)
            if e.peer not in (up, down):
                raise RealizationError(f"rank {x} port {e.port}: peer {e.peer} is not x +- {s} on {e.generator}")
            offset = s if e.peer == up else size - s
            stages, cables = path.get((x, e.port), (1, 2))
            links.setdefault((x, gen_key(slot, offset)), []).append(Link(e.port, stages, cables, e.peer))
    if len(real.nodes) != plan.world:
        raise RealizationError(f"the realization has {len(real.nodes)} ranks, the plan {plan.world}")
    ordered = {k: tuple(sorted(v, key=lambda link: link.port)) for k, v in links.items()}
    return CircuitMap(ordered, "realization")


def stacked_circuits(plan: Plan, spec: FabricSpec) -> tuple[CircuitMap, int]:
    """The circuit map of a stacked plan realized now on ``spec``, and the ports per accelerator it
    takes (above the plan's count when an offset pair has odd cycles)."""
    check_fit(plan, spec)
    real = realize_stacked(plan, spec)
    return circuits_from_stacked(real, plan), real.ports_used


def _technology(spec: FabricSpec, options: SimOptions) -> str:
    """The fabric's technology; message and flit modes need one that carries circulant
    circuits, and unlimited receive buffers."""
    if options.on_fabric and options.buffer is not None:
        raise InstanceError("--buffer", "", "limited buffers are not simulated on stacked plans yet")
    tech = technology(spec)
    if options.on_fabric and not TECHNOLOGIES[tech].stacked:
        raise InstanceError("--fabric", "", f"stacked plans are simulated on OCS fabrics only, not {tech}")
    return tech


def simulate_stacked(plan: Plan, spec: FabricSpec, options: SimOptions, request: SimRequest) -> SimReport:
    """Simulate every selected demand of a stacked plan; OCS circuits from ``request.circuits`` (a
    realization of the plan, as read from a circuits file) or realized now (ranks in order:
    ``placement`` is not used)."""
    mode = options.mode
    given = request.circuits if isinstance(request.circuits, Circuits) else None
    tech = _technology(spec, options)
    cmap: CircuitMap | None = None
    needed = plan.ports_used
    if options.on_fabric:
        check_fit(plan, spec)
        real = given if given is not None else realize_stacked(plan, spec)
        cmap, needed = circuits_from_stacked(real, plan), real.ports_used
    notes = []
    if needed > plan.ports_used:
        notes.append(f"circuits need {needed} ports per accelerator (odd cycles take a third color), "
                     f"the plan counts {plan.ports_used}")
    slots = {(m, i): s for s, (m, i, _) in enumerate(_axes(plan))}
    rate = spec.link if options.on_fabric else plan.link_Bps
    results = []
    for m, mesh in enumerate(plan.meshes):
        for i, axis in enumerate(mesh.axes):
            if axis.circulant is None:
                continue
            mult = {gen_key(slots[(m, i)], s): axis.circulant.multiplicity for s in axis.circulant.offsets}
            factory = network_factory(spec, options, ports=plan.ports, circuits=cmap,
                                      ideal=(plan.latency_s, plan.link_Bps, mult))
            graph = Circulant(axis.size, axis.circulant.offsets)
            for k, d in enumerate(axis.demands):
                if not request.selects(m, i, k):
                    continue
                workload = stacked_workload(plan, m, i, k, options.order, request.payload)
                sigma, closed = request.priced(plan, d, partial(circulant_cost, d.schedule, graph, d.collective))
                results.append(simulate_demand(workload, factory, options, rate, d, sigma, closed, (mesh.name, i, k)))
    return SimReport(
        plan=plan.instance,
        fabric=spec.name,
        technology=tech,
        mode=mode,
        buffer_bytes=None,
        switch_buffer_bytes=options.switch_buffer,
        order=options.order,
        circuits=cmap.source if cmap is not None else "",
        demands=tuple(results),
        notes=tuple(notes),
    )


def sweep_stacked(plan: Plan, spec: FabricSpec, options: SimOptions, request: SweepRequest) -> list[SweepRow]:
    """``sweep`` on a stacked plan: every selected demand x one-shot schedule x payload, here
    (``placement``, ``executor`` and ``on_row`` are not used)."""
    schedules = request.schedules
    mode = options.mode
    _technology(spec, options)
    cmap: CircuitMap | None = None
    if options.on_fabric:
        check_fit(plan, spec)
        cmap = circuits_from_stacked(realize_stacked(plan, spec), plan)
    slots = {(m, i): s for s, (m, i, _) in enumerate(_axes(plan))}
    rate = spec.link if options.on_fabric else plan.link_Bps
    rows = []
    for m, i, axis in _axes(plan):
        assert axis.circulant is not None
        graph = Circulant(axis.size, axis.circulant.offsets)
        p = axis.circulant.multiplicity
        mult = {gen_key(slots[(m, i)], s): p for s in axis.circulant.offsets}
        factory = network_factory(spec, options, ports=plan.ports, circuits=cmap,
                                  ideal=(plan.latency_s, plan.link_Bps, mult))
        for k, d in enumerate(axis.demands):
            if not request.selects(m, i, k):
                continue
            if schedules == "plan":
                names = [d.schedule]
            elif schedules == "all":
                names = list(CIRCULANT_CATALOGUE[d.collective])
            else:
                names = [x.strip() for x in schedules.split(",") if x.strip()]
                for name in names:
                    if name not in CIRCULANT_CATALOGUE[d.collective]:
                        raise InstanceError("--schedules", "", f"{name!r} does not run {d.collective} on a "
                                            f"circulant (use {', '.join(CIRCULANT_CATALOGUE[d.collective])})")
            for name in names:
                form = circulant_cost(name, graph, d.collective)
                for sigma in request.payloads:
                    workload = stacked_workload(plan, m, i, k, options.order, sigma, name)
                    result = simulate_workload(workload, factory, mode=mode, rate=rate, multiplicity=p,
                                               payload=sigma, collective=d.collective,
                                               lookahead=options.lookahead, barrier=options.barrier)
                    rows.append(SweepRow(
                        demand=f"{plan.meshes[m].name}[{i}].{k} {d.collective}", schedule=name,
                        payload_bytes=sigma, multiplicity=p, phases=workload.phases,
                        closed_form_s=phase_time(form.h, form.volume(sigma), p, plan.latency_s, plan.link_Bps),
                        analytical_s=result.analytical_s, simulated_s=result.simulated_s, ratio=result.ratio,
                        credit_stall_s=result.credit_stall_s,
                    ))
    return rows
