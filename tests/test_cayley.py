from __future__ import annotations

import math
import random
from itertools import combinations

import pytest

from ocsplan.cayley import (
    Topology,
    axis_generators,
    block_distance_counts,
    block_fold_profile,
    cayley_distances,
    compress,
    coset_bases,
    expand,
    fold_masks,
    fold_name,
    gf2_rank,
    group_distances,
    is_tiling,
    mask_to_str,
    min_tilings,
    profile_degree,
    str_to_mask,
    sub_masks,
    sumset,
    topology_name,
)
from ocsplan.planning.space import integer_partitions


def bfs_distances(bits: int, gens: list[int]) -> list[int]:
    """Independent reference: distances by repeated sumsets of the generator set."""
    dist = {0: 0}
    frontier = {0}
    k = 0
    while frontier:
        k += 1
        frontier = {x ^ g for x in frontier for g in gens} - dist.keys()
        for x in frontier:
            dist[x] = k
    return [dist.get(x, -1) for x in range(1 << bits)]


def sumset_distances(size: int, gens: list[int], group: str) -> list[int]:
    """Independent reference on either group: repeated sumsets of the generator set."""
    dist = {0: 0}
    frontier = {0}
    k = 0
    while frontier:
        k += 1
        frontier = {x ^ g if group == "xor" else (x + g) % size for x in frontier for g in gens} - dist.keys()
        for x in frontier:
            dist[x] = k
    return [dist.get(x, -1) for x in range(size)]


# (labels, generators per row, rows): small ones take the plain loop, large ones the numpy frontier
GROUP_CASES = [(size, degree, rows, group) for group in ("xor", "add")
               for size, degree, rows in ((16, 3, 1), (64, 4, 3), (2048, 5, 1), (512, 4, 6))]


@pytest.mark.parametrize(("size", "degree", "rows", "group"), GROUP_CASES)
def test_group_distances_against_sumsets(size: int, degree: int, rows: int, group: str) -> None:
    import numpy as np

    rng = random.Random(size * 31 + degree + rows)
    sets = []
    for r in range(rows):
        gens = rng.sample(range(1, size), degree)
        if group == "add":  # closed under negation, as a circulant's
            gens = sorted({g for s in gens for g in (s, size - s)})[:degree]
        if r == 0 and group == "xor":  # a subgroup: labels outside it stay unreached
            gens = [1 << b for b in range(degree)]
        sets.append(gens)
    width = max(len(g) for g in sets)
    padded = [g + [g[0]] * (width - len(g)) for g in sets]  # a repeated generator changes nothing
    got = group_distances(size, np.array(padded, dtype=np.int64), group)
    assert got.shape == (rows, size)
    for r, gens in enumerate(sets):
        assert got[r].tolist() == sumset_distances(size, gens, group)
    if group == "xor":
        assert got[0].tolist().count(-1) == size - (1 << degree)


def test_masks() -> None:
    assert mask_to_str(0b0011, 4) == "0011"
    assert str_to_mask("1100") == 12
    assert sub_masks([1, 0]) == [1, 2, 3]
    assert fold_masks([2, 1, 0]) == [3, 5, 6, 7]
    block = [7, 5, 2]
    assert compress(0b10100000, block) == 0b110
    assert expand(0b110, block) == 0b10100000
    with pytest.raises(ValueError):
        compress(0b1000, block)


@pytest.mark.parametrize(
    ("sizes", "name", "degree"),
    [  # paper Table 2 and Table 6
        ((3, 3), "Q6[3,3] = K8□K8", 14),
        ((2,), "K4", 3),
        ((1, 1, 1, 1, 1), "Q5", 5),
        ((3, 2), "Q5[3,2] = K8□K4", 10),
        ((2, 2), "Q4[2,2] = K4□K4", 6),
        ((3, 1), "Q4[3,1] = K8□K2", 8),
    ],
)
def test_fold_names_and_degrees(sizes: tuple[int, ...], name: str, degree: int) -> None:
    assert fold_name(sizes) == name
    assert profile_degree(sizes) == degree
    topo = Topology.from_profile(sizes)
    assert topo.name == name and topo.degree == degree
    # a block fold of l layers has diameter l (Table 2)
    assert topo.diameter == len(sizes)


