"""Circulant graphs on Z_N, the stacked-link axes' topology (paper App. A.6).

A circulant ``C_N(S)`` joins x and x + s (mod N) for every offset s of its
connection set S, which is closed under negation (s in S iff N - s in S), so the
graph is undirected and |S| is its degree: one port per offset and node. A pair
{s, N - s} with s != N/2 contributes two ports, the involution N/2 (N even) one.
Distances come from :func:`ocsplan.cayley.group_distances`, the BFS the Cayley
graphs of (Z2)^n use too; the least-diameter search is the planner's
(:mod:`ocsplan.planning.circulant`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from .cayley import ball_sizes, group_distances

__all__ = ["Circulant"]


@dataclass(frozen=True)
class Circulant:
    """``C_size(offsets)``: offsets are the full connection set, ascending, closed under negation."""

    size: int
    offsets: tuple[int, ...]

    def __post_init__(self) -> None:
        if self.size < 1:
            raise ValueError(f"circulant size must be >= 1, got {self.size}")
        values = set(self.offsets)
        if len(values) != len(self.offsets) or tuple(sorted(values)) != self.offsets:
            raise ValueError(f"offsets {self.offsets} must be distinct and ascending")
        for s in self.offsets:
            if not 0 < s < self.size:
                raise ValueError(f"offset {s} outside 1..{self.size - 1}")
            if (self.size - s) not in values:
                raise ValueError(f"offset {s} without its negative {self.size - s} on Z_{self.size}")

    @classmethod
    def from_representatives(cls, size: int, reps: tuple[int, ...] | list[int]) -> Circulant:
        """The circulant whose connection set is {s, -s : s in reps} (mod size)."""
        full = {s % size for s in reps} | {(-s) % size for s in reps}
        return cls(size, tuple(sorted(full - {0})))

    @classmethod
    def complete(cls, size: int) -> Circulant:
        return cls(size, tuple(range(1, size)))

    @property
    def degree(self) -> int:
        return len(self.offsets)

    @property
    def modulus(self) -> int:
        return self.size

    @property
    def gens(self) -> frozenset[int]:
        return frozenset(self.offsets)

    @property
    def representatives(self) -> tuple[int, ...]:
        """Offsets up to N/2 (the usual notation C_N(s_1, ..., s_k))."""
        return tuple(s for s in self.offsets if 2 * s <= self.size)

    @cached_property
    def name(self) -> str:
        if self.size == 1:
            return "K1"
        if self.degree == self.size - 1:
            return f"K{self.size}"
        return f"C{self.size}({','.join(map(str, self.representatives))})"

    def step(self, x: int, offset: int) -> int:
        return (x + offset) % self.size

    @cached_property
    def distances(self) -> tuple[int, ...]:
        """Graph distance from 0 to every label (-1 if unreachable)."""
        import numpy as np

        row = np.array([self.offsets], dtype=np.int64).reshape(1, -1)
        return tuple(group_distances(self.size, row, "add")[0].tolist())

    @cached_property
    def connected(self) -> bool:
        return min(self.distances) >= 0

    @cached_property
    def diameter(self) -> int:
        if not self.connected:
            raise ValueError(f"{self.name} is not connected")
        return max(self.distances)

    @cached_property
    def ball_sizes(self) -> tuple[int, ...]:
        """|Ball(k)| for k = 0 .. diameter."""
        if not self.connected:
            raise ValueError(f"{self.name} is not connected")
        return ball_sizes(self.distances)
