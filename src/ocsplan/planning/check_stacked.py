"""The stacked-plan checker: re-derives every number a stacked plan states (paper App. A.6).

Independent of :mod:`ocsplan.planning.stacked`, which makes the plans: the
circulants' diameters come from the graphs (BFS), the costs from the circulant
schedules' closed forms, the times from Eq. 1.
"""

from __future__ import annotations

from ..circulant import Circulant
from ..cost import phase_time
from ..instance import Instance
from ..plan import Plan
from ..schedules.circulant import CIRCULANT_CATALOGUE, circulant_cost

__all__ = ["check_stacked"]


def _close(a: float, b: float, rel: float = 1e-9) -> bool:
    return abs(a - b) <= max(rel * max(abs(a), abs(b)), 1e-18)


def check_stacked(plan: Plan, instance: Instance | None = None) -> list[str]:
    """Every inconsistency of a stacked plan (empty list: valid): shapes and world,
    connection sets (closed under negation), diameters (recomputed by BFS), ports,
    each demand's schedule, closed form, multiplicity and time, and the objective."""
    problems: list[str] = []
    if instance is not None:
        fab = instance.budget
        if (plan.world, plan.ports) != (fab.world, fab.ports):
            problems.append("world/ports differ from the instance")
        if not (_close(plan.latency_s, fab.latency) and _close(plan.link_Bps, fab.link)):
            problems.append("latency/link differ from the instance")
        if [(m.name, m.shape) for m in plan.meshes] != [(m.name, m.shape) for m in instance.meshes]:
            problems.append("meshes differ from the instance")
            instance = None
    used = 0
    objective = 0.0
    for m, mesh in enumerate(plan.meshes):
        product = 1
        for size in mesh.shape:
            product *= size
        if product != plan.world or len(mesh.shape) != len(mesh.axes):
            problems.append(f"mesh {mesh.name}: shape {mesh.shape} does not match world {plan.world} and its axes")
            continue
        for i, axis in enumerate(mesh.axes):
            where = f"mesh {mesh.name} axis {i}"
            if axis.size != mesh.shape[i]:
                problems.append(f"{where}: size {axis.size} but shape says {mesh.shape[i]}")
                continue
            if instance is not None:
                want = instance.meshes[m].axes[i].demands
                got = [(d.collective, d.payload_bytes, d.weight) for d in axis.demands]
                if got != [(w.collective, w.payload, w.weight) for w in want]:
                    problems.append(f"{where}: demands differ from the instance")
                for k, w in enumerate(want):
                    if k < len(axis.demands) and w.schedule not in ("auto", axis.demands[k].schedule):
                        problems.append(f"{where} demand {k}: instance asks for {w.schedule}")
            circ = axis.circulant
            if circ is None:
                if any(d.phases for d in axis.demands) or (axis.demands and axis.size > 1):
                    problems.append(f"{where}: demands but no circulant")
                continue
            try:
                graph = Circulant(axis.size, circ.offsets)
            except ValueError as exc:
                problems.append(f"{where}: {exc}")
                continue
            if not graph.connected:
                problems.append(f"{where}: {graph.name} is not connected")
                continue
            if graph.diameter != circ.diameter or axis.degree != graph.degree:
                problems.append(f"{where}: {graph.name} has degree {graph.degree}, diameter {graph.diameter}; "
                                f"plan says {axis.degree}, {circ.diameter}")
            if circ.lower_bound > graph.diameter:
                problems.append(f"{where}: lower bound {circ.lower_bound} above the diameter {graph.diameter}")
            if circ.multiplicity < 1:
                problems.append(f"{where}: multiplicity {circ.multiplicity} < 1")
                continue
            used += circ.ports
            for k, d in enumerate(axis.demands):
                here = f"{where} demand {k}"
                if d.schedule not in CIRCULANT_CATALOGUE.get(d.collective, ()):
                    problems.append(f"{here}: {d.schedule} ({d.collective}) does not run on a circulant")
                    continue
                if tuple(sorted(d.uses)) != graph.offsets:
                    problems.append(f"{here}: uses {list(d.uses)}, the schedule drives {list(graph.offsets)}")
                if not 1 <= d.multiplicity <= circ.multiplicity:
                    problems.append(f"{here}: multiplicity {d.multiplicity} outside 1..{circ.multiplicity}")
                    continue
                form = circulant_cost(d.schedule, graph, d.collective)
                volume = form.volume(d.payload_bytes)
                time = phase_time(form.h, volume, d.multiplicity, plan.latency_s, plan.link_Bps)
                if form.h != d.phases or not _close(volume, d.volume_bytes):
                    problems.append(f"{here}: closed form gives h={form.h}, v={volume}; "
                                    f"plan says h={d.phases}, v={d.volume_bytes}")
                if not _close(time, d.time_s):
                    problems.append(f"{here}: time {d.time_s} but the cost model gives {time}")
                objective += d.weight * time
    if used != plan.ports_used:
        problems.append(f"ports_used {plan.ports_used} but the axes use {used}")
    if used > plan.ports:
        problems.append(f"port budget exceeded: {used} > {plan.ports}")
    if plan.generators:
        problems.append("a stacked plan has no cube or fold generators")
    if not _close(objective, plan.objective_s):
        problems.append(f"objective {plan.objective_s} but the demands sum to {objective}")
    return problems
