"""The schedulable and diameter frontiers of an axis (paper Figure 11, DESIGN §4).

Schedulable frontier: the fewest tiling layers (phases of the coset schedules)
a degree allows, min over compositions of a into l parts of sum(2**k - 1).
Diameter frontier: the smallest diameter of any Cay((Z2)^a, S) with |S| = d,
i.e. the smallest covering radius of a binary linear code of length d and
codimension a. Exhaustive for a <= 5 (a basis can be taken to be the unit
masks, so only the d - a further generators are enumerated); for larger axes a
deterministic local search gives an upper bound, reported as such together
with the sphere-covering lower bound (:func:`diameter_frontier`, kept as the
exhaustive reference for small axes).

:func:`frontier_rows` is what ``ocsplan frontier`` prints: for m <= 9 it reads
the shipped covering table (:mod:`ocsplan.planning.covering`) and takes, per
degree, the better of the table's set and the best block fold.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations
from math import comb

from ..cayley import block_fold, cayley_distances, profile_degree
from ..errors import OcsplanError
from .covering import COVERING_MAX_BITS, covering_sets

__all__ = [
    "DiameterPoint",
    "FrontierRow",
    "diameter_frontier",
    "frontier_rows",
    "least_block_shape",
    "schedulable_frontier",
    "sphere_bound",
]

EXHAUSTIVE_BITS = 5


def schedulable_frontier(bits: int) -> list[tuple[int, int, tuple[int, ...]]]:
    """(layers l, smallest degree with l layers, a block-fold shape attaining it)."""
    out = []
    for count in range(1, bits + 1):
        base, extra = divmod(bits, count)
        shape = tuple([base + 1] * extra + [base] * (count - extra))
        out.append((count, profile_degree(shape), shape))
    return out


@dataclass(frozen=True)
class DiameterPoint:
    """Fewest phases (diameter) reachable at ``degree``; ``exact`` if proven optimal."""

    degree: int
    diameter: int
    generators: tuple[int, ...]
    exact: bool
    lower_bound: int


def _diameter(gens: tuple[int, ...], bits: int) -> int:
    dist = cayley_distances(gens, bits)
    return max(dist) if min(dist) >= 0 else 1 << 30


def sphere_bound(bits: int, degree: int) -> int:
    """Smallest R with sum_{i<=R} C(degree, i) >= 2**bits (a lower bound on the diameter)."""
    total, radius = 0, 0
    while True:
        total += comb(degree, radius)
        if total >= 1 << bits:
            return radius
        radius += 1


def _score(gens: list[int], bits: int) -> tuple[int, int]:
    """(diameter, labels at that distance): the local search's objective."""
    dist = cayley_distances(gens, bits)
    if min(dist) < 0:
        return (1 << 30, 0)
    worst = max(dist)
    return worst, dist.count(worst)


def _local_search(
    start: list[int], bits: int, others: list[int], target: int, rng: random.Random,
    restarts: int = 8, steps: int = 1500,
) -> list[int] | None:
    """Swap folds (keeping the unit masks) to get below diameter ``target``."""
    degree = len(start)
    for attempt in range(restarts):
        current = list(start) if attempt == 0 else [
            *start[:bits], *rng.sample(others, degree - bits)
        ]
        score = _score(current, bits)
        for _ in range(steps):
            if score[0] < target:
                return current
            pos = rng.randrange(bits, degree)
            candidate = rng.choice(others)
            if candidate in current:
                continue
            trial = list(current)
            trial[pos] = candidate
            trial_score = _score(trial, bits)
            if trial_score <= score:
                current, score = trial, trial_score
        if score[0] < target:
            return current
    return None


