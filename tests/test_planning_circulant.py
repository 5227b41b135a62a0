"""Circulant graphs on Z_N and the least-diameter search (paper App. A.6).

The exhaustive search is checked against an independent brute force (every
connection set closed under negation, diameters by bitset ball growth) for
every N <= 32 and every degree; larger axes against literature values and the
Moore-type bound.
"""

from __future__ import annotations

import pytest

from ocsplan.circulant import Circulant
from ocsplan.planning.circulant import (
    degree_problem,
    lattice_ball,
    least_diameter,
    moore_bound,
)


def brute_force(size: int) -> dict[int, int]:
    """Least diameter per degree over every connected circulant on Z_size."""
    full = (1 << size) - 1

    def rotate(x: int, s: int) -> int:
        return ((x << s) | (x >> (size - s))) & full

    reps = list(range(1, (size + 1) // 2))
    best: dict[int, int] = {}
    for mask in range(1 << len(reps)):
        chosen = [reps[i] for i in range(len(reps)) if mask >> i & 1]
        for involution in ([False, True] if size % 2 == 0 else [False]):
            offsets = chosen + [size - s for s in chosen] + ([size // 2] if involution else [])
            if not offsets:
                continue
            ball, radius = 1, 0
            while ball != full:
                grown = ball
                for s in offsets:
                    grown |= rotate(ball, s)
                if grown == ball:
                    break
                ball, radius = grown, radius + 1
            if ball == full:
                best[len(offsets)] = min(best.get(len(offsets), 1 << 30), radius)
    return best


@pytest.mark.parametrize("size", range(2, 33))
def test_exhaustive_search_matches_brute_force(size: int) -> None:
    reference = brute_force(size)
    for degree in range(1, size):
        if degree not in reference:
            assert degree_problem(size, degree) is not None
            with pytest.raises(ValueError):
                least_diameter(size, degree)
            continue
        choice = least_diameter(size, degree)
        assert choice.method in ("exhaustive", "complete")
        assert choice.exact
        assert choice.diameter == reference[degree], (size, degree)
        assert choice.graph.degree == degree and choice.graph.diameter == choice.diameter
        assert moore_bound(size, degree) <= choice.diameter


@pytest.mark.parametrize(
    ("size", "degree", "diameter"),
    [
        (8, 2, 4),  # a ring of N has diameter floor(N/2)
        (9, 2, 4),
        (8, 3, 2),  # the Wagner graph C8(1,4) (Moebius ladder), diameter 2
        (16, 15, 1),  # complete graph
        # Boesch and Wang (1985): the largest degree-4 circulant of diameter k has
        # 2k^2 + 2k + 1 nodes (13 for k = 2, 25 for k = 3, 41 for k = 4)
        (13, 4, 2),
        (14, 4, 3),
        (25, 4, 3),
        (26, 4, 4),
        (41, 4, 4),
    ],
)
def test_known_diameters(size: int, degree: int, diameter: int) -> None:
    assert least_diameter(size, degree).diameter == diameter


@pytest.mark.parametrize(
    ("size", "degree", "message"),
    [
        (9, 3, "odd degree 3 on Z_9"),
        (72, 1, "degree 1 on Z_72 is a matching"),
        (8, 8, "outside 1..7"),
        (8, 0, "outside 1..7"),
    ],
)
def test_degree_problems(size: int, degree: int, message: str) -> None:
    problem = degree_problem(size, degree)
    assert problem is not None and message in problem
    with pytest.raises(ValueError, match=message.split(" is ")[0]):
        least_diameter(size, degree)


def test_circulant_rejects_sets_not_closed_under_negation() -> None:
    with pytest.raises(ValueError, match="negative"):
        Circulant(8, (1, 3))
    graph = Circulant.from_representatives(8, [1, 4])
    assert graph.offsets == (1, 4, 7) and graph.degree == 3 and graph.name == "C8(1,4)"
    assert graph.ball_sizes == (1, 4, 8)
    assert not Circulant(8, (2, 6)).connected


def test_lattice_ball_by_hand() -> None:
    # Z^2 within L1 distance 2: 1 + 4 + 8 = 13; Z^3 within 1: 7
    assert lattice_ball(2, 2) == 13 and lattice_ball(3, 1) == 7 and lattice_ball(0, 5) == 1


@pytest.mark.parametrize(("size", "degree"), [(64, 14), (72, 20), (64, 8), (200, 12)])
def test_sampled_search_is_an_upper_bound_beside_the_moore_bound(size: int, degree: int) -> None:
    choice = least_diameter(size, degree, seed=3)
    assert choice.method == "sampled"
    assert choice.graph.degree == degree and choice.graph.diameter == choice.diameter
    assert choice.lower_bound == moore_bound(size, degree) <= choice.diameter
    assert least_diameter(size, degree, seed=3) == choice  # deterministic for a seed
    assert choice.exact == (choice.diameter == choice.lower_bound)


def test_sampled_search_reaches_the_bound_where_a_construction_is_known() -> None:
    # C64 at degree 14 (7 pairs): the lattice bound is 2; a diameter-2 set exists
    # (found once, checked here independently of the search)
    witness = Circulant.from_representatives(64, [12, 17, 20, 21, 22, 28, 30])
    assert witness.diameter == 2 and moore_bound(64, 14) == 2
    assert least_diameter(64, 14).diameter == 2
