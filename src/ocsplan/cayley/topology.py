"""An axis graph Cay((Z2)^bits, gens): :class:`Topology`, its name, distances and tilings."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

from .distances import block_distance_counts, distance_array
from .folds import block_fold, block_fold_profile, fold_name
from .masks import gf2_rank, mask_to_str
from .tiling import TilingSearch, is_tiling, min_tilings

__all__ = [
    "Topology",
    "topology_name",
]


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
