"""Cayley graphs of (Z2)^a: masks, blocks, folds, balls, tilings into layers.

Everything here works in *local* coordinates of one axis: an axis of ``a`` bits
has labels ``0 .. 2**a - 1`` and generators are non-zero masks below ``2**a``.
:func:`compress` and :func:`expand` map between an axis's global bit positions
and local ones (local bit i is the i-th lowest global bit of the block).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "TILING_BUDGET",
    "TilingSearch",
    "Topology",
    "axis_generators",
    "ball_sizes",
    "bits_of",
    "block_distance_counts",
    "block_fold",
    "block_fold_groups",
    "block_fold_profile",
    "cayley_distances",
    "compress",
    "coset_bases",
    "distance_array",
    "expand",
    "fold_masks",
    "fold_name",
    "folds_of_mask",
    "gf2_rank",
    "group_distances",
    "is_tiling",
    "mask_of",
    "mask_to_str",
    "min_tilings",
    "popcount",
    "profile_degree",
    "profile_folds",
    "str_to_mask",
    "sub_masks",
    "sumset",
    "topology_name",
]


_SMALL_WORK = 4096  # labels x generators below which the plain loop is faster (measured)


def _small_distances(size: int, gens: list[int], group: str) -> list[int]:
    """:func:`group_distances` of one small graph, a list at a time."""
    dist = [-1] * size
    dist[0] = 0
    frontier = [0]
    while frontier:
        nxt = []
        for x in frontier:
            for g in gens:
                y = x ^ g if group == "xor" else (x + g) % size
                if dist[y] < 0:
                    dist[y] = dist[x] + 1
                    nxt.append(y)
        frontier = nxt
    return dist


def group_distances(size: int, gens: npt.NDArray[np.int64], group: str = "xor") -> npt.NDArray[np.int32]:
    """Breadth-first distances from label 0 in a batch of Cayley graphs on ``size`` labels,
    one connection set per row of ``gens`` (count x degree); -1 marks a label not reached.

    ``group`` "xor": (Z2)^n (``size`` = 2**n, the cubes and folds); "add": Z_N under
    addition mod ``size`` (circulants). The one shortest-path routine of the package: a
    frontier at a time, a few vector operations per generator and depth, no Python loop
    over labels, each row's labels in their own block of one flat array; small graphs
    (up to :data:`_SMALL_WORK` label steps) by a plain loop, which beats numpy's call overhead.
    """
    import numpy as np

    count, degree = gens.shape
    if count * size * max(degree, 1) <= _SMALL_WORK:
        flat = [d for row in gens.tolist() for d in _small_distances(size, row, group)]
        return np.array(flat, dtype=np.int32).reshape(count, size)
    dist = np.full(count * size, -1, dtype=np.int32)
    frontier = np.arange(count, dtype=np.int64) * size  # label 0 of every row
    dist[frontier] = 0
    columns = [gens[:, j].astype(np.int64) for j in range(degree)]
    k = 0
    while frontier.size:
        k += 1
        if count == 1:  # one graph: no row arithmetic
            labels, base, steps = frontier, None, [c[:1] for c in columns]
        else:
            rows, labels = np.divmod(frontier, size)
            base, steps = rows * size, [c[rows] for c in columns]
        for g in steps:
            reached = labels ^ g if group == "xor" else (labels + g) % size
            if base is not None:
                reached += base
            dist[reached[dist[reached] < 0]] = k
        frontier = np.flatnonzero(dist == k)
    return dist.reshape(count, size)


def cayley_distances(gens: Iterable[int], bits: int) -> tuple[int, ...]:
    """Distance from label 0 to every label of the Cayley graph of Z_2^bits with
    generators ``gens`` (-1 if unreachable), by :func:`group_distances`."""
    return tuple(distance_array(gens, bits).tolist())


def distance_array(gens: Iterable[int], bits: int) -> npt.NDArray[np.int32]:
    """:func:`cayley_distances` as a numpy array (:func:`group_distances` on one row)."""
    import numpy as np

    row = np.array([sorted(set(gens))], dtype=np.int64).reshape(1, -1)
    return group_distances(1 << bits, row).reshape(1 << bits)


def gf2_rank(vectors: Iterable[int]) -> int:
    """Rank over GF(2) of the masks (the dimension of the subgroup they generate)."""
    basis: dict[int, int] = {}  # leading bit -> basis vector
    for v in vectors:
        while v:
            top = v.bit_length() - 1
            if top not in basis:
                basis[top] = v
                break
            v ^= basis[top]
    return len(basis)


def block_distance_counts(sizes: Iterable[int]) -> tuple[int, ...]:
    """Labels at each distance 0, 1, .. from label 0 in the block fold with sub-blocks
    of these bit counts: the convolution of the per-block [1, 2**k - 1] (a label's
    distance is the number of sub-blocks on which it is non-zero)."""
    counts = [1]
    for k in sizes:
        w = (1 << k) - 1
        counts = [a + w * b for a, b in zip([*counts, 0], [0, *counts], strict=True)]
    return tuple(counts)


def popcount(mask: int) -> int:
    """Hamming weight of a mask."""
    return mask.bit_count()


def mask_to_str(mask: int, width: int) -> str:
    """Bit string, most significant bit first (``0b1100`` on 4 bits is ``"1100"``)."""
    return format(mask, f"0{width}b") if width else ""


def str_to_mask(text: str) -> int:
    """Inverse of :func:`mask_to_str`; raises ValueError on anything but 0/1."""
    if not text or any(c not in "01" for c in text):
        raise ValueError(f"not a bit string: {text!r}")
    return int(text, 2)


def bits_of(mask: int) -> tuple[int, ...]:
    """Bit positions set in ``mask``, highest first."""
    return tuple(b for b in range(mask.bit_length() - 1, -1, -1) if mask >> b & 1)


def mask_of(bits: Iterable[int]) -> int:
    """Mask with the given bit positions set."""
    mask = 0
    for b in bits:
        mask |= 1 << b
    return mask


def sub_masks(bits: Iterable[int]) -> list[int]:
    """All non-zero masks supported on ``bits`` (a complete layer), ascending."""
    return list(_sub_masks(mask_of(bits)))


def fold_masks(bits: Iterable[int]) -> list[int]:
    """The folds (weight >= 2) among :func:`sub_masks`."""
    return list(_fold_masks(mask_of(bits)))


def folds_of_mask(block: int) -> tuple[int, ...]:
    """:func:`fold_masks` of the bits of ``block``, ascending (remembered)."""
    return _fold_masks(block)


@lru_cache(maxsize=8192)
def _sub_masks(block: int) -> tuple[int, ...]:
    out = []
    sub = block
    while sub:
        out.append(sub)
        sub = (sub - 1) & block
    return tuple(sorted(out))


@lru_cache(maxsize=8192)
def _fold_masks(block: int) -> tuple[int, ...]:
    return tuple(m for m in _sub_masks(block) if m & (m - 1))


def compress(mask: int, block_bits: Sequence[int]) -> int:
    """Global mask supported on ``block_bits`` to the axis's local mask."""
    local = 0
    for i, b in enumerate(sorted(block_bits)):
        if mask >> b & 1:
            local |= 1 << i
    if mask & ~mask_of(block_bits):
        raise ValueError(f"mask {mask:b} leaves the block {sorted(block_bits)}")
    return local


