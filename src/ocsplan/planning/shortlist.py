"""Shortlists of partition classes for the heuristic (issue 12 item 5: the `wide` family).

Instances with several meshes of several axes have up to hundreds of thousands of
partition classes, too many to screen each with a descent pass. With more than
:data:`SHORTLIST_FROM`, two cheap proxies rank them (:func:`proxies`) and the best by
each are screened; the moves across partition classes of
:mod:`ocsplan.planning.repartition` look beyond them from the best final state.
Deterministic: ties break by index.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import chain, islice

from .context import Context, better
from .placement import installed_folds
from .search import Search
from .space import RING, Groups, Partition, Shape, neighbour_partitions, partition_table

__all__ = ["SHORTLIST_FINALISTS", "SHORTLIST_FROM", "Shortlist", "UnitPricer", "proxies", "shortlist_partitions"]

SHORTLIST_FROM = 48  # with more partition classes than this, screen only a shortlist:
SHORTLIST = 16  # the best this many by each of two cheap proxies
RANK_CAP = 200  # classes ranked in enumeration order; beyond, a hill climb
LOCAL_STARTS = 3  # from this many of the best by each proxy,
RANK_LIMIT = 750  # until this many classes are ranked in all
PROXY_SHAPES = 3  # shapes per axis the multiplicity-1 proxy tries
SHORTLIST_FINALISTS = 4  # finalists (of MAX_FINALISTS) after a shortlist


class UnitPricer:
    """The objective at multiplicity 1 (every generator one circuit) of a configuration,
    without the allocator: what :meth:`Search.evaluate` gives at effort -1, cheaply."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.order = sorted(range(len(ctx.axes)), key=lambda j: (-ctx.axes[j].weight, j))
        self._axis: dict[tuple[int, Shape], float | None] = {}
        self._candidates: dict[tuple[int, Shape], list[Shape]] = {}

    def axis(self, j: int, shape: Shape) -> float | None:
        """Axis j's demands at multiplicity 1 on ``shape``; None if one has no option."""
        key = (j, shape)
        if key not in self._axis:
            opts = self.ctx.options(self.ctx.axes[j], shape)
            self._axis[key] = None if any(not o for o in opts) else sum(
                min(lat + vol for lat, vol, _ in o) for o in opts)
        return self._axis[key]

    def candidates(self, j: int, current: Shape) -> list[Shape]:
        """The :data:`PROXY_SHAPES` shapes that price axis j's own demands lowest, if
        lower than ``current`` does (the full pass may also take a dearer shape for the
        folds it lends other axes)."""
        key = (j, current)
        if key not in self._candidates:
            own = self.axis(j, current)
            priced = [(cost, k, shape) for k, shape in enumerate(self.ctx.axes[j].shapes)
                      if (cost := self.axis(j, shape)) is not None and (own is None or cost < own)]
            self._candidates[key] = [shape for _, _, shape in sorted(priced)[:PROXY_SHAPES]]
        return self._candidates[key]

    def price(self, search: Search, profiles: list[Groups], shapes: list[Shape]) -> tuple[float, int] | None:
        """(objective, ports) at multiplicity 1, None if it does not fit."""
        profiles, shapes = search.aligned(profiles, shapes)
        folds: set[int] = set()
        ring_bits: set[int] = set()
        rings = 0
        for j, groups in enumerate(profiles):
            if shapes[j] == RING:
                rings += 1
                ring_bits.update(search.blocks[j])
                continue
            folds.update(installed_folds(groups))
        ports = self.ctx.n - len(ring_bits) + len(folds) + 2 * rings
        if ports > self.ctx.budget.ports:
            return None
        total = 0.0
        for j, shape in enumerate(shapes):
            cost = self.axis(j, shape)
            if cost is None:
                return None
            total += cost
        return total, ports

    def descent(self, search: Search) -> tuple[float, list[Groups], list[Shape]]:
        """One pass of :meth:`Search.descend` priced at multiplicity 1: the objective
        (inf: nothing fits) and the configuration it ends on."""
        profiles, shapes = list(search.profiles), list(search.shapes)
        current = self.price(search, profiles, shapes)
        if current is None:
            return math.inf, profiles, shapes
        for j in self.order:
            pick: tuple[Groups, Shape] | None = None
            for shape in self.candidates(j, shapes[j]):
                groups = search.place(j, shape, profiles, shapes)
                if groups == profiles[j] and shape == shapes[j]:
                    continue
                trial_p, trial_s = list(profiles), list(shapes)
                trial_p[j], trial_s[j] = groups, shape
                result = self.price(search, trial_p, trial_s)
                if result is not None and better((*result, 0), (*current, 0)):
                    current, pick = result, (groups, shape)
            if pick is not None:
                profiles[j], shapes[j] = pick
        return current[0], profiles, shapes


