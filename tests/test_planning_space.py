"""Partition classes of the search space (planning/space.py) against a brute force.

The brute force assigns every bit position to an axis of every mesh in every possible
way, and takes as class representative the lexicographically least image under all
permutations of the bit positions: it never uses the tables the planner works with.
"""

from __future__ import annotations

from itertools import combinations, permutations, product

import pytest

from ocsplan.instance import Instance
from ocsplan.planning.space import (
    Partition,
    iter_partitions,
    neighbour_partitions,
    partition_table,
)
from ocsplan.studies.families import generate_instance


def _splits(bits: list[int], sizes: list[int]) -> list[tuple[tuple[int, ...], ...]]:
    """Every ordered split of ``bits`` into axes of these sizes."""
    if not sizes:
        return [()]
    out: list[tuple[tuple[int, ...], ...]] = []
    for first in combinations(bits, sizes[0]):
        rest = [b for b in bits if b not in first]
        out.extend((first, *tail) for tail in _splits(rest, sizes[1:]))
    return out


def _canonical(partition: Partition, n: int) -> Partition:
    images = []
    for perm in permutations(range(n)):
        images.append(tuple(
            tuple(tuple(sorted((perm[b] for b in axis), reverse=True)) for axis in mesh) for mesh in partition
        ))
    return min(images)


def _brute_classes(instance: Instance) -> tuple[set[Partition], dict[Partition, set[Partition]]]:
    """All classes, and per class those one swap of two bits within one mesh away."""
    n = instance.n
    per_mesh = [_splits(list(range(n)), [ax.bits for ax in mesh.axes]) for mesh in instance.meshes]
    classes: set[Partition] = set()
    swaps: dict[Partition, set[Partition]] = {}
    for partition in product(*per_mesh):
        key = _canonical(partition, n)
        if key in classes:
            continue
        classes.add(key)
        near = set()
        for m, mesh in enumerate(partition):
            for i, j in combinations(range(len(mesh)), 2):
                for x in mesh[i]:
                    for y in mesh[j]:
                        axes = [list(a) for a in mesh]
                        axes[i] = [y if b == x else b for b in axes[i]]
                        axes[j] = [x if b == y else b for b in axes[j]]
                        moved = (*partition[:m], tuple(tuple(a) for a in axes), *partition[m + 1 :])
                        near.add(_canonical(moved, n))
        near.discard(key)
        swaps[key] = near
    return classes, swaps


# wide instances at n = 4 (3-4 meshes of 2-3 axes, every axis with demands)
CASES = [("wide", 5, 1), ("wide", 5, 2), ("wide", 5, 19)]


@pytest.mark.parametrize(("family", "seed", "index"), CASES)
def test_partition_classes_and_swap_neighbours_match_a_brute_force(family: str, seed: int, index: int) -> None:
    inst = generate_instance(family, seed, index, 4, 4)
    classes, swaps = _brute_classes(inst)
    listed = list(iter_partitions(inst))
    assert len(listed) == len(classes)
    assert {_canonical(p, inst.n) for p in listed} == classes
    tables = {partition_table(inst, p): p for p in listed}
    assert len(tables) == len(listed)  # one table per class
    for table, partition in tables.items():
        near = list(neighbour_partitions(inst, table))
        assert len({t for t, _ in near}) == len(near)  # each neighbour once
        for t, p in near:
            assert tables[t] == p  # the representative iter_partitions lists
        assert {_canonical(p, inst.n) for _, p in near} == swaps[_canonical(partition, inst.n)]
