"""Heuristic planner: the staged Cayley search of the paper (Figure 12).

Stages: (1) candidate schedules per demand and per block-fold shape, from the
closed forms; (2) bit partitions of the meshes, enumerated up to the global
symmetry of bit positions (only how many bits each combination of axes shares
matters); (3) per partition, a coordinate descent over the axes' block-fold
profiles (each axis tries every shape that fits the budget, placed greedily on
the bits where its folds coincide with folds other axes already pay for),
with multiplicities allocated greedily by time saved per port; (4) the best
configuration becomes a :class:`~ocsplan.plan.Decision`.

The search space is the one the exact models cover (formulations/*.md): each
axis a block fold (or, beyond the paper, an irregular fold of the covering
table), each demand on that fold or on the axis's unit masks. Irregular folds
join in a second screening of every partition class and in the best finalists'
beams, so the block-fold search runs as it would alone.
Deterministic: no randomness, every tie broken by a fixed order.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice

import numpy as np
import numpy.typing as npt

from ..cayley import Topology, bits_of, folds_of_mask, mask_of, popcount, profile_folds, sub_masks
from ..cost import demand_cost
from ..errors import InfeasibleError
from ..instance import Budget, Demand, Instance
from ..plan import Decision, DemandDecision, Plan, assemble
from ..schedules import SCHEDULES, closed_form
from .allocate import allocate, lower_bound, undominated
from .placement import (
    DIGIT,
    SCALE,
    PlacementTable,
    beam_placement,
    fold_hits,
    installed_folds,
    lazy_greedy,
    placement_count,
    placement_table,
    profile_layers,
    profile_members,
    subset_table,
)
from .space import (
    RING,
    Groups,
    Shape,
    floods,
    integer_partitions,
    irregular_fold,
    irregular_shapes,
    is_irregular,
    iter_partitions,
    shape_folds,
    shape_options,
)

__all__ = ["cube_only", "cube_only_bound", "plan_heuristic"]

FINALISTS = 4  # partitions that get descents to convergence after one screening pass,
FINALIST_WINDOW = 0.01  # plus those whose first pass is within 1 % of the best,
MAX_FINALISTS = 32  # up to this many
SCREEN_EFFORT = 0  # allocation effort while screening partitions (see allocate)
FINAL_EFFORT = 1  # and while descending on the finalists (each beam state is polished at the end)
BEAM = 3  # states kept per axis step when descending on the finalists
POLISHED = 16  # final states whose multiplicities get the local search
LATENCY_BOUND = 0.05  # below this bandwidth share the allocation effort drops by one level
EXACT_PLACEMENTS = 300  # place sub-blocks exhaustively up to this many placements, beyond by a beam
TABLE_CELLS = 1 << 22  # sub-block tables (sub-blocks x fold masks) up to this size; beyond, placed lazily
LAZY_SUBSETS = 2000  # sub-blocks tried per part when placed lazily
MAX_PASSES = 4
BOUND_SLACK = 1e-9  # a configuration is skipped when its bound exceeds the one to beat by this share
IRREGULAR_FINALISTS = 2  # finalists that also beam over irregular folds (and from the irregular starts)
JOINT_PARTITIONS = 2  # the best final states of this many partitions try joint moves (joint.joint)


_Priced = tuple[tuple[tuple[float, float, int], ...], ...]  # per demand: (latency s, volume s, allocation set)


@dataclass(frozen=True)
class _Axis:
    mesh: int
    index: int
    bits: int
    demands: tuple[Demand, ...]
    shapes: tuple[Shape, ...]  # block folds (and RING): the paper's space
    weight: float  # ordering key: how much this axis can matter
    irregular: tuple[Shape, ...] = ()  # irregular folds: the second screening and the extended beams


class _Context:
    """Static data of one search: fabric, active axes, and per-demand option tables."""

    def __init__(self, instance: Instance, irregular: bool = True) -> None:
        self.instance = instance
        self.budget: Budget = instance.budget
        self.n = instance.n
        self.single = len(instance.meshes) == 1
        spare_folds = self.budget.ports - self.n
        axes: list[_Axis] = []
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
                axes.append(_Axis(m, i, a, axis.demands, tuple(shapes), weight, extra))
        self.axes = axes
        self._axis_cost: dict[tuple[int, int, Shape], float] = {}
        self._allocations: dict[tuple[object, ...], tuple[float, list[int], list[int]]] = {}
        self.evals: dict[tuple[object, ...], _Eval | None] = {}  # see _Search.evaluate
        self.bounds: dict[tuple[object, ...], float] = {}  # configurations skipped there: their bound
        self.placed: dict[tuple[object, ...], tuple[Groups, ...]] = {}  # see _Search.placements
        self.settled: dict[tuple[object, ...], list[tuple[_Search, _Eval]]] = {}  # see repartition._settled
        self._options: dict[tuple[int, int, Shape], tuple[tuple[tuple[float, float, bool], ...], ...]] = {}
        self._pruned: dict[tuple[int, int, Shape], tuple[tuple[tuple[float, float, bool], ...], ...]] = {}
        self._priced: dict[tuple[int, int, Shape, int, int], _Priced | None] = {}
        self.deadline: float | None = None  # see plan_heuristic; stopped: some loop stopped at it
        self.stopped = False

    def late(self) -> bool:
        """Deadline passed? (sticky) The loops inside a search then stop with the state they hold."""
        self.stopped = self.stopped or (self.deadline is not None and time.perf_counter() > self.deadline)
        return self.stopped

    def allocate(
        self, sets: tuple[tuple[int, ...], ...], weights: tuple[int, ...],
        options: tuple[tuple[tuple[float, float, int], ...], ...], spare: int, effort: int,
        cutoff: float | None = None,
    ) -> tuple[float, list[int], list[int]] | float:
        """:func:`~ocsplan.planning.allocate.allocate`, remembered: partitions and states that
        differ only in bit positions pose the same allocation problem (read-only result).
        Given ``cutoff``, the :func:`~ocsplan.planning.allocate.lower_bound` instead when it
        exceeds ``cutoff`` (nothing allocated)."""
        key = (sets, weights, options, spare, effort)
        if key not in self._allocations:
            if cutoff is not None:  # effort -1 prices at multiplicity 1: as if no port were spare
                bound = lower_bound(sets, weights, options, spare if effort >= 0 else 0)
                if bound > cutoff * (1 + BOUND_SLACK):
                    return bound
            self._allocations[key] = allocate(sets, weights, options, spare, effort, self.late)
        return self._allocations[key]

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

    def axis_cost(self, axis: _Axis, shape: Shape) -> float:
        """Sum of the axis's demand costs at multiplicity 1 on ``shape``."""
        key = (axis.mesh, axis.index, shape)
        if key not in self._axis_cost:
            self._axis_cost[key] = sum(
                min(lat + vol for lat, vol, _ in opts) for opts in self.options(axis, shape)
            )
        return self._axis_cost[key]

    def options(self, axis: _Axis, shape: Shape) -> tuple[tuple[tuple[float, float, bool], ...], ...]:
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

    def priced(
        self, axis: _Axis, shape: Shape, prof: int, unit: int
    ) -> _Priced | None:
        """The axis's demand options for the allocation, on its profile's set ``prof`` or its
        unit masks' set ``unit``, without those an earlier one on the same set dominates
        (same minima, same first minimum); None if some demand has no option."""
        key = (axis.mesh, axis.index, shape, prof, unit)
        if key not in self._priced:
            self.options(axis, shape)
            pruned = self._pruned[(axis.mesh, axis.index, shape)]
            self._priced[key] = None if any(not opts for opts in pruned) else tuple(
                tuple((lat, vol, prof if onp else unit) for lat, vol, onp in opts) for opts in pruned)
        return self._priced[key]


