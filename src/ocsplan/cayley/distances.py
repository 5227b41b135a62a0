"""Distances in Cayley graphs: the one breadth-first search (Z2^n and Z_N), counts, balls."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "ball_sizes",
    "block_distance_counts",
    "cayley_distances",
    "distance_array",
    "group_distances",
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


def block_distance_counts(sizes: Iterable[int]) -> tuple[int, ...]:
    """Labels at each distance 0, 1, .. from label 0 in the block fold with sub-blocks
    of these bit counts: the convolution of the per-block [1, 2**k - 1] (a label's
    distance is the number of sub-blocks on which it is non-zero)."""
    counts = [1]
    for k in sizes:
        w = (1 << k) - 1
        counts = [a + w * b for a, b in zip([*counts, 0], [0, *counts], strict=True)]
    return tuple(counts)


def ball_sizes(distances: Sequence[int]) -> tuple[int, ...]:
    """|Ball(k)| for k = 0 .. max distance, from a connected graph's distances to one node."""
    counts = [0] * (max(distances) + 1)
    for d in distances:
        counts[d] += 1
    return tuple(itertools.accumulate(counts))