def expand(local: int, block_bits: Sequence[int]) -> int:
    """Local mask of an axis to the global mask."""
    mask = 0
    for i, b in enumerate(sorted(block_bits)):
        if local >> i & 1:
            mask |= 1 << b
    return mask


def axis_generators(gens: Iterable[int], block_bits: Sequence[int]) -> list[int]:
    """The support rule: the host generators whose set bits all lie in the block, ascending."""
    block = mask_of(block_bits)
    return sorted(g for g in gens if g and g & ~block == 0)


def coset_bases(block_bits: Sequence[int], n: int) -> list[int]:
    """One label per collective group of an axis: every label with zeros on the block.

    The group of base b is {b | expand(x, block_bits) for every local label x}.
    """
    outside = [b for b in range(n) if b not in set(block_bits)]
    return sorted(expand(x, outside) for x in range(1 << len(outside)))


def profile_degree(sizes: Iterable[int]) -> int:
    """Degree of the block fold with sub-blocks of these bit counts."""
    return sum((1 << k) - 1 for k in sizes)


def profile_folds(sizes: Iterable[int]) -> int:
    """Fold generators (weight >= 2) of that block fold."""
    return sum((1 << k) - 1 - k for k in sizes)


def fold_name(sizes: Sequence[int]) -> str:
    """Name of a block fold: ``Q5``, ``K4``, ``Q6[3,3] = K8□K8``."""
    parts = sorted(sizes, reverse=True)
    a = sum(parts)
    if a == 0:
        return "K1"
    if all(k == 1 for k in parts):
        return f"Q{a}"
    if len(parts) == 1:
        return f"K{1 << a}"
    product = "□".join(f"K{1 << k}" for k in parts)
    return f"Q{a}[{','.join(map(str, parts))}] = {product}"


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


