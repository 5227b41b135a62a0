"""The balanced shortest-path trees of a Cayley graph (paper App. A.3, one-shot-dvo): one tree,
translated to every node, on which one-shot-dvo (all-reduce), tree-gather (all-gather) and
tree-route (all-to-all) send; their loads per phase and the closed form they share.
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction
from functools import lru_cache

from ..cayley import Topology, block_fold_groups
from .base import ClosedForm

__all__ = [
    "balance",
    "balanced_parents",
    "balanced_tree_cost",
    "dvo_block_cost",
    "subtrees",
    "tree_cost",
    "tree_counts",
    "tree_phases",
]


@lru_cache(maxsize=4096)
def balanced_parents(topo: Topology) -> dict[int, int]:
    """Translation-invariant shortest-path tree: label -> generator of its parent edge.

    Per distance k, each label at distance k picks a generator g with d XOR g at
    distance k - 1 so that the largest count per generator is as small as
    possible: greedy least-loaded assignment, then augmenting paths from a most
    loaded generator to one at least two below it until none exists (the
    optimality condition of min-max semi-matchings).
    """
    dist = topo.distances
    gens = sorted(topo.gens)
    blocks = block_fold_groups(topo.gens, topo.bits)
    parent: dict[int, int] = {}
    for k in range(1, (topo.diameter if topo.bits else 0) + 1):
        layer = [d for d in range(topo.size) if dist[d] == k]
        if blocks is not None:
            # on a block fold, a step toward 0 clears one non-zero sub-block of d
            options = {d: sorted(d & b for b in blocks if d & b) for d in layer}
        else:
            options = {d: [g for g in gens if dist[d ^ g] == k - 1] for d in layer}
        balance(parent, layer, options, gens)
    return parent


def balance(parent: dict[int, int], layer: list[int], options: dict[int, list[int]], gens: Iterable[int]) -> None:
    """Hang each label of ``layer`` (one distance) in ``parent`` from one of its ``options`` so that
    the largest count per generator is least: greedy least-loaded, then augmenting paths
    (:func:`_rebalance`) until none is left. The cube's and the circulants' trees share it."""
    load = dict.fromkeys(gens, 0)
    owned: dict[int, list[int]] = {g: [] for g in load}
    for d in layer:
        g = min(options[d], key=lambda x: (load[x], x))
        parent[d] = g
        load[g] += 1
        owned[g].append(d)
    while _rebalance(parent, options, load, owned):
        pass


def _rebalance(
    parent: dict[int, int], options: dict[int, list[int]], load: dict[int, int],
    owned: dict[int, list[int]],
) -> bool:
    """Move one label off a most-loaded generator along an augmenting path."""
    top = max(load.values())
    for start in sorted(g for g, c in load.items() if c == top):
        # breadth-first over generators; edge g -> g' when a label of g may use g'
        came: dict[int, tuple[int, int]] = {}
        queue = [start]
        seen = {start}
        while queue:
            g = queue.pop(0)
            for d in owned[g]:
                for h in options[d]:
                    if h in seen:
                        continue
                    seen.add(h)
                    came[h] = (g, d)
                    if load[h] <= top - 2:
                        node = h
                        while node != start:
                            prev, label = came[node]
                            owned[prev].remove(label)
                            owned[node].append(label)
                            parent[label] = node
                            node = prev
                        load[start] -= 1
                        load[h] += 1
                        return True
                    queue.append(h)
    return False


def tree_counts(topo: Topology, weight: dict[int, int] | None = None) -> list[dict[int, int]]:
    """Per distance k: generator -> labels at distance k whose parent edge in the
    balanced tree it is (or the sum of their ``weight``, e.g. subtree sizes)."""
    parent = balanced_parents(topo)
    dist = topo.distances
    depth = topo.diameter if topo.bits else 0
    counts: list[dict[int, int]] = [{} for _ in range(depth + 1)]
    for d, g in parent.items():
        counts[dist[d]][g] = counts[dist[d]].get(g, 0) + (1 if weight is None else weight[d])
    return counts


def tree_cost(topo: Topology, counts: list[dict[int, int]], per: int = 1) -> ClosedForm:
    """h = diameter, v = (sum over phases of the most loaded generator) / ``per``."""
    if topo.bits == 0:
        return ClosedForm(0, Fraction(0), 0)
    loads = counts[1:]
    return ClosedForm(
        topo.diameter,
        Fraction(sum(max(c.values()) for c in loads), per),
        max(len(c) for c in loads),
    )


def tree_phases(topo: Topology) -> list[dict[int, list[int]]]:
    """Per phase k = 1..diameter: generator -> the labels at distance k whose parent edge
    in the balanced tree it is (every schedule on these trees sends along them)."""
    parent = balanced_parents(topo)
    dist = topo.distances
    phases: list[dict[int, list[int]]] = [{} for _ in range(topo.diameter if topo.bits else 0)]
    for d, g in parent.items():
        phases[dist[d] - 1].setdefault(g, []).append(d)
    return phases


def dvo_block_cost(topo: Topology, per: int = 1) -> ClosedForm:
    """:func:`tree_cost` of the balanced tree of a block fold without building it.

    A label at distance k is non-zero on k sub-blocks and may hang from exactly the k
    generators that clear one of them. Any set S of generators (s_i of them from
    sub-block i) is the only option of e_k(s) labels at distance k, and
    e_k(s) / e_1(s) grows with every s_i, so the Hall bound of phase k is largest for
    all generators: ceil(N_k / degree) with N_k the labels at distance k. The balanced
    tree meets it (no augmenting path from a most loaded generator remains, see
    :func:`balanced_parents`), and phase 1 drives every generator. ``per`` as in
    :func:`tree_cost` (tree-gather moves 1/size of the payload per label)."""
    degree = topo.degree
    loads = sum(-(-count // degree) for count in topo.distance_counts[1:])
    return ClosedForm(topo.diameter, Fraction(loads, per), degree)


def balanced_tree_cost(topo: Topology, per: int = 1) -> ClosedForm:
    """The closed form of sending one unit per label along the balanced tree, over ``per``:
    one-shot-dvo (``per`` 1) and tree-gather (``per`` the axis size, a block per label)."""
    if not topo.bits:
        return ClosedForm(0, Fraction(0), 0)
    if topo.block_profile is not None:  # without building the tree
        return dvo_block_cost(topo, per)
    return tree_cost(topo, tree_counts(topo), per)


def subtrees(topo: Topology) -> tuple[dict[int, int], dict[int, list[int]]]:
    """The one-shot-dvo tree (label -> parent generator) and each label's subtree."""
    parent = balanced_parents(topo)
    dist = topo.distances
    below: dict[int, list[int]] = {d: [d] for d in parent}
    for d in sorted(parent, key=lambda x: -dist[x]):
        up = d ^ parent[d]
        if up in below:
            below[up].extend(below[d])
    return parent, below
