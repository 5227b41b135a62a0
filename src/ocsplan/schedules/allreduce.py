"""All-reduce schedules (paper App. A.3, Tables 4 and 5; DESIGN §3).

Data model of the executables: the buffer is cut into ``segments``; a node's
accumulator holds, per segment, the set of ranks whose inputs it has summed.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from ..cayley import Topology
from .base import ClosedForm, Item, Program, Schedule, Transfer, make_program, register, register_unlayered
from .layered import (
    Layers,
    chunk_orders,
    chunk_steps,
    partial_sums,
    radix,
    register_pair,
    rotations,
    translate,
)
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


def _register_cube(name: str, description: str, cost: Callable[[Topology], ClosedForm],
                   build: Callable[[Topology, int], Program],
                   layers: Callable[[Topology], tuple[tuple[int, ...], ...] | None] = lambda t: None) -> None:
    """An all-reduce on the unit masks only, whatever the folds (it cannot be credited with them)."""
    register(Schedule(name, "all-reduce", description, valid=lambda t: t.has_units, cost=cost, build=build,
                      uses=_units, layers=layers, cube_only=True))


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


_register_cube("recursive-doubling", "pairwise exchange over one unit mask per phase; cannot use folds",
               _rd_cost, _rd_build, layers=lambda t: tuple((1 << b,) for b in range(t.bits - 1, -1, -1)))


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


register_unlayered("all-reduce", "one-shot", "flood every contribution received so far to every neighbour",
                   _oneshot_cost, _oneshot_build)


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


# it may leave a generator idle in some phase; it still owns every link
register_unlayered("all-reduce", "one-shot-dvo", "each contribution once along balanced shortest-path trees",
                   balanced_tree_cost, _dvo_build)


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
    """Phase t: each chunk's partial sums over the layers it has crossed, across its layer t."""
    seqs = chunk_orders(_cf_layers(topo), parallel)
    chunks = len(seqs)
    nbytes = Fraction(payload, chunks) if chunks else Fraction(0)
    prefixes = [partial_sums(seq) for seq in seqs]
    phases = []
    for t in range(len(seqs[0]) if seqs else 0):
        phase: list[Transfer] = []
        for c, seq in enumerate(seqs):
            for x in range(topo.size):
                item = Item("reduce", 1 << c, translate(x, prefixes[c][t]))
                phase.extend(Transfer(x, x ^ s, s, nbytes, (item,)) for s in seq[t])
        phases.append(phase)
    return _program("coset-factored-parallel" if parallel else "coset-factored", topo, payload, max(chunks, 1),
                    phases)


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


def _rsag_phases(topo: Topology, payload: int, nlayers: int, seqs: list[Layers]) -> list[list[Transfer]]:
    """Phases of RS then AG over ``nlayers`` layers; chunk c visits them in the order seqs[c]."""
    size = topo.size
    chunks = len(seqs)
    everyone = (1 << size) - 1
    rs: list[list[Transfer]] = [[] for _ in range(nlayers)]
    ag: list[list[Transfer]] = [[] for _ in range(nlayers)]
    for c, t, layer, before, after in chunk_steps(seqs):
        base = c * size
        nbytes = Fraction(payload * len(after), chunks * size)
        for x in range(size):
            srcs = translate(x, before)
            own = translate(x, after) << base
            for s in layer:
                y = x ^ s
                segs = translate(y, after) << base
                rs[t].append(Transfer(x, y, s, nbytes, (Item("reduce", segs, srcs),)))
                ag[nlayers - 1 - t].append(Transfer(x, y, s, nbytes, (Item("store", own, everyone),)))
    return rs + ag


def _rsag_build(topo: Topology, payload: int, parallel: bool) -> Program:
    layers = _rsag_pair_layers(topo, parallel)
    seqs = chunk_orders(layers, parallel)
    phases = _rsag_phases(topo, payload, len(layers), seqs)
    return _program("rs-ag-parallel" if parallel else "rs-ag", topo, payload, max(len(seqs), 1) * topo.size, phases)


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
    _rsag_build,
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


_register_cube("ring", "unidirectional ring RS+AG on a Gray-code cycle (planning only)", _ring_cost, _ring_build)
