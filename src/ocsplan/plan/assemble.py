"""A planner's decision -> the full plan: host generators and their multiplicities, each
demand's closed form and time (Eq. 1), the objective."""

from __future__ import annotations

from collections.abc import Sequence

from ..cayley import Topology, axis_generators, compress, expand, mask_of, popcount, sub_masks, topology_name
from ..cost import demand_cost
from ..errors import PlanError
from ..instance import Instance
from ..schedules import SCHEDULES
from .kinds import FOLD, RING, generator_kind, host_kind
from .types import (
    AxisPlan,
    Decision,
    DemandPlan,
    GeneratorPlan,
    MeshPlan,
    Plan,
    check_fold,
    check_groups,
    local_topology,
)

__all__ = ["assemble"]


def _generator_order(item: tuple[tuple[str, int], int]) -> tuple[int, int, int]:
    """By the kind's order (cube generators first, high bits first; then folds by weight; rings last)."""
    (kind, mask), _ = item
    return generator_kind(kind).order, popcount(mask), -mask


def assemble(
    instance: Instance,
    decision: Decision,
    *,
    method: str,
    status: str,
    bound_s: float | None = None,
    solve_seconds: float = 0.0,
    notes: Sequence[str] = (),
) -> Plan:
    """Build the full plan from a planner's decision (host generators, times, objective)."""
    fabric = instance.budget
    n = instance.n
    single = len(instance.meshes) == 1
    if decision.rings and not single:
        raise PlanError("only a single-mesh deployment can give an axis a ring")
    ring_bits: set[int] = set()
    for m, i in decision.rings:
        ring_bits.update(decision.partitions[m][i])
    mult: dict[tuple[str, int], int] = {}
    for b in range(n):
        if b not in ring_bits:
            mult[(host_kind(1 << b), 1 << b)] = 1
    uses_of: dict[tuple[int, int, int], tuple[tuple[str, int], ...]] = {}
    topo_of: dict[tuple[int, int, int], Topology] = {}
    for m, mesh in enumerate(instance.meshes):
        for i, axis in enumerate(mesh.axes):
            block = decision.partitions[m][i]
            for k, _demand in enumerate(axis.demands):
                choice = decision.choices[m][i][k]
                here = f"mesh {mesh.name} axis {i} demand {k}"
                check_groups(choice.groups, block, here)
                if choice.fold:
                    check_fold(choice.fold, choice.groups, block, here)
                topo = local_topology(choice.groups, block, choice.fold)
                sched = SCHEDULES[choice.schedule]
                if choice.fold and sched.layers(topo) is not None:
                    raise PlanError(f"{here}: {choice.schedule} needs layers; an irregular fold has none")
                if (m, i) in decision.rings:
                    if choice.schedule != "ring":
                        raise PlanError(f"mesh {mesh.name} axis {i}: a ring axis runs only the ring")
                    keys: tuple[tuple[str, int], ...] = ((RING, mask_of(block)),)
                else:
                    if not sched.valid(topo):
                        raise PlanError(f"{choice.schedule} is not valid on {topo.name}")
                    keys = tuple(
                        (host_kind(g), g)
                        for g in sorted(expand(x, block) for x in sched.uses(topo))
                    )
                for key in keys:
                    mult[key] = max(mult.get(key, 1), choice.multiplicity)
                if (m, i) not in decision.rings:
                    # every generator of the layers is installed, driven or not
                    for group in choice.groups:
                        for g in sub_masks(group):
                            key = (host_kind(g), g)
                            mult.setdefault(key, 1)
                    for g in choice.fold:
                        mult.setdefault((FOLD, g), 1)
                uses_of[(m, i, k)] = keys
                topo_of[(m, i, k)] = topo
    generators = tuple(
        GeneratorPlan(mask, p, kind)
        for (kind, mask), p in sorted(mult.items(), key=_generator_order)
    )
    host = {g.mask for g in generators if g.host}
    meshes = []
    objective = 0.0
    for m, mesh in enumerate(instance.meshes):
        axes = []
        for i, axis in enumerate(mesh.axes):
            block = decision.partitions[m][i]
            ring = (m, i) in decision.rings
            inside = [compress(g, block) for g in axis_generators(host, block)]
            if ring:
                name, degree = "ring", 2
            else:
                name, degree = topology_name(inside, len(block)), len(inside)
            demands = []
            for k, demand in enumerate(axis.demands):
                choice = decision.choices[m][i][k]
                keys = uses_of[(m, i, k)]
                p = min(mult[key] for key in keys) if keys else 1
                h, volume, time = demand_cost(choice.schedule, topo_of[(m, i, k)], demand.payload, p, fabric)
                objective += demand.weight * time
                demands.append(DemandPlan(
                    collective=demand.collective,
                    payload_bytes=demand.payload,
                    weight=demand.weight,
                    schedule=choice.schedule,
                    groups=tuple(tuple(sorted(g, reverse=True)) for g in choice.groups),
                    uses=tuple(key[1] for key in keys),
                    phases=h,
                    volume_bytes=volume,
                    multiplicity=p,
                    time_s=time,
                    fold=tuple(sorted(choice.fold)),
                ))
            axes.append(AxisPlan(
                size=axis.size,
                bits=tuple(sorted(block, reverse=True)),
                topology=name,
                degree=degree,
                demands=tuple(demands),
                ring=ring,
            ))
        meshes.append(MeshPlan(mesh.name, mesh.shape, tuple(axes)))
    return Plan(
        instance=instance.name,
        method=method,
        status=status,
        world=fabric.world,
        ports=fabric.ports,
        ports_used=sum(g.ports for g in generators),
        latency_s=fabric.latency,
        link_Bps=fabric.link,
        generators=generators,
        meshes=tuple(meshes),
        objective_s=objective,
        bound_s=bound_s,
        solve_seconds=solve_seconds,
        notes=tuple(notes),
    )
