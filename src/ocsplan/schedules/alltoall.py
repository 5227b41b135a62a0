"""All-to-all schedules: radix-r Bruck over a tiling, its parallel variant, and
tree-route (every block along its path in a balanced shortest-path tree, no layers).

The payload sigma is each rank's send buffer: M blocks of sigma / M, one per
destination. A block travels from origin o to destination d along the unique
decomposition of o XOR d over the layers, one layer per phase.
"""

from __future__ import annotations

from fractions import Fraction

from ..cayley import Topology
from .base import ClosedForm, Item, Program, Transfer, make_program, register_unlayered
from .layered import Layers, chunk_orders, chunk_steps, radix, register_pair, translate
from .trees import subtrees, tree_cost, tree_counts, tree_phases

__all__: list[str] = []


def _factor(layers: Layers, parallel: bool) -> Fraction:
    if not layers:
        return Fraction(0)
    if parallel:
        return Fraction(1, min(radix(layer) for layer in layers))
    return sum((Fraction(1, radix(layer)) for layer in layers), Fraction(0))


def _layers(topo: Topology, parallel: bool) -> Layers:
    return min((list(t) for t in topo.tilings), key=lambda ls: _factor(ls, parallel))


def _cost(topo: Topology, parallel: bool) -> ClosedForm:
    layers = _layers(topo, parallel)
    ports = sum(map(len, layers)) if parallel else max(map(len, layers), default=0)
    return ClosedForm(len(layers), _factor(layers, parallel), ports)


def _build(topo: Topology, payload: int, parallel: bool) -> Program:
    layers = _layers(topo, parallel)
    size = topo.size
    seqs = chunk_orders(layers, parallel)
    chunks = len(seqs)
    phases: list[list[Transfer]] = [[] for _ in layers]
    for c, t, layer, before, after in chunk_steps(seqs):
        nbytes = Fraction(payload * len(before) * len(after), chunks * size)
        for x in range(size):
            origins = translate(x, before)
            for s in layer:
                dests = translate(x ^ s, after)
                item = Item("route", 1 << c, origins, dests)
                phases[t].append(Transfer(x, x ^ s, s, nbytes, (item,)))
    return make_program(
        "bruck-parallel" if parallel else "bruck",
        "all-to-all",
        topo.bits,
        payload,
        chunks,
        phases,
        unit=Fraction(payload, chunks * size),
    )


register_pair(
    "all-to-all",
    ("bruck", "bruck-parallel"),
    (
        "radix-r Bruck: one tiling layer per phase",
        "l chunks of Bruck in rotated layer orders; priced by the narrowest layer",
    ),
    _cost,
    _layers,
    _build,
)


# -- tree-route: no layers (runs on irregular folds) -------------------------------------


def _route_cost(topo: Topology) -> ClosedForm:
    """Hop k over generator g carries, per node, every block bound for the subtrees
    behind g at depth k."""
    if topo.bits == 0:
        return ClosedForm(0, Fraction(0), 0)
    _, below = subtrees(topo)
    return tree_cost(topo, tree_counts(topo, {d: len(b) for d, b in below.items()}), topo.size)


def _route_build(topo: Topology, payload: int) -> Program:
    _, below = subtrees(topo)
    size = topo.size
    phases: list[list[Transfer]] = []
    for by_gen in tree_phases(topo):
        phase: list[Transfer] = []
        for x in range(size):
            for g in sorted(by_gen):
                # hop k of every offset in a's subtree: the block from o = x ^ g ^ a
                # (it reached o ^ a ^ g after k - 1 hops) to o ^ offset
                items = tuple(
                    Item("route", 1, 1 << (x ^ g ^ a), 1 << (x ^ g ^ a ^ offset))
                    for a in sorted(by_gen[g])
                    for offset in sorted(below[a])
                )
                phase.append(Transfer(x, x ^ g, g, Fraction(payload * len(items), size), items))
        phases.append(phase)
    return make_program("tree-route", "all-to-all", topo.bits, payload, 1, phases, unit=Fraction(payload, size))


register_unlayered("all-to-all", "tree-route",
                   "each block along its balanced shortest-path tree, one hop per phase (no layers)",
                   _route_cost, _route_build)
