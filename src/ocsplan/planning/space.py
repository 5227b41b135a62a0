"""The search space every planner shares (formulations/*.md).

Each axis runs a block fold (a profile of sub-block sizes, see
:func:`~ocsplan.cayley.profile_folds`) or stays on its unit masks; each demand
picks a schedule on that fold or on the cube (:func:`shape_options`); meshes
split their bit positions between axes (:func:`candidate_partitions`, one
partition per symmetry class). Single-mesh deployments may also move an axis
to a degree-2 ring (:data:`RING`). Beyond the paper, an axis may also take an
irregular fold (:func:`irregular_shapes`): a covering-code generator set of the
shipped table whose diameter is below every block fold of its degree.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import TYPE_CHECKING

from ..cayley import Topology, profile_degree, profile_folds
from ..instance import Demand, Instance
from ..schedules import AUTO_EXCLUDED, SCHEDULES, closed_form, schedules_for

if TYPE_CHECKING:
    from .covering import CoveringSet

__all__ = [
    "FLOODING",
    "IRREGULAR",
    "PREFERENCE",
    "RING",
    "Choice",
    "Groups",
    "Partition",
    "Shape",
    "candidate_partitions",
    "floods",
    "integer_partitions",
    "irregular_fold",
    "irregular_shapes",
    "irregular_topology",
    "is_irregular",
    "iter_partitions",
    "mesh_classes",
    "neighbour_partitions",
    "partition_of",
    "partition_table",
    "shape_degree",
    "shape_folds",
    "shape_options",
]

Shape = tuple[int, ...]
Groups = tuple[tuple[int, ...], ...]
RING: Shape = (-1,)  # the named ring option: the axis leaves the cube for a degree-2 ring
IRREGULAR = -2  # tag of an irregular shape (IRREGULAR, bits, degree): see irregular_shapes


@cache
def integer_partitions(total: int, largest: int | None = None) -> tuple[Shape, ...]:
    """Partitions of ``total`` into non-increasing parts, largest parts first."""
    if total == 0:
        return ((),)
    top = total if largest is None else min(largest, total)
    out: list[Shape] = []
    for k in range(top, 0, -1):
        out.extend((k, *rest) for rest in integer_partitions(total - k, k))
    return tuple(out)


@dataclass(frozen=True)
class Choice:
    """A point of the search space: one way to run a demand (schedule, on the axis's
    fold or on its unit masks) with its phases h and volume factor v/sigma. The exact
    models price it per multiplicity as a :class:`~ocsplan.planning.exact.candidates.Candidate`;
    a planner's pick is a :class:`~ocsplan.plan.DemandDecision`."""

    schedule: str
    on_profile: bool
    h: int
    v_factor: float


Option = Choice  # the name before the layout change (kept for old imports)


# Order of preference among options that tie exactly (paper Table 6 names the
# volume-optimised one-shot on K4, where it ties with coset-factored parallel).
PREFERENCE = (
    "one-shot-dvo", "coset-factored-parallel", "rs-ag-parallel", "coset-factored", "rs-ag",
    "one-shot", "recursive-doubling", "ring", "layered", "layered-parallel", "bruck-parallel", "bruck",
    "tree-gather", "tree-route",
)


# The schedules that need no layers (they run on any connected generator set, so on
# irregular folds too). On a block fold of l >= 2 layers the one-shots take h = l
# phases and carry at least one payload per phase, so coset-factored parallel
# (h = l, v = sigma) dominates them; "auto" skips all four there (their trees are
# costly to build). Tree-gather and tree-route do not always lose there (K4xK2xK2:
# tree-gather 1/4 sigma against layered-parallel 13/48) but stay out of the block-fold
# space, which is the paper's.
FLOODING = frozenset({"one-shot", "one-shot-dvo", "tree-gather", "tree-route"})


