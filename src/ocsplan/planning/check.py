"""The plan checker: re-derives every number a plan states, independently of its planner.

Tests, the exact backends, ``realize`` and ``simulate`` share it: a plan that
fails here is refused everywhere.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ..cayley import axis_generators, expand, mask_of, mask_to_str, popcount, sub_masks
from ..cost import phase_time
from ..errors import PlanError
from ..instance import Demand, Instance, Mesh
from ..plan import (
    CUBE,
    FOLD,
    PLAN_KINDS,
    RING,
    SHARED_HOST,
    STACKED,
    AxisPlan,
    DemandPlan,
    MeshPlan,
    Plan,
    check_fold,
    check_groups,
    generator_kind,
    host_kind,
    local_topology,
    plan_kind,
)
from ..schedules import SCHEDULES
from .check_stacked import check_stacked

__all__ = ["CHECKERS", "check_plan", "check_shared_host", "require_valid"]


def _close(a: float, b: float, rel: float = 1e-9) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-18)


def check_plan(plan: Plan, instance: Instance | None = None) -> list[str]:
    """Every inconsistency of a plan, one message each (empty list: valid): by the
    checker of its kind (:data:`CHECKERS`)."""
    return CHECKERS[plan_kind(plan)](plan, instance)


def check_shared_host(plan: Plan, instance: Instance | None = None) -> list[str]:
    """Every inconsistency of a shared-host plan (empty list: valid).

    Re-derives partitions, generator kinds, the port budget, each demand's
    generators, multiplicity, closed form and time, and the objective.
    """
    n = plan.n
    if plan.world < 2 or plan.world & (plan.world - 1):
        return [f"world {plan.world} is not a power of two"]
    problems: list[str] = []
    if instance is not None:
        problems += _against_instance(plan, instance)
    mult = _check_generators(plan, problems)
    objective = 0.0
    for m, mesh in enumerate(plan.meshes):
        inst_mesh = instance.meshes[m] if instance is not None and m < len(instance.meshes) else None
        all_bits = sorted(b for axis in mesh.axes for b in axis.bits)
        if all_bits != list(range(n)):
            problems.append(f"mesh {mesh.name}: axis bits {all_bits} do not partition 0..{n - 1}")
        for i, axis in enumerate(mesh.axes):
            objective += _check_axis(plan, mesh, i, axis, inst_mesh, mult, problems)
    if not _close(objective, plan.objective_s, 1e-9):
        problems.append(f"objective {plan.objective_s} but the demands sum to {objective}")
    if plan.bound_s is not None and plan.bound_s > plan.objective_s * (1 + 1e-9):
        problems.append(f"bound {plan.bound_s} above the objective {plan.objective_s}")
    return problems


def _against_instance(plan: Plan, instance: Instance) -> list[str]:
    """The budget and the mesh count the plan states against the instance's."""
    problems = []
    fab = instance.budget
    if plan.world != fab.world or plan.ports != fab.ports:
        problems.append("world/ports differ from the instance")
    if not (_close(plan.latency_s, fab.latency) and _close(plan.link_Bps, fab.link)):
        problems.append("latency/link differ from the instance")
    if len(plan.meshes) != len(instance.meshes):
        problems.append("mesh count differs from the instance")
    return problems


def _check_generators(plan: Plan, problems: list[str]) -> dict[tuple[str, int], int]:
    """Masks, kinds, the base cube and the port budget; the multiplicity of each (kind, mask)."""
    n = plan.n
    seen: set[tuple[str, int]] = set()
    mult: dict[tuple[str, int], int] = {}
    for g in plan.generators:
        key = (g.kind, g.mask)
        if key in seen:
            problems.append(f"generator {mask_to_str(g.mask, n)} listed twice")
        seen.add(key)
        if g.mask <= 0 or g.mask >> n:
            problems.append(f"generator {g.mask:b} is not a mask on {n} bits")
        if g.multiplicity < 1:
            problems.append(f"generator {mask_to_str(g.mask, n)}: multiplicity {g.multiplicity} < 1")
        if g.kind not in PLAN_KINDS:
            problems.append(f"generator {mask_to_str(g.mask, n)}: unknown kind {g.kind!r}")
        elif not generator_kind(g.kind).weight_ok(g.mask):
            problems.append(f"generator {mask_to_str(g.mask, n)}: kind {g.kind} but weight {popcount(g.mask)}")
        mult[key] = g.multiplicity
    ring_bits = 0
    for g in plan.generators:
        if g.kind == RING:
            ring_bits |= g.mask
            if len(plan.meshes) != 1:
                problems.append("a ring generator needs a single-mesh deployment")
    for b in range(n):
        if not ring_bits >> b & 1 and (CUBE, 1 << b) not in mult:
            problems.append(f"base cube generator {mask_to_str(1 << b, n)} missing")
    used = sum(g.ports for g in plan.generators)
    if used != plan.ports_used:
        problems.append(f"ports_used {plan.ports_used} but generators use {used}")
    if used > plan.ports:
        problems.append(f"port budget exceeded: {used} > {plan.ports}")
    return mult


