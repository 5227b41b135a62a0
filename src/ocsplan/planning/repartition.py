"""Moves across partition classes for the heuristic: bits of one mesh trade axes.

The screening prices every partition class from the cube with one descent pass; a class
whose axes only pay off once their folds coincide with the other meshes' (three meshes
on one K8 x K8) screens a few per cent worse than it ends, and never becomes a finalist
(instances/families/hard/wide-s2026-0070: 6.9 %). :func:`repartition` starts from the
best final state instead: in one mesh, two axes trade a bit each, or a layer some axis
installs against as many bits of the other axis (wide-s2026-0121: a heavy axis takes
the K4 two other meshes share); the state is carried over, the two axes re-choose their
folds and the axes with a layer on the traded bits re-place theirs (:func:`_settle`),
and the best move that improves is taken, then a beam descent in its partition, until
no move improves. Ours: the paper screens partitions independently.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import combinations
from math import comb

from .heuristic import BEAM, MAX_PASSES, _Eval, _Search
from .joint import improves
from .space import RING, Groups, Partition, Shape, is_irregular

__all__ = ["repartition", "swapped"]

REPARTITION_ROUNDS = 4  # accepted swaps at most (each followed by a beam descent)
MAX_EXCHANGES = 20  # a layer is traded against at most this many sets of the other axis's bits

Bits = tuple[int, ...]


def swapped(partition: Partition, mesh: int, first: int, second: int, out: Bits, into: Bits) -> Partition:
    """``partition`` with the bits ``out`` of axis ``first`` and ``into`` of axis ``second``
    of ``mesh`` exchanged; every axis's bits stay sorted high to low."""
    axes = list(partition[mesh])
    axes[first] = tuple(sorted({*axes[first]}.difference(out) | set(into), reverse=True))
    axes[second] = tuple(sorted({*axes[second]}.difference(into) | set(out), reverse=True))
    return (*partition[:mesh], tuple(axes), *partition[mesh + 1:])


def _relabel(groups: Groups, mapping: dict[int, int]) -> Groups:
    return tuple(tuple(sorted((mapping.get(b, b) for b in g), reverse=True)) for g in groups)


def _exchanges(state: _Eval, bits_a: Bits, bits_b: Bits) -> Iterator[tuple[Bits, Bits]]:
    """Bit sets the two axes can trade: every single pair, and every layer some axis
    installs (its piece inside one axis) against each equal-sized set of the other's bits."""
    for x in bits_a:
        for y in bits_b:
            yield (x,), (y,)
    seen: set[tuple[Bits, Bits]] = set()
    layers = {g for groups in state.profiles for g in groups if len(g) >= 2}
    for layer in sorted(layers):
        for own, other, flip in ((bits_a, bits_b, False), (bits_b, bits_a, True)):
            piece = tuple(b for b in own if b in layer)
            if len(piece) < 2 or len(piece) > len(other) or comb(len(other), len(piece)) > MAX_EXCHANGES:
                continue
            for back in combinations(other, len(piece)):
                pair = (back, piece) if flip else (piece, back)
                if pair not in seen:
                    seen.add(pair)
                    yield pair


def _bit_types(search: _Search, state: _Eval, mesh: int) -> dict[int, tuple[int, ...]]:
    """What every other mesh's axes see of each bit: the layer holding it per axis (-1:
    not its bit), the bit itself on irregular folds (their masks are not symmetric).
    Exchanges of bits of equal types give equivalent states: one is tried."""
    ctx = search.ctx
    types: dict[int, list[int]] = {b: [] for b in range(ctx.n)}
    for k, ax in enumerate(ctx.axes):
        if ax.mesh == mesh:
            continue
        where = {b: g for g, layer in enumerate(state.profiles[k]) for b in layer}
        irregular = is_irregular(state.shapes[k])
        for b in range(ctx.n):
            types[b].append(b if irregular and b in where else where.get(b, -1))
    return {b: tuple(t) for b, t in types.items()}