def _candidate_schedules(demand: Demand, layers: int) -> list[str]:
    if demand.schedule != "auto":
        return [demand.schedule]
    names = [s.name for s in schedules_for(demand.collective) if s.name not in AUTO_EXCLUDED]
    if layers >= 2:
        names = [x for x in names if x not in FLOODING]
    return sorted(names, key=lambda x: PREFERENCE.index(x) if x in PREFERENCE else len(PREFERENCE))


@lru_cache(maxsize=65536)
def shape_options(collective: str, requested: str, shape: Shape) -> tuple[Choice, ...]:
    """Valid (schedule, h, v/sigma) on the block fold ``shape`` and on its cube
    (on an irregular shape: the schedules that need no layers, then the cube's)."""
    demand = Demand(collective, 1, 1.0, requested)
    if shape == RING:
        return ()
    out: list[Choice] = []
    if is_irregular(shape):
        # the table's one-shot costs (tests/test_planning_covering.py checks them against the
        # closed forms, which take up to 0.3 s per set to derive)
        # tree-gather runs on the one-shot-dvo trees: its volume is the table's / 2^m
        entry = _covering_entry(shape)
        table = {
            "one-shot": (entry.one_shot_h, entry.one_shot_v),
            "one-shot-dvo": (entry.dvo_h, entry.dvo_v),
            "tree-gather": (entry.dvo_h, entry.dvo_v / (1 << shape[1])),
        }
        for name in _candidate_schedules(demand, 1):
            if name in table:
                h, v = table[name]
                out.append(Choice(name, True, h, float(v)))
            elif name in FLOODING:
                form = closed_form(name, irregular_topology(shape))
                out.append(Choice(name, True, form.h, float(form.v_factor)))
        cube_opts = shape_options(collective, requested, (1,) * shape[1])
        return (*out, *(Choice(o.schedule, False, o.h, o.v_factor) for o in cube_opts))
    bits = sum(shape)
    cube: Shape = (1,) * bits
    for on_profile, sh in ((True, shape), (False, cube)):
        if not on_profile and sh == shape:
            continue
        topo = Topology.from_profile(sh)
        for name in _candidate_schedules(demand, len(sh)):
            sched = SCHEDULES[name]
            if on_profile and sched.cube_only and shape != cube:
                continue  # runs on the unit masks: listed with the cube
            if not sched.valid(topo):
                continue
            form = closed_form(name, topo)
            out.append(Choice(name, on_profile or sh == shape, form.h, float(form.v_factor)))
    return tuple(out)


# -- irregular folds (beyond the paper) -------------------------------------------------


def floods(demand: Demand) -> bool:
    """Whether the demand may run a schedule that needs no layers, the only kind an
    irregular fold serves (its axis is offered irregular shapes only then)."""
    if demand.schedule == "auto":
        return any(s.name in FLOODING for s in schedules_for(demand.collective))
    return demand.schedule in FLOODING


def is_irregular(shape: Shape | None) -> bool:
    return shape is not None and len(shape) == 3 and shape[0] == IRREGULAR


def shape_degree(shape: Shape) -> int:
    """Generators of a shape on its axis: block fold, irregular set, or ring (2 ports)."""
    if shape == RING:
        return 2
    return shape[2] if is_irregular(shape) else profile_degree(shape)


def shape_folds(shape: Shape) -> int:
    """Its generators of weight two or more (the ports it adds to the base cube)."""
    if shape == RING:
        return 0
    return shape[2] - shape[1] if is_irregular(shape) else profile_folds(shape)


@cache
def irregular_shapes(bits: int) -> tuple[Shape, ...]:
    """Irregular shapes of an axis of ``bits`` bits, by degree: for each diameter the
    least-degree set of the covering table (planning/covering.py) whose diameter is
    below the layer count of every block fold with at most its degree. A larger set of
    the same diameter would only lower the one-shot-dvo volume, which a higher
    multiplicity does for about the same ports."""
    from .covering import covering_sets

    out: list[Shape] = []
    seen: set[int] = set()
    for entry in covering_sets(bits):
        if entry.degree <= bits or entry.diameter in seen:
            continue
        layers = min(len(p) for p in integer_partitions(bits) if profile_degree(p) <= entry.degree)
        if entry.diameter < layers:
            seen.add(entry.diameter)
            out.append((IRREGULAR, bits, entry.degree))
    return tuple(out)


