"""All-reduce schedules (paper App. A.3, Tables 4 and 5; DESIGN §3).

Data model of the executables: the buffer is cut into ``segments``; a node's
accumulator holds, per segment, the set of ranks whose inputs it has summed.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from ..cayley import Topology
from .base import ClosedForm, Item, Program, Schedule, Transfer, make_program, register
from .layered import Layers, partial_sums, radix, register_pair, rotations, suffix_sums, translate
from .trees import balanced_parents, balanced_tree_cost, dvo_block_cost, tree_phases

# balanced_parents and dvo_block_cost live in .trees; re-exported for their old path
__all__ = ["balanced_parents", "dvo_block_cost", "gray_cycle"]


def _units(topo: Topology) -> frozenset[int]:
    return frozenset(1 << b for b in range(topo.bits))


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
    cost=balanced_tree_cost,
    # it may leave a generator idle in some phase; it still owns every link
    build=_dvo_build,
))


# -- coset-factored --------------------------------------------------------------


def _cf_layers(topo: Topology) -> Layers:
    return _best_tiling(topo, lambda layers: Fraction(len(layers)))


def _cf_cost(topo: Topology, parallel: bool) -> ClosedForm:
    layers = _cf_layers(topo)
    if not parallel:
        return ClosedForm(len(layers), Fraction(len(layers)), max((len(x) for x in layers), default=0))
    if not layers:
        return ClosedForm(0, Fraction(0), 0)
    return ClosedForm(len(layers), Fraction(1), sum(len(x) for x in layers))


def _cf_build(topo: Topology, payload: int, parallel: bool) -> Program:
    return (_cfp_build if parallel else _cf_serial_build)(topo, payload)


def _cf_serial_build(topo: Topology, payload: int) -> Program:
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


register_pair(
    "all-reduce",
    ("coset-factored", "coset-factored-parallel"),
    (
        "exchange full partial sums over one tiling layer per phase",
        "l chunks, each through all layers in a rotated order; every layer busy",
    ),
    _cf_cost,
    lambda topo, parallel: _cf_layers(topo),  # one tiling, the fewest layers, for both
    _cf_build,
)


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


def _rsag_pair_layers(topo: Topology, parallel: bool) -> Layers:
    return _rsagp_layers(topo) if parallel else _rsag_layers(topo)


register_pair(
    "all-reduce",
    ("rs-ag", "rs-ag-parallel"),
    (
        "reduce-scatter then all-gather over the layers, larger radix first",
        "l chunks of RS+AG in rotated layer orders; every layer busy",
    ),
    lambda topo, parallel: _rsagp_cost(topo) if parallel else _rsag_cost(topo),
    _rsag_pair_layers,
    lambda topo, payload, parallel: (_rsagp_build if parallel else _rsag_build)(topo, payload),
    one_layer_a_phase=False,  # RS then AG: 2l phases, the pattern comes from the build
)


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
