"""What the layered schedules share (paper App. A.3): the arithmetic of tiling layers (radix,
sumsets, rotated chunk orders), the per-phase masks of a layered program, and the registration
of a layered schedule with its parallel variant. Apart from :mod:`.base` (the data model and
registry) so the collectives import the one and the other in a line each.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from ..cayley import Topology, sumset
from .base import ClosedForm, Program, Schedule, register

__all__ = [
    "Layers",
    "LayersOf",
    "chunk_orders",
    "chunk_steps",
    "partial_sums",
    "radix",
    "register_pair",
    "rotated_masks",
    "rotations",
    "suffix_sums",
    "tiling_gens",
    "translate",
]

Layers = list[tuple[int, ...]]
"""A tiling's layers, each a tuple of generators (a coset layer of radix len + 1)."""

LayersOf = Callable[[Topology, bool], list[tuple[int, ...]]]


def register_pair(
    collective: str,
    names: tuple[str, str],
    descriptions: tuple[str, str],
    cost: Callable[[Topology, bool], ClosedForm],
    layers: LayersOf,
    build: Callable[[Topology, int, bool], Program],
    *,
    one_layer_a_phase: bool = True,
) -> None:
    """Register a layered schedule and its parallel variant (``names[1]``), both
    valid on every connected topology and driving the generators of their layers.
    ``one_layer_a_phase``: each phase sends on one layer (per chunk), so the link pattern is
    :func:`rotated_masks` without a build; False for RS+AG (2l phases), whose pattern is built."""
    for parallel in (False, True):
        _register_variant(collective, names[parallel], descriptions[parallel], cost, layers, build, parallel,
                          one_layer_a_phase)


def _register_variant(
    collective: str,
    name: str,
    description: str,
    cost: Callable[[Topology, bool], ClosedForm],
    layers: LayersOf,
    build: Callable[[Topology, int, bool], Program],
    parallel: bool,
    one_layer_a_phase: bool,
) -> None:
    def cost_of(topo: Topology) -> ClosedForm:
        return cost(topo, parallel)

    def uses(topo: Topology) -> frozenset[int]:
        return tiling_gens(layers(topo, parallel))

    def program(topo: Topology, payload: int) -> Program:
        return build(topo, payload, parallel)

    def layers_of(topo: Topology) -> tuple[tuple[int, ...], ...]:
        return tuple(layers(topo, parallel))

    def masks(topo: Topology) -> tuple[tuple[int, ...], ...]:
        return rotated_masks(layers(topo, parallel), parallel)

    register(Schedule(
        name=name,
        collective=collective,
        description=description,
        valid=lambda topo: topo.connected,
        cost=cost_of,
        uses=uses,
        build=program,
        layers=layers_of,
        masks=masks if one_layer_a_phase else None,
    ))


def rotated_masks(layers: Sequence[tuple[int, ...]], parallel: bool) -> tuple[tuple[int, ...], ...]:
    """Per phase, the generators a layered schedule sends on: layer t, or with ``parallel`` the layer
    each chunk's rotated order reaches at phase t, chunk by chunk (the order the builds append them)."""
    seqs = chunk_orders(layers, parallel)
    phases = (tuple(dict.fromkeys(g for seq in seqs for g in seq[t])) for t in range(len(layers)))
    return tuple(p for p in phases if p)


def radix(layer: tuple[int, ...]) -> int:
    return len(layer) + 1


def translate(x: int, elements: list[int]) -> int:
    """Bitset of the labels x XOR e for e in elements."""
    mask = 0
    for e in elements:
        mask |= 1 << (x ^ e)
    return mask


def partial_sums(layers: list[tuple[int, ...]]) -> list[list[int]]:
    """prefix[j] = elements of A_1 + ... + A_j (prefix[0] = [0])."""
    out = [[0]]
    for j in range(len(layers)):
        elems = sumset(layers[: j + 1])
        assert elems is not None
        out.append(elems)
    return out


def suffix_sums(layers: list[tuple[int, ...]]) -> list[list[int]]:
    """suffix[j] = elements of A_{j+1} + ... + A_l (0-based: layers after j)."""
    out = []
    for j in range(len(layers)):
        elems = sumset(layers[j + 1 :])
        assert elems is not None
        out.append(elems)
    return out


def rotations(count: int) -> list[list[int]]:
    """Layer orders of the parallel variants: chunk c starts at layer c."""
    return [[(c + t) % count for t in range(count)] for c in range(count)]


def tiling_gens(layers: Sequence[tuple[int, ...]]) -> frozenset[int]:
    """The generators a layered schedule drives: every generator of its layers."""
    return frozenset(g for layer in layers for g in layer)


def chunk_orders(layers: Sequence[tuple[int, ...]], parallel: bool) -> list[list[tuple[int, ...]]]:
    """The layers in the order each chunk visits them: one chunk in layer order, or with ``parallel``
    chunk c from layer c on (:func:`rotations`; no chunk without layers)."""
    count = len(layers)
    orders = rotations(count) if parallel else [list(range(count))]
    return [[layers[j] for j in order] for order in orders]


def chunk_steps(seqs: Sequence[Sequence[tuple[int, ...]]]) -> Iterator[tuple[int, int, tuple[int, ...], list[int],
                                                                             list[int]]]:
    """Chunk by chunk, step by step (the order the layered builds append transfers in): chunk c,
    step t, the layer it crosses, and the sumsets of the layers it crossed before and crosses after."""
    for c, seq in enumerate(seqs):
        prefix, suffix = partial_sums(list(seq)), suffix_sums(list(seq))
        for t, layer in enumerate(seq):
            yield c, t, layer, prefix[t], suffix[t]
