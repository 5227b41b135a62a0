"""Plans: the planners' shared result type, its JSON form and its validity checker.

A plan is self-contained (schema ``ocsplan.plan/1``; ``ocsplan.plan/2`` adds
stacked-link plans, whose axes are circulants on Z_N instead of generator masks):
from it any tool can recompute every demand's time and the objective. :func:`assemble` turns a
planner's decisions into a plan, :func:`check_plan` re-derives every number
independently of the planner that made it; tests and the exact backends reuse it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
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
from .limits import (
    MAX_AXES,
    MAX_DEMANDS,
    MAX_LATENCY_S,
    MAX_LINK_BPS,
    MAX_MESHES,
    MAX_PAYLOAD,
    MAX_PORTS,
    MAX_TREE_ROUTE_RANKS,
    MAX_WEIGHT,
    MAX_WORLD,
    MIN_LATENCY_S,
    MIN_LINK_BPS,
    check_float,
    check_int,
)
from .schedules import SCHEDULES

__all__ = [
    "RANKS",
    "SCHEMA",
    "SCHEMA_STACKED",
    "SEED_NOTE",
    "AxisPlan",
    "CirculantPlan",
    "Decision",
    "DemandDecision",
    "DemandPlan",
    "GeneratorPlan",
    "MeshPlan",
    "Plan",
    "assemble",
    "check_fold",
    "check_groups",
    "demand_topology",
    "dumps_plan",
    "load_plan",
    "loads_plan",
    "local_topology",
    "plan_from_dict",
    "plan_to_dict",
    "write_atomic",
    "write_plan",
]

SCHEMA = "ocsplan.plan/1"
SCHEMA_STACKED = "ocsplan.plan/2"  # stacked-link plans (construction "stacked")
RANKS = "row-major"  # stacked plans: rank = mixed-radix number of the coordinates, last axis fastest
# the note an exact run adds when it returns its heuristic seed (see :attr:`Plan.source`)
SEED_NOTE = "no better plan than the heuristic's seed found"
Groups = tuple[tuple[int, ...], ...]


# -- decisions (what planners choose) ------------------------------------------------


@dataclass(frozen=True)
class DemandDecision:
    """What a planner decided for one demand: its schedule, the bit groups of the block
    fold it runs on, and the multiplicity it asks for (its generators get at least this
    many circuits). Planners pick it among the search space's
    :class:`~ocsplan.planning.space.Choice` objects."""

    schedule: str
    groups: Groups
    multiplicity: int = 1
    fold: tuple[int, ...] = ()  # an irregular fold: its non-unit masks (global); groups are then units


DemandChoice = DemandDecision  # the name before the layout change (kept for old imports)


@dataclass(frozen=True)
class Decision:
    """Everything a planner decides; :func:`assemble` derives the rest.

    ``partitions[m][i]`` are the bit positions of axis i of mesh m;
    ``choices[m][i][k]`` is demand k of that axis; ``rings`` lists the axes of a
    single-mesh deployment that leave the cube for a degree-2 ring.
    """

    partitions: tuple[tuple[tuple[int, ...], ...], ...]
    choices: tuple[tuple[tuple[DemandDecision, ...], ...], ...]
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
    fold: tuple[int, ...] = ()  # irregular fold: non-unit generator masks beside the axis's unit masks


@dataclass(frozen=True)
class CirculantPlan:
    """A stacked-link axis: the circulant C_N(offsets) on the axis coordinate, each
    offset carried by ``multiplicity`` parallel circuits (ports = degree x multiplicity).

    ``search`` says how the offsets were found (exhaustive, complete, sampled);
    ``lower_bound`` is the Moore-type bound on the diameter of any circulant of this degree.
    """

    offsets: tuple[int, ...]
    multiplicity: int
    diameter: int
    search: str
    lower_bound: int

    @property
    def ports(self) -> int:
        return len(self.offsets) * self.multiplicity


@dataclass(frozen=True)
class AxisPlan:
    size: int
    bits: tuple[int, ...]
    topology: str
    degree: int
    demands: tuple[DemandPlan, ...]
    ring: bool = False
    circulant: CirculantPlan | None = None  # stacked plans only


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
    construction: str = "shared-host"  # or "stacked" (schema ocsplan.plan/2)

    @property
    def stacked(self) -> bool:
        return self.construction == "stacked"

    @property
    def n(self) -> int:
        return self.world.bit_length() - 1

    @property
    def gap(self) -> float | None:
        """Relative gap to the proven bound, when there is one."""
        if self.bound_s is None or self.bound_s <= 0:
            return None
        return max(0.0, (self.objective_s - self.bound_s) / self.bound_s)

    @property
    def source(self) -> str:
        """The planner whose decision this is: ``method``, or ``heuristic`` when an exact
        run found nothing better than its heuristic seed and returns the seed's plan."""
        return "heuristic" if SEED_NOTE in self.notes else self.method

    def generator(self, mask: int, kind: str | None = None) -> GeneratorPlan | None:
        for g in self.generators:
            if g.mask == mask and (kind is None or g.kind == kind):
                return g
        return None