def _check_axis(
    plan: Plan,
    mesh: MeshPlan,
    i: int,
    axis: AxisPlan,
    inst_mesh: Mesh | None,
    mult: dict[tuple[str, int], int],
    problems: list[str],
) -> float:
    """Axis ``i`` of ``mesh`` and its demands; the sum of their weighted times."""
    where = f"mesh {mesh.name} axis {i}"
    if axis.size != 1 << len(axis.bits):
        problems.append(f"{where}: size {axis.size} but {len(axis.bits)} bits")
    if inst_mesh is not None:
        if inst_mesh.name != mesh.name or tuple(inst_mesh.shape) != mesh.shape:
            problems.append(f"{where}: mesh differs from the instance")
            return 0.0
        if len(inst_mesh.axes[i].demands) != len(axis.demands):
            problems.append(f"{where}: demand count differs from the instance")
            return 0.0
    total = 0.0
    for k, d in enumerate(axis.demands):
        want = inst_mesh.axes[i].demands[k] if inst_mesh is not None else None
        total += _check_demand(plan, axis, d, f"{where} demand {k}", want, mult, problems)
    if not axis.ring:
        inside = axis_generators((g.mask for g in plan.generators if g.host), axis.bits)
        if axis.degree != len(inside):
            problems.append(f"{where}: degree {axis.degree} but {len(inside)} generators lie in the block")
    return total


def _check_demand(
    plan: Plan,
    axis: AxisPlan,
    d: DemandPlan,
    here: str,
    want: Demand | None,
    mult: dict[tuple[str, int], int],
    problems: list[str],
) -> float:
    """One demand: schedule, groups, generators, multiplicity, closed form and time;
    its weighted time (0 when it cannot be priced)."""
    n, block = plan.n, axis.bits
    if want is not None:
        if (want.collective, want.payload, want.weight) != (d.collective, d.payload_bytes, d.weight):
            problems.append(f"{here}: collective/payload/weight differ from the instance")
        if want.schedule != "auto" and want.schedule != d.schedule:
            problems.append(f"{here}: instance asks for {want.schedule}, plan runs {d.schedule}")
    sched = SCHEDULES.get(d.schedule)
    if sched is None or sched.collective != d.collective:
        problems.append(f"{here}: schedule {d.schedule!r} cannot run {d.collective}")
        return 0.0
    try:
        check_groups(d.groups, block, here)
        if d.fold:
            check_fold(d.fold, d.groups, block, here)
        topo = local_topology(d.groups, block, d.fold)
    except (PlanError, ValueError) as exc:
        problems.append(str(exc))
        return 0.0
    if d.fold and (axis.ring or sched.layers(topo) is not None):
        problems.append(f"{here}: {d.schedule} cannot run on an irregular fold (it needs layers)")
        return 0.0
    if axis.ring:
        keys = [(RING, mask_of(block))]
        if d.schedule != "ring":
            problems.append(f"{here}: ring axis runs {d.schedule}")
    else:
        if not sched.valid(topo):
            problems.append(f"{here}: {d.schedule} is not valid on {topo.name}")
            return 0.0
        keys = [
            (host_kind(u), u) for u in sorted(expand(x, block) for x in sched.uses(topo))
        ]
        for group in d.groups:
            for layer_gen in sub_masks(group):
                if (host_kind(layer_gen), layer_gen) not in mult:
                    problems.append(f"{here}: layer generator {mask_to_str(layer_gen, n)} not in the host")
        for g in d.fold:
            if (FOLD, g) not in mult:
                problems.append(f"{here}: fold generator {mask_to_str(g, n)} not in the host")
    if sorted(d.uses) != sorted(k[1] for k in keys):
        drives = [mask_to_str(k[1], n) for k in keys]
        problems.append(f"{here}: uses {[mask_to_str(u, n) for u in d.uses]}, the schedule drives {drives}")
    available = min((mult.get(key, 0) for key in keys), default=1)
    if d.multiplicity > available:
        problems.append(f"{here}: multiplicity {d.multiplicity} > {available} circuits")
    if d.multiplicity < 1:
        problems.append(f"{here}: multiplicity {d.multiplicity} < 1")
        return 0.0
    form = SCHEDULES[d.schedule].cost(topo)
    volume = form.volume(d.payload_bytes)
    time = phase_time(form.h, volume, d.multiplicity, plan.latency_s, plan.link_Bps)
    if form.h != d.phases or not _close(volume, d.volume_bytes):
        problems.append(f"{here}: closed form gives h={form.h}, v={volume}; plan says h={d.phases}, v={d.volume_bytes}")
    if not _close(time, d.time_s):
        problems.append(f"{here}: time {d.time_s} but the cost model gives {time}")
    return d.weight * time


CHECKERS: dict[str, Callable[[Plan, Instance | None], list[str]]] = {
    SHARED_HOST: check_shared_host,
    STACKED: check_stacked,
}


def require_valid(plan: Plan, source: str, instance: Instance | None = None) -> None:
    """Refuse (PlanError, exit status 2) a plan :func:`check_plan` finds fault with.

    ``realize``, ``simulate``, ``sweep`` and ``validate --plan`` share it, so a plan
    one command refuses is refused by all."""
    problems = check_plan(plan, instance)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise PlanError(f"{source}: {problems[0]}{more}")
