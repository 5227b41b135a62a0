"""Where an axis's sub-blocks go: placement tables shared by every search of the heuristic.

An axis of shape (4, 3, 2) on 9 bits can put its sub-blocks in 1,260 ways; the heuristic
scores each by the folds other axes already pay for and by how many other meshes' blocks
could reuse them. The tables here depend only on the bits and the part sizes, so they
are built once (cached) and read by every partition's search: the placements in
enumeration order, the distinct sub-blocks with their masks and fold masks, and a beam
over the parts for shapes with too many placements to try all.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations, islice

import numpy as np
import numpy.typing as npt

from ..cayley import bits_of, fold_masks, mask_of, sub_masks
from .space import Groups

__all__ = [
    "DIGIT",
    "PLACEMENT_BEAM",
    "SCALE",
    "PlacementTable",
    "beam_placement",
    "fold_hits",
    "folds_inside",
    "installed_folds",
    "lazy_greedy",
    "partitions_into",
    "placement_count",
    "placement_list",
    "placement_table",
    "profile_layers",
    "profile_members",
    "subset_table",
]

PLACEMENT_BEAM = 8  # partial placements kept per part by beam_placement

@dataclass(frozen=True)
class PlacementTable:
    parts: tuple[int, ...]
    placements: tuple[list[tuple[int, ...]], ...]  # in enumeration order
    members: npt.NDArray[np.int64]  # per placement, its sub-blocks' indices in the rows below
    masks: npt.NDArray[np.int64]  # per distinct sub-block, its mask
    folds: npt.NDArray[np.int64]  # per distinct sub-block, its fold masks (padded with -1)


@lru_cache(maxsize=4096)
def placement_table(block: tuple[int, ...], parts: tuple[int, ...]) -> PlacementTable:
    """Every placement of sub-blocks of these sizes on ``block`` and its distinct sub-blocks."""
    placements = placement_list(block, parts)
    index: dict[tuple[int, ...], int] = {}
    rows = [[index.setdefault(g, len(index)) for g in groups] for groups in placements]
    subsets = list(index)
    width = max(((1 << len(sub)) - len(sub) - 1 for sub in subsets), default=0)
    folds = np.full((len(subsets), width), -1, dtype=np.int64)
    for r, sub in enumerate(subsets):
        masks = fold_masks(sub)
        folds[r, : len(masks)] = masks
    members = np.array(rows, dtype=np.int64).reshape(len(rows), len(parts))
    table = PlacementTable(parts, placements, members,
                            np.array([mask_of(sub) for sub in subsets], dtype=np.int64), folds)
    for array in (table.members, table.masks, table.folds):
        array.flags.writeable = False  # shared by every search through the cache
    return table


@lru_cache(maxsize=4096)
def subset_table(
    block: tuple[int, ...], size: int
) -> tuple[tuple[tuple[int, ...], ...], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The sub-blocks of ``size`` bits of ``block`` in enumeration order, their masks and
    (one row each) their fold masks."""
    subsets = tuple(combinations(block, size))
    # local masks 0 .. 2**size - 1 expand onto each subset's bits, in ascending order
    # (expansion keeps the order), so row r of ``spread`` lists every sub-mask of subset r
    local = np.arange(1 << size, dtype=np.int64)
    digits = (local[:, None] >> np.arange(size, dtype=np.int64)[None, :]) & 1  # (2**size, size)
    weights = np.left_shift(1, np.sort(np.array(subsets, dtype=np.int64).reshape(len(subsets), size), axis=1))
    spread = weights @ digits.T  # (subsets, 2**size)
    masks = spread[:, -1].copy()
    folds = np.ascontiguousarray(spread[:, np.bitwise_count(local) >= 2])
    masks.flags.writeable = folds.flags.writeable = False
    return subsets, masks, folds


def fold_hits(folds: npt.NDArray[np.int64], taken: frozenset[int]) -> npt.NDArray[np.int64]:
    """Per row of fold masks, how many are in ``taken`` (padding -1 never is)."""
    if not taken:
        return np.zeros(len(folds), dtype=np.int64)
    ordered = np.array(sorted(taken), dtype=np.int64)
    found = ordered[np.minimum(np.searchsorted(ordered, folds), len(ordered) - 1)] == folds
    counts: npt.NDArray[np.int64] = found.sum(axis=1)
    return counts


def folds_inside(mask: int, taken: frozenset[int]) -> int:
    """How many fold masks (weight >= 2) of ``taken`` lie inside ``mask``: the count
    :func:`fold_hits` makes for one sub-block, without listing its 2**size sub-masks."""
    if len(taken) >= 1 << mask.bit_count():
        return sum(1 for m in fold_masks(bits_of(mask)) if m in taken)
    return sum(1 for m in taken if m & mask == m and m & (m - 1))


SCALE = 1 << 20  # above any reuse total: (shared, reuse) compared as shared * SCALE + reuse
DIGIT = 5  # bits per piece size when rows of sizes are coded as integers (an axis has <= 20 bits: MAX_WORLD)


