"""All-to-all schedules: radix-r Bruck over a tiling and its parallel variant.

The payload sigma is each rank's send buffer: M blocks of sigma / M, one per
destination. A block travels from origin o to destination d along the unique
decomposition of o XOR d over the layers, one layer per phase.
"""

from __future__ import annotations

from fractions import Fraction

from ..cayley import Topology
from .base import (
    ClosedForm,
    Item,
    Program,
    Transfer,
    partial_sums,
    radix,
    register_pair,
    rotations,
    suffix_sums,
    translate,
)

__all__: list[str] = []

Layers = list[tuple[int, ...]]


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
    count = len(layers)
    orders = rotations(count) if parallel else [list(range(count))]
    chunks = len(orders)
    phases: list[list[Transfer]] = [[] for _ in range(count)]
    for c, order in enumerate(orders):
        seq = [layers[j] for j in order]
        prefix = partial_sums(seq)
        suffix = suffix_sums(seq)
        for t, layer in enumerate(seq):
            blocks = len(prefix[t]) * len(suffix[t])
            nbytes = Fraction(payload * blocks, chunks * size)
            for x in range(size):
                origins = translate(x, prefix[t])
                for s in layer:
                    dests = translate(x ^ s, suffix[t])
                    item = Item("route", 1 << c, origins, dests)
                    phases[t].append(Transfer(x, x ^ s, s, nbytes, (item,)))
    return Program(
        schedule="bruck-parallel" if parallel else "bruck",
        collective="all-to-all",
        bits=topo.bits,
        payload=payload,
        segments=chunks,
        unit=Fraction(payload, chunks * size),
        phases=tuple(tuple(p) for p in phases if p),
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