@pytest.mark.parametrize(
    ("bits", "folds", "name", "degree", "diameter"),
    [  # paper Table 4 topologies (deg, diam), Figure 9
        (3, [], "Q3", 3, 3),
        (3, [0b111], "FQ3", 4, 2),
        (4, [], "Q4", 4, 4),
        (4, [0b1100], "Q4[2,1,1] = K4□K2□K2", 5, 3),
        (4, [0b1111], "FQ4", 5, 2),
        (4, [0b0011, 0b1100], "Q4[2,2] = K4□K4", 6, 2),
        (4, [0b0110], "Q4[2,1,1] = K4□K2□K2", 5, 3),
        (4, [0b0111, 0b1011], "Q4+0111+1011", 6, 3),  # 1101 and 1110 need three hops
    ],
)
def test_topologies(bits: int, folds: list[int], name: str, degree: int, diameter: int) -> None:
    topo = Topology.with_folds(bits, folds)
    assert topo.name == name
    assert topo.degree == degree
    assert topo.diameter == diameter
    assert list(topo.distances) == bfs_distances(bits, sorted(topo.gens))


@pytest.mark.parametrize("bits", [1, 2, 3, 4])
def test_balls_against_reference(bits: int) -> None:
    for extra in range(0, 3):
        others = [m for m in range(1, 1 << bits) if m & (m - 1)]
        for folds in combinations(others, min(extra, len(others))):
            topo = Topology.with_folds(bits, folds)
            dist = bfs_distances(bits, sorted(topo.gens))
            expected = [sum(1 for d in dist if d <= k) for k in range(max(dist) + 1)]
            assert list(topo.ball_sizes) == expected


def test_block_fold_detection() -> None:
    assert block_fold_profile(Topology.from_profile((3, 2, 1)).gens, 6) == (3, 2, 1)
    assert block_fold_profile({1, 2, 4, 7}, 3) is None  # FQ3 is not a block fold
    assert block_fold_profile({1, 2, 3, 4}, 3) == (2, 1)
    assert topology_name({1, 2, 4, 8, 16, 3, 12}, 5) == "Q5[2,2,1] = K4□K4□K2"


@pytest.mark.parametrize(
    ("bits", "folds", "layers"),
    [  # App. A.3: coset-factored needs l layers; Q4+1111 tiles into 3 (Table 4)
        (3, [0b111], 2),
        (4, [0b1111], 3),
        (4, [0b1100], 3),
        (4, [], 4),
        (6, [m for m in Topology.from_profile((3, 3)).gens if m & (m - 1)], 2),
    ],
)
def test_fewest_layer_tilings(bits: int, folds: list[int], layers: int) -> None:
    topo = Topology.with_folds(bits, folds)
    assert topo.tilings
    for tiling in topo.tilings:
        assert len(tiling) == layers
        assert is_tiling(tiling, bits)
        assert {g for layer in tiling for g in layer} <= topo.gens
    # no tiling with fewer layers exists: brute force over layer sets for small cases
    if bits <= 4:
        gens = sorted(topo.gens)
        for count in range(1, layers):
            assert not _any_tiling(gens, bits, count)


def _any_tiling(gens: list[int], bits: int, count: int) -> bool:
    """Reference: try every assignment of generators to ``count`` layers (or unused)."""
    from itertools import product

    for labels in product(range(count + 1), repeat=len(gens)):
        layers = [[g for g, lab in zip(gens, labels, strict=True) if lab == j] for j in range(count)]
        if all(layers) and is_tiling(layers, bits):
            return True
    return False


def test_sumset_detects_overlap() -> None:
    assert sumset([(1,), (2,)]) == [0, 1, 2, 3]
    assert sumset([(1,), (1,)]) is None
    assert not is_tiling([(1, 2)], 2)  # {0,1,2} has 3 elements, not 4


def test_integer_partitions() -> None:
    assert integer_partitions(4) == ((4,), (3, 1), (2, 2), (2, 1, 1), (1, 1, 1, 1))
    assert [len(integer_partitions(a)) for a in range(1, 10)] == [1, 2, 3, 5, 7, 11, 15, 22, 30]


def test_support_rule_and_cosets() -> None:
    # Paper Figure 10: with folds 0011 and 1100 on Q4, the mask 1100 helps only the
    # (4, 4) partition b3 b2 | b1 b0, the mask 0011 helps axis B of both meshes.
    host = [1, 2, 4, 8, 0b0011, 0b1100]
    assert axis_generators(host, [3, 2]) == [4, 8, 12]
    assert axis_generators(host, [1, 0]) == [1, 2, 3]
    assert axis_generators(host, [3]) == [8]
    assert axis_generators(host, [2, 1, 0]) == [1, 2, 3, 4]
    # the 2 x 8 mesh b3 | b2 b1 b0: axis A has 8 groups of 2, axis B 2 groups of 8
    assert coset_bases([3], 4) == [0, 1, 2, 3, 4, 5, 6, 7]
    assert coset_bases([2, 1, 0], 4) == [0, 8]
    groups = [sorted(b | expand(x, [2, 1, 0]) for x in range(8)) for b in coset_bases([2, 1, 0], 4)]
    assert groups == [list(range(8)), list(range(8, 16))]