def local_topology(groups: Groups, block: Sequence[int], fold: Sequence[int] = ()) -> Topology:
    """The axis graph a demand runs on, in local coordinates: the block fold of its bit
    groups (layers fixed), or with ``fold`` the unit masks plus those irregular masks
    (a covering-code set: no layers, it runs the schedules that need none)."""
    if fold:
        units = {1 << i for i in range(len(block))}
        return Topology(len(block), frozenset(units | {compress(m, block) for m in fold}))
    layers = tuple(tuple(compress(m, block) for m in sub_masks(g)) for g in groups)
    gens = frozenset(g for layer in layers for g in layer)
    return Topology(len(block), gens, layers)


def demand_topology(groups: Groups, block: Sequence[int], fold: Sequence[int] = ()) -> Topology:
    """Local topology of a demand from its global bit groups (and irregular fold masks)."""
    return local_topology(groups, block, fold)


def check_fold(fold: Sequence[int], groups: Groups, block: Sequence[int], where: str) -> None:
    """An irregular fold: distinct masks of weight two or more inside the block, on unit layers."""
    inside = mask_of(block)
    if len(set(fold)) != len(fold):
        raise PlanError(f"{where}: fold masks repeat")
    for m in fold:
        if m & ~inside or popcount(m) < 2:
            raise PlanError(f"{where}: fold mask {m:b} is not a fold inside bits {list(block)}")
    if any(len(g) != 1 for g in groups):
        raise PlanError(f"{where}: a demand on an irregular fold lists its unit layers only")


def check_groups(groups: Groups, block: Sequence[int], where: str) -> None:
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
            mult[("cube", 1 << b)] = 1
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
                    for g in choice.fold:
                        mult.setdefault(("fold", g), 1)
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


# -- JSON ------------------------------------------------------------------------------


def _stacked_axis(axis: AxisPlan) -> dict[str, Any]:
    circ = axis.circulant
    return {
        "size": axis.size,
        "topology": axis.topology,
        "degree": axis.degree,
        "circulant": None if circ is None else {
            "offsets": list(circ.offsets),
            "multiplicity": circ.multiplicity,
            "ports": circ.ports,
            "diameter": circ.diameter,
            "search": circ.search,
            "lower_bound": circ.lower_bound,
        },
        "demands": [
            {
                "collective": d.collective,
                "payload_bytes": d.payload_bytes,
                "weight": d.weight,
                "schedule": d.schedule,
                "uses": list(d.uses),
                "phases": d.phases,
                "volume_bytes": d.volume_bytes,
                "multiplicity": d.multiplicity,
                "time_s": d.time_s,
            }
            for d in axis.demands
        ],
    }


def _stacked_to_dict(plan: Plan) -> dict[str, Any]:
    return {
        "schema": SCHEMA_STACKED,
        "construction": plan.construction,
        "instance": plan.instance,
        "method": plan.method,
        "status": plan.status,
        "world": plan.world,
        "ports": plan.ports,
        "ports_used": plan.ports_used,
        "latency_s": plan.latency_s,
        "link_Bps": plan.link_Bps,
        "generators": [],
        "meshes": [
            {"name": mesh.name, "shape": list(mesh.shape), "ranks": RANKS,
             "axes": [_stacked_axis(axis) for axis in mesh.axes]}
            for mesh in plan.meshes
        ],
        "objective_s": plan.objective_s,
        "bound_s": plan.bound_s,
        "gap": plan.gap,
        "notes": list(plan.notes),
        "solve_seconds": plan.solve_seconds,
    }


