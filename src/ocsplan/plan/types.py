"""The plan's types: what planners decide, and the self-contained plan built from it.

A plan (schema ``ocsplan.plan/1``; ``ocsplan.plan/2`` for stacked-link plans,
whose axes are circulants on Z_N instead of generator masks) states every
demand's schedule, generators, multiplicity, closed form and time, so any tool
can recompute the objective from it. Its construction is its kind
(:func:`plan_kind`, a key of :data:`~ocsplan.plan.constructions.CONSTRUCTIONS`;
:func:`construction` its entry): the stages (check, realize, simulate, sweep) keep
a table keyed by it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..cayley import Topology, compress, mask_of, popcount, sub_masks
from ..errors import PlanError
from .constructions import CONSTRUCTIONS, SHARED_HOST, STACKED, Construction
from .kinds import generator_kind

__all__ = [
    "RANKS",
    "SEED_NOTE",
    "AxisPlan",
    "CirculantPlan",
    "Decision",
    "DemandDecision",
    "DemandPlan",
    "GeneratorPlan",
    "Groups",
    "MeshPlan",
    "Plan",
    "Resilience",
    "check_fold",
    "check_groups",
    "construction",
    "demand_topology",
    "local_topology",
    "plan_kind",
]

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
    kind: str  # a key of GENERATOR_KINDS listed in plans: "cube", "fold" or "ring" (degree-2, over mask's bits)

    @property
    def ports(self) -> int:
        return self.multiplicity * generator_kind(self.kind).ports_per_circuit

    @property
    def host(self) -> bool:
        """A generator of the host cube (x -> x xor mask), not a ring."""
        return generator_kind(self.kind).host


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
class Resilience:
    """The worst single circuit fault of a plan (``solve --resilience``): how many circuit faults
    there are, how many stop a demand, and the largest sum w*T over those that stop nothing
    (Eq. 1 on the degraded demands, as ``ocsplan faults`` prices them), with its circuit named by
    its ranks and generator (the plan's own, whatever the fabric)."""

    faults: int
    stopped: int
    worst_s: float | None  # None: every fault stops a demand
    worst: str = ""


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
    construction: str = SHARED_HOST  # or STACKED (schema ocsplan.plan/2)
    resilience: Resilience | None = None  # written only when computed (solve --resilience)

    @property
    def stacked(self) -> bool:
        return self.construction == STACKED

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


def plan_kind(plan: Plan) -> str:
    """``"shared-host"`` or ``"stacked"``: the plan's construction, the key of every stage's table."""
    return plan.construction


def construction(plan: Plan) -> Construction:
    """The :data:`~ocsplan.plan.constructions.CONSTRUCTIONS` entry of ``plan``: its capabilities."""
    return CONSTRUCTIONS[plan.construction]
