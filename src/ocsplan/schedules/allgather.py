"""All-gather schedules: layered gather over a tiling, its parallel variant, and
tree-gather (every block once along balanced shortest-path trees, no layers).

The payload sigma is the gathered (output) buffer; each of the M ranks owns one
block of sigma / M. Segments are blocks (times chunks for the parallel variant).
"""

from __future__ import annotations

from fractions import Fraction

from ..cayley import Topology
from .base import ClosedForm, Item, Program, Transfer, make_program, register_unlayered
from .layered import Layers, chunk_orders, chunk_steps, radix, register_pair, rotations, translate
from .trees import balanced_tree_cost, tree_phases

__all__: list[str] = []


def _ascending(layers: Layers) -> Layers:
    """Gather over the smaller radix first: later phases carry the grown data."""
    return sorted(layers, key=radix)


def _factor(layers: Layers, size: int) -> Fraction:
    total, prod = Fraction(0), 1
    for layer in _ascending(layers):
        total += Fraction(prod, size)
        prod *= radix(layer)
    return total


def _parallel_factor(layers: Layers, size: int) -> Fraction:
    count = len(layers)
    total = Fraction(0)
    for t in range(count):
        worst = Fraction(0)
        for order in rotations(count):
            prod = 1
            for j in order[:t]:
                prod *= radix(layers[j])
            worst = max(worst, Fraction(prod, count * size))
        total += worst
    return total


def _layers(topo: Topology, parallel: bool) -> Layers:
    score = _parallel_factor if parallel else _factor
    best = min((list(t) for t in topo.tilings), key=lambda ls: score(ls, topo.size))
    return _ascending(best)


def _cost(topo: Topology, parallel: bool) -> ClosedForm:
    layers = _layers(topo, parallel)
    if parallel:
        return ClosedForm(len(layers), _parallel_factor(layers, topo.size), sum(map(len, layers)))
    return ClosedForm(len(layers), _factor(layers, topo.size), max(map(len, layers), default=0))


def _build(topo: Topology, payload: int, parallel: bool) -> Program:
    layers = _layers(topo, parallel)
    size = topo.size
    seqs = chunk_orders(layers, parallel)
    chunks = len(seqs)
    phases: list[list[Transfer]] = [[] for _ in layers]
    for c, t, layer, before, _ in chunk_steps(seqs):
        nbytes = Fraction(payload * len(before), chunks * size)
        for x in range(size):
            item = Item("gather", translate(x, before) << (c * size))
            phases[t].extend(Transfer(x, x ^ s, s, nbytes, (item,)) for s in layer)
    return make_program(
        "layered-parallel" if parallel else "layered",
        "all-gather",
        topo.bits,
        payload,
        chunks * size,
        phases,
    )


register_pair(
    "all-gather",
    ("layered", "layered-parallel"),
    (
        "gather over one tiling layer per phase, smaller radix first",
        "l chunks of the layered gather in rotated layer orders; every layer busy",
    ),
    _cost,
    _layers,
    _build,
)


# -- tree-gather: no layers (runs on irregular folds) ------------------------------------


def _tree_build(topo: Topology, payload: int) -> Program:
    size = topo.size
    phases: list[list[Transfer]] = []
    for by_gen in tree_phases(topo):
        phase: list[Transfer] = []
        for x in range(size):
            for g in sorted(by_gen):
                # the blocks of the sources s = x ^ g ^ d travel on toward s ^ d = x ^ g
                blocks = translate(x, [g ^ d for d in by_gen[g]])
                phase.append(Transfer(x, x ^ g, g, Fraction(payload * len(by_gen[g]), size),
                                      (Item("gather", blocks),)))
        phases.append(phase)
    return make_program("tree-gather", "all-gather", topo.bits, payload, size, phases)


register_unlayered("all-gather", "tree-gather",
                   "each block once along balanced shortest-path trees (no layers: any connected set)",
                   lambda topo: balanced_tree_cost(topo, topo.size),  # a block (1/size) per label
                   _tree_build)
