"""One heuristic search's static data and its priced configurations.

:class:`Context` holds the active axes (:class:`Axis`), their shapes and per-demand
option tables, and the memos shared across partition classes; an :class:`Eval` is a
priced configuration (multiplicities allocated). :func:`better` and :func:`improves`
are the one comparison every stage uses: lower objective (relative 1e-12), then fewer
ports, then the earlier partition.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeGuard

import numpy as np
import numpy.typing as npt

from ..cayley import Topology, profile_folds
from ..instance import Budget, Demand, Instance
from ..schedules import closed_form
from .allocate import Arrays, allocate, lower_bound, option_arrays, undominated
from .space import RING, Groups, Shape, floods, integer_partitions, irregular_shapes, shape_folds, shape_options

__all__ = ["BOUND_SLACK", "Axis", "Context", "Eval", "Priced", "better", "improves"]

BOUND_SLACK = 1e-9  # a configuration is skipped when its bound exceeds the one to beat by this share

Priced = tuple[tuple[tuple[float, float, int], ...], ...]  # per demand: (latency s, volume s, allocation set)


@dataclass(frozen=True)
class Axis:
    mesh: int
    index: int
    bits: int
    demands: tuple[Demand, ...]
    shapes: tuple[Shape, ...]  # block folds (and RING): the paper's space
    weight: float  # ordering key: how much this axis can matter
    irregular: tuple[Shape, ...] = ()  # irregular folds: the second screening and the extended beams


class Context:
    """Static data of one search: fabric, active axes, and per-demand option tables."""

    def __init__(self, instance: Instance, irregular: bool = True) -> None:
        self.instance = instance
        self.budget: Budget = instance.budget
        self.n = instance.n
        self.single = len(instance.meshes) == 1
        spare_folds = self.budget.ports - self.n
        axes: list[Axis] = []
        for m, mesh in enumerate(instance.meshes):
            for i, axis in enumerate(mesh.axes):
                if not axis.demands:
                    continue
                a = axis.bits
                shapes = [s for s in integer_partitions(a) if profile_folds(s) <= spare_folds]
                extra: tuple[Shape, ...] = ()
                if irregular and any(floods(d) for d in axis.demands):
                    extra = tuple(s for s in irregular_shapes(a) if shape_folds(s) <= spare_folds)
                ring_ok = self.single and all(d.schedule == "ring" for d in axis.demands)
                if ring_ok and a >= 2:
                    shapes.append(RING)
                lam, rate = self.budget.latency, self.budget.link
                weight = sum(d.weight * (a * lam + d.payload / rate) for d in axis.demands)
                axes.append(Axis(m, i, a, axis.demands, tuple(shapes), weight, extra))
        self.axes = axes
        self._axis_cost: dict[tuple[int, int, Shape], float] = {}
        self._allocations: dict[tuple[object, ...], tuple[float, list[int], list[int]]] = {}
        self.evals: dict[tuple[object, ...], Eval | None] = {}  # see Search.evaluate
        self.bounds: dict[tuple[object, ...], float] = {}  # configurations skipped there: their bound
        self.placed: dict[tuple[object, ...], tuple[Groups, ...]] = {}  # see Search.placements
        self.induced: dict[tuple[object, ...], npt.NDArray[np.float64]] = {}  # see Search._induced
        # see repartition._settled: its re-cuts' Search states (object here: search.py is above this module)
        self.settled: dict[tuple[object, ...], Sequence[tuple[object, Eval]]] = {}
        self._options: dict[tuple[int, int, Shape], tuple[tuple[tuple[float, float, bool], ...], ...]] = {}
        self._pruned: dict[tuple[int, int, Shape], tuple[tuple[tuple[float, float, bool], ...], ...]] = {}
        self._priced: dict[tuple[int, int, Shape, int, int], tuple[Priced, int] | None] = {}
        # every distinct priced table (by value) gets a number, and its option arrays: see priced
        self._tables: dict[Priced, int] = {}
        self._table_arrays: list[Arrays] = []
        self._joined: dict[tuple[int, ...], Arrays] = {}  # see _arrays
        self.deadline: float | None = None  # see plan_heuristic; stopped: some loop stopped at it
        self.stopped = False

    def late(self) -> bool:
        """Deadline passed? (sticky) The loops inside a search then stop with the state they hold."""
        self.stopped = self.stopped or (self.deadline is not None and time.perf_counter() > self.deadline)
        return self.stopped

    def allocate(
        self, sets: tuple[tuple[int, ...], ...], weights: tuple[int, ...],
        options: tuple[tuple[tuple[float, float, int], ...], ...], spare: int, effort: int,
        cutoff: float | None = None, tables: tuple[int, ...] | None = None,
    ) -> tuple[float, list[int], list[int]] | float:
        """:func:`~ocsplan.planning.allocate.allocate`, remembered: partitions and states that
        differ only in bit positions pose the same allocation problem (read-only result).
        Given ``cutoff``, the :func:`~ocsplan.planning.allocate.lower_bound` instead when it
        exceeds ``cutoff`` (nothing allocated). ``tables``: the :meth:`priced` number of each
        axis's part of ``options``, in order; equal exactly when the options are (the axes
        and their demand counts are fixed), a key far cheaper to hash, and their arrays."""
        key = (sets, weights, options if tables is None else tables, spare, effort)
        known = self._allocations.get(key)
        if known is not None:
            return known
        arrays = None if tables is None else self._arrays(tables)
        if cutoff is not None:  # effort -1 prices at multiplicity 1: as if no port were spare
            bound = lower_bound(sets, weights, options, spare if effort >= 0 else 0, arrays)
            if bound > cutoff * (1 + BOUND_SLACK):
                return bound
        result = self._allocations[key] = allocate(sets, weights, options, spare, effort, self.late, arrays)
        return result

    def _arrays(self, tables: tuple[int, ...]) -> Arrays:
        """:func:`~ocsplan.planning.allocate.option_arrays` of the tables' options laid end
        to end: each table's rows, padded to the widest as that function pads. Remembered
        (read-only arrays): the configurations of a search share few combinations of tables."""
        known = self._joined.get(tables)
        if known is not None:
            return known
        parts = [self._table_arrays[t] for t in tables]
        width = max((part[0].shape[1] for part in parts), default=1)
        rows = sum(part[0].shape[0] for part in parts)
        lat = np.full((rows, width), np.inf)
        vol = np.zeros((rows, width))
        on = np.zeros((rows, width), dtype=np.int64)
        row = 0
        for part_lat, part_vol, part_on in parts:
            count, cols = part_lat.shape
            lat[row:row + count, :cols] = part_lat
            vol[row:row + count, :cols] = part_vol
            on[row:row + count, :cols] = part_on
            row += count
        for array in (lat, vol, on):
            array.flags.writeable = False
        joined = self._joined[tables] = (lat, vol, on)
        return joined

    def bandwidth_share(self) -> float:
        """Share of the bandwidth terms in the objective of the plain cube at p = 1."""
        latency = volume = 0.0
        for ax in self.axes:
            for opts in self.options(ax, (1,) * ax.bits if ax.bits else ()):
                lat, vol, _ = min(opts, key=lambda o: o[0] + o[1])
                latency += lat
                volume += vol
        total = latency + volume
        return volume / total if total > 0 else 0.0

    def axis_cost(self, axis: Axis, shape: Shape) -> float:
        """Sum of the axis's demand costs at multiplicity 1 on ``shape``."""
        key = (axis.mesh, axis.index, shape)
        if key not in self._axis_cost:
            self._axis_cost[key] = sum(
                min(lat + vol for lat, vol, _ in opts) for opts in self.options(axis, shape)
            )
        return self._axis_cost[key]

    def options(self, axis: Axis, shape: Shape) -> tuple[tuple[tuple[float, float, bool], ...], ...]:
        """Per demand: (latency seconds, volume seconds at p = 1, on_profile)."""
        key = (axis.mesh, axis.index, shape)
        if key in self._options:
            return self._options[key]
        lam, rate = self.budget.latency, self.budget.link
        out = []
        for d in axis.demands:
            opts: tuple[tuple[float, float, bool], ...]
            if shape == RING:
                form = closed_form("ring", Topology.cube(axis.bits))
                opts = ((d.weight * form.h * lam, d.weight * float(form.v_factor) * d.payload / rate, True),)
            else:
                opts = tuple(
                    (d.weight * o.h * lam, d.weight * o.v_factor * d.payload / rate, o.on_profile)
                    for o in shape_options(d.collective, d.schedule, shape)
                )
            out.append(opts)
        self._options[key] = tuple(out)
        self._pruned[key] = tuple(undominated(opts) for opts in out)
        return self._options[key]

    def priced(self, axis: Axis, shape: Shape, prof: int, unit: int) -> tuple[Priced, int] | None:
        """The axis's demand options for the allocation, on its profile's set ``prof`` or its
        unit masks' set ``unit``, without those an earlier one on the same set dominates
        (same minima, same first minimum); None if some demand has no option. With the
        options, their table's number: one per distinct table (by value), its option arrays
        kept alongside, what :meth:`allocate` keys and builds on."""
        key = (axis.mesh, axis.index, shape, prof, unit)
        if key not in self._priced:
            self.options(axis, shape)
            pruned = self._pruned[(axis.mesh, axis.index, shape)]
            if any(not opts for opts in pruned):
                self._priced[key] = None
            else:
                table = tuple(tuple((lat, vol, prof if onp else unit) for lat, vol, onp in opts) for opts in pruned)
                number = self._tables.get(table)
                if number is None:
                    number = self._tables[table] = len(self._table_arrays)
                    self._table_arrays.append(option_arrays(table))
                self._priced[key] = (table, number)
        return self._priced[key]