def _moves(search: _Search, state: _Eval) -> Iterator[tuple[_Search, list[Groups], list[Shape], list[int], int]]:
    """Every exchange (:func:`_exchanges`) between two axes of one mesh, one per class of
    equivalent ones: the new search, the state carried over, the active axes to settle
    (the mesh's own that changed bits first, then those with a layer on the exchanged
    bits, by weight) and how many of them are the mesh's own."""
    ctx = search.ctx
    index = {(ax.mesh, ax.index): j for j, ax in enumerate(ctx.axes)}
    order = sorted(range(len(ctx.axes)), key=lambda j: (-ctx.axes[j].weight, j))
    partition = search.partition
    for m, parts in enumerate(partition):
        types = _bit_types(search, state, m)
        for first in range(len(parts)):
            for second in range(first + 1, len(parts)):
                j1, j2 = index.get((m, first)), index.get((m, second))
                if j1 is None and j2 is None:
                    continue
                own_layer = {b: (g, len(layer)) for j in (j1, j2) if j is not None
                             for g, layer in enumerate(state.profiles[j]) for b in layer}
                seen: set[tuple[object, ...]] = set()
                for out, into in _exchanges(state, parts[first], parts[second]):
                    key = (tuple(sorted((types[b], own_layer.get(b)) for b in out)),
                           tuple(sorted((types[b], own_layer.get(b)) for b in into)))
                    if key in seen:
                        continue
                    seen.add(key)
                    other = _Search(ctx, swapped(partition, m, first, second, out, into))
                    profiles, shapes = list(state.profiles), list(state.shapes)
                    moved = [j for j in (j1, j2) if j is not None]
                    own = len(moved)
                    changed = set(out) | set(into)
                    moved += [k for k in order if k not in moved and shapes[k] != RING and any(
                        len(g) >= 2 and changed.intersection(g) for g in profiles[k])]
                    if j1 is not None:
                        profiles[j1] = _relabel(profiles[j1], dict(zip(out, into, strict=True)))
                    if j2 is not None:
                        profiles[j2] = _relabel(profiles[j2], dict(zip(into, out, strict=True)))
                    yield other, profiles, shapes, moved, own


def _settle(search: _Search, start: _Eval, moved: list[int], own: int, effort: int) -> _Eval:
    """The mesh's own moved axes re-choose their folds (every shape and placement) in
    turn, then the others on the exchanged bits re-place their shape or fall back to
    the cube (the folds they shared may have gone)."""
    current = start
    for pos, j in enumerate(moved):
        best = current
        shapes = search.ctx.axes[j].shapes if pos < own else (current.shapes[j], search.cube_shapes[j])
        for shape in shapes:
            for profiles, trial in search.moves(j, shape, current.profiles, current.shapes):
                result = search.evaluate(profiles, trial, effort, cutoff=best.objective)
                if improves(result, best):
                    best = result
        current = best
    return current


def repartition(
    search: _Search, state: _Eval, screen_effort: int, effort: int, late: Callable[[], bool],
) -> tuple[_Search, _Eval]:
    """Hill climb over bit exchanges from a final state (see the module): every move is
    priced by one descent pass at ``screen_effort``, the best that improves on the state
    (priced alike) gets a beam descent at ``effort`` and is kept if it improves there too;
    at most :data:`REPARTITION_ROUNDS` rounds."""
    for _ in range(REPARTITION_ROUNDS):
        if late():
            break
        best: tuple[_Search, _Eval] | None = None
        incumbent = search.evaluate(state.profiles, state.shapes, screen_effort)
        for other, profiles, shapes, moved, own in _moves(search, state):
            if late():
                break
            trials = [(profiles, shapes)]
            placed = list(profiles)
            for j in moved[:own]:
                if shapes[j] != RING and not is_irregular(shapes[j]):
                    placed[j] = other.placements(j, shapes[j], placed, shapes, exact=True)[0]
            if placed != profiles:
                trials.append((placed, shapes))
            cube_p, cube_s = list(profiles), list(shapes)
            for j in moved[:own]:
                cube_p[j], cube_s[j] = other.profiles[j], other.shapes[j]
            trials.append((cube_p, cube_s))
            start: _Eval | None = None
            for trial_p, trial_s in trials:
                result = other.evaluate(trial_p, trial_s, screen_effort)
                if improves(result, start):
                    start = result
            if start is None:
                continue
            result = _settle(other, start, moved, own, screen_effort)
            if improves(result, incumbent):
                incumbent, best = result, (other, result)
        if best is None:
            break
        other, moved_state = best
        priced = other.evaluate(moved_state.profiles, moved_state.shapes, effort)
        if priced is None:
            break
        result = other.beam(priced, BEAM, MAX_PASSES, effort)[0]
        if not improves(result, state):
            break
        search, state = other, result
    return search, state
