"""Placement tables (planning/placement.py) against enumerations written here."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from ocsplan.cayley import fold_masks, mask_of
from ocsplan.planning.placement import (
    SCALE,
    beam_placement,
    fold_hits,
    folds_inside,
    placement_count,
    placement_list,
    placement_table,
    subset_table,
)


def _brute_placements(bits: tuple[int, ...], parts: tuple[int, ...]) -> set[frozenset[tuple[int, ...]]]:
    """Every way to put disjoint sub-blocks of these sizes on ``bits`` (as unordered sets)."""
    out = set()
    for perm in itertools.permutations(bits):
        groups, start = [], 0
        for size in parts:
            groups.append(tuple(sorted(perm[start:start + size], key=bits.index)))
            start += size
        out.add(frozenset(groups))
    return out


@pytest.mark.parametrize(("bits", "parts"), [
    ((0, 1, 2, 3), (2,)), ((0, 1, 2, 3), (2, 2)), ((5, 3, 2, 1, 0), (3, 2)), ((6, 5, 4, 3, 2, 1), (2, 2, 2)),
    ((7, 6, 5, 4, 3, 2, 1), (3, 2, 2)), ((4, 3, 2, 1, 0), ()),
])
def test_placements_are_each_placement_once(bits: tuple[int, ...], parts: tuple[int, ...]) -> None:
    listed = placement_list(bits, parts)
    as_sets = [frozenset(groups) for groups in listed]
    assert len(as_sets) == len(set(as_sets)) == placement_count(len(bits), list(parts))
    assert set(as_sets) == _brute_placements(bits, parts)
    table = placement_table(bits, parts)
    for row, groups in zip(table.members, listed, strict=True):
        assert [mask_of(g) for g in groups] == [int(table.masks[i]) for i in row]


@pytest.mark.parametrize("seed", range(20))
def test_fold_hits_count_the_taken_folds(seed: int) -> None:
    rng = random.Random(seed)
    block = tuple(sorted(rng.sample(range(8), 5), reverse=True))
    subsets, _, folds = subset_table(block, 3)
    taken = frozenset(rng.sample([m for sub in subsets for m in fold_masks(sub)], rng.randint(0, 12)))
    hits = fold_hits(folds, taken)
    assert list(hits) == [sum(1 for m in fold_masks(sub) if m in taken) for sub in subsets]


@pytest.mark.parametrize("seed", range(20))
def test_beam_placement_is_best_on_small_axes(seed: int) -> None:
    # with a beam wider than every choice it is exhaustive: the best total score
    rng = random.Random(seed)
    block, parts = (6, 5, 4, 3, 2, 1, 0), (3, 2, 2)
    tables = []
    scores: dict[tuple[int, ...], int] = {}  # a sub-block scores the same in every part (as in the planner)
    for size in parts:
        subsets, masks, _ = subset_table(block, size)
        for sub in subsets:
            scores.setdefault(sub, rng.randint(0, 3) * SCALE + rng.randint(0, 2))
        tables.append((subsets, masks, np.array([scores[sub] for sub in subsets], dtype=np.int64)))
    best = max(sum(scores[g] for g in groups) for groups in placement_list(block, parts))
    found = beam_placement(tables, width=10**6)  # exhaustive
    assert sum(scores[g] for g in found) == best
    assert len({b for g in found for b in g}) == sum(parts)


@pytest.mark.parametrize(("block", "size"), [
    ((4, 3, 2, 1, 0), 1), ((4, 3, 2, 1, 0), 3), ((9, 7, 4, 3, 1, 0), 4), ((19, 15, 12, 8, 7, 3, 2), 6),
    (tuple(range(19, 9, -1)), 5), ((5, 2), 2),
])
def test_subset_table_against_the_masks_listed_here(block: tuple[int, ...], size: int) -> None:
    subsets, masks, folds = subset_table.__wrapped__(block, size)
    assert subsets == tuple(itertools.combinations(block, size))
    assert masks.tolist() == [sum(1 << b for b in sub) for sub in subsets]
    for sub, row in zip(subsets, folds.tolist(), strict=True):
        listed = sorted(sum(1 << b for b in pick)
                        for k in range(2, size + 1) for pick in itertools.combinations(sub, k))
        assert row == listed


@pytest.mark.parametrize("seed", range(30))
def test_folds_inside_counts_the_taken_folds(seed: int) -> None:
    rng = random.Random(seed)
    mask = rng.randrange(1 << 10)
    pool = [m for m in range(1 << 10) if m & (m - 1)]
    taken = frozenset(rng.sample(pool, rng.choice([0, 2, 40, 600])))  # fewer and more than the sub-masks
    inside = [b for b in range(10) if mask >> b & 1]
    assert folds_inside(mask, taken) == sum(1 for m in fold_masks(inside) if m in taken)