def _covering_entry(shape: Shape) -> CoveringSet:
    from .covering import covering_table

    entry = covering_table().lookup(shape[1], shape[2])
    if entry is None:
        raise ValueError(f"no covering set of degree {shape[2]} on {shape[1]} bits")
    return entry


@cache
def irregular_topology(shape: Shape) -> Topology:
    """The covering-table generator set of an irregular shape, in local coordinates."""
    return Topology(shape[1], frozenset(_covering_entry(shape).generators))


def irregular_fold(shape: Shape, block: Sequence[int]) -> tuple[int, ...]:
    """The irregular shape's non-unit masks placed on ``block`` (global masks, ascending):
    local bit i is the i-th lowest bit of the block (remembered: the planner asks per evaluation)."""
    return _irregular_fold(shape, tuple(block))


@lru_cache(maxsize=65536)
def _irregular_fold(shape: Shape, block: tuple[int, ...]) -> tuple[int, ...]:
    local = sorted(block)
    out = []
    for g in irregular_topology(shape).gens:
        if g & (g - 1):
            out.append(sum(1 << local[i] for i in range(len(local)) if g >> i & 1))
    return tuple(sorted(out))


def mesh_classes(instance: Instance) -> list[tuple[int, list[tuple[int, ...]], list[int]]]:
    """Per multi-axis mesh: (mesh index, class -> axes, class sizes in bits).

    Axes without demands merge into one class: their bits are interchangeable.
    """
    out = []
    for m, mesh in enumerate(instance.meshes):
        classes = list(mesh.bit_classes)
        if classes:
            out.append((m, classes, [sum(mesh.axes[i].bits for i in cls) for cls in classes]))
    return out


def _tables(margins: list[list[int]], n: int) -> Iterator[dict[tuple[int, ...], int]]:
    """Integer tables over bit types (one class per mesh) with the given margins."""
    types: list[tuple[int, ...]] = [()]
    for sizes in margins:
        types = [(*t, c) for t in types for c in range(len(sizes))]
    # reach[i]: the (mesh, class) margins some type from index i on still feeds
    reach: list[set[tuple[int, int]]] = [set() for _ in range(len(types) + 1)]
    for i in range(len(types) - 1, -1, -1):
        reach[i] = reach[i + 1] | {(m, c) for m, c in enumerate(types[i])}

    def feasible(start: int, left: list[list[int]]) -> bool:
        """Every remaining margin is non-negative and still reachable by the remaining types."""
        return all(v == 0 or (v > 0 and (m, c) in reach[start]) for m, sizes in enumerate(left)
                   for c, v in enumerate(sizes))

    def rec(idx: int, left: list[list[int]], table: dict[tuple[int, ...], int]) -> Iterator[dict[tuple[int, ...], int]]:
        if idx == len(types):
            if all(v == 0 for sizes in left for v in sizes):
                yield dict(table)
            return
        t = types[idx]
        cap = min(left[m][c] for m, c in enumerate(t)) if t else n
        # the last type of each remaining combination is forced; try large counts first
        for count in range(cap, -1, -1):
            for m, c in enumerate(t):
                left[m][c] -= count
            if feasible(idx + 1, left):
                table[t] = count
                yield from rec(idx + 1, left, table)
                del table[t]
            for m, c in enumerate(t):
                left[m][c] += count

    yield from rec(0, [list(s) for s in margins], {})


def candidate_partitions(instance: Instance) -> list[Partition]:
    """Bit partitions of all meshes, one per symmetry class, deterministic order."""
    return list(iter_partitions(instance))