@lru_cache(maxsize=16)
def diameter_frontier(bits: int, seed: int = 0) -> tuple[DiameterPoint, ...]:
    """One point per degree from ``bits`` (the cube) to ``2**bits - 1`` (complete)."""
    units = tuple(1 << b for b in range(bits))
    others = [m for m in range(1, 1 << bits) if m & (m - 1)]
    top = (1 << bits) - 1
    points: list[DiameterPoint] = []
    if bits <= EXHAUSTIVE_BITS:
        # diameter is non-increasing in the degree: search each degree only as far
        # as needed to beat the previous best
        best_gens = units
        best = _diameter(units, bits)
        for degree in range(bits, top + 1):
            extra = degree - bits
            floor = sphere_bound(bits, degree)
            if best > floor:
                for chosen in combinations(others, extra):
                    gens = units + chosen
                    d = _diameter(gens, bits)
                    if d < best:
                        best, best_gens = d, gens
                        if best == floor:
                            break
            if len(best_gens) < degree:
                pad = [m for m in others if m not in best_gens][: degree - len(best_gens)]
                best_gens = best_gens + tuple(pad)
            points.append(DiameterPoint(degree, best, best_gens, True, floor))
        return tuple(points)
    rng = random.Random(seed)
    current = list(units)
    best = _diameter(tuple(current), bits)
    for degree in range(bits, top + 1):
        floor = sphere_bound(bits, degree)
        if degree > bits:
            # start from the folded cube's antipodal mask, then improve by swaps
            fresh = top if top not in current else next(m for m in others if m not in current)
            current.append(fresh)
            best = _diameter(tuple(current), bits)
            while best > floor:
                found = _local_search(current, bits, others, best, rng)
                if found is None:
                    break
                current = found
                best = _diameter(tuple(current), bits)
        points.append(DiameterPoint(degree, best, tuple(current), best <= floor, floor))
    return tuple(points)


@dataclass(frozen=True)
class FrontierRow:
    """One degree of an axis's frontier: the least known diameter and how it is known.

    ``degrees`` is a range when a plateau above the table (diameter 2 up to the
    complete graph) is folded into one row. ``coset_layers`` and ``block_shape``
    give the schedulable frontier: the fewest tiling layers of a block fold at
    this degree and a shape attaining it.
    """

    degree: int
    last_degree: int
    diameter: int
    proof: str
    lower_bound: int
    generators: tuple[int, ...]
    source: str  # "table" or "block fold"
    coset_layers: int
    block_shape: tuple[int, ...]


def least_block_shape(bits: int, degree: int) -> tuple[int, ...]:
    """The block fold with the fewest layers (its diameter) whose degree is at most ``degree``."""
    for count in range(1, bits + 1):
        base, extra = divmod(bits, count)
        shape = tuple([base + 1] * extra + [base] * (count - extra))
        if profile_degree(shape) <= degree:
            return shape
    return tuple([1] * bits)


def frontier_rows(bits: int, max_degree: int | None = None) -> list[FrontierRow]:
    """Diameter and schedulable frontier of an axis of ``bits`` bits from the shipped table.

    Per degree the better of the table's set and the best block fold; the work is
    bounded by ``max_degree`` (degrees above the table are one plateau row).
    """
    if not 1 <= bits <= COVERING_MAX_BITS:
        raise OcsplanError(f"frontier: bits must be between 1 and {COVERING_MAX_BITS}, got {bits}")
    top = (1 << bits) - 1 if max_degree is None else min(max_degree, (1 << bits) - 1)
    table = {s.degree: s for s in covering_sets(bits)}
    rows: list[FrontierRow] = []
    degree = bits
    while degree <= top:
        shape = least_block_shape(bits, degree)
        entry = table.get(degree)
        if entry is not None and entry.diameter <= len(shape):
            rows.append(FrontierRow(degree, degree, entry.diameter, entry.proof, entry.lower_bound,
                                    entry.generators, "table", len(shape), shape))
            degree += 1
            continue
        gens = tuple(sorted(g for layer in block_fold(shape) for g in layer))
        last = degree
        if len(shape) == 2 and degree < (1 << bits) - 1:
            # the plateau: 1 + d < 2**bits labels within one hop, so the diameter stays 2
            last = min(top, (1 << bits) - 2)
        # diameter 2 below the complete graph and 1 at it are least by the sphere bound;
        # a deeper block fold only stands in where the table has nothing better (open)
        proof = "sphere" if len(shape) <= 2 else "open"
        lower = len(shape) if proof == "sphere" else (entry.lower_bound if entry is not None else 1)
        rows.append(FrontierRow(degree, last, len(shape), proof, lower, gens, "block fold", len(shape), shape))
        degree = last + 1
    return rows
