"""All-reduce schedules (paper App. A.3, Tables 4 and 5; DESIGN §3).

Data model of the executables: the buffer is cut into ``segments``; a node's
accumulator holds, per segment, the set of ranks whose inputs it has summed.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache

from ..cayley import Topology, block_fold_groups
from .base import (
    ClosedForm,
    Item,
    Program,
    Schedule,
    Transfer,
    make_program,
    partial_sums,
    radix,
    register,
    rotated_masks,
    rotations,
    suffix_sums,
    translate,
)

__all__ = ["balanced_parents", "dvo_block_cost", "gray_cycle"]

Layers = list[tuple[int, ...]]


def _units(topo: Topology) -> frozenset[int]:
    return frozenset(1 << b for b in range(topo.bits))


def _tiling_gens(layers: Layers | tuple[tuple[int, ...], ...]) -> frozenset[int]:
    return frozenset(g for layer in layers for g in layer)


def _best_tiling(topo: Topology, key: Callable[[Layers], Fraction]) -> Layers:
    """The fewest-layer tiling with the smallest volume under ``key``."""
    options = [list(t) for t in topo.tilings]
    return min(options, key=key)


def _program(name: str, topo: Topology, payload: int, segments: int, phases: list[list[Transfer]]) -> Program:
    return make_program(name, "all-reduce", topo.bits, payload, segments, phases)


def _valid_connected(topo: Topology) -> bool:
    return topo.connected


# -- recursive doubling --------------------------------------------------------


def _rd_cost(topo: Topology) -> ClosedForm:
    return ClosedForm(topo.bits, Fraction(topo.bits), 1 if topo.bits else 0)


def _rd_build(topo: Topology, payload: int) -> Program:
    size = topo.size
    sources = [1 << x for x in range(size)]
    phases = []
    for b in range(topo.bits):
        g = 1 << b
        unit = Fraction(payload)
        phases.append([Transfer(x, x ^ g, g, unit, (Item("reduce", 1, sources[x]),)) for x in range(size)])
        sources = [sources[x] | sources[x ^ g] for x in range(size)]
    return _program("recursive-doubling", topo, payload, 1, phases)


register(Schedule(
    name="recursive-doubling",
    collective="all-reduce",
    description="pairwise exchange over one unit mask per phase; cannot use folds",
    valid=lambda t: t.has_units,
    cost=_rd_cost,
    uses=_units,
    build=_rd_build,
    layers=lambda t: tuple((1 << b,) for b in range(t.bits - 1, -1, -1)),
    cube_only=True,
))


# -- one-shot ------------------------------------------------------------------


def _oneshot_cost(topo: Topology) -> ClosedForm:
    if topo.bits == 0:
        return ClosedForm(0, Fraction(0), 0)
    balls = topo.ball_sizes
    return ClosedForm(topo.diameter, Fraction(sum(balls[:-1])), topo.degree)


def _oneshot_build(topo: Topology, payload: int) -> Program:
    size = topo.size
    dist = topo.distances
    gens = sorted(topo.gens)
    phases = []
    for k in range(1, (topo.diameter if topo.bits else 0) + 1):
        inside = [d for d in range(size) if dist[d] <= k - 1]
        nbytes = Fraction(payload * len(inside))
        phase: list[Transfer] = []
        for x in range(size):
            item = Item("raw", 1, translate(x, inside))
            phase.extend(Transfer(x, x ^ g, g, nbytes, (item,)) for g in gens)
        phases.append(phase)
    return _program("one-shot", topo, payload, 1, phases)


register(Schedule(
    name="one-shot",
    collective="all-reduce",
    description="flood every contribution received so far to every neighbour",
    valid=_valid_connected,
    cost=_oneshot_cost,
    build=_oneshot_build,
))


# -- one-shot, data-volume optimised ---------------------------------------------


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
        load = dict.fromkeys(gens, 0)
        owned: dict[int, list[int]] = {g: [] for g in gens}
        for d in layer:
            g = min(options[d], key=lambda x: (load[x], x))
            parent[d] = g
            load[g] += 1
            owned[g].append(d)
        while _rebalance(parent, options, load, owned):
            pass
    return parent


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


def _dvo_cost(topo: Topology) -> ClosedForm:
    if not topo.bits:
        return ClosedForm(0, Fraction(0), 0)
    if topo.block_profile is not None:
        return dvo_block_cost(topo)
    return tree_cost(topo, tree_counts(topo))


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


def _dvo_build(topo: Topology, payload: int) -> Program:
    phases = []
    for by_gen in tree_phases(topo):
        phase: list[Transfer] = []
        for x in range(topo.size):
            for g in sorted(by_gen):
                # forward the contributions of s = x ^ g ^ d toward s ^ d = x ^ g
                offsets = [g ^ d for d in by_gen[g]]
                item = Item("raw", 1, translate(x, offsets))
                phase.append(Transfer(x, x ^ g, g, Fraction(payload * len(offsets)), (item,)))
        phases.append(phase)
    return _program("one-shot-dvo", topo, payload, 1, phases)


register(Schedule(
    name="one-shot-dvo",
    collective="all-reduce",
    description="each contribution once along balanced shortest-path trees",
    valid=_valid_connected,
    cost=_dvo_cost,
    # it may leave a generator idle in some phase; it still owns every link
    build=_dvo_build,
))


# -- coset-factored --------------------------------------------------------------


def _cf_layers(topo: Topology) -> Layers:
    return _best_tiling(topo, lambda layers: Fraction(len(layers)))


def _cf_cost(topo: Topology) -> ClosedForm:
    layers = _cf_layers(topo)
    return ClosedForm(len(layers), Fraction(len(layers)), max((len(x) for x in layers), default=0))


def _cf_build(topo: Topology, payload: int) -> Program:
    layers = _cf_layers(topo)
    prefix = partial_sums(layers)
    nbytes = Fraction(payload)
    phases = []
    for j, layer in enumerate(layers):
        phase: list[Transfer] = []
        for x in range(topo.size):
            item = Item("reduce", 1, translate(x, prefix[j]))
            phase.extend(Transfer(x, x ^ s, s, nbytes, (item,)) for s in layer)
        phases.append(phase)
    return _program("coset-factored", topo, payload, 1, phases)


register(Schedule(
    name="coset-factored",
    collective="all-reduce",
    description="exchange full partial sums over one tiling layer per phase",
    valid=_valid_connected,
    cost=_cf_cost,
    uses=lambda t: _tiling_gens(_cf_layers(t)),
    build=_cf_build,
    layers=lambda t: tuple(_cf_layers(t)),
    masks=lambda t: rotated_masks(_cf_layers(t), False),
))


def _cfp_cost(topo: Topology) -> ClosedForm:
    layers = _cf_layers(topo)
    if not layers:
        return ClosedForm(0, Fraction(0), 0)
    return ClosedForm(len(layers), Fraction(1), sum(len(x) for x in layers))


def _cfp_build(topo: Topology, payload: int) -> Program:
    layers = _cf_layers(topo)
    count = len(layers)
    orders = rotations(count)
    nbytes = Fraction(payload, count) if count else Fraction(0)
    phases = []
    for t in range(count):
        phase: list[Transfer] = []
        for c, order in enumerate(orders):
            done = partial_sums([layers[j] for j in order])[t]
            for x in range(topo.size):
                item = Item("reduce", 1 << c, translate(x, done))
                phase.extend(Transfer(x, x ^ s, s, nbytes, (item,)) for s in layers[order[t]])
        phases.append(phase)
    return _program("coset-factored-parallel", topo, payload, max(count, 1), phases)


register(Schedule(
    name="coset-factored-parallel",
    collective="all-reduce",
    description="l chunks, each through all layers in a rotated order; every layer busy",
    valid=_valid_connected,
    cost=_cfp_cost,
    uses=lambda t: _tiling_gens(_cf_layers(t)),
    build=_cfp_build,
    layers=lambda t: tuple(_cf_layers(t)),
    masks=lambda t: rotated_masks(_cf_layers(t), True),
))


# -- reduce-scatter + all-gather ----------------------------------------------------


def _rsag_order(layers: Layers) -> Layers:
    """Reduce-scatter over the larger radix first (smallest later volumes)."""
    return sorted(layers, key=lambda layer: -radix(layer))


def _rsag_factor(layers: Layers) -> Fraction:
    total, prod = Fraction(0), 1
    for layer in _rsag_order(layers):
        prod *= radix(layer)
        total += Fraction(1, prod)
    return 2 * total


def _rsag_layers(topo: Topology) -> Layers:
    return _rsag_order(_best_tiling(topo, _rsag_factor))


def _rsag_cost(topo: Topology) -> ClosedForm:
    layers = _rsag_layers(topo)
    return ClosedForm(2 * len(layers), _rsag_factor(layers), max((len(x) for x in layers), default=0))


def _rsag_phases(
    topo: Topology, payload: int, layers: Layers, orders: list[list[int]]
) -> list[list[Transfer]]:
    """Phases of RS then AG; chunk c visits layers in orders[c] (the parallel variant)."""
    size = topo.size
    chunks = len(orders)
    everyone = (1 << size) - 1
    rs: list[list[Transfer]] = [[] for _ in layers]
    ag: list[list[Transfer]] = [[] for _ in layers]
    for c, order in enumerate(orders):
        seq = [layers[j] for j in order]
        prefix = partial_sums(seq)
        suffix = suffix_sums(seq)
        base = c * size
        for t, layer in enumerate(seq):
            count = len(suffix[t])
            nbytes = Fraction(payload * count, chunks * size)
            for x in range(size):
                srcs = translate(x, prefix[t])
                own = translate(x, suffix[t]) << base
                for s in layer:
                    y = x ^ s
                    segs = translate(y, suffix[t]) << base
                    rs[t].append(Transfer(x, y, s, nbytes, (Item("reduce", segs, srcs),)))
                    ag[len(seq) - 1 - t].append(
                        Transfer(x, y, s, nbytes, (Item("store", own, everyone),))
                    )
    return rs + ag


def _rsag_build(topo: Topology, payload: int) -> Program:
    layers = _rsag_layers(topo)
    phases = _rsag_phases(topo, payload, layers, [list(range(len(layers)))])
    return _program("rs-ag", topo, payload, topo.size, phases)


register(Schedule(
    name="rs-ag",
    collective="all-reduce",
    description="reduce-scatter then all-gather over the layers, larger radix first",
    valid=_valid_connected,
    cost=_rsag_cost,
    uses=lambda t: _tiling_gens(_rsag_layers(t)),
    build=_rsag_build,
    layers=lambda t: tuple(_rsag_layers(t)),
))


def _rsagp_factor(layers: Layers) -> Fraction:
    """Per phase the most loaded layer; RS and AG phases mirror each other."""
    count = len(layers)
    if count == 0:
        return Fraction(0)
    total = Fraction(0)
    orders = rotations(count)
    for t in range(count):
        worst = Fraction(0)
        for order in orders:
            prod = 1
            for j in order[: t + 1]:
                prod *= radix(layers[j])
            worst = max(worst, Fraction(1, count * prod))
        total += worst
    return 2 * total


def _rsagp_layers(topo: Topology) -> Layers:
    return _rsag_order(_best_tiling(topo, _rsagp_factor))


def _rsagp_cost(topo: Topology) -> ClosedForm:
    layers = _rsagp_layers(topo)
    return ClosedForm(2 * len(layers), _rsagp_factor(layers), sum(len(x) for x in layers))


def _rsagp_build(topo: Topology, payload: int) -> Program:
    layers = _rsagp_layers(topo)
    count = len(layers)
    phases = _rsag_phases(topo, payload, layers, rotations(count))
    return _program("rs-ag-parallel", topo, payload, max(count, 1) * topo.size, phases)


register(Schedule(
    name="rs-ag-parallel",
    collective="all-reduce",
    description="l chunks of RS+AG in rotated layer orders; every layer busy",
    valid=_valid_connected,
    cost=_rsagp_cost,
    uses=lambda t: _tiling_gens(_rsagp_layers(t)),
    build=_rsagp_build,
    layers=lambda t: tuple(_rsagp_layers(t)),
))


# -- ring ----------------------------------------------------------------------------


def gray_cycle(bits: int) -> list[int]:
    """Binary reflected Gray code: a Hamiltonian cycle of Q_bits over unit masks."""
    return [i ^ (i >> 1) for i in range(1 << bits)]


def _ring_cost(topo: Topology) -> ClosedForm:
    size = topo.size
    if size == 1:
        return ClosedForm(0, Fraction(0), 0)
    return ClosedForm(2 * (size - 1), Fraction(2 * (size - 1), size), 1)


def _ring_build(topo: Topology, payload: int) -> Program:
    size = topo.size
    label = gray_cycle(topo.bits)
    everyone = (1 << size) - 1
    nbytes = Fraction(payload, size)
    phases = []
    for t in range(size - 1):  # reduce-scatter
        phase: list[Transfer] = []
        for i in range(size):
            src, dst = label[i], label[(i + 1) % size]
            srcs = 0
            for k in range(t + 1):
                srcs |= 1 << label[(i - k) % size]
            item = Item("reduce", 1 << ((i - t) % size), srcs)
            phase.append(Transfer(src, dst, src ^ dst, nbytes, (item,)))
        phases.append(phase)
    for t in range(size - 1):  # all-gather
        phase = []
        for i in range(size):
            src, dst = label[i], label[(i + 1) % size]
            item = Item("store", 1 << ((i + 1 - t) % size), everyone)
            phase.append(Transfer(src, dst, src ^ dst, nbytes, (item,)))
        phases.append(phase)
    return _program("ring", topo, payload, size, phases)


register(Schedule(
    name="ring",
    collective="all-reduce",
    description="unidirectional ring RS+AG on a Gray-code cycle (planning only)",
    valid=lambda t: t.has_units,
    cost=_ring_cost,
    uses=_units,
    build=_ring_build,
    cube_only=True,
))