def proxies(ctx: Context, pricer: UnitPricer, partition: Partition, effort: int) -> tuple[float, float]:
    """Two cheap rankings of a partition: the cube's multiplicity allocation (how well the
    meshes' heavy axes share bits) and one descent pass priced at multiplicity 1 (how well
    their folds coincide). Each orders partitions much like the full screening pass does
    on instances dominated by bandwidth resp. latency; infeasible ones rank last."""
    search = Search(ctx, partition)
    cube = search.evaluate(search.profiles, search.shapes, effort)
    return math.inf if cube is None else cube.objective, pricer.descent(search)[0]


@dataclass(frozen=True)
class Shortlist:
    pairs: list[tuple[int, Partition]]  # (index, partition) to screen
    shortlisted: bool  # whether some classes were left out


def shortlist_partitions(
    ctx: Context, partitions: Iterator[Partition], effort: int, late: Callable[[], bool], notes: list[str],
) -> Shortlist:
    """The partitions to screen: all of them when there are at most
    :data:`SHORTLIST_FROM`, else the union of the :data:`SHORTLIST` best by each of
    :func:`proxies`, in the order found (ties keep breaking towards the earlier one).

    The proxies rank up to :data:`RANK_CAP` classes in enumeration order; when there
    are more, a hill climb over swap neighbours (:func:`neighbour_partitions`) starts
    from the :data:`LOCAL_STARTS` best by each proxy and ranks what it visits."""
    head = list(islice(partitions, SHORTLIST_FROM + 1))
    if len(head) <= SHORTLIST_FROM:
        return Shortlist(list(enumerate(head)), False)
    pricer = UnitPricer(ctx)
    found: list[Partition] = []
    scores: list[tuple[float, float]] = []
    index: dict[Partition, int] = {}

    def rank(partition: Partition) -> int:
        if partition not in index:
            index[partition] = len(found)
            found.append(partition)
            scores.append(proxies(ctx, pricer, partition, effort))
        return index[partition]

    stream = chain(head, partitions)
    for partition in islice(stream, RANK_CAP):
        if found and late():
            notes.append(f"time limit: ranked {len(found)} partition classes for the shortlist")
            break
        rank(partition)
    else:
        if next(stream, None) is not None:
            enumerated = len(found)
            for k in (0, 1):
                order = sorted(range(enumerated), key=lambda i: (scores[i][k], i))
                for current in order[:LOCAL_STARTS]:
                    while len(found) < RANK_LIMIT and not late():
                        best = current
                        table = partition_table(ctx.instance, found[current])
                        for _, partition in neighbour_partitions(ctx.instance, table):
                            i = rank(partition)
                            if (scores[i][k], i) < (scores[best][k], best):
                                best = i
                        if best == current:
                            break
                        current = best
            notes.append(f"more than {RANK_CAP} partition classes: ranked the first {enumerated}"
                         f" and {len(found) - enumerated} more found by a hill climb")
    by_cube = sorted(range(len(found)), key=lambda i: (scores[i][0], i))
    by_folds = sorted(range(len(found)), key=lambda i: (scores[i][1], i))
    chosen = sorted(set(by_cube[:SHORTLIST] + by_folds[:SHORTLIST]))
    notes.append(f"screened a shortlist of {len(chosen)} of {len(found)} partition classes")
    return Shortlist([(idx, found[idx]) for idx in chosen], True)
