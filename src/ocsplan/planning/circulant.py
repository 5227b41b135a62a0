"""The least-diameter search over circulants on Z_N (paper App. A.6).

The graph type is :class:`ocsplan.circulant.Circulant`, one layer below. A pair
{s, N - s} with s != N/2 contributes two ports, the involution N/2 (N even) one;
an odd degree therefore needs N even and contains N/2.

:func:`least_diameter` picks the connection set of a degree with the smallest
diameter (then the fewest offset pairs with odd cycles, which need a third port
when colored onto rails, then the smallest total distance, then the
lexicographically smallest offsets): exhaustively while the number of candidate sets is at most
``exhaustive_limit``, otherwise by seeded sampling plus local search, whose
result is an upper bound reported with :func:`moore_bound` beside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations
from math import comb

import numpy as np
import numpy.typing as npt

from ..cayley import group_distances
from ..circulant import Circulant

__all__ = [
    "EXHAUSTIVE_LIMIT",
    "MAX_SIZE",
    "CirculantChoice",
    "degree_problem",
    "lattice_ball",
    "least_diameter",
    "moore_bound",
]

EXHAUSTIVE_LIMIT = 20_000  # candidate connection sets evaluated exhaustively at most
MAX_SIZE = 4096  # largest axis a circulant is searched for (documented limit)
_UNREACHED = np.iinfo(np.int32).max


def _representatives(size: int) -> list[int]:
    """Offsets s with 0 < s < N/2: each stands for the pair {s, N - s}."""
    return list(range(1, (size + 1) // 2))


def degree_problem(size: int, degree: int) -> str | None:
    """Why no connected circulant on Z_size has this degree, or None if one has."""
    if size < 1:
        return f"axis size must be >= 1, got {size}"
    if size == 1:
        return None if degree == 0 else f"an axis of 1 rank needs no ports, got degree {degree}"
    if degree < 1 or degree > size - 1:
        return f"degree {degree} outside 1..{size - 1} on Z_{size}"
    if degree % 2 and size % 2:
        return f"odd degree {degree} on Z_{size}: N is odd, so no offset is its own negative"
    if degree == 1 and size > 2:
        return f"degree 1 on Z_{size} is a matching, not connected (needs degree >= 2)"
    return None


def _scores(size: int, offsets: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """(diameter, tie-break key) per row; disconnected rows get a huge diameter.

    The key orders equal diameters by the number of offset pairs whose cycles are
    odd (N / gcd(N, s) odd: such a pair needs three ports, not two, when its circuits
    are colored onto rails), then by the total distance from 0.
    """
    dist = group_distances(size, offsets, "add").astype(np.int64)
    unreached = dist < 0
    diam = np.where(unreached.any(axis=1), _UNREACHED, dist.max(axis=1))
    total = np.where(unreached, 0, dist).sum(axis=1)
    odd = ((size // np.gcd(size, offsets)) % 2 == 1).sum(axis=1) // 2
    return diam, odd * (size * size + 1) + total


def lattice_ball(pairs: int, radius: int) -> int:
    """Points of Z^pairs within L1 distance ``radius``: sum_i 2^i C(pairs, i) C(radius, i)."""
    if radius < 0:
        return 0
    return sum((1 << i) * comb(pairs, i) * comb(radius, i) for i in range(min(pairs, radius) + 1))


def moore_bound(size: int, degree: int) -> int:
    """Moore-type lower bound on the diameter of a circulant of this degree on Z_size.

    In an abelian Cayley graph with generator pairs ±s_1..±s_k every label within
    distance D is sum c_i s_i with sum |c_i| <= D, so |Ball(D)| is at most the
    lattice ball of Z^k; an involution N/2 (odd degree) adds at most one more step.
    """
    if size <= 1:
        return 0
    if degree >= size - 1:
        return 1
    pairs, involution = divmod(degree, 2)
    radius = 1
    while True:
        reach = lattice_ball(pairs, radius) + (lattice_ball(pairs, radius - 1) if involution else 0)
        if reach >= size:
            return max(radius, 2)
        radius += 1


@dataclass(frozen=True)
class CirculantChoice:
    """A least-diameter search result: ``diameter`` is proven minimal when ``exact``."""

    graph: Circulant
    diameter: int
    method: str  # "exhaustive", "complete" (degree N - 1) or "sampled"
    lower_bound: int
    candidates: int  # connection sets evaluated

    @property
    def exact(self) -> bool:
        return self.method != "sampled" or self.diameter == self.lower_bound


def _best_row(
    size: int, reps: npt.NDArray[np.int64], involution: bool
) -> tuple[int, int, tuple[int, ...]]:
    """(diameter, tie-break key, representatives) of the best row (ties: first row)."""
    full = _full_sets(size, reps, involution)
    diam, total = _scores(size, full)
    order = np.lexsort((total, diam))
    best = int(order[0])
    return int(diam[best]), int(total[best]), tuple(int(s) for s in reps[best])


def _full_sets(size: int, reps: npt.NDArray[np.int64], involution: bool) -> npt.NDArray[np.int64]:
    parts = [reps, size - reps]
    if involution:
        parts.append(np.full((reps.shape[0], 1), size // 2, dtype=np.int64))
    return np.concatenate(parts, axis=1)


def _exhaustive(size: int, pairs: int, involution: bool) -> tuple[int, tuple[int, ...], int]:
    candidates = _representatives(size)
    best: tuple[int, int, tuple[int, ...]] | None = None
    evaluated = 0
    chunk: list[tuple[int, ...]] = []

    def flush() -> None:
        nonlocal best, evaluated
        if not chunk:
            return
        reps = np.array(chunk, dtype=np.int64).reshape(len(chunk), pairs)
        found = _best_row(size, reps, involution)
        evaluated += len(chunk)
        chunk.clear()
        if best is None or found < best:
            best = found

    for combo in combinations(candidates, pairs):
        chunk.append(combo)
        if len(chunk) == 2048:
            flush()
    flush()
    assert best is not None
    return best[0], best[2], evaluated


def _sampled(
    size: int, pairs: int, involution: bool, seed: int, samples: int, rounds: int
) -> tuple[int, tuple[int, ...], int]:
    rng = np.random.default_rng(seed)
    pool = np.array(_representatives(size), dtype=np.int64)
    starts = [np.sort(rng.choice(pool, size=pairs, replace=False)) for _ in range(samples)]
    # a structured start: offsets spread evenly over 1 .. N/2
    spread = np.unique(np.linspace(1, pool[-1], pairs).round().astype(np.int64))
    if spread.size == pairs:
        starts.append(spread)
    reps = np.array(starts, dtype=np.int64)
    full = _full_sets(size, reps, involution)
    diam, total = _scores(size, full)
    evaluated = reps.shape[0]
    order = np.lexsort((total, diam))
    current = reps[order[0]].copy()
    score = (int(diam[order[0]]), int(total[order[0]]))
    lower = moore_bound(size, 2 * pairs + involution)
    stale = 0
    for _ in range(rounds):
        if score[0] <= lower and stale > 2:
            break
        batch = np.repeat(current[None, :], samples, axis=0)
        slots = rng.integers(0, pairs, size=samples)
        values = rng.choice(pool, size=samples)
        batch[np.arange(samples), slots] = values
        batch.sort(axis=1)
        distinct = (np.diff(batch, axis=1) != 0).all(axis=1)
        batch = batch[distinct]
        if batch.shape[0] == 0:
            stale += 1
            continue
        diam, total = _scores(size, _full_sets(size, batch, involution))
        evaluated += batch.shape[0]
        order = np.lexsort((total, diam))
        candidate = (int(diam[order[0]]), int(total[order[0]]))
        if candidate < score:
            score, current, stale = candidate, batch[order[0]].copy(), 0
        else:
            stale += 1
            if stale > 6:
                break
    return score[0], tuple(int(s) for s in current), evaluated


@lru_cache(maxsize=1024)
def least_diameter(
    size: int,
    degree: int,
    *,
    seed: int = 0,
    exhaustive_limit: int = EXHAUSTIVE_LIMIT,
    samples: int = 256,
    rounds: int = 60,
) -> CirculantChoice:
    """The connected circulant of ``degree`` on Z_size with the least diameter found.

    Raises ValueError (with :func:`degree_problem`'s message) if none exists.
    """
    problem = degree_problem(size, degree)
    if problem is not None:
        raise ValueError(problem)
    if size > MAX_SIZE:
        raise ValueError(f"axis of {size} ranks exceeds the circulant search limit {MAX_SIZE}")
    lower = moore_bound(size, degree)
    if size == 1:
        graph = Circulant(1, ())
        return CirculantChoice(graph, 0, "complete", 0, 1)
    if degree == size - 1:
        graph = Circulant.complete(size)
        return CirculantChoice(graph, 1, "complete", 1, 1)
    pairs, odd = divmod(degree, 2)
    involution = bool(odd)
    if pairs == 0:  # degree 1 on Z_2
        graph = Circulant(size, (size // 2,))
        return CirculantChoice(graph, graph.diameter, "exhaustive", lower, 1)
    total = comb(len(_representatives(size)), pairs)
    if total <= exhaustive_limit:
        diameter, reps, evaluated = _exhaustive(size, pairs, involution)
        method = "exhaustive"
    else:
        diameter, reps, evaluated = _sampled(size, pairs, involution, seed, samples, rounds)
        method = "sampled"
    graph = Circulant.from_representatives(size, list(reps) + ([size // 2] if involution else []))
    return CirculantChoice(graph, diameter, method, lower, evaluated)