def block_fold(sizes: Sequence[int]) -> tuple[tuple[int, ...], ...]:
    """Layers (local masks) of the block fold with these sub-block sizes.

    Sub-blocks are laid out from the most significant local bit down, largest first,
    so ``block_fold((3, 3))`` puts one K8 on bits 5..3 and one on bits 2..0.
    """
    a = sum(sizes)
    layers = []
    top = a
    for k in sorted(sizes, reverse=True):
        bits = range(top - k, top)
        layers.append(tuple(sub_masks(bits)))
        top -= k
    return tuple(layers)


def block_fold_groups(gens: Iterable[int], bits: int) -> tuple[int, ...] | None:
    """The sub-blocks (as masks, largest first) if ``gens`` is exactly a block fold."""
    gset = set(gens)
    parent = list(range(bits))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for g in gset:
        if g <= 0 or g >> bits:
            return None
        support = bits_of(g)
        for b in support[1:]:
            parent[find(b)] = find(support[0])
    groups: dict[int, int] = {}
    for b in range(bits):
        groups[find(b)] = groups.get(find(b), 0) | 1 << b
    expected: set[int] = set()
    for grp in groups.values():
        expected.update(sub_masks(bits_of(grp)))
    if expected != gset:
        return None
    return tuple(sorted(groups.values(), key=lambda m: (-popcount(m), -m)))


def block_fold_profile(gens: Iterable[int], bits: int) -> tuple[int, ...] | None:
    """Sub-block sizes (largest first) if ``gens`` is exactly a block fold, else None."""
    groups = block_fold_groups(gens, bits)
    return None if groups is None else tuple(popcount(g) for g in groups)


def topology_name(gens: Iterable[int], bits: int) -> str:
    """Readable name of an axis graph: block folds by name, else cube plus folds."""
    gset = set(gens)
    profile = block_fold_profile(gset, bits)
    if profile is not None:
        return fold_name(profile)
    units = {1 << b for b in range(bits)}
    if units <= gset:
        extra = sorted(gset - units)
        if extra == [(1 << bits) - 1]:
            return f"FQ{bits}"
        if len(extra) <= 3:
            return f"Q{bits}+" + "+".join(mask_to_str(g, bits) for g in extra)
        return f"Q{bits}+{len(extra)} folds"
    return f"Cay(Z2^{bits}, {len(gset)} generators)"


def ball_sizes(distances: Sequence[int]) -> tuple[int, ...]:
    """|Ball(k)| for k = 0 .. max distance, from a connected graph's distances to one node."""
    counts = [0] * (max(distances) + 1)
    for d in distances:
        counts[d] += 1
    return tuple(itertools.accumulate(counts))


