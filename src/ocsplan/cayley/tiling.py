"""Tilings of (Z2)^a into layers (direct sumsets): the test and the bounded fewest-layer search."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from .folds import block_fold_groups
from .masks import bits_of, gf2_rank, sub_masks

__all__ = [
    "TILING_BUDGET",
    "TilingSearch",
    "is_tiling",
    "min_tilings",
    "sumset",
]


def sumset(layers: Iterable[Iterable[int]]) -> list[int] | None:
    """Elements of the sum {0}+S_1 + ... if every sum is distinct, else None."""
    elements = [0]
    for layer in layers:
        seen = set(elements)
        grown = list(elements)
        for s in layer:
            for x in elements:
                y = x ^ s
                if y in seen:
                    return None
                seen.add(y)
                grown.append(y)
        elements = grown
    return elements


def is_tiling(layers: Sequence[Sequence[int]], bits: int) -> bool:
    """True when the layers' sumset is direct and covers all 2**bits labels.

    Layers that are subspaces without 0 (all block-fold layers) are decided by ranks
    over GF(2): the sum of subspaces is direct and covers exactly when their
    dimensions add up to ``bits`` and together they span. Others by :func:`sumset`."""
    dims = _subspace_dims(layers, bits)
    if dims is not None:
        return sum(dims) == bits and gf2_rank(g for layer in layers for g in layer) == bits
    elements = sumset(layers)
    return elements is not None and len(elements) == 1 << bits


def _subspace_dims(layers: Sequence[Sequence[int]], bits: int) -> list[int] | None:
    """Each layer's dimension if every layer is the non-zero part of a subspace of
    (Z2)^bits (2**r - 1 distinct non-zero masks of rank r), else None."""
    dims = []
    for layer in layers:
        if any(g <= 0 or g >> bits for g in layer) or len(set(layer)) != len(layer):
            return None
        r = gf2_rank(layer)
        if len(layer) != (1 << r) - 1:
            return None
        dims.append(r)
    return dims


TILING_BUDGET = 2_000_000
"""Work bound of the exact tiling search, in label translations (about 0.1-0.3 s)."""


_STEP_WORK = 24  # overhead of one search step, in label translations


@dataclass(frozen=True)
class TilingSearch:
    """Tilings found and whether they are proven to have the fewest layers.

    ``proven`` is False when the exact search ran out of :data:`TILING_BUDGET`
    before ruling out every smaller layer count ("no tiling found within the bound").
    """

    tilings: tuple[tuple[tuple[int, ...], ...], ...]
    proven: bool

    @property
    def layer_count(self) -> int | None:
        return len(self.tilings[0]) if self.tilings else None


class _OutOfBudget(Exception):
    pass


class _Budget:
    def __init__(self, work: int) -> None:
        self.left = work

    def spend(self, work: int) -> None:
        self.left -= work
        if self.left < 0:
            raise _OutOfBudget


def _least_degree(bits: int, count: int) -> int:
    """Fewest generators of a ``count``-layer tiling of ``bits`` bits (balanced sizes)."""
    if count <= 0:
        return 0 if bits == 0 else 1 << 30
    base, extra = divmod(bits, count)
    if base == 0:
        return 1 << 30 if bits < count else 0
    return extra * ((1 << (base + 1)) - 1) + (count - extra) * ((1 << base) - 1)


def min_tilings(
    gens: Iterable[int], bits: int, budget: int = TILING_BUDGET
) -> TilingSearch:
    """Fewest-layer tilings of (Z2)^bits by layers of ``gens``, by a bounded search.

    Block folds are answered directly. Otherwise a greedy direct sum of subspaces
    inside the generator set gives a tiling (one exists whenever the set spans);
    then a depth-first search, limited to ``budget`` label translations, looks for
    tilings with fewer layers, from the counting lower bound up, and for other
    layer-size multisets at the best count.
    """
    gset = frozenset(gens)
    if bits == 0:
        return TilingSearch(((),), True)
    groups = block_fold_groups(gset, bits)
    if groups is not None:
        # A tile of 2**k labels needs 2**k - 1 generators, so a block fold's
        # fewest-layer tiling is its own sub-blocks.
        return TilingSearch((tuple(tuple(sub_masks(bits_of(grp))) for grp in groups),), True)
    greedy = _greedy_tiling(gset, bits)
    if greedy is None:
        return TilingSearch((), True)
    ordered = sorted(gset)
    found: dict[tuple[int, ...], tuple[tuple[int, ...], ...]] = {
        tuple(sorted(map(len, greedy), reverse=True)): greedy
    }
    best = len(greedy)
    proven = True
    work = _Budget(budget)
    low = next(c for c in range(1, bits + 1) if _least_degree(bits, c) <= len(ordered))
    for count in range(low, best + 1):
        results: dict[tuple[int, ...], tuple[tuple[int, ...], ...]] = {}
        try:
            _search_tilings(ordered, bits, count, results, work)
        except _OutOfBudget:
            if count < best and not results:
                proven = False
        if results:
            if count < best:
                found, best = {}, count
            for key, tiling in results.items():
                found.setdefault(key, tiling)
            break
        if work.left <= 0:
            break
    tilings = tuple(found[key] for key in sorted(found, reverse=True))
    return TilingSearch(tilings, proven)


def _greedy_tiling(gens: frozenset[int], bits: int) -> tuple[tuple[int, ...], ...] | None:
    """A direct sum of subspaces inside gens + {0}, largest first, or None if gens do not span."""
    member = set(gens) | {0}
    ordered = sorted(gens)
    span = [0]
    span_set = {0}
    layers: list[tuple[int, ...]] = []
    while len(span) < 1 << bits:
        best: list[int] = []
        for first in [g for g in ordered if g not in span_set][:32]:
            space = _grow_subspace(first, ordered, member, span_set)
            if len(space) > len(best):
                best = space
        if not best:
            return None
        layers.append(tuple(sorted(x for x in best if x)))
        grown = [x ^ v for x in span for v in best]
        span, span_set = grown, set(grown)
    layers.sort(key=len, reverse=True)
    return tuple(layers)


def _grow_subspace(first: int, ordered: list[int], member: set[int], span: set[int]) -> list[int]:
    """Greedy subspace V of ``member`` containing ``first``, meeting ``span`` only in 0."""
    space = [0, first]
    reach = {x ^ v for x in span for v in space}
    for g in ordered:
        if g in reach:
            continue
        coset = [v ^ g for v in space]
        if all(y in member for y in coset):
            space += coset
            reach |= {x ^ y for x in span for y in coset}
    return space


def _search_tilings(
    gens: list[int],
    bits: int,
    count: int,
    results: dict[tuple[int, ...], tuple[tuple[int, ...], ...]],
    work: _Budget,
    limit: int = 64,
) -> None:
    """Tilings with exactly ``count`` layers, one per multiset of layer sizes, into ``results``.

    Depth first: layers in non-increasing size, equal-size layers ordered by their
    smallest generator, each layer's generators ascending, so every tiling is met once.
    Raises :class:`_OutOfBudget` when ``work`` runs out.
    """

    def extend(
        elements: list[int], layers: list[tuple[int, ...]], max_k: int, first_floor: int
    ) -> None:
        if len(results) >= limit:
            return
        rest = bits - (len(elements).bit_length() - 1)
        left = count - len(layers)
        if left == 0:
            if rest == 0:
                key = tuple(sorted((len(layer) for layer in layers), reverse=True))
                results.setdefault(key, tuple(layers))
            return
        used = {g for layer in layers for g in layer}
        work.spend(len(gens))
        candidates = [g for g in gens if g not in used]
        if len(candidates) < _least_degree(rest, left):
            return
        for k in range(min(max_k, rest - (left - 1)), -(-rest // left) - 1, -1):
            floor = first_floor if k == max_k else 0
            for layer, grown in _layers_of_size(elements, candidates, (1 << k) - 1, floor, work):
                extend(grown, [*layers, layer], k, layer[0] + 1)

    extend([0], [], bits, 0)


def _layers_of_size(
    elements: list[int], candidates: list[int], size: int, first_floor: int, work: _Budget
) -> Iterator[tuple[tuple[int, ...], list[int]]]:
    """Ascending ``size``-subsets of candidates whose sumset with ``elements`` is direct."""

    def rec(
        start: int, chosen: tuple[int, ...], occupied: set[int], grown: list[int]
    ) -> Iterator[tuple[tuple[int, ...], list[int]]]:
        if len(chosen) == size:
            yield chosen, grown
            return
        for idx in range(start, len(candidates) - (size - len(chosen)) + 1):
            s = candidates[idx]
            if not chosen and s < first_floor:
                continue
            work.spend(len(elements) + _STEP_WORK)
            shifted = [x ^ s for x in elements]
            if any(y in occupied for y in shifted):
                continue
            yield from rec(idx + 1, (*chosen, s), occupied.union(shifted), grown + shifted)

    yield from rec(0, (), set(elements), list(elements))
