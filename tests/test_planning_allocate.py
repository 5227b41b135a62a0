"""The multiplicity allocator (planning/allocate.py) against brute forces written here."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from ocsplan.planning.allocate import Allocator, allocate, lower_bound, undominated


def _random_problem(seed: int) -> tuple[list[list[int]], list[int], list[list[tuple[float, float, int]]]]:
    rng = random.Random(seed)
    gens = rng.randint(1, 6)
    sets = [sorted(rng.sample(range(gens), rng.randint(1, gens))) for _ in range(rng.randint(1, 4))]
    weights = [rng.choice((1, 1, 2)) for _ in range(gens)]
    options = [
        [(rng.choice((0.0, 1.0, 2.0, 3.0)), rng.choice((0.0, 2.0, 4.0, 8.0)), rng.randrange(len(sets)))
         for _ in range(rng.randint(1, 5))]
        for _ in range(rng.randint(1, 4))
    ]
    return sets, weights, options


def _objective(sets: list[list[int]], options: list[list[tuple[float, float, int]]], levels: list[int]) -> float:
    eff = [min(levels[g] for g in members) for members in sets]
    return sum(min(lat + vol / eff[s] for lat, vol, s in opts) for opts in options)


@pytest.mark.parametrize("seed", range(60))
def test_affordable_is_the_highest_level_within_the_ports(seed: int) -> None:
    sets, weights, options = _random_problem(seed)
    rng = random.Random(seed + 1000)
    level = np.array([rng.randint(1, 4) for _ in weights], dtype=np.int64)
    eff = np.array([min(level[g] for g in members) for members in sets], dtype=np.int64)
    spare = rng.randint(0, 9) if seed < 40 else rng.randint(10, 4096)  # up to MAX_PORTS
    tops = Allocator(sets, weights, options).affordable(level, eff, spare)
    for s, members in enumerate(sets):
        def cost(t: int, members: list[int] = members) -> int:
            return sum(weights[g] * max(0, t - int(level[g])) for g in members)
        # brute force: walk up from the set's level while the lift still fits
        top = int(eff[s])
        while cost(top + 1) <= spare:
            top += 1
        assert tops[s] == top


@pytest.mark.parametrize("seed", range(40))
def test_undominated_keeps_every_minimum_and_its_first_attainer(seed: int) -> None:
    rng = random.Random(seed)
    opts = [(rng.choice((1.0, 2.0, 3.0)), rng.choice((0.0, 4.0, 8.0)), rng.randrange(2)) for _ in range(8)]
    kept = undominated(opts)
    assert set(kept) <= set(opts)
    for eff in itertools.product(range(1, 5), repeat=2):
        full = [lat + vol / eff[s] for lat, vol, s in opts]
        pruned = [lat + vol / eff[s] for lat, vol, s in kept]
        assert min(pruned) == min(full)
        assert kept[pruned.index(min(pruned))][2] == opts[full.index(min(full))][2]


@pytest.mark.parametrize("seed", range(60))
@pytest.mark.parametrize("effort", [-1, 0, 1, 2])
def test_allocation_fits_and_prices_its_levels(seed: int, effort: int) -> None:
    sets, weights, options = _random_problem(seed)
    spare = random.Random(seed).randint(0, 6)
    objective, levels, eff = allocate(sets, weights, options, spare, effort)
    assert all(lv >= 1 for lv in levels)
    assert sum(w * (lv - 1) for w, lv in zip(weights, levels, strict=True)) <= spare
    assert eff == [min(levels[g] for g in members) for members in sets]
    assert objective == pytest.approx(_objective(sets, options, levels), rel=1e-12)
    # never worse than every generator at one circuit, never better than the optimum
    assert objective <= _objective(sets, options, [1] * len(weights)) * (1 + 1e-12)
    best = min(
        _objective(sets, options, list(levels_))
        for levels_ in itertools.product(range(1, spare + 2), repeat=len(weights))
        if sum(w * (lv - 1) for w, lv in zip(weights, levels_, strict=True)) <= spare
    )
    assert objective >= best * (1 - 1e-12)


def _optimum(
    sets: list[list[int]], weights: list[int], options: list[list[tuple[float, float, int]]], spare: int
) -> float:
    """Brute force: the best objective over every level vector within the ports."""
    return min(
        _objective(sets, options, list(levels))
        for levels in itertools.product(range(1, spare + 2), repeat=len(weights))
        if sum(w * (lv - 1) for w, lv in zip(weights, levels, strict=True)) <= spare
    )


@pytest.mark.parametrize("seed", range(60))
def test_lower_bound_is_below_the_optimum(seed: int) -> None:
    sets, weights, options = _random_problem(seed)
    spare = random.Random(seed).randint(0, 6)
    bound = lower_bound(sets, weights, options, spare)
    assert bound <= _optimum(sets, weights, options, spare) * (1 + 1e-12)
    for effort in (-1, 0, 1, 2):  # so below every allocation too
        assert bound <= allocate(sets, weights, options, spare, effort)[0] * (1 + 1e-12)


@pytest.mark.parametrize("seed", range(20))
def test_lower_bound_is_exact_without_volume(seed: int) -> None:
    # no volume term: every allocation costs the latencies alone, and so does the bound
    sets, weights, options = _random_problem(seed)
    options = [[(lat, 0.0, s) for lat, _, s in opts] for opts in options]
    assert lower_bound(sets, weights, options, 5) == _optimum(sets, weights, options, 5)


def test_lower_bound_by_hand() -> None:
    # set 0 = {g0, g1} (3 ports per level), set 1 = {g1} (2 per level), 7 ports spare:
    # set 0 reaches at most 1 + 7 // 3 = 3, set 1 at most 1 + 7 // 2 = 4
    sets, weights = [[0, 1], [1]], [1, 2]
    options = [[(1.0, 6.0, 0)], [(2.0, 8.0, 1), (0.5, 12.0, 0)]]
    assert lower_bound(sets, weights, options, 7) == pytest.approx((1 + 6 / 3) + min(2 + 8 / 4, 0.5 + 12 / 3))
