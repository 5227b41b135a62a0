"""Symmetry across identical meshes and axes (formulations/cpsat.md, section 5c).

Two active axes are *twins* when swapping them, with everything they decide, maps
every plan to a plan of equal cost: two identical axes of one mesh (same size, same
demands), or the corresponding axes of two identical meshes (same shape, same axes
and demands). The models order twins by shape (:func:`twin_pairs` lists the pairs);
:func:`order_twins` and :func:`sort_bits` bring a plan (the heuristic's, before it
becomes the hint) into the form the rows ask for, at the same cost.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

from ...instance import Instance
from ..space import mesh_classes, partition_of
from .candidates import Candidates, Partition

__all__ = ["Profiles", "order_twins", "sort_bits", "twin_pairs"]

Profiles = list[tuple[tuple[int, ...], ...] | None]


def _axis_twins(cand: Candidates) -> list[tuple[int, int]]:
    """Consecutive identical active axes of one mesh (indices into ``cand.axes``)."""
    out = []
    meshes = cand.instance.meshes
    for m, mesh in enumerate(meshes):
        active = [j for j, ax in enumerate(cand.axes) if ax.mesh == m]
        groups: dict[object, list[int]] = {}
        for j in active:
            groups.setdefault(mesh.axes[cand.axes[j].index], []).append(j)
        for members in groups.values():
            out += list(itertools.pairwise(members))
    return out


def _mesh_twins(cand: Candidates) -> list[tuple[list[int], list[int], int]]:
    """Consecutive identical meshes with an active axis of two or more shapes: their
    active axes, in order, and the position of the first such axis (the key)."""
    meshes = cand.instance.meshes
    groups: dict[object, list[int]] = {}
    for m, mesh in enumerate(meshes):
        if any(ax.mesh == m for ax in cand.axes):
            groups.setdefault((mesh.shape, mesh.axes), []).append(m)
    out = []
    for members in groups.values():
        for m1, m2 in itertools.pairwise(members):
            first = [j for j, ax in enumerate(cand.axes) if ax.mesh == m1]
            second = [j for j, ax in enumerate(cand.axes) if ax.mesh == m2]
            key = next((k for k, j in enumerate(first) if len(cand.axes[j].shapes) > 1), None)
            if key is not None:
                out.append((first, second, key))
    return out


def twin_pairs(cand: Candidates) -> list[tuple[int, int]]:
    """Pairs (j1, j2) of twin axes whose shapes the models order (shape index of j1 at
    most that of j2): identical axes of one mesh, then the first active axes with a
    choice of shape of consecutive identical meshes. Only pairs with the same shape
    list are kept."""
    pairs = _axis_twins(cand) + [(a[k], b[k]) for a, b, k in _mesh_twins(cand)]
    return [(j1, j2) for j1, j2 in pairs if cand.axes[j1].shapes == cand.axes[j2].shapes]


def order_twins(
    cand: Candidates,
    partition: Partition,
    profiles: Profiles,
    picks: Sequence[int],
    rank: Callable[[int, Profiles, Sequence[int]], int],
) -> tuple[Partition, Profiles, list[int]]:
    """Swap twins (axes of one mesh first, then whole meshes) until every pair of
    :func:`twin_pairs` is in order by ``rank(j, profiles, picks)``: the same plan up to
    relabelling, so the same cost."""
    parts = [list(mesh) for mesh in partition]
    prof = list(profiles)
    chosen = list(picks)
    by_axis: dict[int, list[int]] = {}
    for d, dc in enumerate(cand.demands):
        by_axis.setdefault(dc.axis, []).append(d)

    def swap_axes(j1: int, j2: int) -> None:
        prof[j1], prof[j2] = prof[j2], prof[j1]
        for d1, d2 in zip(by_axis.get(j1, []), by_axis.get(j2, []), strict=True):
            chosen[d1], chosen[d2] = chosen[d2], chosen[d1]

    axis_pairs = [p for p in _axis_twins(cand) if p in twin_pairs(cand)]
    changed = True
    while changed:
        changed = False
        for j1, j2 in axis_pairs:
            if rank(j1, prof, chosen) > rank(j2, prof, chosen):
                a1, a2 = cand.axes[j1], cand.axes[j2]
                mesh = parts[a1.mesh]
                mesh[a1.index], mesh[a2.index] = mesh[a2.index], mesh[a1.index]
                swap_axes(j1, j2)
                changed = True
    mesh_pairs = [(a, b, k) for a, b, k in _mesh_twins(cand) if (a[k], b[k]) in twin_pairs(cand)]
    changed = True
    while changed:
        changed = False
        for first, second, k in mesh_pairs:
            if rank(first[k], prof, chosen) > rank(second[k], prof, chosen):
                m1, m2 = cand.axes[first[0]].mesh, cand.axes[second[0]].mesh
                parts[m1], parts[m2] = parts[m2], parts[m1]
                for j1, j2 in zip(first, second, strict=True):
                    swap_axes(j1, j2)
                changed = True
    return tuple(tuple(mesh) for mesh in parts), prof, chosen


def sort_bits(instance: Instance, partition: Partition, profiles: Profiles) -> tuple[Partition, Profiles]:
    """The canonical representative of ``partition``'s symmetry class, and the profiles
    moved by the same bit permutation (bits of each type keep their order)."""
    classes = mesh_classes(instance)

    def kind(part: Partition, b: int) -> tuple[int, ...]:
        return tuple(
            next(c for c, members in enumerate(cls) if any(b in part[m][i] for i in members))
            for m, cls, _ in classes
        )

    n = instance.n
    table: dict[tuple[int, ...], int] = {}
    for b in range(n):
        table[kind(partition, b)] = table.get(kind(partition, b), 0) + 1
    canonical: Partition = partition_of(instance, classes, table)
    perm: dict[int, int] = {}
    for t in table:
        old = [b for b in range(n - 1, -1, -1) if kind(partition, b) == t]
        new = [b for b in range(n - 1, -1, -1) if kind(canonical, b) == t]
        perm.update(zip(old, new, strict=True))
    moved: Profiles = [
        None if prof is None else tuple(tuple(perm[b] for b in group) for group in prof) for prof in profiles
    ]
    # the active axes' blocks must follow the same permutation
    for m, mesh in enumerate(partition):
        for i, block in enumerate(mesh):
            if instance.meshes[m].axes[i].demands:
                assert sorted(perm[b] for b in block) == sorted(canonical[m][i])
    return canonical, moved