def _random_set(bits: int, folds: int, seed: int) -> frozenset[int]:
    rng = random.Random(seed)
    others = [m for m in range(1, 1 << bits) if m & (m - 1)]
    return frozenset(rng.sample(others, min(folds, len(others)))) | {1 << b for b in range(bits)}


@pytest.mark.parametrize("seed", range(10))
def test_bounded_tiling_search_is_exact_on_small_sets(seed: int) -> None:
    bits = 3 + seed % 2
    gens = _random_set(bits, 1 + seed % 3, seed)
    search = min_tilings(gens, bits)
    assert search.proven and search.tilings
    count = search.layer_count
    assert count is not None
    for tiling in search.tilings:
        assert len(tiling) == count and is_tiling(tiling, bits)
        assert {g for layer in tiling for g in layer} <= gens
    for fewer in range(1, count):
        assert not _any_tiling(sorted(gens), bits, fewer)


@pytest.mark.parametrize(("bits", "folds", "seed"), [(7, 19, 0), (8, 14, 1), (8, 26, 2), (9, 12, 3), (9, 40, 4)])
def test_bounded_tiling_search_on_large_sets(bits: int, folds: int, seed: int) -> None:
    # the hanging cases: a valid tiling comes back (the search is bounded by work, not time)
    gens = _random_set(bits, folds, seed)
    search = min_tilings(gens, bits)
    assert search.tilings
    for tiling in search.tilings:
        assert is_tiling(tiling, bits)
        assert {g for layer in tiling for g in layer} <= gens
        assert len(tiling) <= bits


def test_budget_exhaustion_is_reported() -> None:
    # Q4+1111: the greedy subspace tiling needs 4 layers (no 2-dim subspace lies in the
    # set); the 3-layer tiling of Table 4 is found only by the exact search
    gens = Topology.with_folds(4, [0b1111]).gens
    starved = min_tilings(gens, 4, budget=0)
    assert (starved.layer_count, starved.proven) == (4, False)
    full = min_tilings(gens, 4)
    assert (full.layer_count, full.proven) == (3, True)


def test_disconnected_set_has_no_tiling() -> None:
    search = min_tilings({0b0011, 0b0110}, 4)
    assert search.tilings == () and search.layer_count is None


# -- closed forms on block folds (no breadth-first search on the planner's path) --------

BLOCK_FOLDS = [shape for bits in range(11) for shape in integer_partitions(bits)]


def _histogram(dist: tuple[int, ...]) -> list[int]:
    return [dist.count(k) for k in range(max(dist) + 1)]


@pytest.mark.parametrize("sizes", BLOCK_FOLDS, ids=[",".join(map(str, s)) or "empty" for s in BLOCK_FOLDS])
def test_block_fold_distance_counts_against_the_bfs(sizes: tuple[int, ...]) -> None:
    topo = Topology.from_profile(sizes)
    reference = cayley_distances(sorted(topo.gens), topo.bits)  # the one BFS, kept as the reference
    assert list(topo.distance_counts) == _histogram(reference)
    assert list(block_distance_counts(sizes)) == _histogram(reference)
    assert topo.connected and min(reference) == 0
    assert topo.diameter == max(reference) == len(sizes)
    assert list(topo.ball_sizes) == [sum(1 for d in reference if d <= k) for k in range(max(reference) + 1)]


def test_block_fold_distance_counts_by_hand() -> None:
    # K8 x K4 x K2: (1 + 7x)(1 + 3x)(1 + x) = 1 + 11x + 31x^2 + 21x^3
    assert block_distance_counts((3, 2, 1)) == (1, 11, 31, 21)
    # Q20: binomial coefficients, diameter 20, without touching 2**20 labels
    q20 = Topology.cube(20)
    assert q20.distance_counts == tuple(math.comb(20, k) for k in range(21))
    assert q20.diameter == 20 and q20.ball_sizes[-1] == 1 << 20
    # the largest fold a maximal instance affords (K2048 x K512 x K4 x ...)
    big = Topology.from_profile((11, 9, 2))
    assert big.diameter == 3 and big.distance_counts[3] == 2047 * 511 * 3