@dataclass(frozen=True)
class Topology:
    """An axis graph Cay((Z2)^bits, gens) in local coordinates.

    ``layers`` optionally fixes the tiling the layered schedules run on (the
    planner passes its block-fold profile); otherwise the fewest-layer tilings
    are searched.
    """

    bits: int
    gens: frozenset[int]
    layers: tuple[tuple[int, ...], ...] | None = None

    def __post_init__(self) -> None:
        for g in self.gens:
            if g <= 0 or g >> self.bits:
                raise ValueError(f"generator {g:b} is not a non-zero mask on {self.bits} bits")
        if self.layers is not None:
            used = {g for layer in self.layers for g in layer}
            if not used <= self.gens:
                raise ValueError("layers use generators outside the topology")
            if not is_tiling(self.layers, self.bits):
                raise ValueError("layers do not tile the group")

    @classmethod
    def cube(cls, bits: int) -> Topology:
        return cls(bits, frozenset(1 << b for b in range(bits)))

    @classmethod
    def from_profile(cls, sizes: Sequence[int]) -> Topology:
        """The block fold with the given sub-block sizes, its layers fixed."""
        layers = block_fold(sizes)
        gens = frozenset(g for layer in layers for g in layer)
        return cls(sum(sizes), gens, layers)

    @classmethod
    def with_folds(cls, bits: int, folds: Iterable[int]) -> Topology:
        """The cube Q_bits plus extra generators (``Q4+1100``)."""
        return cls(bits, frozenset({1 << b for b in range(bits)} | set(folds)))

    @property
    def size(self) -> int:
        return 1 << self.bits

    @property
    def degree(self) -> int:
        return len(self.gens)

    @cached_property
    def name(self) -> str:
        return topology_name(self.gens, self.bits)

    @cached_property
    def has_units(self) -> bool:
        return all(1 << b in self.gens for b in range(self.bits))

    @cached_property
    def block_profile(self) -> tuple[int, ...] | None:
        """Sub-block sizes (largest first) when the generators are exactly a block fold."""
        return block_fold_profile(self.gens, self.bits)

    @cached_property
    def distances(self) -> tuple[int, ...]:
        """Graph distance from label 0 to every label (-1 if unreachable): a tuple of
        2**bits entries; :attr:`distance_counts` and :attr:`connected` need none."""
        return tuple(distance_array(self.gens, self.bits).tolist())

    @cached_property
    def connected(self) -> bool:
        """Whether the generators span (Z2)^bits (rank over GF(2), no search)."""
        return gf2_rank(self.gens) == self.bits

    @cached_property
    def distance_counts(self) -> tuple[int, ...]:
        """Labels at distance 0, 1, .., diameter from label 0 (connected topologies).

        Block folds in closed form (:func:`block_distance_counts`), others by a search."""
        if not self.connected:
            raise ValueError(f"{self.name} is not connected")
        if self.block_profile is not None:
            return block_distance_counts(self.block_profile)
        import numpy as np

        return tuple(np.bincount(distance_array(self.gens, self.bits)).tolist())

    @cached_property
    def diameter(self) -> int:
        return len(self.distance_counts) - 1

    @cached_property
    def ball_sizes(self) -> tuple[int, ...]:
        """|Ball(k)| for k = 0 .. diameter."""
        return tuple(itertools.accumulate(self.distance_counts))

    @cached_property
    def tiling_search(self) -> TilingSearch:
        """The bounded search for fewest-layer tilings (see :func:`min_tilings`)."""
        if self.layers is not None:
            return TilingSearch((self.layers,), True)
        return min_tilings(self.gens, self.bits)

    @cached_property
    def tilings(self) -> tuple[tuple[tuple[int, ...], ...], ...]:
        """Fewest-layer tilings found, one per multiset of layer sizes (the costs depend on no more).

        Fewest among all tilings when ``tiling_search.proven``; otherwise the best
        found within :data:`TILING_BUDGET`. Empty only for a disconnected topology.
        """
        return self.tiling_search.tilings


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
