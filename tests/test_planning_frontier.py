from __future__ import annotations

from itertools import combinations

import pytest

from ocsplan.cayley import Topology
from ocsplan.planning.frontier import diameter_frontier, schedulable_frontier, sphere_bound


@pytest.mark.parametrize(
    ("bits", "expected"),
    [  # min over compositions of a into l parts of sum(2^k - 1), by hand
        (3, [(1, 7), (2, 4), (3, 3)]),
        (6, [(1, 63), (2, 14), (3, 9), (4, 8), (5, 7), (6, 6)]),
    ],
)
def test_schedulable_frontier(bits: int, expected: list[tuple[int, int]]) -> None:
    assert [(layers, degree) for layers, degree, _ in schedulable_frontier(bits)] == expected


def _reference(bits: int) -> dict[int, int]:
    """Every generator set of every size (no symmetry reduction): min diameter per degree."""
    masks = list(range(1, 1 << bits))
    best: dict[int, int] = {}
    for degree in range(bits, len(masks) + 1):
        value = 1 << 30
        for gens in combinations(masks, degree):
            topo = Topology(bits, frozenset(gens))
            if topo.connected:
                value = min(value, topo.diameter)
        best[degree] = value
    return best


@pytest.mark.parametrize("bits", [2, 3])
def test_diameter_frontier_against_all_sets(bits: int) -> None:
    ref = _reference(bits)
    assert {p.degree: p.diameter for p in diameter_frontier(bits)} == ref


def test_diameter_frontier_four_bits_spot_checks() -> None:
    points = {p.degree: p for p in diameter_frontier(4)}
    # Q4 has diameter 4; Q4 + 1111 (degree 5) reaches 2 (Table 4); only K16 reaches 1
    assert points[4].diameter == 4
    assert points[5].diameter == 2 and points[5].exact
    assert points[14].diameter == 2 and points[15].diameter == 1
    for p in points.values():
        topo = Topology(4, frozenset(p.generators))
        assert topo.degree == p.degree and topo.diameter == p.diameter


def test_diameter_frontier_covering_codes() -> None:
    # Covering-code tables (Cohen, Honkala, Litsyn, Lobstein, "Covering Codes", l(m, 2)):
    # codimension 5 reaches covering radius 2 at length 9; the folded cube FQ5 has radius 3.
    five = {p.degree: p.diameter for p in diameter_frontier(5)}
    assert five[6] == 3 and five[8] == 3 and five[9] == 2 and five[31] == 1


def test_diameter_frontier_six_bits_matches_paper() -> None:
    # Paper Figure 11: "on the axis of size 64, diameter 2 is reached at degree 13,
    # but two coset layers only at degree 14" (l(6, 2) = 13).
    six = {p.degree: p for p in diameter_frontier(6)}
    assert six[13].diameter == 2
    assert Topology(6, frozenset(six[13].generators)).diameter == 2
    assert min(d for layers, d, _ in schedulable_frontier(6) if layers == 2) == 14
    assert sphere_bound(6, 12) == 2  # the sphere bound alone cannot exclude degree 12