@dataclass(frozen=True)
class Eval:
    """A priced configuration; shared through the memo of :meth:`Search.evaluate`, never changed."""

    objective: float
    ports: int
    hosts: list[tuple[int, int]]  # per axis: the allocation sets of its profile and of its unit masks
    eff: list[int]  # per allocation set: its effective multiplicity
    levels: dict[object, int]
    profiles: list[Groups]  # the profiles the axes chose (they pay for their folds)
    shapes: list[Shape]
    effective: list[Groups]  # what runs: chosen profiles, or free alignments to others' folds
    effective_shapes: list[Shape]

    def choices(self, ctx: Context) -> list[int]:
        """Per demand (flattened): the index of its cheapest option (the first of equals)."""
        out = []
        for j, ax in enumerate(ctx.axes):
            prof, unit = self.hosts[j]
            for opts in ctx.options(ax, self.effective_shapes[j]):
                costs = [lat + vol / self.eff[prof if onp else unit] for lat, vol, onp in opts]
                out.append(min(range(len(opts)), key=lambda x: (costs[x], x)))
        return out


def better(a: tuple[float, int, int], b: tuple[float, int, int] | None) -> bool:
    """Lower objective (relative 1e-12), then fewer ports, then the earlier partition."""
    if b is None or a[0] < b[0] * (1 - 1e-12):
        return True
    return math.isclose(a[0], b[0], rel_tol=1e-12) and a[1:] < b[1:]


def improves(result: Eval | None, incumbent: Eval | None) -> TypeGuard[Eval]:
    """Whether ``result`` exists and beats ``incumbent`` (lower objective, then fewer ports)."""
    return result is not None and (incumbent is None or better(
        (result.objective, result.ports, 0), (incumbent.objective, incumbent.ports, 0)))
