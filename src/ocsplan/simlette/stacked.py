"""Simlette on stacked-link plans: circulant axes over row-major ranks (paper App. A.6).

A stacked plan's axis i of shape (N_0, ..., N_k) is a circulant on coordinate
i: rank r and the rank whose coordinate i is (c_i + s) mod N_i are joined for
every offset s. Each demand runs its one-shot program
(:func:`ocsplan.schedules.circulant.circulant_program`) on every collective
group at once. A message's generator key is ``(axis slot + 1) << 16 | s``, so
the networks tell the directed links of different axes apart.

Circuits (message and flit modes on OCS fabrics) come straight from the plan:
per axis and circuit copy, the offset pair {s, -s} is a union of cycles (one
circuit per rank and direction) edge-colored with
:func:`ocsplan.realization.coloring.edge_coloring`, color = port (two ports when
the cycles are even, three when they are odd), N/2 a matching on one port. A
circuit between racks crosses three OCS devices. Limited receive buffers
(credits) are refused: their responses would need each offset's reverse link.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from ..cost import phase_time
from ..errors import InstanceError, PlanError, RealizationError
from ..plan import AxisPlan, Plan
from ..planning.circulant import Circulant
from ..realization.coloring import edge_coloring
from ..realization.fabrics import FabricSpec
from ..schedules.circulant import circulant_cost, circulant_program
from .circuitmap import CircuitMap, Link, check_fit, rack_of, technology
from .report import DemandResult, SimReport
from .timing import dl_flits
from .workload import ORDERS, Send, Workload

if TYPE_CHECKING:
    from .simulate import Factory, SimOptions

__all__ = ["gen_key", "simulate_stacked", "stacked_circuits", "stacked_workload"]

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
    plan: Plan, mesh: int, axis: int, demand: int, order: str = "program", payload: int | None = None
) -> Workload:
    """Every group of one demand of a stacked plan running its circulant program."""
    if order not in ORDERS:
        raise ValueError(f"unknown order {order!r} (use {', '.join(ORDERS)})")
    slots = {(m, i): s for s, (m, i, _) in enumerate(_axes(plan))}
    ax = plan.meshes[mesh].axes[axis]
    d = ax.demands[demand]
    if ax.circulant is None or (mesh, axis) not in slots:
        raise PlanError(f"mesh {plan.meshes[mesh].name} axis {axis}: no circulant to run on")
    graph = Circulant(ax.size, ax.circulant.offsets)
    program = circulant_program(d.schedule, graph, d.payload_bytes if payload is None else payload)
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
                sends[src][k].append(Send(dst, gen_key(slot, t.gen), t.nbytes, flits))
                expect[dst][k] += 1
    if order == "rank":
        for lists in sends.values():
            for msgs in lists:
                msgs.sort(key=lambda s: s.dst)
    nodes = tuple(sorted(sends))
    return Workload(
        name=f"{plan.meshes[mesh].name}[{axis}].{demand} {d.collective}",
        schedule=program.schedule,
        phases=h,
        nodes=nodes,
        sends={x: tuple(tuple(p) for p in sends[x]) for x in nodes},
        expect={x: tuple(expect[x]) for x in nodes},
        groups=len(bases),
        group_size=ax.size,
    )


def stacked_circuits(plan: Plan, spec: FabricSpec) -> tuple[CircuitMap, int]:
    """Circuits of every circulant axis, colored per offset pair; returns the map and the
    ports per accelerator it needs (above the plan's count when a pair has odd cycles)."""
    check_fit(plan, spec)
    two = spec.two_level
    links: dict[tuple[int, int], list[Link]] = {}
    crossing: Counter[int] = Counter()
    port = 0
    for slot, (m, i, ax) in enumerate(_axes(plan)):
        assert ax.circulant is not None
        bases, stride = _groups(plan, m, i)
        size = ax.size
        for _ in range(ax.circulant.multiplicity):
            for s in ax.circulant.offsets:
                if 2 * s > size:
                    continue  # the pair {s, -s} is handled at s < N/2
                edges = [(_rank(b, x, stride), _rank(b, (x + s) % size, stride)) for b in bases for x in range(size)]
                if 2 * s == size:
                    edges = [(a, b) for a, b in edges if a < b]
                colors = edge_coloring(edges)
                for (a, b), c in zip(edges, colors, strict=True):
                    inter = two and rack_of(a, spec) != rack_of(b, spec)
                    link = Link(port + c, 3, 4) if inter else Link(port + c, 1, 2)
                    links.setdefault((a, gen_key(slot, s)), []).append(link)
                    links.setdefault((b, gen_key(slot, (size - s) % size or s)), []).append(link)
                    crossing[port + c] += 2 * inter
                port += max(colors, default=-1) + 1
    if port > spec.ports:
        raise RealizationError(f"the circulant circuits need {port} ports per accelerator, the fabric has {spec.ports}")
    if two:
        up = spec.levels[0].up
        racks = max(1, plan.world // spec.rack_size)
        for rail, count in sorted(crossing.items()):
            if count and -(-count // racks) > up:
                raise RealizationError(
                    f"rail {rail}: {-(-count // racks)} circuits leave a rack, level 1 has {up} uplinks")
    ordered = {k: tuple(sorted(v, key=lambda link: link.port)) for k, v in links.items()}
    return CircuitMap(ordered, "plan"), port


def simulate_stacked(
    plan: Plan,
    spec: FabricSpec,
    options: SimOptions,
    run: Callable[..., DemandResult],
    factory_of: Callable[..., Factory],
    *,
    only: Callable[[int, int, int], bool] | None = None,
    payload: int | None = None,
) -> SimReport:
    """Simulate every demand of a stacked plan (called by ``simulate_plan``)."""
    mode = options.mode
    if mode != "ideal" and options.buffer is not None:
        raise InstanceError("--buffer", "", "limited buffers are not simulated on stacked plans yet")
    tech = technology(spec)
    if mode != "ideal" and tech != "ocs":
        raise InstanceError("--fabric", "", f"stacked plans are simulated on OCS fabrics only, not {tech}")
    cmap, needed = stacked_circuits(plan, spec) if mode != "ideal" else (None, plan.ports_used)
    notes = []
    if needed > plan.ports_used:
        notes.append(f"circuits need {needed} ports per accelerator (odd cycles take a third color), "
                     f"the plan counts {plan.ports_used}")
    slots = {(m, i): s for s, (m, i, _) in enumerate(_axes(plan))}
    rate = plan.link_Bps if mode == "ideal" else spec.link
    results = []
    for m, mesh in enumerate(plan.meshes):
        for i, axis in enumerate(mesh.axes):
            if axis.circulant is None:
                continue
            mult = {gen_key(slots[(m, i)], s): axis.circulant.multiplicity for s in axis.circulant.offsets}
            factory = factory_of(spec, options, ports=plan.ports, circuits=cmap,
                                 ideal=(plan.latency_s, plan.link_Bps, mult))
            for k, d in enumerate(axis.demands):
                if only is not None and not only(m, i, k):
                    continue
                workload = stacked_workload(plan, m, i, k, options.order, payload)
                sigma, closed = d.payload_bytes, d.time_s
                if payload is not None:
                    form = circulant_cost(d.schedule, Circulant(axis.size, axis.circulant.offsets))
                    sigma = payload
                    closed = phase_time(form.h, form.volume(payload), d.multiplicity, plan.latency_s, plan.link_Bps)
                result = run(workload, factory, mode=mode, rate=rate, multiplicity=d.multiplicity, payload=sigma,
                             collective=d.collective, closed_form=closed,
                             lookahead=options.lookahead, barrier=options.barrier)
                results.append(replace(result, mesh=mesh.name, axis=i, demand=k))
    return SimReport(
        plan=plan.instance,
        fabric=spec.name,
        technology=tech,
        mode=mode,
        buffer_bytes=None,
        switch_buffer_bytes=options.switch_buffer,
        order=options.order,
        circuits="plan (circulant coloring)" if cmap is not None else "",
        demands=tuple(results),
        notes=tuple(notes),
    )