Partition = tuple[tuple[tuple[int, ...], ...], ...]
Table = tuple[tuple[tuple[int, ...], int], ...]  # (bit type, count), sorted, counts > 0


def iter_partitions(instance: Instance) -> Iterator[Partition]:
    """:func:`candidate_partitions` lazily (a deadline can stop the enumeration)."""
    classes = mesh_classes(instance)
    margins = [sizes for _, _, sizes in classes]
    seen: set[Partition] = set()
    for table in _tables(margins, instance.n):
        key = partition_of(instance, classes, table)
        if key not in seen:  # a set: the tables of wide instances run to the ten thousands
            seen.add(key)
            yield key


def partition_of(
    instance: Instance, classes: list[tuple[int, list[tuple[int, ...]], list[int]]],
    table: dict[tuple[int, ...], int],
) -> Partition:
    """The representative partition of a table: bit positions handed out from the top,
    type by type in sorted order."""
    n = instance.n
    bit = n - 1
    owner: dict[int, tuple[int, ...]] = {}
    for t in sorted(table):
        for _ in range(table[t]):
            owner[bit] = t
            bit -= 1
    parts: list[tuple[tuple[int, ...], ...]] = []
    for m, mesh in enumerate(instance.meshes):
        if len(mesh.axes) == 1:
            parts.append((tuple(range(n - 1, -1, -1)),))
            continue
        pos = next((j for j, (mm, _, _) in enumerate(classes) if mm == m), None)
        axis_bits: list[list[int]] = [[] for _ in mesh.axes]
        if pos is None:
            # no active axis, or a single class: any split will do
            b = n - 1
            for i, ax in enumerate(mesh.axes):
                for _ in range(ax.bits):
                    axis_bits[i].append(b)
                    b -= 1
        else:
            cls = classes[pos][1]
            pool: list[list[int]] = [[] for _ in cls]
            for b in range(n - 1, -1, -1):
                pool[owner[b][pos]].append(b)
            for c, members in enumerate(cls):
                bits_left = pool[c]
                for i in members:
                    axis_bits[i] = bits_left[: mesh.axes[i].bits]
                    bits_left = bits_left[mesh.axes[i].bits :]
        parts.append(tuple(tuple(sorted(x, reverse=True)) for x in axis_bits))
    return tuple(parts)


def partition_table(instance: Instance, partition: Partition) -> Table:
    """The symmetry class of a partition: how many bits have each type (per multi-class
    mesh, the class of the axis owning the bit)."""
    classes = mesh_classes(instance)
    counts: dict[tuple[int, ...], int] = {}
    for b in range(instance.n):
        t = tuple(
            next(c for c, members in enumerate(cls) if any(b in partition[m][i] for i in members))
            for m, cls, _ in classes
        )
        counts[t] = counts.get(t, 0) + 1
    return tuple(sorted(counts.items()))


def neighbour_partitions(instance: Instance, table: Table) -> Iterator[tuple[Table, Partition]]:
    """Partition classes one swap away: two bits of different types trade their axes in
    one mesh (the margins stay). Deterministic order; each neighbour once."""
    classes = mesh_classes(instance)
    seen: set[Table] = {table}
    for pos in range(len(classes)):
        for x in range(len(table)):
            for y in range(x + 1, len(table)):
                t1, t2 = table[x][0], table[y][0]
                if t1[pos] == t2[pos]:
                    continue
                counts = dict(table)
                u1 = (*t1[:pos], t2[pos], *t1[pos + 1 :])
                u2 = (*t2[:pos], t1[pos], *t2[pos + 1 :])
                for t, delta in ((t1, -1), (t2, -1), (u1, 1), (u2, 1)):
                    counts[t] = counts.get(t, 0) + delta
                key = tuple(sorted((t, c) for t, c in counts.items() if c))
                if key not in seen:
                    seen.add(key)
                    yield key, partition_of(instance, classes, dict(key))
