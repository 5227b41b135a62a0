"""Multiplicity allocation: how many parallel circuits each generator gets.

Given the generators a configuration installs (each with a port cost per unit,
1 for a circuit, 2 for a ring), the generator sets the demands' options run on,
and the ports left over, raise generator levels to minimise the objective
sum over demands of min over options (latency + volume / effective multiplicity),
a set's effective multiplicity being the lowest level among its generators.

This is a small knapsack over overlapping sets; the planner calls it thousands
of times per instance, so candidate moves are priced in batches with numpy.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from itertools import accumulate, chain
from typing import NamedTuple, TypeVar

import numpy as np
import numpy.typing as npt

__all__ = ["NEGLIGIBLE", "Allocator", "Arrays", "allocate", "lower_bound", "option_arrays", "undominated"]

Options = Sequence[Sequence[tuple[float, float, int]]]  # per demand: (latency s, volume s at p = 1, set)
Arrays = tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.int64]]  # see option_arrays
Result = tuple[float, list[int], list[int]]  # objective, level per generator, level per set

T = TypeVar("T")
NEGLIGIBLE = 1e-7  # a move must save this share of the objective to be made
_BIG = 1 << 30


def allocate(
    sets: Sequence[Sequence[int]], weights: Sequence[int], options: Options, spare: int, effort: int = 1,
    late: Callable[[], bool] | None = None, arrays: Arrays | None = None,
) -> Result:
    """Levels for the generators: the better of two greedy allocations.

    One greedy raises the set with the most time saved per port (effort >= 0),
    the other (effort >= 1) the set with the most time saved within the ports
    left, so that cheap small gains do not crowd out one large investment.
    Effort 2 adds a local search: lower one set, refill greedily, keep what helps
    (a greedy fills a knapsack badly at its end). Effort -1 prices everything at
    multiplicity 1. The local search stops with its best so far once ``late()`` is true.
    ``arrays``: :func:`option_arrays` of ``options``, when the caller has them already.
    """
    alloc = Allocator(sets, weights, options, arrays)
    start = [1] * len(weights)
    if spare <= 0 or effort < 0:
        return alloc.greedy(start, 0, True)
    budget = spare + sum(weights)
    modes = (True, False) if effort >= 1 else (True,)
    best = min((alloc.greedy(start, spare, per_port) for per_port in modes), key=lambda r: r[0])
    while effort >= 2:
        improved = False
        current = best[1]
        for members in sets:
            top = max((current[g] for g in members), default=1)
            for lower in range(1, top):
                if late is not None and late():
                    return best
                levels = [min(lv, lower) if g in members else lv for g, lv in enumerate(current)]
                left = budget - sum(w * lv for w, lv in zip(weights, levels, strict=True))
                for per_port in (True, False):
                    result = alloc.greedy(levels, left, per_port)
                    if result[0] < best[0] * (1 - 1e-12):
                        best, improved = result, True
        if not improved:
            break
    return best


def lower_bound(
    sets: Sequence[Sequence[int]], weights: Sequence[int], options: Options, spare: int, arrays: Arrays | None = None,
) -> float:
    """A lower bound on the objective of every allocation within ``spare`` ports: lifting
    a set to multiplicity e costs (e - 1) x its generators' ports, so no set passes
    1 + spare // those ports; each demand costs at least its cheapest option there.
    Exact where latency dominates; the planner skips allocations it shows cannot win.
    The per-demand minima come from :func:`option_arrays` (``arrays`` if given; the same
    IEEE operations, a minimum is exact), their sum is Python's, in demand order as ever."""
    if weights.count(1) == len(weights):  # every weight 1: a set's ports are its size
        ceiling = [1 + spare // ports if ports else _BIG for ports in map(len, sets)]
    else:
        weight = weights.__getitem__
        ceiling = [1 + spare // ports if (ports := sum(map(weight, members))) else _BIG for members in sets]
    lat, vol, on = option_arrays(options) if arrays is None else arrays
    cheapest: list[float] = np.minimum.reduce(lat + vol / np.asarray(ceiling, dtype=np.int64)[on], axis=1).tolist()
    return sum(cheapest)


def option_arrays(options: Options) -> Arrays:
    """Per demand (rows) and option (columns): latencies, volumes and sets, each demand's
    row padded to the widest with (inf, 0, set 0): never the cheapest."""
    width = max((len(o) for o in options), default=1)
    pad = (math.inf, 0.0, 0)
    table = np.array([[*opts, *([pad] * (width - len(opts)))] for opts in options], dtype=np.float64)
    table = table.reshape(len(options), width, 3)
    return table[:, :, 0].copy(), table[:, :, 1].copy(), table[:, :, 2].astype(np.int64)


def undominated(opts: Sequence[tuple[float, float, T]]) -> tuple[tuple[float, float, T], ...]:
    """The options that no earlier option on the same set dominates (no more latency and
    no more volume): at every multiplicity that earlier one costs no more and wins the
    tie, so dropping them changes neither a minimum nor which option attains it first.
    Callers prune with it once per option table; :func:`allocate` prices what it gets."""
    kept: list[tuple[float, float, T]] = []
    for lat, vol, s in opts:
        if not any(s == t and a <= lat and b <= vol for a, b, t in kept):
            kept.append((lat, vol, s))
    return tuple(kept)


class Allocator:
    """One allocation problem as arrays: set membership, port weights, options."""

    def __init__(
        self, sets: Sequence[Sequence[int]], weights: Sequence[int], options: Options, arrays: Arrays | None = None,
    ) -> None:
        count, gens = len(sets), len(weights)
        self.sets = sets
        sizes = list(map(len, sets))
        flat = np.fromiter(chain.from_iterable(sets), dtype=np.intp)
        self.member = np.zeros((count, gens), dtype=bool)
        self.member[np.repeat(np.arange(count), sizes), flat] = True
        self.weights = np.asarray(weights, dtype=np.int64)
        self.every = np.arange(count)  # every set: moves on it index no rows
        # every set's members side by side, for one minimum.reduceat in ``price`` (it needs no empty set)
        self.flat: npt.NDArray[np.intp] | None = None
        if sizes and all(sizes):
            self.flat = flat
            self.starts = np.fromiter(accumulate(sizes[:-1], initial=0), dtype=np.intp, count=count)
        else:
            # 0 on members, _BIG elsewhere: a level's maximum with it is the level on members (levels
            # are >= 1) and _BIG elsewhere (levels are far below it), as np.where(member, level, _BIG)
            self.outside = np.where(self.member, 0, _BIG).astype(np.int64)
        self.lat, self.vol, self.on = option_arrays(options) if arrays is None else arrays
        # the same, options by demands: ``price`` takes each demand's minimum across options rows,
        # elementwise (exact in any order), where a reduction over each short row is slow
        self.lat_t, self.vol_t = np.ascontiguousarray(self.lat.T), np.ascontiguousarray(self.vol.T)
        self.on_t = np.ascontiguousarray(self.on.T)
        self.options = options
        self._users: npt.NDArray[np.int64] | None = None
        self._member_weights: npt.NDArray[np.int64] | None = None

    @property
    def member_weights(self) -> npt.NDArray[np.int64]:
        """Per set and generator, its port weight on the set's members, 0 elsewhere (for ``affordable``)."""
        if self._member_weights is None:
            self._member_weights = np.where(self.member, self.weights, 0)
        return self._member_weights

    @property
    def users(self) -> npt.NDArray[np.int64]:
        """Per set, how many demands have an option on it; worked out on first use (only
        a per-port greedy that finds no one-level move asks)."""
        if self._users is None:
            demands, width = self.on.shape
            real = np.arange(width)[None, :] < np.fromiter(map(len, self.options), np.int64, demands)[:, None]
            rows = np.broadcast_to(np.arange(demands)[:, None], self.on.shape)
            sets = max(len(self.sets), 1)
            pairs = np.unique(rows[real] * sets + self.on[real])  # each (demand, set) once
            self._users = np.bincount(pairs % sets, minlength=len(self.sets)).astype(np.int64)
        return self._users

    def price(self, levels: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """For rows of generator levels: every set's level and the objective."""
        if self.flat is not None:  # the least level on each set's members (integers: exact either way)
            eff = np.minimum.reduceat(levels.take(self.flat, axis=1), self.starts, axis=1)
        else:
            eff = np.minimum.reduce(np.maximum(levels[:, None, :], self.outside), axis=2)
        # ufuncs called directly: what ndarray.min and .sum call, without their wrappers
        costs = np.minimum.reduce(np.add(self.lat_t, np.divide(self.vol_t, eff.take(self.on_t, axis=1))), axis=1)
        return eff, np.add.reduce(costs, axis=1)

    def moves(
        self, level: npt.NDArray[np.int64], sets: npt.NDArray[np.int64], targets: npt.NDArray[np.int64]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """Generator levels after raising each listed set to its target, and the ports it costs."""
        member = self.member if sets is self.every else self.member[sets]
        raised = np.where(member, np.maximum(level, targets[:, None]), level)
        extra: npt.NDArray[np.int64] = np.subtract(raised, level) @ self.weights  # integers: exact
        return raised, extra

    def affordable(self, level: npt.NDArray[np.int64], eff: npt.NDArray[np.int64], spare: int) -> list[int]:
        """Per set, the highest level the ports left can lift it to."""
        if spare <= 0:
            return [int(x) for x in eff]
        # the ports to lift set s to eff[s] + k never fall as k grows (0 at k = 0): per set,
        # the largest k <= spare they fit, by bisection (not a table of every k: spare can be 4096)
        low = np.zeros(len(self.sets), dtype=np.int64)  # fits
        high = np.full(len(self.sets), spare, dtype=np.int64)
        while (low < high).any():
            mid = (low + high + 1) // 2
            lift = np.maximum(0, (eff + mid)[:, None] - level) * self.member_weights
            fits = np.add.reduce(lift, axis=1) <= spare
            low, high = np.where(fits, mid, low), np.where(fits, high, mid - 1)
        return [int(e + r) if members else int(e) for e, r, members in zip(eff, low, self.sets, strict=True)]

    def greedy(self, start: list[int], spare: int, per_port: bool) -> Result:
        """From generator levels ``start``, raise one set at a time by the best move:
        one level, by time saved per port (larger jumps only when none helps), or
        the largest saving within the ports left."""
        count = len(self.sets)
        level = np.asarray(start, dtype=np.int64)
        eff_rows, totals = self.price(level[None, :])
        eff, total = eff_rows[0], float(totals[0])
        every = self.every
        while spare > 0:
            choice: _Choice | None = None
            if per_port:
                up = eff + 1
                raised, extra = self.moves(level, every, up)
                choice = self._pick(raised, extra, every, up, total, spare, True)
                if choice is None:
                    tops = self.affordable(level, eff, spare)
                    # a set that some demand runs on, and every demand with an option on it does,
                    # is left out (a demand runs on one of its own options: never more than its users)
                    running, users = self._running(eff).tolist(), self.users.tolist()
                    pairs = [
                        (s, t) for s in range(count) if not running[s] or users[s] > running[s]
                        for t in range(int(eff[s]) + 2, tops[s] + 1)
                    ]
                    if pairs:
                        sets = np.array([p[0] for p in pairs], dtype=np.int64)
                        targets = np.array([p[1] for p in pairs], dtype=np.int64)
                        raised, extra = self.moves(level, sets, targets)
                        choice = self._pick(raised, extra, sets, targets, total, spare, True)
            else:
                targets = np.array(self.affordable(level, eff, spare), dtype=np.int64)
                raised, extra = self.moves(level, every, targets)
                choice = self._pick(raised, extra, every, targets, total, spare, False)
                if choice is not None:
                    choice = self._lowest_equal(level, choice, total)
            if choice is None:
                break
            spare -= choice.ports
            level, eff, total = choice.level, choice.eff, choice.total
        return total, level.tolist(), eff.tolist()

    def _running(self, eff: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Per set, how many demands' cheapest option (the first of equals) runs on it now."""
        costs = self.lat + self.vol / eff[self.on]
        best = self.on[np.arange(len(self.lat)), costs.argmin(axis=1)]
        return np.bincount(best, minlength=len(self.sets)).astype(np.int64)

    def _pick(
        self,
        raised: npt.NDArray[np.int64],
        extra: npt.NDArray[np.int64],
        sets: npt.NDArray[np.int64],
        targets: npt.NDArray[np.int64],
        total: float,
        spare: int,
        per_port: bool,
    ) -> _Choice | None:
        """The best admissible move: largest (score, -ports, -set, -target)."""
        (idx,) = ((extra > 0) & (extra <= spare)).nonzero()
        if not len(idx):
            return None
        eff_rows, new_totals = self.price(raised if len(idx) == len(raised) else raised[idx])
        gains = total - new_totals
        (keep,) = (gains > total * NEGLIGIBLE).nonzero()
        if not len(keep):
            return None
        rows = idx[keep]
        scores = gains[keep] / extra[rows] if per_port else gains[keep]
        (top,) = (scores == np.maximum.reduce(scores)).nonzero()
        if len(top) == 1:
            best = keep[top[0]]
        else:  # lexsort: the last key is the primary one; the best move sorts last
            rows = rows[top]
            best = keep[top[np.lexsort((-targets[rows], -sets[rows], -extra[rows]))[-1]]]
        i = int(idx[best])
        gain = float(gains[best])
        return _Choice(gain / int(extra[i]) if per_port else gain, int(extra[i]), int(sets[i]), int(targets[i]),
                       raised[i], eff_rows[best], float(new_totals[best]))

    def _lowest_equal(self, level: npt.NDArray[np.int64], choice: _Choice, total: float) -> _Choice:
        """The saving grows with the level; take the lowest level that saves as much."""
        gain, s, target = choice.score, choice.set, choice.target
        eff_s = int(self.price(level[None, :])[0][0, s])
        lowest = choice
        while target - 1 > eff_s:
            raised, extra = self.moves(level, np.array([s]), np.array([target - 1]))
            eff_rows, totals = self.price(raised)
            if total - float(totals[0]) < gain * (1 - 1e-12):
                break
            target -= 1
            lowest = _Choice(gain, int(extra[0]), s, target, raised[0], eff_rows[0], float(totals[0]))
        return lowest


class _Choice(NamedTuple):
    """A move: its score, ports, set and target level, and the state it leads to."""

    score: float
    ports: int
    set: int
    target: int
    level: npt.NDArray[np.int64]
    eff: npt.NDArray[np.int64]
    total: float