def placement_count(bits: int, parts: list[int]) -> int:
    """How many ways to place sub-blocks of these sizes (largest first) on ``bits`` bits."""
    count, left = 1, bits
    for size in parts:
        count *= math.comb(left, size)
        left -= size
    for size in set(parts):
        count //= math.factorial(parts.count(size))
    return count


def beam_placement(
    tables: list[tuple[tuple[tuple[int, ...], ...], npt.NDArray[np.int64], npt.NDArray[np.int64]]],
    width: int = PLACEMENT_BEAM,
) -> list[tuple[int, ...]]:
    """Sub-blocks part by part (per part: its sub-blocks, masks and scores), keeping the
    ``width`` best partial placements by total score, each extended by its ``width`` best
    sub-blocks: the second part may pay off only next to a first part the greedy ranks
    equal to others (a K16 that leaves a K8 on the bits another mesh's K8 holds)."""
    states: list[tuple[int, int, list[tuple[int, ...]]]] = [(0, 0, [])]  # score, used bits, sub-blocks
    for subsets, masks, keys in tables:
        # the sub-blocks best first (ties in table order) once per part: a state's best free ones
        # are the first free ones of this ranking (the stable sort of the free ones alone)
        order = np.argsort(-keys, kind="stable")
        ranked = list(zip(masks[order].tolist(), keys[order].tolist(), order.tolist(), strict=True))
        grown: dict[frozenset[tuple[int, ...]], tuple[int, int, list[tuple[int, ...]]]] = {}
        for score, used, chosen in states:
            taken = 0
            for mask, key, i in ranked:
                if mask & used:
                    continue
                step = (score + key, used | mask, [*chosen, subsets[i]])
                grown.setdefault(frozenset(step[2]), step)  # equal parts found in either order
                taken += 1
                if taken == width:
                    break
        states = sorted(grown.values(), key=lambda st: -st[0])[:width]  # stable: ties keep order
    return states[0][2]


@lru_cache(maxsize=65536)
def profile_layers(groups: Groups) -> tuple[int, ...]:
    """The masks of a profile's layers of two bits or more."""
    return tuple(mask_of(g) for g in groups if len(g) >= 2)


@lru_cache(maxsize=65536)
def installed_folds(groups: Groups) -> frozenset[int]:
    """The fold masks a profile installs (weight >= 2 sub-masks of its layers)."""
    return frozenset(m for g in groups if len(g) >= 2 for m in fold_masks(g))


@lru_cache(maxsize=65536)
def profile_members(groups: Groups) -> tuple[int, ...]:
    """The masks a profile installs (every sub-mask of every layer), ascending."""
    return tuple(sorted(m for g in groups for m in sub_masks(g)))


@lru_cache(maxsize=4096)
def placement_list(bits: tuple[int, ...], parts: tuple[int, ...]) -> tuple[list[tuple[int, ...]], ...]:
    """:func:`partitions_into`, remembered (the exact placement enumerates it per state)."""
    return tuple(partitions_into(list(bits), list(parts)))


def partitions_into(
    bits: list[int], parts: list[int], floor: int = -1
) -> Iterator[list[tuple[int, ...]]]:
    """Disjoint subsets of ``bits`` with the given sizes (non-increasing). A subset
    that follows one of the same size starts later in ``bits`` (index > ``floor``),
    so each placement appears once."""
    if not parts:
        yield []
        return
    size, rest = parts[0], parts[1:]
    for first in range(floor + 1, len(bits) - size + 1):
        for others in combinations(bits[first + 1 :], size - 1):
            subset = (bits[first], *others)
            remaining = [b for b in bits if b not in subset]
            # bits[:first] stay at the front of remaining: an equal-size successor
            # must start at index >= first there
            below = first - 1 if rest and rest[0] == size else -1
            yield from ([subset, *tail] for tail in partitions_into(remaining, rest, below))


def lazy_greedy(
    block: Sequence[int], parts: list[int], taken: frozenset[int], others: list[int], limit: int,
) -> list[tuple[int, ...]]:
    """The greedy placement without tables, one sub-block at a time, among the first
    ``limit`` sub-blocks of each size (huge axes: bounded time): most folds already
    ``taken`` inside, then most ``others`` (masks of other meshes' axes) containing it."""
    remaining = list(block)
    chosen: list[tuple[int, ...]] = []
    for size in parts:
        best: tuple[tuple[int, int], tuple[int, ...]] | None = None
        # with nothing taken and no other meshes every key is (0, 0): the first one wins
        for subset in islice(combinations(remaining, size), limit if taken or others else 1):
            mask = mask_of(subset)
            key = (folds_inside(mask, taken), sum(1 for om in others if om & mask == mask))
            if best is None or key > best[0]:
                best = (key, subset)
        assert best is not None
        chosen.append(best[1])
        remaining = [b for b in remaining if b not in best[1]]
    return chosen
