"""Plans: the planners' shared result type, its JSON form and its validity checker.

A plan is self-contained (schema ``ocsplan.plan/1``): from it any tool can
recompute every demand's time and the objective. :func:`assemble` turns a
planner's decisions into a plan, :func:`check_plan` re-derives every number
independently of the planner that made it; tests and the exact backends reuse it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .cayley import (
    Topology,
    axis_generators,
    compress,
    expand,
    mask_of,
    mask_to_str,
    popcount,
    str_to_mask,
    sub_masks,
    topology_name,
)
from .cost import demand_cost
from .errors import PlanError
from .files import read_json, read_text, write_atomic
from .instance import Instance
from .schedules import SCHEDULES

__all__ = [
    "SCHEMA",
    "AxisPlan",
    "Decision",
    "DemandChoice",
    "DemandPlan",
    "GeneratorPlan",
    "MeshPlan",
    "Plan",
    "assemble",
    "check_plan",
    "dumps_plan",
    "load_plan",
    "loads_plan",
    "plan_from_dict",
    "plan_to_dict",
    "write_atomic",
    "write_plan",
]

SCHEMA = "ocsplan.plan/1"
Groups = tuple[tuple[int, ...], ...]


# -- decisions (what planners choose) ------------------------------------------------


@dataclass(frozen=True)
class DemandChoice:
    """A demand's schedule, the bit groups of the block fold it runs on, and the
    multiplicity it asks for (its generators get at least this many circuits)."""

    schedule: str
    groups: Groups
    multiplicity: int = 1


@dataclass(frozen=True)
class Decision:
    """Everything a planner decides; :func:`assemble` derives the rest.

    ``partitions[m][i]`` are the bit positions of axis i of mesh m;
    ``choices[m][i][k]`` is demand k of that axis; ``rings`` lists the axes of a
    single-mesh deployment that leave the cube for a degree-2 ring.
    """

    partitions: tuple[tuple[tuple[int, ...], ...], ...]
    choices: tuple[tuple[tuple[DemandChoice, ...], ...], ...]
    rings: frozenset[tuple[int, int]] = frozenset()


# -- the plan ------------------------------------------------------------------------


@dataclass(frozen=True)
class GeneratorPlan:
    mask: int
    multiplicity: int
    kind: str  # "cube", "fold" or "ring" (a degree-2 ring over the bits of mask)

    @property
    def ports(self) -> int:
        return self.multiplicity * (2 if self.kind == "ring" else 1)


@dataclass(frozen=True)
class DemandPlan:
    collective: str
    payload_bytes: int
    weight: float
    schedule: str
    groups: Groups
    uses: tuple[int, ...]
    phases: int
    volume_bytes: float
    multiplicity: int
    time_s: float


@dataclass(frozen=True)
class AxisPlan:
    size: int
    bits: tuple[int, ...]
    topology: str
    degree: int
    demands: tuple[DemandPlan, ...]
    ring: bool = False


@dataclass(frozen=True)
class MeshPlan:
    name: str
    shape: tuple[int, ...]
    axes: tuple[AxisPlan, ...]


@dataclass(frozen=True)
class Plan:
    instance: str
    method: str
    status: str
    world: int
    ports: int
    ports_used: int
    latency_s: float
    link_Bps: float
    generators: tuple[GeneratorPlan, ...]
    meshes: tuple[MeshPlan, ...]
    objective_s: float
    bound_s: float | None = None
    solve_seconds: float = 0.0
    notes: tuple[str, ...] = field(default=())

    @property
    def n(self) -> int:
        return self.world.bit_length() - 1

    @property
    def gap(self) -> float | None:
        """Relative gap to the proven bound, when there is one."""
        if self.bound_s is None or self.bound_s <= 0:
            return None
        return max(0.0, (self.objective_s - self.bound_s) / self.bound_s)

    def generator(self, mask: int, kind: str | None = None) -> GeneratorPlan | None:
        for g in self.generators:
            if g.mask == mask and (kind is None or g.kind == kind):
                return g
        return None


def _local_topology(groups: Groups, block: Sequence[int]) -> Topology:
    layers = tuple(tuple(compress(m, block) for m in sub_masks(g)) for g in groups)
    gens = frozenset(g for layer in layers for g in layer)
    return Topology(len(block), gens, layers)


def demand_topology(groups: Groups, block: Sequence[int]) -> Topology:
    """Local block-fold topology of a demand from its global bit groups."""
    return _local_topology(groups, block)


def _check_groups(groups: Groups, block: Sequence[int], where: str) -> None:
    flat = sorted(b for g in groups for b in g)
    if flat != sorted(block):
        raise PlanError(f"{where}: layers {list(map(list, groups))} do not partition bits {list(block)}")


def _generator_order(item: tuple[tuple[str, int], int]) -> tuple[bool, bool, int, int]:
    """Cube generators first (high bits first), then folds by weight, rings last."""
    (kind, mask), _ = item
    return kind != "cube", kind == "ring", popcount(mask), -mask


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
    fabric = instance.fabric
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
            mult[("cube", 1 << b)] = 1
    uses_of: dict[tuple[int, int, int], tuple[tuple[str, int], ...]] = {}
    topo_of: dict[tuple[int, int, int], Topology] = {}
    for m, mesh in enumerate(instance.meshes):
        for i, axis in enumerate(mesh.axes):
            block = decision.partitions[m][i]
            for k, _demand in enumerate(axis.demands):
                choice = decision.choices[m][i][k]
                _check_groups(choice.groups, block, f"mesh {mesh.name} axis {i} demand {k}")
                topo = _local_topology(choice.groups, block)
                sched = SCHEDULES[choice.schedule]
                if (m, i) in decision.rings:
                    if choice.schedule != "ring":
                        raise PlanError(f"mesh {mesh.name} axis {i}: a ring axis runs only the ring")
                    keys: tuple[tuple[str, int], ...] = (("ring", mask_of(block)),)
                else:
                    if not sched.valid(topo):
                        raise PlanError(f"{choice.schedule} is not valid on {topo.name}")
                    keys = tuple(
                        ("cube" if popcount(g) == 1 else "fold", g)
                        for g in sorted(expand(x, block) for x in sched.uses(topo))
                    )
                for key in keys:
                    mult[key] = max(mult.get(key, 1), choice.multiplicity)
                if (m, i) not in decision.rings:
                    # every generator of the layers is installed, driven or not
                    for group in choice.groups:
                        for g in sub_masks(group):
                            key = ("cube" if popcount(g) == 1 else "fold", g)
                            mult.setdefault(key, 1)
                uses_of[(m, i, k)] = keys
                topo_of[(m, i, k)] = topo
    generators = tuple(
        GeneratorPlan(mask, p, kind)
        for (kind, mask), p in sorted(mult.items(), key=_generator_order)
    )
    host = {g.mask for g in generators if g.kind != "ring"}
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


# -- JSON ------------------------------------------------------------------------------


def plan_to_dict(plan: Plan) -> dict[str, Any]:
    n = plan.n
    return {
        "schema": SCHEMA,
        "instance": plan.instance,
        "method": plan.method,
        "status": plan.status,
        "world": plan.world,
        "ports": plan.ports,
        "ports_used": plan.ports_used,
        "latency_s": plan.latency_s,
        "link_Bps": plan.link_Bps,
        "generators": [
            {"mask": mask_to_str(g.mask, n), "multiplicity": g.multiplicity, "kind": g.kind}
            for g in plan.generators
        ],
        "meshes": [
            {
                "name": mesh.name,
                "shape": list(mesh.shape),
                "bits": [list(axis.bits) for axis in mesh.axes],
                "axes": [
                    {
                        "size": axis.size,
                        "topology": axis.topology,
                        "degree": axis.degree,
                        **({"ring": True} if axis.ring else {}),
                        "demands": [
                            {
                                "collective": d.collective,
                                "payload_bytes": d.payload_bytes,
                                "weight": d.weight,
                                "schedule": d.schedule,
                                "layers": [list(g) for g in d.groups],
                                "uses": [mask_to_str(u, n) for u in d.uses],
                                "phases": d.phases,
                                "volume_bytes": d.volume_bytes,
                                "multiplicity": d.multiplicity,
                                "time_s": d.time_s,
                            }
                            for d in axis.demands
                        ],
                    }
                    for axis in mesh.axes
                ],
            }
            for mesh in plan.meshes
        ],
        "objective_s": plan.objective_s,
        "bound_s": plan.bound_s,
        "gap": plan.gap,
        "notes": list(plan.notes),
        "solve_seconds": plan.solve_seconds,
    }


def dumps_plan(plan: Plan) -> str:
    return json.dumps(plan_to_dict(plan), indent=1, ensure_ascii=False) + "\n"


def _get(data: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in data:
        raise PlanError(f"{where}.{key}: missing")
    return data[key]


def plan_from_dict(data: Mapping[str, Any], source: str = "<plan>") -> Plan:
    """Read a plan dict (as written by :func:`plan_to_dict`); raises PlanError."""
    try:
        if data.get("schema") != SCHEMA:
            raise PlanError(f"{source}: schema: expected {SCHEMA!r}, got {data.get('schema')!r}")
        generators = tuple(
            GeneratorPlan(str_to_mask(g["mask"]), int(g["multiplicity"]), str(g["kind"]))
            for g in _get(data, "generators", source)
        )
        meshes = []
        for mesh in _get(data, "meshes", source):
            axes = []
            for axis, bits in zip(mesh["axes"], mesh["bits"], strict=True):
                demands = tuple(
                    DemandPlan(
                        collective=str(d["collective"]),
                        payload_bytes=int(d["payload_bytes"]),
                        weight=float(d["weight"]),
                        schedule=str(d["schedule"]),
                        groups=tuple(tuple(int(b) for b in g) for g in d["layers"]),
                        uses=tuple(str_to_mask(u) for u in d["uses"]),
                        phases=int(d["phases"]),
                        volume_bytes=float(d["volume_bytes"]),
                        multiplicity=int(d["multiplicity"]),
                        time_s=float(d["time_s"]),
                    )
                    for d in axis["demands"]
                )
                axes.append(AxisPlan(
                    size=int(axis["size"]),
                    bits=tuple(int(b) for b in bits),
                    topology=str(axis["topology"]),
                    degree=int(axis["degree"]),
                    demands=demands,
                    ring=bool(axis.get("ring", False)),
                ))
            meshes.append(MeshPlan(str(mesh["name"]), tuple(int(s) for s in mesh["shape"]), tuple(axes)))
        bound = data.get("bound_s")
        return Plan(
            instance=str(_get(data, "instance", source)),
            method=str(_get(data, "method", source)),
            status=str(_get(data, "status", source)),
            world=int(_get(data, "world", source)),
            ports=int(_get(data, "ports", source)),
            ports_used=int(_get(data, "ports_used", source)),
            latency_s=float(_get(data, "latency_s", source)),
            link_Bps=float(_get(data, "link_Bps", source)),
            generators=generators,
            meshes=tuple(meshes),
            objective_s=float(_get(data, "objective_s", source)),
            bound_s=None if bound is None else float(bound),
            solve_seconds=float(data.get("solve_seconds", 0.0)),
            notes=tuple(str(x) for x in data.get("notes", [])),
        )
    except PlanError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise PlanError(f"{source}: malformed plan: {exc!r}") from None


def loads_plan(text: str, source: str = "<plan>") -> Plan:
    return plan_from_dict(read_json(text, source), source)


def load_plan(path: str | Path) -> Plan:
    return loads_plan(read_text(path, lambda msg: PlanError(f"{path}: {msg}")), str(path))


def write_plan(plan: Plan, path: str | Path) -> None:
    write_atomic(path, dumps_plan(plan))


# -- validity --------------------------------------------------------------------------


def _close(a: float, b: float, rel: float = 1e-9) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-18)


def check_plan(plan: Plan, instance: Instance | None = None) -> list[str]:
    """Every inconsistency of a plan, one message each (empty list: valid).

    Re-derives partitions, generator kinds, the port budget, each demand's
    generators, multiplicity, closed form and time, and the objective.
    """
    problems: list[str] = []
    n = plan.n
    if plan.world < 2 or plan.world & (plan.world - 1):
        return [f"world {plan.world} is not a power of two"]
    if instance is not None:
        fab = instance.fabric
        if plan.world != fab.world or plan.ports != fab.ports:
            problems.append("world/ports differ from the instance")
        if not (_close(plan.latency_s, fab.latency) and _close(plan.link_Bps, fab.link)):
            problems.append("latency/link differ from the instance")
        if len(plan.meshes) != len(instance.meshes):
            problems.append("mesh count differs from the instance")
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
        if g.kind == "cube" and popcount(g.mask) != 1:
            problems.append(f"generator {mask_to_str(g.mask, n)}: kind cube but weight {popcount(g.mask)}")
        if g.kind == "fold" and popcount(g.mask) < 2:
            problems.append(f"generator {mask_to_str(g.mask, n)}: kind fold but weight 1")
        if g.kind not in ("cube", "fold", "ring"):
            problems.append(f"generator {mask_to_str(g.mask, n)}: unknown kind {g.kind!r}")
        mult[key] = g.multiplicity
    ring_bits = 0
    for g in plan.generators:
        if g.kind == "ring":
            ring_bits |= g.mask
            if len(plan.meshes) != 1:
                problems.append("a ring generator needs a single-mesh deployment")
    for b in range(n):
        if not ring_bits >> b & 1 and ("cube", 1 << b) not in mult:
            problems.append(f"base cube generator {mask_to_str(1 << b, n)} missing")
    used = sum(g.ports for g in plan.generators)
    if used != plan.ports_used:
        problems.append(f"ports_used {plan.ports_used} but generators use {used}")
    if used > plan.ports:
        problems.append(f"port budget exceeded: {used} > {plan.ports}")
    fabric_latency, fabric_rate = plan.latency_s, plan.link_Bps
    objective = 0.0
    for m, mesh in enumerate(plan.meshes):
        inst_mesh = instance.meshes[m] if instance is not None and m < len(instance.meshes) else None
        all_bits = sorted(b for axis in mesh.axes for b in axis.bits)
        if all_bits != list(range(n)):
            problems.append(f"mesh {mesh.name}: axis bits {all_bits} do not partition 0..{n - 1}")
        for i, axis in enumerate(mesh.axes):
            where = f"mesh {mesh.name} axis {i}"
            if axis.size != 1 << len(axis.bits):
                problems.append(f"{where}: size {axis.size} but {len(axis.bits)} bits")
            if inst_mesh is not None:
                if inst_mesh.name != mesh.name or tuple(inst_mesh.shape) != mesh.shape:
                    problems.append(f"{where}: mesh differs from the instance")
                    continue
                inst_axis = inst_mesh.axes[i]
                if len(inst_axis.demands) != len(axis.demands):
                    problems.append(f"{where}: demand count differs from the instance")
                    continue
            block = axis.bits
            for k, d in enumerate(axis.demands):
                here = f"{where} demand {k}"
                if inst_mesh is not None:
                    want = inst_mesh.axes[i].demands[k]
                    if (want.collective, want.payload, want.weight) != (d.collective, d.payload_bytes, d.weight):
                        problems.append(f"{here}: collective/payload/weight differ from the instance")
                    if want.schedule != "auto" and want.schedule != d.schedule:
                        problems.append(f"{here}: instance asks for {want.schedule}, plan runs {d.schedule}")
                sched = SCHEDULES.get(d.schedule)
                if sched is None or sched.collective != d.collective:
                    problems.append(f"{here}: schedule {d.schedule!r} cannot run {d.collective}")
                    continue
                try:
                    _check_groups(d.groups, block, here)
                    topo = _local_topology(d.groups, block)
                except (PlanError, ValueError) as exc:
                    problems.append(str(exc))
                    continue
                if axis.ring:
                    keys = [("ring", mask_of(block))]
                    if d.schedule != "ring":
                        problems.append(f"{here}: ring axis runs {d.schedule}")
                else:
                    if not sched.valid(topo):
                        problems.append(f"{here}: {d.schedule} is not valid on {topo.name}")
                        continue
                    keys = [
                        ("cube" if popcount(u) == 1 else "fold", u)
                        for u in sorted(expand(x, block) for x in sched.uses(topo))
                    ]
                    for group in d.groups:
                        for layer_gen in sub_masks(group):
                            if ("cube" if popcount(layer_gen) == 1 else "fold", layer_gen) not in mult:
                                problems.append(f"{here}: layer generator {mask_to_str(layer_gen, n)} not in the host")
                if sorted(d.uses) != sorted(k[1] for k in keys):
                    drives = [mask_to_str(k[1], n) for k in keys]
                    problems.append(f"{here}: uses {[mask_to_str(u, n) for u in d.uses]}, the schedule drives {drives}")
                available = min((mult.get(key, 0) for key in keys), default=1)
                if d.multiplicity > available:
                    problems.append(f"{here}: multiplicity {d.multiplicity} > {available} circuits")
                if d.multiplicity < 1:
                    problems.append(f"{here}: multiplicity {d.multiplicity} < 1")
                    continue
                form = SCHEDULES[d.schedule].cost(topo)
                volume = form.volume(d.payload_bytes)
                time = form.h * fabric_latency + volume / (d.multiplicity * fabric_rate)
                if form.h != d.phases or not _close(volume, d.volume_bytes):
                    problems.append(
                        f"{here}: closed form gives h={form.h}, v={volume}; plan says h={d.phases}, v={d.volume_bytes}"
                    )
                if not _close(time, d.time_s):
                    problems.append(f"{here}: time {d.time_s} but the cost model gives {time}")
                objective += d.weight * time
            if not axis.ring:
                inside = axis_generators((g.mask for g in plan.generators if g.kind != "ring"), block)
                if axis.degree != len(inside):
                    problems.append(f"{where}: degree {axis.degree} but {len(inside)} generators lie in the block")
    if not _close(objective, plan.objective_s, 1e-9):
        problems.append(f"objective {plan.objective_s} but the demands sum to {objective}")
    if plan.bound_s is not None and plan.bound_s > plan.objective_s * (1 + 1e-9):
        problems.append(f"bound {plan.bound_s} above the objective {plan.objective_s}")
    return problems


def with_timing(plan: Plan, seconds: float) -> Plan:
    return replace(plan, solve_seconds=seconds)
