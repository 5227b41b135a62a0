"""The planner's search state: what the stages of :mod:`ocsplan.planning.heuristic`
and its strategies (:mod:`~ocsplan.planning.shortlist`, :mod:`~ocsplan.planning.joint`,
:mod:`~ocsplan.planning.repartition`) share.

:class:`Search` is the state of one partition class over a
:class:`~ocsplan.planning.context.Context`: the axes' profiles, the placement of a shape
on an axis's bits, the free alignment of axes on their cube, the pricing of a
configuration into an :class:`~ocsplan.planning.context.Eval` (multiplicities
allocated), and the moves over it (one descent pass, the beam, the irregular starts).
Deterministic: every tie broken by a fixed order.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from itertools import repeat
from operator import eq, mul

import numpy as np
import numpy.typing as npt

from ..cayley import bits_of, folds_of_mask, mask_of, popcount
from .context import BOUND_SLACK, Context, Eval
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
from .space import RING, Groups, Shape, irregular_fold, is_irregular

__all__ = ["BEAM", "MAX_PASSES", "PLACEMENTS", "Search"]

BEAM = 3  # states kept per axis step when descending on the finalists
MAX_PASSES = 4  # passes of a descent or beam at most
EXACT_PLACEMENTS = 300  # place sub-blocks exhaustively up to this many placements, beyond by a beam
TABLE_CELLS = 1 << 22  # sub-block tables (sub-blocks x fold masks) up to this size; beyond, placed lazily
LAZY_SUBSETS = 2000  # sub-blocks tried per part when placed lazily


_UNSEEN: tuple[Groups, Shape] = ((), ())  # not yet in a memo (a memo's values are never it)

# Placements that depend on the block, the shape and the masks around it only (see Search.placements),
# across the instances of a process: emptied when full.
PLACEMENTS: dict[tuple[object, ...], tuple[Groups, ...]] = {}
PLACEMENTS_MAX = 1 << 16


class Search:
    """State of the descent for one partition: profiles of the active axes."""

    def __init__(self, ctx: Context, partition: tuple[tuple[tuple[int, ...], ...], ...]) -> None:
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
        self._cube_units: dict[int, dict[object, int]] = {}  # by the ring axes' bits: see _evaluate
        self._layers_of: dict[int, tuple[Groups, tuple[int, ...]]] = {}  # see aligned
        self._irregular_keys: dict[tuple[int, Shape], tuple[tuple[str, int, int], ...]] = {}

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
                # without the cube axes' costs (exact with cubes) the placement depends on no more
                # than the key: remembered across instances too (the batches of a sweep share blocks)
                portable = not (exact and cubes)
                found = PLACEMENTS.get(shared_key) if portable else None
                if found is None:
                    found = self._place(j, shape, local, exact, cubes)
                    if portable:
                        if len(PLACEMENTS) >= PLACEMENTS_MAX:
                            PLACEMENTS.clear()
                        PLACEMENTS[shared_key] = found
                self.ctx.placed[shared_key] = found
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
                    self._induced_rows[ind_key] = self._induced(j, table, cubes)
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

    def _induced(self, j: int, table: PlacementTable, cubes: tuple[int, ...]) -> npt.NDArray[np.float64]:
        """Per placement, the cost at p = 1 of the axes still on their cube on the free
        folds its sub-blocks give them (each cube axis on the pieces its bits cut out).
        Each cube axis's row depends on block j, the parts and that axis's bits only:
        remembered across partition classes (ctx.induced, read-only rows)."""
        total = np.zeros(len(table.placements))
        for k in cubes:
            row_key = (self.blocks[j], table.parts, k, self.masks[k])
            row = self.ctx.induced.get(row_key)
            if row is None:
                row = self.ctx.induced[row_key] = self._induced_row(table, k)
            total += row
        return total

    def _induced_row(self, table: PlacementTable, k: int) -> npt.NDArray[np.float64]:
        """Per placement, cube axis k's cost at p = 1 on the pieces its sub-blocks cut out of its bits."""
        ax = self.ctx.axes[k]
        counts = np.bitwise_count(table.masks & self.masks[k]).astype(np.int64)
        pieces = -np.sort(-counts[table.members], axis=1)  # per placement, largest first
        codes = (pieces << (DIGIT * np.arange(pieces.shape[1]))).sum(axis=1).tolist()  # one integer per row
        cost_of: dict[int, float] = {}  # per distinct row (pieces), its cost: at its first row
        for row, code in enumerate(codes):
            if code not in cost_of:
                sizes = [int(x) for x in pieces[row] if x >= 2]
                free = (*sizes, *([1] * (ax.bits - sum(sizes))))
                cost_of[code] = self.ctx.axis_cost(ax, free if free in ax.shapes else (1,) * ax.bits)
        out: npt.NDArray[np.float64] = np.array([cost_of[code] for code in codes], dtype=np.float64)
        out.flags.writeable = False
        return out

    def aligned(self, profiles: list[Groups], shapes: list[Shape]) -> tuple[list[Groups], list[Shape]]:
        """Let every axis still on its cube take the coarsest block fold the installed folds give it.

        A complete sub-block B is installed exactly when some chosen layer contains B
        (its all-ones mask needs one), so the free sub-blocks of an axis are the
        intersections of its bits with the chosen layers. An axis switches to the
        greedy (largest first) partition into such pieces when that prices its
        demands lower at multiplicity 1.
        """
        installed: set[int] = set()
        layers_of = self._layers_of
        for j, groups in enumerate(profiles):
            if shapes[j] != RING:
                # by identity: profiles are shared objects (placements, states), hashing them costs more
                known = layers_of.get(id(groups))
                if known is None:
                    known = layers_of[id(groups)] = (groups, profile_layers(groups))  # holds groups: id stays
                installed.update(known[1])
        if not installed:
            return profiles, shapes
        layers = tuple(sorted(installed))
        out_p, out_s = list(profiles), list(shapes)
        by_layers = self._by_layers
        for k, cube in enumerate(map(eq, shapes, self.cube_shapes)):
            if cube:  # an axis that chose a fold keeps it (a finer one may suit its multiplicity)
                found = by_layers.get((k, layers), _UNSEEN)
                if found is _UNSEEN:
                    found = self._by_layer(k, layers)
                if found is not None:
                    out_p[k], out_s[k] = found
        return out_p, out_s

    def _by_layer(self, k: int, layers: tuple[int, ...]) -> tuple[Groups, Shape] | None:
        """What :meth:`aligned` gives axis k (on its cube) under the installed ``layers``."""
        if (k, layers) not in self._by_layers:
            inside = self.masks[k]
            # only pieces of two bits or more can be chosen: the key keeps just those
            pieces = tuple(sorted({piece for layer in layers if (piece := layer & inside).bit_count() >= 2}))
            key = (k, pieces)
            if key not in self._aligned:
                self._aligned[key] = self._align(k, pieces) if pieces else None
            self._by_layers[(k, layers)] = self._aligned[key]
        return self._by_layers[(k, layers)]

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
    ) -> Eval | None:
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

    def _private(self, j: int, shape: Shape) -> tuple[tuple[str, int, int], ...]:
        """The generator keys of axis j's irregular fold ``shape``: its masks, its own."""
        key = (j, shape)
        found = self._irregular_keys.get(key)
        if found is None:
            masks = irregular_fold(shape, self.blocks[j])
            found = self._irregular_keys[key] = tuple(("irregular", j, g) for g in masks)
        return found

    def _evaluate(
        self, profiles: list[Groups], shapes: list[Shape], effort: int, cutoff: float | None = None,
    ) -> Eval | float | None:
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
        weight = self._cube_units.get(ring_bits)
        if weight is None:
            weight = self._cube_units[ring_bits] = {1 << b: 1 for b in range(ctx.n) if not ring_bits >> b & 1}
        weight = dict(weight)
        weight.update(dict.fromkeys(folds, 1))
        # an irregular fold's masks are its axis's own (not shared), one port each
        private: dict[int, tuple[tuple[str, int, int], ...]] = {}
        for j, shape in enumerate(shapes):
            if is_irregular(shape):
                private[j] = self._private(j, shape)
                weight.update(dict.fromkeys(private[j], 1))
        for j in ring_axes:
            weight[("ring", j)] = 2
        base = sum(weight.values())
        if base > fabric.ports:
            return None
        set_index: dict[tuple[object, ...], int] = {}  # the allocation sets, numbered as first met
        add = set_index.setdefault
        hosts: list[tuple[int, int]] = []
        priced: list[tuple[tuple[float, float, int], ...]] = []  # undominated options, for the allocation
        tables: list[int] = []  # their tables' numbers (see ctx.priced)
        units = self.units
        for j, ax in enumerate(ctx.axes):
            shape = shapes[j]
            if shape == RING:
                prof = add((("ring", j),), len(set_index))
                unit = prof
            else:
                prof = add(profile_members(profiles[j]) + private.get(j, ()), len(set_index))
                unit = add(units[j], len(set_index))
            hosts.append((prof, unit))
            axis_priced = ctx.priced(ax, shape, prof, unit)
            if axis_priced is None:
                return None
            priced.extend(axis_priced[0])
            tables.append(axis_priced[1])
        keys = list(weight)
        position = dict(zip(keys, range(len(keys)), strict=True)).__getitem__
        weights = tuple(weight.values())  # in the order of keys
        # per set, its members' positions among the keys (maps of maps: no Python frame per set)
        members_at = tuple(map(tuple, map(map, repeat(position), set_index)))
        allocated = ctx.allocate(members_at, weights, tuple(priced), fabric.ports - base, effort, cutoff, tuple(tables))
        if isinstance(allocated, float):
            return allocated
        objective, levels, eff = allocated
        used = sum(map(mul, weights, levels))
        levels_by_key = dict(zip(keys, levels, strict=True))
        return Eval(objective, used, hosts, eff, levels_by_key, list(chosen), list(chosen_shapes), profiles, shapes)

    def beam(self, start: Eval, width: int, max_passes: int, effort: int, extended: bool = False) -> list[Eval]:
        """Coordinate descent that keeps the ``width`` best states after every axis
        step (a beam), with exhaustive placements; near ties between shapes (one
        cheaper in folds, one slightly faster) both survive until later axes decide."""
        ctx = self.ctx
        order = sorted(range(len(ctx.axes)), key=lambda j: (-ctx.axes[j].weight, j))

        names: dict[int, tuple[Eval, str]] = {}  # by identity (holding the state: its id stays)

        def key(e: Eval) -> tuple[float, int, str]:
            known = names.get(id(e))
            if known is None:
                known = names[id(e)] = (e, repr((e.profiles, e.shapes)))
            return (e.objective, e.ports, known[1])

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

    def irregular_starts(self, effort: int) -> list[Eval]:
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
        self, max_passes: int, current: Eval | None = None, effort: int = 1, extended: bool = False
    ) -> tuple[Eval | None, bool]:
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
                pick: tuple[Groups, Shape, Eval] | None = None
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