def plan_to_dict(plan: Plan) -> dict[str, Any]:
    if plan.stacked:
        return _stacked_to_dict(plan)
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
                                **({"fold": [mask_to_str(g, n) for g in d.fold]} if d.fold else {}),
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


class _Fields:
    """Typed, bounded field access for the plan reader (README "Limits")."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, field: str, message: str) -> PlanError:
        return PlanError(f"{self.source}: {field}: {message}")

    def get(self, data: object, key: str, where: str) -> Any:
        if not isinstance(data, Mapping):
            raise self.fail(where or "plan", f"expected an object, got {type(data).__name__}")
        if key not in data:
            raise self.fail(f"{where}.{key}" if where else key, "missing")
        return data[key]

    def items(self, data: object, key: str, where: str, most: int) -> list[Any]:
        value = self.get(data, key, where)
        field = f"{where}.{key}" if where else key
        if not isinstance(value, list):
            raise self.fail(field, f"expected a list, got {type(value).__name__}")
        if len(value) > most:
            raise self.fail(field, f"{len(value)} entries, the limit is {most}")
        return value

    def integer(self, data: object, key: str, where: str, low: int, high: int) -> int:
        return check_int(self.get(data, key, where), self.fail, f"{where}.{key}" if where else key, low, high)

    def number(self, data: object, key: str, where: str, low: float, high: float) -> float:
        return check_float(self.get(data, key, where), self.fail, f"{where}.{key}" if where else key, low, high)

    def string(self, data: object, key: str, where: str) -> str:
        value = self.get(data, key, where)
        if not isinstance(value, str):
            raise self.fail(f"{where}.{key}" if where else key, f"expected a string, got {type(value).__name__}")
        return value

    def mask(self, text: object, field: str, n: int) -> int:
        if not isinstance(text, str) or len(text) != n:
            raise self.fail(field, f"expected a mask of {n} bits, got {str(text)[:40]!r}")
        try:
            return str_to_mask(text)
        except ValueError as exc:
            raise self.fail(field, str(exc)) from None


_BIG = 1e30  # bound of every time and volume field (the limits keep real values far below)


def plan_from_dict(data: Mapping[str, Any], source: str = "<plan>") -> Plan:
    """Read a plan dict (as written by :func:`plan_to_dict`); raises PlanError.

    Every field is type-checked and bounded (world, ports, multiplicities, payloads,
    finite times), so a hostile plan is refused before any tool works on it."""
    f = _Fields(source)
    schema = data.get("schema")
    if schema not in (SCHEMA, SCHEMA_STACKED):
        raise PlanError(f"{source}: schema: expected {SCHEMA!r} or {SCHEMA_STACKED!r}, got {str(schema)[:40]!r}")
    construction = data.get("construction", "shared-host") if schema == SCHEMA_STACKED else "shared-host"
    if construction not in ("shared-host", "stacked"):
        raise f.fail("construction", f"expected 'shared-host' or 'stacked', got {str(construction)[:40]!r}")
    if construction == "stacked":
        return _stacked_from_dict(data, f)
    world = f.integer(data, "world", "", 2, MAX_WORLD)
    if world & (world - 1):
        raise f.fail("world", f"{world} is not a power of two")
    n = world.bit_length() - 1
    ports = f.integer(data, "ports", "", 1, MAX_PORTS)
    generators = []
    for j, g in enumerate(f.items(data, "generators", "", 2 * MAX_PORTS)):
        where = f"generators[{j}]"
        kind = f.string(g, "kind", where)
        if kind not in ("cube", "fold", "ring"):
            raise f.fail(f"{where}.kind", f"expected cube, fold or ring, got {kind[:20]!r}")
        generators.append(GeneratorPlan(
            f.mask(f.get(g, "mask", where), f"{where}.mask", n), f.integer(g, "multiplicity", where, 1, ports), kind))
    meshes = []
    for mi, mesh in enumerate(f.items(data, "meshes", "", MAX_MESHES)):
        mw = f"meshes[{mi}]"
        axes_raw = f.items(mesh, "axes", mw, MAX_AXES)
        bits_raw = f.items(mesh, "bits", mw, MAX_AXES)
        shape = f.items(mesh, "shape", mw, MAX_AXES)
        if len(bits_raw) != len(axes_raw):
            raise f.fail(f"{mw}.bits", f"{len(bits_raw)} bit lists for {len(axes_raw)} axes")
        axes = []
        for ai, (axis, bits) in enumerate(zip(axes_raw, bits_raw, strict=True)):
            aw = f"{mw}.axes[{ai}]"
            if not isinstance(bits, list) or len(bits) > n:
                raise f.fail(f"{mw}.bits[{ai}]", f"expected a list of at most {n} bit positions")
            demands = []
            for k, d in enumerate(f.items(axis, "demands", aw, MAX_DEMANDS)):
                dw = f"{aw}.demands[{k}]"
                layers = f.items(d, "layers", dw, n)
                uses = f.items(d, "uses", dw, 2 * MAX_PORTS)
                fold = f.items(d, "fold", dw, 2 * MAX_PORTS) if isinstance(d, Mapping) and "fold" in d else []
                schedule = f.string(d, "schedule", dw)
                if schedule == "tree-route" and len(bits) > MAX_TREE_ROUTE_RANKS.bit_length() - 1:
                    raise f.fail(f"{dw}.schedule", f"tree-route is limited to axes of at most {MAX_TREE_ROUTE_RANKS}"
                                 f" ranks (this one has 2^{len(bits)})")
                demands.append(DemandPlan(
                    collective=f.string(d, "collective", dw),
                    payload_bytes=f.integer(d, "payload_bytes", dw, 1, MAX_PAYLOAD),
                    weight=f.number(d, "weight", dw, 0.0, MAX_WEIGHT),
                    schedule=schedule,
                    groups=tuple(
                        tuple(check_int(b, f.fail, f"{dw}.layers[{li}]", 0, n - 1) for b in _items(g, f, dw))
                        for li, g in enumerate(layers)
                    ),
                    uses=tuple(f.mask(u, f"{dw}.uses[{ui}]", n) for ui, u in enumerate(uses)),
                    phases=f.integer(d, "phases", dw, 0, 1 << 30),
                    volume_bytes=f.number(d, "volume_bytes", dw, 0.0, _BIG),
                    multiplicity=f.integer(d, "multiplicity", dw, 1, ports),
                    time_s=f.number(d, "time_s", dw, 0.0, _BIG),
                    fold=tuple(f.mask(u, f"{dw}.fold[{ui}]", n) for ui, u in enumerate(fold)),
                ))
            ring = axis.get("ring", False)
            if not isinstance(ring, bool):
                raise f.fail(f"{aw}.ring", "expected true or false")
            axes.append(AxisPlan(
                size=f.integer(axis, "size", aw, 1, world),
                bits=tuple(check_int(b, f.fail, f"{mw}.bits[{ai}]", 0, n - 1) for b in bits),
                topology=f.string(axis, "topology", aw),
                degree=f.integer(axis, "degree", aw, 0, 2 * MAX_PORTS),
                demands=tuple(demands),
                ring=ring,
            ))
        meshes.append(MeshPlan(
            f.string(mesh, "name", mw),
            tuple(check_int(s, f.fail, f"{mw}.shape", 1, world) for s in shape),
            tuple(axes),
        ))
    return Plan(generators=tuple(generators), meshes=tuple(meshes), **_plan_fields(data, f, world, ports))


def _plan_fields(data: Mapping[str, Any], f: _Fields, world: int, ports: int) -> dict[str, Any]:
    """The plan-level fields both constructions share, typed and bounded."""
    bound = data.get("bound_s")
    notes = data.get("notes", [])
    if not isinstance(notes, list):
        raise f.fail("notes", "expected a list")
    return {
        "instance": f.string(data, "instance", ""),
        "method": f.string(data, "method", ""),
        "status": f.string(data, "status", ""),
        "world": world,
        "ports": ports,
        "ports_used": f.integer(data, "ports_used", "", 0, 2 * MAX_PORTS * MAX_PORTS),
        "latency_s": f.number(data, "latency_s", "", MIN_LATENCY_S, MAX_LATENCY_S),
        "link_Bps": f.number(data, "link_Bps", "", MIN_LINK_BPS, MAX_LINK_BPS),
        "objective_s": f.number(data, "objective_s", "", 0.0, _BIG),
        "bound_s": None if bound is None else check_float(bound, f.fail, "bound_s", 0.0, _BIG),
        "solve_seconds": check_float(data.get("solve_seconds", 0.0), f.fail, "solve_seconds", 0.0, _BIG),
        "notes": tuple(str(x) for x in notes),
    }


def _items(value: object, f: _Fields, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise f.fail(f"{where}.layers", "expected lists of bit positions")
    return value


def _stacked_from_dict(data: Mapping[str, Any], f: _Fields) -> Plan:
    """A stacked plan (schema ``ocsplan.plan/2``): circulant axes, no host generators;
    every field typed and bounded as in the shared-host reader."""
    world = f.integer(data, "world", "", 2, MAX_WORLD)
    ports = f.integer(data, "ports", "", 1, MAX_PORTS)
    if f.items(data, "generators", "", 2 * MAX_PORTS):
        raise f.fail("generators", "a stacked plan has no cube or fold generators")
    meshes = []
    for mi, mesh in enumerate(f.items(data, "meshes", "", MAX_MESHES)):
        mw = f"meshes[{mi}]"
        if not isinstance(mesh, Mapping):
            raise f.fail(mw, "expected an object")
        if mesh.get("ranks", RANKS) != RANKS:
            raise f.fail(f"{mw}.ranks", f"only {RANKS!r} is known")
        axes = []
        for ai, axis in enumerate(f.items(mesh, "axes", mw, MAX_AXES)):
            aw = f"{mw}.axes[{ai}]"
            size = f.integer(axis, "size", aw, 1, world)
            raw = axis.get("circulant") if isinstance(axis, Mapping) else None
            circ = None
            if raw is not None:
                cw = f"{aw}.circulant"
                circ = CirculantPlan(
                    offsets=tuple(
                        check_int(x, f.fail, f"{cw}.offsets", 1, max(size - 1, 1))
                        for x in f.items(raw, "offsets", cw, MAX_PORTS)
                    ),
                    multiplicity=f.integer(raw, "multiplicity", cw, 1, ports),
                    diameter=f.integer(raw, "diameter", cw, 0, size),
                    search=f.string(raw, "search", cw),
                    lower_bound=f.integer(raw, "lower_bound", cw, 0, size),
                )
            demands = []
            for k, d in enumerate(f.items(axis, "demands", aw, MAX_DEMANDS)):
                dw = f"{aw}.demands[{k}]"
                demands.append(DemandPlan(
                    collective=f.string(d, "collective", dw),
                    payload_bytes=f.integer(d, "payload_bytes", dw, 1, MAX_PAYLOAD),
                    weight=f.number(d, "weight", dw, 0.0, MAX_WEIGHT),
                    schedule=f.string(d, "schedule", dw),
                    groups=(),
                    uses=tuple(
                        check_int(u, f.fail, f"{dw}.uses", 0, world) for u in f.items(d, "uses", dw, 2 * MAX_PORTS)
                    ),
                    phases=f.integer(d, "phases", dw, 0, 1 << 30),
                    volume_bytes=f.number(d, "volume_bytes", dw, 0.0, _BIG),
                    multiplicity=f.integer(d, "multiplicity", dw, 1, ports),
                    time_s=f.number(d, "time_s", dw, 0.0, _BIG),
                ))
            axes.append(AxisPlan(
                size=size,
                bits=(),
                topology=f.string(axis, "topology", aw),
                degree=f.integer(axis, "degree", aw, 0, 2 * MAX_PORTS),
                demands=tuple(demands),
                circulant=circ,
            ))
        shape = f.items(mesh, "shape", mw, MAX_AXES)
        meshes.append(MeshPlan(
            f.string(mesh, "name", mw), tuple(check_int(x, f.fail, f"{mw}.shape", 1, world) for x in shape), tuple(axes)
        ))
    return Plan(generators=(), meshes=tuple(meshes), construction="stacked", **_plan_fields(data, f, world, ports))


def loads_plan(text: str, source: str = "<plan>") -> Plan:
    return plan_from_dict(read_json(text, source), source)


def load_plan(path: str | Path) -> Plan:
    return loads_plan(read_text(path, lambda msg: PlanError(f"{path}: {msg}")), str(path))


def write_plan(plan: Plan, path: str | Path) -> None:
    write_atomic(path, dumps_plan(plan))


def __getattr__(name: str) -> Any:
    # ``ocsplan.plan.check_plan`` moved to :mod:`ocsplan.planning.check`; the old
    # import path keeps working (imported lazily: the checker imports this module).
    if name == "check_plan":
        from .planning.check import check_plan

        return check_plan
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
