"""The candidate enumeration both exact backends share (formulations/*.md, "Sets").

Everything the models choose from is listed here, once: the canonical bit
partitions, per active axis its block-fold shapes, its candidate layers (bit
subsets of two or more bits) and the folds they install, and per demand its
choices (shape, schedule, on the profile or on the unit masks, multiplicity p)
with their cost w * (h * lambda + v / (p * R)). Prices come from
:func:`ocsplan.planning.space.shape_options`, so the heuristic and the exact models
price every option identically.

Two reductions keep the lists short, both exact: a choice whose (h, v) is
matched or beaten by another choice that drives a subset of its generators is
dropped (dominance), and, given an upper bound (the heuristic's objective), a
choice whose cost plus the cheapest cost of every other demand exceeds it is
dropped (it cannot be part of a plan at least as good as the bound).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import combinations
from math import comb
from typing import Any, TypeVar

from ...cayley import Topology, fold_masks, profile_folds
from ...cost import phase_time
from ...errors import InfeasibleError, InstanceError
from ...instance import Demand, Instance
from ...schedules import closed_form
from ..space import (
    RING,
    Shape,
    floods,
    integer_partitions,
    irregular_shapes,
    is_irregular,
    iter_partitions,
    mesh_classes,
    shape_degree,
    shape_folds,
    shape_options,
)

__all__ = [
    "ActiveAxis",
    "Candidate",
    "Candidates",
    "DeadlinePassed",
    "DemandCandidates",
    "MeshClasses",
    "enumerate_candidates",
]

Partition = tuple[tuple[tuple[int, ...], ...], ...]

# Relative slack of the upper-bound reduction (costs are floats).
_UB_SLACK = 1e-9

# With more partition classes than this the models choose the partition bit by bit
# (formulations/cpsat.md, section 5b) instead of one variable per class.
COMPACT_FROM = 64

# Sizes the exact models refuse (README "Limits"): an axis's (layer, fold) rows, about
# 3^bits for an axis spanning ``bits`` (n = 13 fits), and its demands' candidates.
MAX_FOLD_ROWS = 2_000_000
MAX_CANDIDATES = 5_000_000


@dataclass(frozen=True)
class Candidate:
    """A search-space choice priced for the exact models, at one multiplicity p: on
    ``shape``'s profile (``shape`` not None) or on the axis's unit masks (``shape``
    None), or as a ring (``shape`` == RING)."""

    shape: Shape | None
    schedule: str
    h: int
    v_factor: float
    p: int
    cost: float  # weight * (h * lambda + v / (p * R)), seconds

    @property
    def on_profile(self) -> bool:
        return self.shape is not None and self.shape != RING

    @property
    def ring(self) -> bool:
        return self.shape == RING


@dataclass(frozen=True)
class MeshClasses:
    """A mesh whose bits the partition splits among two or more axis classes: each
    active axis is a class of its own, the idle axes form one (``space.mesh_classes``)."""

    mesh: int
    classes: tuple[tuple[int, ...], ...]  # axis indices of each class
    sizes: tuple[int, ...]  # bits of each class


@dataclass(frozen=True)
class ActiveAxis:
    """An axis with at least one demand."""

    mesh: int
    index: int
    bits: int
    # its block under each candidate partition; in the compact form (no partition list)
    # its one block if every partition gives it the same, else empty
    blocks: tuple[tuple[int, ...], ...]
    span: tuple[int, ...]  # every bit some partition puts in its block, descending
    shapes: tuple[Shape, ...]  # useful shapes: the cube first, block folds, irregular folds, RING last
    layers: tuple[tuple[int, ...], ...]  # candidate layers (>= 2 bits, inside some block)
    folds: tuple[int, ...]  # fold masks some candidate layer installs

    @property
    def cube(self) -> Shape:
        return (1,) * self.bits

    @property
    def ring_ok(self) -> bool:
        return RING in self.shapes


@dataclass(frozen=True)
class DemandCandidates:
    """A demand of an active axis and its choices."""

    axis: int  # index into Candidates.axes
    mesh: int
    axis_index: int
    index: int  # demand index on its axis
    demand: Demand
    choices: tuple[Candidate, ...]


@dataclass(frozen=True)
class Candidates:
    """Everything the exact models choose from."""

    instance: Instance
    n: int
    ports: int
    partitions: tuple[Partition, ...]  # empty in the compact form
    axes: tuple[ActiveAxis, ...]
    demands: tuple[DemandCandidates, ...]
    upper_bound: float | None
    layout: tuple[MeshClasses, ...] = ()  # the meshes whose partition is a choice
    compact: bool = False  # the partition is chosen bit by bit, not from ``partitions``

    def folds(self) -> tuple[int, ...]:
        """Every fold mask any axis may install, ascending."""
        return tuple(sorted({g for ax in self.axes for g in ax.folds}))


def _dominated(a: tuple[int, float], b: tuple[int, float]) -> bool:
    """(h, v) ``a`` is no better than ``b`` on both counts."""
    return a[0] >= b[0] and a[1] >= b[1] - 1e-15 * max(1.0, abs(b[1]))


def _prune(
    options: list[tuple[int, float, str]], better: list[tuple[int, float]]
) -> list[tuple[int, float, str]]:
    """Options not dominated by ``better`` nor by an earlier/better option of their own list."""
    kept: list[tuple[int, float, str]] = []
    for idx, (h, v, name) in enumerate(options):
        if any(_dominated((h, v), b) for b in better):
            continue
        beaten = False
        for jdx, (h2, v2, _) in enumerate(options):
            if jdx == idx:
                continue
            if _dominated((h, v), (h2, v2)) and ((h2, v2) != (h, v) or jdx < idx):
                beaten = True
                break
        if not beaten:
            kept.append((h, v, name))
    return kept


def _cost(demand: Demand, h: int, v_factor: float, p: int, latency: float, rate: float) -> float:
    return demand.weight * phase_time(h, v_factor * demand.payload, p, latency, rate)


T = TypeVar("T")


class DeadlinePassed(Exception):
    """The time limit ran out while the candidates were enumerated (``seed``: the heuristic's plan)."""

    seed: Any = None


def _until(items: Iterable[T], deadline: float | None) -> Iterator[T]:
    for item in items:
        if deadline is not None and time.perf_counter() > deadline:
            raise DeadlinePassed
        yield item


def _fixed_blocks(instance: Instance, layout: tuple[MeshClasses, ...]) -> dict[tuple[int, int], tuple[int, ...]]:
    """Blocks every canonical partition shares: a single-axis mesh owns every bit, and
    the first mesh of ``layout`` hands its classes the bits from the top, in class order."""
    n = instance.n
    out: dict[tuple[int, int], tuple[int, ...]] = {}
    for m, mesh in enumerate(instance.meshes):
        if len(mesh.axes) == 1:
            out[(m, 0)] = tuple(range(n - 1, -1, -1))
    if layout:
        first = layout[0]
        top = n - 1
        for members, size in zip(first.classes, first.sizes, strict=True):
            if len(members) == 1:
                out[(first.mesh, members[0])] = tuple(range(top, top - size, -1))
            top -= size
    return out


def _check_size(
    instance: Instance, m: int, i: int, shapes: list[Shape], blocks: set[tuple[int, ...]],
) -> None:
    """Refuse an axis the exact models cannot hold (:data:`MAX_FOLD_ROWS`,
    :data:`MAX_CANDIDATES`), before listing anything: its (layer, fold) rows and an upper
    bound of its demands' candidates (every shape, 4 schedules, every multiplicity)."""
    top_k = max((max(s) for s in shapes if s and not is_irregular(s) and s != RING), default=1)
    rows = sum(comb(len(block), size) * ((1 << size) - size - 1) for block in blocks for size in range(2, top_k + 1))
    demands = len(instance.meshes[m].axes[i].demands)
    candidates = demands * (len(shapes) + 1) * 4 * (instance.budget.ports + 1)
    for what, count, limit in (("(layer, fold) rows", rows, MAX_FOLD_ROWS),
                               ("demand candidates", candidates, MAX_CANDIDATES)):
        if count > limit:
            raise InstanceError(
                instance.source or instance.name, f"mesh[{m}].shape[{i}]",
                f"the exact models would list up to {count:,} {what} for this axis, more than their"
                f" limit of {limit:,}: use --method heuristic")


def enumerate_candidates(
    instance: Instance,
    upper_bound: float | None = None,
    deadline: float | None = None,
    irregular: bool = True,
    compact: bool | None = None,
) -> Candidates:
    """The shared candidate lists of ``instance``; ``upper_bound`` (seconds) prunes choices.

    ``deadline`` (:func:`time.perf_counter`): :class:`DeadlinePassed` once it is passed.
    ``irregular=False`` keeps to block folds (the paper's space). ``compact``: choose
    the partition bit by bit (True), from the list of classes (False), or the former
    when there are more than ``COMPACT_FROM`` classes (None)."""
    fabric = instance.budget
    n, ports = instance.n, fabric.ports
    lam, rate = fabric.latency, fabric.link
    single = len(instance.meshes) == 1
    if ports < n:
        name = instance.source or instance.name
        raise InfeasibleError(f"{name}: the base cube needs {n} ports, the fabric has {ports}")
    layout = tuple(
        MeshClasses(m, tuple(tuple(c) for c in classes), tuple(sizes))
        for m, classes, sizes in mesh_classes(instance)
    )
    listed: list[Partition] = []
    if compact is not True:
        for part in _until(iter_partitions(instance), deadline):
            listed.append(part)
            if compact is None and len(listed) > COMPACT_FROM:
                break
    use_compact = compact is True or (compact is None and len(listed) > COMPACT_FROM)
    # iter_partitions repeats no partition; dict.fromkeys keeps that so
    partitions: tuple[Partition, ...] = () if use_compact else tuple(dict.fromkeys(listed))
    fixed = _fixed_blocks(instance, layout)
    spare = ports - n
    # smallest possible count of base (unit and ring) ports: bounds every multiplicity
    ring_axes = [
        (m, i)
        for m, mesh in enumerate(instance.meshes)
        for i, ax in enumerate(mesh.axes)
        if single and ax.demands and ax.bits >= 2 and all(d.schedule == "ring" for d in ax.demands)
    ]
    base_min = n - sum(max(0, instance.meshes[m].axes[i].bits - 2) for m, i in ring_axes)

    axes: list[ActiveAxis] = []
    raw: list[list[tuple[Demand, int, list[Candidate]]]] = []
    for m, mesh in enumerate(instance.meshes):
        for i, axis in enumerate(mesh.axes):
            if not axis.demands:
                continue
            a = axis.bits
            cube: Shape = (1,) * a
            shapes = [s for s in integer_partitions(a) if profile_folds(s) <= spare]
            if irregular and any(floods(d) for d in axis.demands):
                shapes += [s for s in irregular_shapes(a) if shape_folds(s) <= spare]
            blocks: tuple[tuple[int, ...], ...]
            if use_compact:
                blocks = (fixed[(m, i)],) if (m, i) in fixed else ()
                span = fixed.get((m, i), tuple(range(n - 1, -1, -1)))
            else:
                blocks = tuple(tuple(part[m][i]) for part in partitions)
                span = tuple(sorted({b for block in blocks for b in block}, reverse=True))
            _check_size(instance, m, i, shapes, set(blocks) if blocks else {span})
            per_demand: list[tuple[Demand, int, list[Candidate]]] = []
            useful: set[Shape] = {cube}
            for k, d in enumerate(axis.demands):
                choices: list[Candidate] = []
                cube_opts = [
                    (o.h, o.v_factor, o.schedule)
                    for o in shape_options(d.collective, d.schedule, cube)
                ]
                cube_kept = _prune(cube_opts, [])
                cube_hv = [(h, v) for h, v, _ in cube_kept]
                p_cube = 1 + (ports - base_min) // a if a else 1
                for h, v, name in cube_kept:
                    top = p_cube if v > 0 else 1
                    choices.extend(
                        Candidate(None, name, h, v, p, _cost(d, h, v, p, lam, rate))
                        for p in range(1, top + 1)
                    )
                for shape in shapes:
                    if shape == cube:
                        continue
                    prof = [
                        (o.h, o.v_factor, o.schedule)
                        for o in shape_options(d.collective, d.schedule, shape)
                        if o.on_profile
                    ]
                    kept = _prune(prof, cube_hv)
                    if not kept:
                        continue
                    useful.add(shape)
                    p_top = 1 + (ports - base_min - shape_folds(shape)) // shape_degree(shape)
                    for h, v, name in kept:
                        top = p_top if v > 0 else 1
                        choices.extend(
                            Candidate(shape, name, h, v, p, _cost(d, h, v, p, lam, rate))
                            for p in range(1, top + 1)
                        )
                if (m, i) in ring_axes:
                    form = closed_form("ring", Topology.cube(a))
                    h, v = form.h, float(form.v_factor)
                    top = (ports - (n - a)) // 2
                    choices.extend(
                        Candidate(RING, "ring", h, v, p, _cost(d, h, v, p, lam, rate))
                        for p in range(1, top + 1)
                    )
                per_demand.append((d, k, choices))
            ordered = [s for s in shapes if s in useful and s != cube]
            all_shapes: list[Shape] = [cube, *ordered]
            if (m, i) in ring_axes:
                all_shapes.append(RING)
            top_k = max((max(s) for s in ordered if not is_irregular(s)), default=1)
            layer_set: set[tuple[int, ...]] = set()
            for block in set(blocks) if blocks else [span]:
                for size in range(2, top_k + 1):
                    layer_set.update(combinations(sorted(block), size))
            layers = tuple(sorted(layer_set, key=lambda b: (len(b), b)))
            folds = tuple(sorted({g for layer in layers for g in fold_masks(layer)}))
            axes.append(ActiveAxis(m, i, a, blocks, span, tuple(all_shapes), layers, folds))
            raw.append(per_demand)

    # upper-bound reduction: a choice must leave room for the cheapest choice of every other demand
    flat = [(j, d, k, ch) for j, per in enumerate(raw) for d, k, ch in per]
    if any(not ch for *_, ch in flat):
        raise InfeasibleError(f"{instance.source or instance.name}: a demand has no valid schedule")
    cheapest = [min(c.cost for c in ch) for *_, ch in flat]
    total_min = sum(cheapest)
    demands: list[DemandCandidates] = []
    for idx, (j, d, k, ch) in enumerate(flat):
        if upper_bound is not None:
            room = upper_bound * (1 + _UB_SLACK) + 1e-18 - (total_min - cheapest[idx])
            ch = [c for c in ch if c.cost <= room]
        ax = axes[j]
        demands.append(DemandCandidates(j, ax.mesh, ax.index, k, d, tuple(ch)))
    return Candidates(
        instance, n, ports, partitions, tuple(axes), tuple(demands), upper_bound, layout, use_compact
    )
