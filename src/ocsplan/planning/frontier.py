"""The schedulable and diameter frontiers of an axis (paper Figure 11, DESIGN §4).

Schedulable frontier: the fewest tiling layers (phases of the coset schedules)
a degree allows, min over compositions of a into l parts of sum(2**k - 1).
Diameter frontier: the smallest diameter of any Cay((Z2)^a, S) with |S| = d,
i.e. the smallest covering radius of a binary linear code of length d and
codimension a. Exhaustive for a <= 5 (a basis can be taken to be the unit
masks, so only the d - a further generators are enumerated); for larger axes a
deterministic local search gives an upper bound, reported as such together
with the sphere-covering lower bound.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations
from math import comb

from ..cayley import profile_degree

__all__ = ["DiameterPoint", "diameter_frontier", "schedulable_frontier", "sphere_bound"]

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
    size = 1 << bits
    seen = 1  # bitset of reached labels
    frontier = [0]
    depth = 0
    full = (1 << size) - 1
    while seen != full:
        nxt = []
        for x in frontier:
            for g in gens:
                y = x ^ g
                if not seen >> y & 1:
                    seen |= 1 << y
                    nxt.append(y)
        if not nxt:
            return 1 << 30
        frontier = nxt
        depth += 1
    return depth


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
    size = 1 << bits
    dist = [-1] * size
    dist[0] = 0
    frontier = [0]
    while frontier:
        nxt = []
        for x in frontier:
            for g in gens:
                y = x ^ g
                if dist[y] < 0:
                    dist[y] = dist[x] + 1
                    nxt.append(y)
        frontier = nxt
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