# -- evaluation --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Eval:
    """A priced configuration; shared through the memo of :meth:`_Search.evaluate`, never changed."""

    objective: float
    ports: int
    hosts: list[tuple[int, int]]  # per axis: the allocation sets of its profile and of its unit masks
    eff: list[int]  # per allocation set: its effective multiplicity
    levels: dict[object, int]
    profiles: list[Groups]  # the profiles the axes chose (they pay for their folds)
    shapes: list[Shape]
    effective: list[Groups]  # what runs: chosen profiles, or free alignments to others' folds
    effective_shapes: list[Shape]

    def choices(self, ctx: _Context) -> list[int]:
        """Per demand (flattened): the index of its cheapest option (the first of equals)."""
        out = []
        for j, ax in enumerate(ctx.axes):
            prof, unit = self.hosts[j]
            for opts in ctx.options(ax, self.effective_shapes[j]):
                costs = [lat + vol / self.eff[prof if onp else unit] for lat, vol, onp in opts]
                out.append(min(range(len(opts)), key=lambda x: (costs[x], x)))
        return out


class _Search:
    """State of the descent for one partition: profiles of the active axes."""

    def __init__(self, ctx: _Context, partition: tuple[tuple[tuple[int, ...], ...], ...]) -> None:
        self.ctx = ctx
        self.partition = partition
        self.blocks = [partition[ax.mesh][ax.index] for ax in ctx.axes]
        self.others = [
            [j for j, other in enumerate(ctx.axes) if other.mesh != ax.mesh] for ax in ctx.axes
        ]
        self.profiles: list[Groups] = [tuple((b,) for b in blk) for blk in self.blocks]
        self._placed: dict[tuple[int, Shape, bool, frozenset[int], tuple[int, ...]], tuple[Groups, ...]] = {}
        self.shapes: list[Shape] = [(1,) * ax.bits for ax in ctx.axes]
        self.masks = [mask_of(blk) for blk in self.blocks]
        self.units = [tuple(sorted(1 << b for b in blk)) for blk in self.blocks]
        self.cube_shapes = [(1,) * len(blk) for blk in self.blocks]
        self.overlaps = [tuple(k for k in self.others[j] if self.masks[k] & self.masks[j])
                         for j in range(len(self.blocks))]
        self._reuse_rows: dict[tuple[int, tuple[int, ...]], npt.NDArray[np.int64]] = {}  # per placement
        self._reuse_subsets: dict[tuple[int, int], npt.NDArray[np.int64]] = {}  # per sub-block of a size
        self._induced_rows: dict[tuple[int, tuple[int, ...], tuple[int, ...]], npt.NDArray[np.float64]] = {}
        self._aligned: dict[tuple[int, tuple[int, ...]], tuple[Groups, Shape] | None] = {}  # by pieces
        self._by_layers: dict[tuple[int, tuple[int, ...]], tuple[Groups, Shape] | None] = {}  # by all layers

    # placement of a shape on an axis's bits, given the folds the others already pay for
    def place(
        self, j: int, shape: Shape, profiles: list[Groups] | None = None,
        shapes: list[Shape] | None = None, exact: bool = False,
    ) -> Groups:
        """The first of :meth:`placements`."""
        return self.placements(j, shape, profiles, shapes, exact)[0]

    def placements(
        self, j: int, shape: Shape, profiles: list[Groups] | None = None,
        shapes: list[Shape] | None = None, exact: bool = False,
    ) -> tuple[Groups, ...]:
        """Sub-blocks for axis j of ``shape`` where its folds coincide most with folds
        the other axes already pay for (then where other meshes' axes could reuse
        them): greedy part by part, or over every placement (``exact``) when few.
        Exact placement also proposes the placement whose pieces give the axes still
        on their cube the best free folds (a K8 x K8 that cuts a 4-bit axis into
        K4 x K4 rather than K8 x K2)."""
        profiles = self.profiles if profiles is None else profiles
        shapes = self.shapes if shapes is None else shapes
        block = self.blocks[j]
        if shape == RING or is_irregular(shape):  # no layers: its masks are placed by irregular_fold
            return (tuple((b,) for b in block),)
        # the folds other axes pay for inside this block: of each layer, its piece here
        inside = self.masks[j]
        local_set: set[int] = set()
        for k in self.overlaps[j]:  # the other axes' bits are disjoint from this block
            if shapes[k] != RING:
                for layer in profile_layers(profiles[k]):
                    if (piece := layer & inside).bit_count() >= 2:
                        local_set.update(folds_of_mask(piece))
        local = frozenset(local_set)
        cubes = tuple(k for k in self.overlaps[j] if shapes[k] != RING and max(shapes[k]) == 1)
        memo_key = (j, shape, exact, local, cubes if exact else ())
        if memo_key not in self._placed:
            # partition classes that agree on this block and on what the others hold of it
            # place alike: remembered across them (the ranking tries hundreds of classes)
            shared_key = (self.blocks[j], shape, exact, local,
                          tuple(sorted(self.masks[k] & inside for k in self.others[j])),
                          tuple((k, self.masks[k] & inside) for k in cubes) if exact else ())
            found = self.ctx.placed.get(shared_key)
            if found is None:
                found = self.ctx.placed[shared_key] = self._place(j, shape, local, exact, cubes)
            self._placed[memo_key] = found
        return self._placed[memo_key]

    def moves(
        self, j: int, shape: Shape, profiles: list[Groups], shapes: list[Shape],
    ) -> Iterator[tuple[list[Groups], list[Shape]]]:
        """The configurations with axis j on ``shape`` at each exhaustive placement, but
        the one it holds."""
        for groups in self.placements(j, shape, profiles, shapes, exact=True):
            if groups != profiles[j] or shape != shapes[j]:
                trial_p, trial_s = list(profiles), list(shapes)
                trial_p[j], trial_s[j] = groups, shape
                yield trial_p, trial_s

    def _place(
        self, j: int, shape: Shape, taken: frozenset[int], exact: bool, cubes: tuple[int, ...]
    ) -> tuple[Groups, ...]:
        block = self.blocks[j]

        def complete(groups: list[tuple[int, ...]]) -> Groups:
            used = {b for g in groups for b in g}
            return tuple(groups) + tuple((b,) for b in block if b not in used)

        parts = [k for k in shape if k >= 2]
        if exact and placement_count(len(block), parts) <= EXACT_PLACEMENTS:
            table = placement_table(tuple(block), tuple(parts))
            shared = fold_hits(table.folds, taken)
            if (j, table.parts) not in self._reuse_rows:
                self._reuse_rows[(j, table.parts)] = self._reuse(j, table.masks)[table.members].sum(axis=1)
            # lexicographic (shared, reuse) as one integer; argmax takes the first of equals
            totals = shared[table.members].sum(axis=1) * SCALE + self._reuse_rows[(j, table.parts)]
            out = [complete(table.placements[int(np.argmax(totals))])]
            if cubes:
                ind_key = (j, tuple(parts), cubes)
                if ind_key not in self._induced_rows:
                    self._induced_rows[ind_key] = self._induced(table, cubes)
                costs = self._induced_rows[ind_key]
                tied = np.flatnonzero(costs == costs.min())
                alt = complete(table.placements[int(tied[np.argmax(totals[tied])])])
                if alt != out[0]:
                    out.append(alt)
            return tuple(out)
        # greedy, part by part: the first best-scoring sub-block of the bits still free
        # (the sub-blocks avoiding the used bits, in enumeration order, are exactly the
        # combinations of the remaining bits in theirs)
        if any(math.comb(len(block), size) << size > TABLE_CELLS for size in parts):
            others = [self.masks[k] for k in self.others[j]]  # tables too big to hold:
            return (complete(lazy_greedy(self.blocks[j], parts, taken, others, LAZY_SUBSETS)),)
        tables = []
        for size in parts:
            subsets, masks, folds = subset_table(tuple(block), size)
            if (j, size) not in self._reuse_subsets:
                self._reuse_subsets[(j, size)] = self._reuse(j, masks)
            tables.append((subsets, masks, fold_hits(folds, taken) * SCALE + self._reuse_subsets[(j, size)]))
        chosen: list[tuple[int, ...]] = []
        used = 0
        for subsets, masks, keys in tables:
            best = int(np.argmax(np.where(masks & used == 0, keys, -1)))
            chosen.append(subsets[best])
            used |= int(masks[best])
        out = [complete(chosen)]
        if exact:  # too many placements to try all: a beam over the parts finds those that pay off together
            found = complete(beam_placement(tables))
            if found != out[0]:
                out.insert(0, found)
        return tuple(out)

    def _reuse(self, j: int, masks: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Per sub-block mask, how many other meshes' blocks hold it (they could share its folds)."""
        others = np.array([self.masks[k] for k in self.others[j]], dtype=np.int64)
        counts: npt.NDArray[np.int64] = ((masks[:, None] & others[None, :]) == masks[:, None]).sum(axis=1)
        return counts

    def _induced(self, table: PlacementTable, cubes: tuple[int, ...]) -> npt.NDArray[np.float64]:
        """Per placement, the cost at p = 1 of the axes still on their cube on the free
        folds its sub-blocks give them (each cube axis on the pieces its bits cut out)."""
        total = np.zeros(len(table.placements))
        for k in cubes:
            ax = self.ctx.axes[k]
            bits = self.masks[k]
            counts = np.bitwise_count(table.masks & bits).astype(np.int64)
            pieces = -np.sort(-counts[table.members], axis=1)  # per placement, largest first
            codes = (pieces << (DIGIT * np.arange(pieces.shape[1]))).sum(axis=1)  # one integer per row
            unique, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
            costs = np.empty(len(unique))
            for r, row in enumerate(first):
                sizes = [int(x) for x in pieces[row] if x >= 2]
                free = (*sizes, *([1] * (ax.bits - sum(sizes))))
                costs[r] = self.ctx.axis_cost(ax, free if free in ax.shapes else (1,) * ax.bits)
            total += costs[inverse.reshape(-1)]
        return total

    def aligned(self, profiles: list[Groups], shapes: list[Shape]) -> tuple[list[Groups], list[Shape]]:
        """Let every axis still on its cube take the coarsest block fold the installed folds give it.

        A complete sub-block B is installed exactly when some chosen layer contains B
        (its all-ones mask needs one), so the free sub-blocks of an axis are the
        intersections of its bits with the chosen layers. An axis switches to the
        greedy (largest first) partition into such pieces when that prices its
        demands lower at multiplicity 1.
        """
        installed: set[int] = set()
        for j, groups in enumerate(profiles):
            if shapes[j] != RING:
                installed.update(profile_layers(groups))
        if not installed:
            return profiles, shapes
        layers = tuple(sorted(installed))
        out_p, out_s = list(profiles), list(shapes)
        for k, shape_k in enumerate(shapes):
            if shape_k != self.cube_shapes[k]:
                continue  # an axis that chose a fold keeps it (a finer one may suit its multiplicity)
            if (k, layers) not in self._by_layers:
                inside = self.masks[k]
                # only pieces of two bits or more can be chosen: the key keeps just those
                pieces = tuple(sorted({piece for layer in layers if (piece := layer & inside).bit_count() >= 2}))
                key = (k, pieces)
                if key not in self._aligned:
                    self._aligned[key] = self._align(k, pieces) if pieces else None
                self._by_layers[(k, layers)] = self._aligned[key]
            found = self._by_layers[(k, layers)]
            if found is not None:
                out_p[k], out_s[k] = found
        return out_p, out_s

    def _align(self, k: int, layers: tuple[int, ...]) -> tuple[Groups, Shape] | None:
        """Axis k (on its cube) on the greedy partition of its bits into pieces of the
        installed layers, largest first (ties: the larger mask, i.e. the higher bits),
        if that prices its demands lower at multiplicity 1."""
        ax = self.ctx.axes[k]
        remaining = self.masks[k]
        groups: list[tuple[int, ...]] = []
        while True:
            size, piece = max((popcount(remaining & layer), remaining & layer) for layer in layers)
            if size < 2:
                break
            groups.append(bits_of(piece))
            remaining &= ~piece
        groups.extend((b,) for b in bits_of(remaining))
        shape = tuple(sorted((len(g) for g in groups), reverse=True))
        cube = (1,) * ax.bits
        if shape == cube or shape not in ax.shapes:
            return None
        if self.ctx.axis_cost(ax, shape) < self.ctx.axis_cost(ax, cube) * (1 - 1e-12):
            return tuple(groups), shape
        return None

    def evaluate(
        self, profiles: list[Groups], shapes: list[Shape], effort: int = 1, cutoff: float | None = None,
    ) -> _Eval | None:
        """The configuration priced with multiplicities allocated at ``effort``; None if
        its generators do not fit, or (given ``cutoff``) if a bound shows its objective
        exceeds ``cutoff``: callers that only look for something better than ``cutoff``
        skip the allocation. Remembered per partition (read-only result): the screening
        in both spaces and the beams revisit configurations."""
        key = (self.partition, tuple(profiles), tuple(shapes), effort)
        evals = self.ctx.evals
        if key in evals:
            return evals[key]
        bounds = self.ctx.bounds
        if cutoff is not None and key in bounds and bounds[key] > cutoff * (1 + BOUND_SLACK):
            return None
        result = self._evaluate(profiles, shapes, effort, cutoff)
        if isinstance(result, float):
            bounds[key] = result
            return None
        evals[key] = result
        return result

    def _evaluate(
        self, profiles: list[Groups], shapes: list[Shape], effort: int, cutoff: float | None = None,
    ) -> _Eval | float | None:
        """:meth:`evaluate`; the bound instead when it exceeds ``cutoff``."""
        ctx = self.ctx
        fabric = ctx.budget
        chosen, chosen_shapes = profiles, shapes
        profiles, shapes = self.aligned(profiles, shapes)
        folds: set[int] = set()
        ring_axes = [j for j, s in enumerate(shapes) if s == RING]
        ring_bits = 0
        for j in ring_axes:
            ring_bits |= self.masks[j]
        for j, groups in enumerate(profiles):
            if shapes[j] != RING:
                folds.update(installed_folds(groups))
        # generator universe: cube units, folds, ring pseudo-generators (2 ports each)
        weight: dict[object, int] = {1 << b: 1 for b in range(ctx.n) if not ring_bits >> b & 1}
        for f in folds:
            weight[f] = 1
        # an irregular fold's masks are its axis's own (not shared), one port each
        private: dict[int, tuple[tuple[str, int, int], ...]] = {}
        for j, shape in enumerate(shapes):
            if is_irregular(shape):
                private[j] = tuple(("irregular", j, g) for g in irregular_fold(shape, self.blocks[j]))
                for key in private[j]:
                    weight[key] = 1
        for j in ring_axes:
            weight[("ring", j)] = 2
        base = sum(weight.values())
        if base > fabric.ports:
            return None
        sets: list[tuple[object, ...]] = []
        set_index: dict[tuple[object, ...], int] = {}

        def sid(members: tuple[object, ...]) -> int:
            if members not in set_index:
                set_index[members] = len(sets)
                sets.append(members)
            return set_index[members]

        hosts: list[tuple[int, int]] = []
        priced: tuple[tuple[tuple[float, float, int], ...], ...] = ()  # undominated options, for the allocation
        for j, ax in enumerate(ctx.axes):
            if shapes[j] == RING:
                prof = sid((("ring", j),))
                unit = prof
            else:
                prof = sid(profile_members(profiles[j]) + private.get(j, ()))
                unit = sid(self.units[j])
            hosts.append((prof, unit))
            axis_priced = ctx.priced(ax, shapes[j], prof, unit)
            if axis_priced is None:
                return None
            priced += axis_priced
        keys = list(weight)
        index = {key: i for i, key in enumerate(keys)}
        problem = (tuple(tuple(index[g] for g in members) for members in sets), tuple(weight[key] for key in keys),
                   priced, fabric.ports - base)
        allocated = ctx.allocate(*problem, effort, cutoff)
        if isinstance(allocated, float):
            return allocated
        objective, levels, eff = allocated
        used = sum(weight[key] * levels[i] for i, key in enumerate(keys))
        levels_by_key = dict(zip(keys, levels, strict=True))
        return _Eval(objective, used, hosts, eff, levels_by_key, list(chosen), list(chosen_shapes), profiles, shapes)

    def beam(self, start: _Eval, width: int, max_passes: int, effort: int, extended: bool = False) -> list[_Eval]:
        """Coordinate descent that keeps the ``width`` best states after every axis
        step (a beam), with exhaustive placements; near ties between shapes (one
        cheaper in folds, one slightly faster) both survive until later axes decide."""
        ctx = self.ctx
        order = sorted(range(len(ctx.axes)), key=lambda j: (-ctx.axes[j].weight, j))

        def key(e: _Eval) -> tuple[float, int, str]:
            return (e.objective, e.ports, repr((e.profiles, e.shapes)))

        states = [start]
        for _ in range(max_passes):
            before = key(states[0])
            for j in order:
                pool = {key(st)[2]: st for st in states}
                kept = sorted(st.objective for st in states)[:width]  # the width lowest in the pool
                for st in states:
                    ax = ctx.axes[j]
                    for shape in (*ax.shapes, *ax.irregular) if extended else ax.shapes:
                        if ctx.late():
                            return sorted(pool.values(), key=key)[:width]
                        for profiles, shapes in self.moves(j, shape, st.profiles, st.shapes):
                            # with width states already below it, a configuration cannot be kept
                            cutoff = kept[-1] if len(kept) == width else None
                            result = self.evaluate(profiles, shapes, effort, cutoff)
                            if result is not None and key(result)[2] not in pool:
                                pool[key(result)[2]] = result
                                kept = sorted([*kept, result.objective])[:width]
                states = sorted(pool.values(), key=key)[:width]
            if key(states[0])[:2] >= before[:2] and not key(states[0])[0] < before[0] * (1 - 1e-12):
                break
        return states

    def irregular_starts(self, effort: int) -> list[_Eval]:
        """Further starts for the beam, with nothing but irregular folds installed: axes by
        weight take their best irregular fold (or keep the cube), and a best-improvement
        greedy over every axis and irregular fold (or the cube again). Block folds that
        others share for free make the cube start's descent stop short of a plan in which
        several axes move to irregular folds together (each move alone breaks the budget);
        the heaviest axis's best fold alone may crowd out two lighter ones that pay more."""
        ctx = self.ctx
        if not any(ax.irregular for ax in ctx.axes):
            return []
        units: list[Groups] = [tuple((b,) for b in blk) for blk in self.blocks]
        cube: list[Shape] = [(1,) * ax.bits for ax in ctx.axes]
        start = self.evaluate(units, cube, effort)
        if start is None:
            return []
        current, shapes = start, list(cube)
        for j in sorted(range(len(ctx.axes)), key=lambda j: (-ctx.axes[j].weight, j)):
            for shape in ctx.axes[j].irregular:
                trial = list(shapes)
                trial[j] = shape
                result = self.evaluate(units, trial, effort)
                if result is not None and result.objective < current.objective * (1 - 1e-12):
                    current, shapes = result, trial
        starts = [current]
        current = start
        while True:
            best = current
            for j, ax in enumerate(ctx.axes):
                for shape in (*ax.irregular, cube[j]):
                    if shape == current.shapes[j]:
                        continue
                    trial = list(current.shapes)
                    trial[j] = shape
                    result = self.evaluate(units, trial, effort)
                    if result is not None and result.objective < best.objective * (1 - 1e-12):
                        best = result
            if best is current:
                break
            current = best
        if current.shapes != starts[0].shapes:
            starts.append(current)
        return starts

    def descend(
        self, max_passes: int, current: _Eval | None = None, effort: int = 1, extended: bool = False
    ) -> tuple[_Eval | None, bool]:
        """Coordinate descent over the axes' profiles; returns the result and
        whether it converged (a full pass without improvement)."""
        ctx = self.ctx
        if current is None:
            current = self.evaluate(self.profiles, self.shapes, effort)
        if current is None:
            return None, True
        order = sorted(range(len(ctx.axes)), key=lambda j: (-ctx.axes[j].weight, j))
        for _ in range(max_passes):
            improved = False
            for j in order:
                best = (current.objective, current.ports)
                pick: tuple[Groups, Shape, _Eval] | None = None
                ax = ctx.axes[j]
                for shape in (*ax.shapes, *ax.irregular) if extended else ax.shapes:
                    if ctx.late():
                        return current, False
                    groups = self.place(j, shape)
                    if groups == self.profiles[j] and shape == self.shapes[j]:
                        continue
                    profiles = list(self.profiles)
                    shapes = list(self.shapes)
                    profiles[j], shapes[j] = groups, shape
                    result = self.evaluate(profiles, shapes, effort, cutoff=best[0])
                    if result is None:
                        continue
                    key = (result.objective, result.ports)
                    if key[0] < best[0] * (1 - 1e-12) or (
                        math.isclose(key[0], best[0], rel_tol=1e-12) and key[1] < best[1]
                    ):
                        best = key
                        pick = (groups, shape, result)
                if pick is not None:
                    current = pick[2]
                    self.profiles, self.shapes = list(current.profiles), list(current.shapes)
                    improved = True
            if not improved:
                return current, True
        return current, False


def _decision(ctx: _Context, search: _Search, result: _Eval) -> Decision:
    instance = ctx.instance
    choices: list[list[list[DemandDecision]]] = [
        [[] for _ in mesh.axes] for mesh in instance.meshes
    ]
    rings = set()
    flat = 0
    picks = result.choices(ctx)
    for j, ax in enumerate(ctx.axes):
        shape = result.effective_shapes[j]
        block = search.blocks[j]
        if shape == RING:
            rings.add((ax.mesh, ax.index))
        for d in ax.demands:
            k = picks[flat]
            flat += 1
            if shape == RING:
                choices[ax.mesh][ax.index].append(
                    DemandDecision("ring", tuple((b,) for b in block), result.levels[("ring", j)])
                )
                continue
            opt = shape_options(d.collective, d.schedule, shape)[k]
            groups = result.effective[j] if opt.on_profile else tuple((b,) for b in block)
            members: list[object] = [m for g in groups for m in sub_masks(g)]
            if not opt.on_profile or SCHEDULES[opt.schedule].cube_only:
                members = [1 << b for b in block]
                groups = tuple((b,) for b in block)
            fold: tuple[int, ...] = ()
            if opt.on_profile and is_irregular(shape):
                fold = irregular_fold(shape, block)
                members += [("irregular", j, g) for g in fold]
            p = min((result.levels[m] for m in members), default=1)
            choices[ax.mesh][ax.index].append(DemandDecision(opt.schedule, groups, p, fold))
    return Decision(
        partitions=search.partition,
        choices=tuple(tuple(tuple(c) for c in mesh) for mesh in choices),
        rings=frozenset(rings),
    )


def _better(a: tuple[float, int, int], b: tuple[float, int, int] | None) -> bool:
    """Lower objective (relative 1e-12), then fewer ports, then the earlier partition."""
    if b is None or a[0] < b[0] * (1 - 1e-12):
        return True
    return math.isclose(a[0], b[0], rel_tol=1e-12) and a[1:] < b[1:]


def cube_only(instance: Instance) -> bool:
    """Whether the base cube is the only installable host (L = n and no ring can free ports).

    Then every axis is a hypercube at multiplicity 1 whatever bits it gets, so every
    partition is equivalent and each demand simply takes its best schedule on Q_a."""
    if instance.budget.ports > instance.n:
        return False
    single = len(instance.meshes) == 1
    return not (single and any(axis.bits >= 3 for mesh in instance.meshes for axis in mesh.axes))


def cube_only_bound(instance: Instance) -> float:
    """With :func:`cube_only`: the optimum, every demand at its best valid schedule on Q_a."""
    total = 0.0
    for mesh in instance.meshes:
        for axis in mesh.axes:
            topo = Topology.cube(axis.bits)
            for d in axis.demands:
                names = [d.schedule] if d.schedule != "auto" else [
                    s.name for s in SCHEDULES.values() if s.collective == d.collective and s.valid(topo)]
                total += d.weight * min(demand_cost(name, topo, d.payload, 1, instance.budget)[2] for name in names)
    return total


def plan_heuristic(instance: Instance, deadline: float | None = None, irregular: bool = True) -> Plan:
    """Plan ``instance`` with the staged heuristic search. Deterministic without a deadline.

    ``deadline`` (a :func:`time.perf_counter` value): the search stops between
    partitions once it passes and returns the best plan found so far, with a note.
    ``irregular=False`` keeps to the paper's space (block folds only)."""
    from .joint import joint  # these use this module's search
    from .repartition import lookahead, repartition
    from .shortlist import SHORTLIST_FINALISTS, shortlist_partitions

    start = time.perf_counter()
    ctx = _Context(instance, irregular)
    ctx.deadline = deadline
    notes: list[str] = []

    def late() -> bool:
        return deadline is not None and time.perf_counter() > deadline

    # one descent pass on every partition, then the most promising ones to convergence
    # where bandwidth hardly matters, cheaper multiplicity pricing ranks as well
    latency_bound = ctx.bandwidth_share() < LATENCY_BOUND
    screen_effort = SCREEN_EFFORT - latency_bound
    final_effort = FINAL_EFFORT - latency_bound
    screened: list[tuple[float, int, int, _Search, _Eval]] = []
    partitions = iter_partitions(instance)
    only_cube = cube_only(instance)
    if only_cube:  # every partition is equivalent: one suffices
        partitions = islice(partitions, 1)
        notes.append("only the base cube fits (L = n): every partition is equivalent")
    shortlist = shortlist_partitions(ctx, partitions, screen_effort, late, notes)
    extended = any(ax.irregular for ax in ctx.axes)
    for k, (idx, partition) in enumerate(shortlist.pairs):
        if screened and late():
            notes.append(f"time limit: stopped after screening {k} partitions; best plan so far")
            break
        search = _Search(ctx, partition)
        result, _ = search.descend(1, effort=screen_effort)
        if result is not None:
            screened.append((result.objective, result.ports, idx, search, result))
        if extended:  # irregular folds too: a second screening of the class, its own search
            second = _Search(ctx, partition)
            result, _ = second.descend(1, effort=screen_effort, extended=True)
            if result is not None:
                screened.append((result.objective, result.ports, idx, second, result))
    if not screened:
        raise InfeasibleError(f"{instance.source or instance.name}: no plan fits {instance.budget.ports} ports")
    screened.sort(key=lambda item: item[:3])
    # finalists: the best few, plus every partition whose first pass came close
    cutoff = screened[0][0] * (1 + FINALIST_WINDOW)
    finalists = [item for k, item in enumerate(screened) if k < FINALISTS or item[0] <= cutoff]
    finalists = finalists[: SHORTLIST_FINALISTS if shortlist.shortlisted else MAX_FINALISTS]
    finals: list[tuple[float, int, int, _Search, _Eval]] = []
    for k, (_, _, idx, search, result) in enumerate(finalists):
        if late():
            notes.append(f"time limit: {k} finalist partition(s) descended; best plan so far")
            break
        # re-price the screened state with both greedy allocations, then a beam descent
        result = search.evaluate(result.profiles, result.shapes, final_effort) or result
        states = search.beam(result, BEAM, MAX_PASSES, final_effort)
        # irregular folds (beyond the paper) on the best few: a beam over all shapes, one state
        # wide from the block-fold beam's best and from a start with the axes on irregular
        # folds; the block-fold states stay in the running (screened both ways above)
        if k < IRREGULAR_FINALISTS and extended:
            states += search.beam(result, BEAM, MAX_PASSES, final_effort, extended=True)
            states += search.beam(states[0], 1, MAX_PASSES, final_effort, extended=True)
            for start_state in search.irregular_starts(final_effort):
                states += search.beam(start_state, 1, MAX_PASSES, final_effort, extended=True)
        finals.extend((st.objective, st.ports, idx, search, st) for st in states)
    if not finals:
        finals = [screened[0]]
    finals.sort(key=lambda item: item[:3])
    # joint moves (several meshes re-cut their folds together) on the best partitions' best states
    tried: set[int] = set()
    for _, _, idx, search, state in list(finals):
        if len(tried) == JOINT_PARTITIONS or late():
            break
        if idx in tried:
            continue
        tried.add(idx)
        for _ in range(MAX_PASSES):
            moved = joint(search, state, final_effort)
            if not moved.objective < state.objective * (1 - 1e-12):
                break
            state = search.beam(moved, BEAM, MAX_PASSES, final_effort, extended=extended)[0]
            finals.append((state.objective, state.ports, idx, search, state))
    finals.sort(key=lambda item: item[:3])
    extras: list[tuple[float, int, int, _Search, _Eval]] = []
    if len(instance.meshes) > 1 and not only_cube and not late():  # the best state moves across classes
        _, _, idx, search, state = finals[0]
        search, state = repartition(search, state, screen_effort, final_effort, late)
        finals.insert(0, (state.objective, state.ports, idx, search, state))
        # two re-cuts through a neutral one: they may win only under the local search below
        extras = [(st.objective, st.ports, idx, other, st)
                  for other, st in lookahead(search, state, screen_effort, late)]
    # the few best states get the multiplicity local search
    best: tuple[float, int, int] | None = None
    best_state: tuple[_Search, _Eval] | None = None
    for _, _, idx, search, state in finals[:POLISHED] + extras:
        polished = state if late() else search.evaluate(state.profiles, state.shapes, effort=2) or state
        if polished.objective > state.objective:
            polished = state
        key = (polished.objective, polished.ports, idx)
        if _better(key, best):
            best, best_state = key, (search, polished)
    assert best_state is not None
    if ctx.stopped and not any(note.startswith("time limit") for note in notes):
        notes.append("time limit: stopped inside a partition's search; best plan so far")
    decision = _decision(ctx, *best_state)
    elapsed = time.perf_counter() - start
    return assemble(instance, decision, method="heuristic", status="heuristic", solve_seconds=elapsed,
                    notes=notes)
