"""Stacked-link allocation (paper App. A.6): every mesh axis gets its own ports.

Each active axis i (one with a demand and more than one rank) receives L_i ports,
sum L_i <= L: one port each, the rest in proportion to the full-connectivity
degree N_i - 1, rounded by largest remainder (ties to the earlier axis). If
sum (N_i - 1) <= L every axis is fully connected (K_{N_i}) and the leftover
ports become parallel circuits: whole copies of an axis graph, each to the axis
whose next copy saves the most weighted time per port. Each axis is then the
least-diameter circulant on Z_{N_i} of its degree
(:func:`ocsplan.planning.circulant.least_diameter`), and runs the one-shot
schedules of :mod:`ocsplan.schedules.circulant` (all-reduce and all-gather:
one-shot or one-shot-dvo, the faster; all-to-all: one-shot), priced by Eq. 1
with h = the circulant's diameter.

Where the paper's rule leaves an axis without a connected circulant we repair,
and say so in the plan's notes: an axis of more than two ranks left with one
port (a matching) takes a second port from the axis with the most ports; an odd
degree on an odd N_i (no offset is its own negative) drops to the even degree
below and its port goes, by largest remainder, to an axis that can use it
(else it stays idle).

Ranks are row-major over the mesh shape (last axis fastest), so the collective
groups of axis i are the ranks that differ only in coordinate i; the shape
need not consist of powers of two (576 = 8 x 72).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import pairwise

from ..circulant import Circulant
from ..cost import phase_time
from ..errors import InfeasibleError, InstanceError
from ..instance import Demand, Instance
from ..plan import AxisPlan, CirculantPlan, DemandPlan, MeshPlan, Plan
from ..schedules.circulant import CIRCULANT_CATALOGUE, circulant_cost
from .circulant import MAX_SIZE, least_diameter

__all__ = ["Allocation", "allocate_ports", "plan_stacked"]


@dataclass(frozen=True)
class Allocation:
    """Per active axis: its degree (ports per circuit copy) and multiplicity."""

    degrees: tuple[int, ...]
    multiplicities: tuple[int, ...]
    idle: int
    notes: tuple[str, ...]

    @property
    def ports(self) -> int:
        return sum(d * p for d, p in zip(self.degrees, self.multiplicities, strict=True))


def _min_degree(size: int) -> int:
    return 1 if size == 2 else 2


def _valid(size: int, degree: int) -> bool:
    return _min_degree(size) <= degree <= size - 1 and (degree % 2 == 0 or size % 2 == 0)


def _largest_remainder(total: int, weights: Sequence[int], caps: Sequence[int]) -> list[int]:
    """Split ``total`` in proportion to ``weights``, none above its cap; floors first,
    then one each by largest remainder (ties to the lower index); capped shares go back."""
    share = [0] * len(weights)
    left = total
    while left > 0:
        open_ = [i for i in range(len(weights)) if share[i] < caps[i] and weights[i] > 0]
        if not open_:
            break
        mass = sum(weights[i] for i in open_)
        quota = {i: Fraction(left * weights[i], mass) for i in open_}
        given = 0
        for i in open_:
            add = min(int(quota[i]), caps[i] - share[i])
            share[i] += add
            given += add
        rest = left - given
        order = sorted(open_, key=lambda i: (-(quota[i] - int(quota[i])), i))
        for i in order:
            if rest == 0:
                break
            if share[i] < caps[i]:
                share[i] += 1
                rest -= 1
        if rest == left:
            break
        left = rest
    return share


def allocate_ports(
    sizes: Sequence[int],
    ports: int,
    gains: Sequence[Sequence[float]] | None = None,
    labels: Sequence[str] | None = None,
) -> Allocation:
    """Stacked-link degrees and multiplicities of axes of ``sizes`` ranks (each >= 2).

    ``gains[i][p - 1]`` is the weighted time axis i saves going from p to p + 1
    circuit copies (only consulted when every axis is fully connected); ``labels``
    name the axes in the notes.
    """
    count = len(sizes)
    name = list(labels) if labels is not None else [f"axis {i}" for i in range(count)]
    full = [n - 1 for n in sizes]
    need = sum(_min_degree(n) for n in sizes)
    if ports < need:
        raise InfeasibleError(
            f"{ports} ports cannot connect {count} stacked axes (sizes {', '.join(map(str, sizes))}): "
            f"each needs its own ports, {need} in all"
        )
    notes: list[str] = []
    if sum(full) <= ports:
        mult = [1] * count
        spare = ports - sum(full)
        while gains is not None:
            best: tuple[float, int] | None = None
            for i in range(count):
                if full[i] <= spare and mult[i] - 1 < len(gains[i]):
                    per_port = gains[i][mult[i] - 1] / full[i]
                    if per_port > 1e-15 and (best is None or per_port > best[0]):
                        best = (per_port, i)
            if best is None:
                break
            mult[best[1]] += 1
            spare -= full[best[1]]
        return Allocation(tuple(full), tuple(mult), spare, ())
    extra = _largest_remainder(ports - count, full, [f - 1 for f in full])
    degree = [1 + e for e in extra]
    # repair 1: a matching on more than two ranks is not connected
    for i in range(count):
        while degree[i] < _min_degree(sizes[i]):
            donors = [j for j in range(count) if j != i and degree[j] - 1 >= _min_degree(sizes[j])
                      and _valid(sizes[j], degree[j] - 1)]
            if not donors:
                donors = [j for j in range(count) if j != i and degree[j] - 2 >= _min_degree(sizes[j])]
            donor = max(donors, key=lambda j: (degree[j], -j))
            degree[donor] -= 1
            degree[i] += 1
            notes.append(f"{name[i]} of {sizes[i]} ranks takes a port from {name[donor]} "
                         "(one port is no connected circulant)")
    # repair 2: odd degree on odd N
    idle = 0
    for i in range(count):
        if not _valid(sizes[i], degree[i]):
            degree[i] -= 1
            idle += 1
            notes.append(f"{name[i]}: odd degree {degree[i] + 1} on Z_{sizes[i]} is impossible; uses {degree[i]}")
    weights = [Fraction(f) for f in full]
    while idle:
        takers = [j for j in range(count) if _valid(sizes[j], degree[j] + 1)]
        if takers:
            j = max(takers, key=lambda j: (weights[j] / (degree[j] + 1), -j))
            degree[j] += 1
            idle -= 1
            notes.append(f"{name[j]} takes the freed port (degree {degree[j]})")
            continue
        pairs = [j for j in range(count) if idle >= 2 and _valid(sizes[j], degree[j] + 2)]
        if not pairs:
            break
        j = max(pairs, key=lambda j: (weights[j] / (degree[j] + 2), -j))
        degree[j] += 2
        idle -= 2
        notes.append(f"{name[j]} takes two freed ports (degree {degree[j]})")
    if idle:
        notes.append(f"{idle} port(s) idle: no axis can use them")
    return Allocation(tuple(degree), tuple([1] * count), idle, tuple(notes))


# -- planning -----------------------------------------------------------------------------


def _field(instance: Instance, m: int, i: int, k: int | None, name: str) -> str:
    axis = instance.meshes[m].axes[i]
    base = f"mesh[{m}].axes[{i}]"
    if k is not None and len(axis.demands) > 1:
        base += f".demands[{k}]"
    return f"{base}.{name}"


def _check_demands(instance: Instance) -> None:
    source = instance.source or instance.name
    for m, mesh in enumerate(instance.meshes):
        for i, axis in enumerate(mesh.axes):
            if axis.size > MAX_SIZE and axis.demands:
                raise InstanceError(source, f"mesh[{m}].shape[{i}]",
                                    f"axis of {axis.size} ranks exceeds the stacked limit {MAX_SIZE}")
            for k, d in enumerate(axis.demands):
                known = CIRCULANT_CATALOGUE.get(d.collective, ())
                if d.schedule not in ("auto", *known):
                    raise InstanceError(
                        source, _field(instance, m, i, k, "schedule"),
                        f"{d.schedule} does not run {d.collective} on a circulant (stacked runs {', '.join(known)})",
                    )


def _demand_plan(d: Demand, graph: Circulant, p: int, latency: float, rate: float) -> DemandPlan:
    names = CIRCULANT_CATALOGUE[d.collective] if d.schedule == "auto" else (d.schedule,)
    best: DemandPlan | None = None
    for name in names:
        form = circulant_cost(name, graph, d.collective)
        volume = form.volume(d.payload)
        time = phase_time(form.h, volume, p, latency, rate)
        if best is None or time < best.time_s * (1 - 1e-12):
            best = DemandPlan(
                collective=d.collective, payload_bytes=d.payload, weight=d.weight, schedule=name,
                groups=(), uses=graph.offsets, phases=form.h, volume_bytes=volume,
                multiplicity=p, time_s=time,
            )
    assert best is not None
    return best


def _axis_time(demands: Sequence[Demand], graph: Circulant, p: int, latency: float, rate: float) -> float:
    return sum(d.weight * _demand_plan(d, graph, p, latency, rate).time_s for d in demands)


def plan_stacked(instance: Instance, *, seed: int = 0, **_: object) -> Plan:
    """The stacked-link plan of ``instance`` (any world and axis sizes)."""
    start = time.perf_counter()
    _check_demands(instance)
    budget = instance.budget
    active = [
        (m, i) for m, mesh in enumerate(instance.meshes) for i, axis in enumerate(mesh.axes)
        if axis.demands and axis.size > 1
    ]
    sizes = [instance.meshes[m].axes[i].size for m, i in active]
    lat, rate = budget.latency, budget.link
    gains: list[list[float]] = []
    for (m, i), size in zip(active, sizes, strict=True):
        demands = instance.meshes[m].axes[i].demands
        complete = Circulant.complete(size)
        times = [_axis_time(demands, complete, p, lat, rate) for p in range(1, budget.ports // (size - 1) + 2)]
        gains.append([a - b for a, b in pairwise(times)])
    labels = [f"mesh {instance.meshes[m].name} axis {i}" for m, i in active]
    try:
        alloc = allocate_ports(sizes, budget.ports, gains, labels)
    except InfeasibleError as exc:
        raise InfeasibleError(f"{instance.source or instance.name}: {exc}") from None
    chosen: dict[tuple[int, int], tuple[CirculantPlan, Circulant]] = {}
    notes = list(alloc.notes)
    for j, (m, i) in enumerate(active):
        result = least_diameter(sizes[j], alloc.degrees[j], seed=seed)
        circ = CirculantPlan(result.graph.offsets, alloc.multiplicities[j], result.diameter, result.method,
                             result.lower_bound)
        chosen[(m, i)] = (circ, result.graph)
        if result.method == "sampled":
            proof = ("meets the Moore-type bound: minimal" if result.exact
                     else f"upper bound; Moore-type bound {result.lower_bound}")
            notes.append(
                f"mesh {instance.meshes[m].name} axis {i}: {result.graph.name} diameter {result.diameter} "
                f"by sampled search (seed {seed}, {result.candidates} sets; {proof})"
            )
    meshes = []
    objective = 0.0
    for m, mesh in enumerate(instance.meshes):
        axes = []
        for i, axis in enumerate(mesh.axes):
            if (m, i) not in chosen:
                trivial = [
                    DemandPlan(w.collective, w.payload, w.weight, "one-shot" if w.schedule == "auto" else w.schedule,
                               (), (), 0, 0.0, 1, 0.0)
                    for w in axis.demands
                ]
                axes.append(AxisPlan(axis.size, (), "K1" if axis.size == 1 else "-", 0, tuple(trivial)))
                continue
            circ, graph = chosen[(m, i)]
            planned = tuple(_demand_plan(w, graph, circ.multiplicity, lat, rate) for w in axis.demands)
            objective += sum(d.weight * d.time_s for d in planned)
            axes.append(AxisPlan(axis.size, (), graph.name, graph.degree, planned, circulant=circ))
        meshes.append(MeshPlan(mesh.name, mesh.shape, tuple(axes)))
    return Plan(
        instance=instance.name,
        method="stacked",
        status="heuristic",
        world=budget.world,
        ports=budget.ports,
        ports_used=sum(c.ports for c, _ in chosen.values()),
        latency_s=lat,
        link_Bps=rate,
        generators=(),
        meshes=tuple(meshes),
        objective_s=objective,
        notes=tuple(notes),
        construction="stacked",
        solve_seconds=time.perf_counter() - start,
    )
