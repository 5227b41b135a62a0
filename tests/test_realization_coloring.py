"""Edge colorings: König on bipartite multigraphs, Vizing bound, Euler orientation."""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ocsplan.realization.coloring import (
    balanced_orientation,
    bipartite_edge_coloring,
    edge_coloring,
    is_bipartite,
    is_proper,
    max_degree,
    misra_gries,
)

Edge = tuple[Hashable, Hashable]


def chromatic_index(edges: Sequence[Edge]) -> int:
    """Brute force: the fewest colors of a proper edge coloring (tiny graphs only)."""
    delta = max_degree(edges)
    for k in range(delta, 2 * delta + 1):
        colors = [-1] * len(edges)

        def place(i: int, k: int = k, colors: list[int] = colors) -> bool:
            if i == len(edges):
                return True
            u, v = edges[i]
            taken = {colors[j] for j in range(i) if set(edges[j]) & {u, v}}
            for c in range(k):
                if c not in taken:
                    colors[i] = c
                    if place(i + 1):
                        return True
            colors[i] = -1
            return False

        if place(0):
            return k
    raise AssertionError("unreachable: 2 delta - 1 colors always suffice greedily")


bipartite_multigraphs = st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=1, max_size=40).map(
    lambda pairs: [(("l", a), ("r", b)) for a, b in pairs]
)


def two_colorable(edges: Sequence[Edge]) -> bool:
    """Brute force: some assignment of two sides to the nodes splits every edge."""
    nodes = sorted({x for e in edges for x in e}, key=repr)
    for mask in range(2 ** len(nodes)):
        side = {x: mask >> i & 1 for i, x in enumerate(nodes)}
        if all(side[u] != side[v] for u, v in edges):
            return True
    return False


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), max_size=14))
def test_is_bipartite_against_every_two_coloring(edges: list[Edge]) -> None:
    assert is_bipartite(edges) == two_colorable(edges)
    graph: nx.MultiGraph = nx.MultiGraph()
    graph.add_edges_from(edges)
    assert is_bipartite(edges) == nx.is_bipartite(graph)


@pytest.mark.parametrize(("edges", "expected"), [
    ([], True),
    ([(0, 0)], False),  # a loop is an odd cycle
    ([(0, 1), (0, 1)], True),  # parallel edges: an even cycle
    ([(0, 1), (1, 2), (2, 0)], False),
    ([(0, 1), (1, 2), (2, 3), (3, 0), (4, 5)], True),
    ([(0, 1), (2, 3), (3, 4), (4, 2)], False),  # the odd cycle in a second component
])
def test_is_bipartite_small_cases(edges: list[Edge], expected: bool) -> None:
    assert is_bipartite(edges) is expected


@settings(max_examples=150, deadline=None)
@given(bipartite_multigraphs)
def test_konig_colors_bipartite_multigraphs_with_max_degree_colors(edges: list[Edge]) -> None:
    colors = bipartite_edge_coloring(edges)
    assert is_proper(edges, colors)
    assert max(colors) + 1 == max_degree(edges)


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 9), st.integers(1, 20), st.integers(0, 10_000))
def test_misra_gries_stays_within_vizing(n: int, m: int, seed: int) -> None:
    edges = list(nx.gnm_random_graph(n, m, seed=seed).edges())
    if not edges:
        return
    colors = misra_gries(edges)
    assert is_proper(edges, colors)
    assert max(colors) + 1 <= max_degree(edges) + 1


@pytest.mark.parametrize(
    ("graph", "index", "slack"),
    [
        (nx.cycle_graph(5), 3, 0),  # odd cycle: class 2, one color above the degree
        (nx.cycle_graph(8), 2, 0),  # even cycle: bipartite, König is exact
        (nx.complete_bipartite_graph(3, 3), 3, 0),
        (nx.complete_graph(4), 3, 1),  # K4 is class 1; Misra-Gries only promises degree + 1
        (nx.petersen_graph(), 4, 0),  # the Petersen graph is class 2 (degree 3, index 4)
    ],
)
def test_edge_coloring_against_the_chromatic_index(graph: nx.Graph, index: int, slack: int) -> None:
    edges = list(graph.edges())
    found = edge_coloring(edges)
    assert is_proper(edges, found)
    if len(edges) <= 12:
        assert chromatic_index(edges) == index
    assert index <= max(found) + 1 <= index + slack


def test_multigraph_without_bipartition_falls_back_to_dsatur() -> None:
    # a doubled triangle: degree 4, Shannon's bound 6, chromatic index 6 (brute force)
    edges = [(0, 1), (1, 2), (2, 0)] * 2
    found = edge_coloring(edges)
    assert is_proper(edges, found)
    assert max(found) + 1 == chromatic_index(edges) == 6


def test_konig_rejects_an_odd_cycle() -> None:
    with pytest.raises(ValueError, match="bipartite"):
        bipartite_edge_coloring([(0, 1), (1, 2), (2, 0)], palette=2)


loopless = st.tuples(st.integers(0, 6), st.integers(0, 6)).filter(lambda e: e[0] != e[1])


@settings(max_examples=100, deadline=None)
@given(st.lists(loopless, min_size=1, max_size=30))
def test_balanced_orientation_evens_in_and_out(edges: list[Edge]) -> None:
    keep = balanced_orientation(edges)
    out: Counter[Hashable] = Counter()
    into: Counter[Hashable] = Counter()
    for (u, v), k in zip(edges, keep, strict=True):
        src, dst = (u, v) if k else (v, u)
        out[src] += 1
        into[dst] += 1
    assert all(abs(out[x] - into[x]) <= 1 for x in set(out) | set(into))