@pytest.mark.parametrize("seed", range(40))
def test_irregular_sets_against_the_bfs(seed: int) -> None:
    rng = random.Random(seed)
    bits = rng.randint(1, 7)
    gens = sorted(set(rng.sample(range(1, 1 << bits), rng.randint(1, min(2 * bits, (1 << bits) - 1)))))
    topo = Topology(bits, frozenset(gens))
    reference = cayley_distances(gens, bits)
    assert topo.distances == reference == tuple(bfs_distances(bits, gens))
    assert topo.connected == (min(reference) >= 0)  # rank over GF(2) against reachability
    assert 1 << gf2_rank(gens) == sum(1 for d in reference if d >= 0)  # the subgroup they generate
    if topo.connected:
        assert list(topo.distance_counts) == _histogram(reference)
        assert topo.diameter == max(reference)
    else:
        with pytest.raises(ValueError):
            _ = topo.diameter


def _span(masks: list[int]) -> tuple[int, ...]:
    span = {0}
    for g in masks:
        span |= {x ^ g for x in span}
    return tuple(sorted(span - {0}))


def _tiling_case(seed: int) -> tuple[list[tuple[int, ...]], int]:
    rng = random.Random(seed)
    bits = rng.randint(1, 6)
    layers: list[tuple[int, ...]] = []
    if seed % 4 == 2:  # {0, e1, e2, e3} + {0, e1 + e2 + e3} tiles (Z2)^3 with no subspace
        bits = 3
        e = rng.sample([1, 2, 4], 3) if seed % 8 == 2 else [1, 2, 5]
        layers = [tuple(e), (e[0] ^ e[1] ^ e[2],)]
        if seed % 3 == 0:
            layers[1] = (e[0] ^ e[1],)
    elif seed % 2:  # subspaces of a random basis, cut into groups: a tiling, perhaps spoiled below
        basis: list[int] = []
        while gf2_rank(basis) < bits:
            g = rng.randrange(1, 1 << bits)
            if gf2_rank([*basis, g]) > len(basis):
                basis.append(g)
        cuts = sorted(rng.sample(range(1, bits), rng.randint(0, bits - 1)))
        layers = [_span(basis[a:b]) for a, b in zip([0, *cuts], [*cuts, bits], strict=True)]
        if seed % 3 == 0:
            layers[-1] = _span([*basis[:1], rng.randrange(1, 1 << bits)])
        if seed % 5 == 0:
            layers.pop()
    else:
        for _ in range(rng.randint(1, 4)):
            if rng.random() < 0.6:  # a subspace: all non-zero combinations of a few masks
                layers.append(_span(rng.sample(range(1, 1 << bits), min(rng.randint(1, 3), (1 << bits) - 1))))
            else:
                layers.append(tuple(rng.sample(range(1 << bits), min(rng.randint(1, 4), 1 << bits))))
    return layers, bits


@pytest.mark.parametrize("seed", range(80))
def test_is_tiling_against_the_sumset(seed: int) -> None:
    layers, bits = _tiling_case(seed)
    elements = sumset(layers)
    assert is_tiling(layers, bits) == (elements is not None and len(elements) == 1 << bits)


def test_is_tiling_cases_cover_both_answers() -> None:
    # the cases above include tilings and non-tilings, by subspaces only and otherwise
    seen = set()
    for seed in range(80):
        layers, bits = _tiling_case(seed)
        subspaces = all(len(layer) + 1 == 1 << gf2_rank(layer) and 0 not in layer for layer in layers)
        seen.add((subspaces, is_tiling(layers, bits)))
    assert seen == {(True, True), (True, False), (False, False), (False, True)}


def test_is_tiling_by_hand() -> None:
    assert is_tiling([(1, 2, 3)], 2) and not is_tiling([(1, 2)], 2)  # K4, and half of it
    assert is_tiling([(1,), (2, 4, 6)], 3) and not is_tiling([(3,), (1, 2, 3)], 2)
    assert is_tiling([(1, 2), (4,)], 2) is False  # 4 is beyond 2 bits: not a tiling of (Z2)^2
    assert is_tiling([(1, 6), (2,)], 3) is False and is_tiling([(1, 6), (2, 5)], 3) is False


@pytest.mark.parametrize("sizes", [(3, 2, 1), (4, 4), (2, 1, 1, 1), (5,)])
def test_block_fold_layers_tile_and_broken_ones_do_not(sizes: tuple[int, ...]) -> None:
    layers = Topology.from_profile(sizes).layers
    assert layers is not None and is_tiling(layers, sum(sizes))
    assert not is_tiling(layers[:-1], sum(sizes))  # too few labels
    assert not is_tiling((*layers, layers[-1]), sum(sizes) + len(layers[-1]).bit_length())  # not direct
