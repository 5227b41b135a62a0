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
no move improves. A mesh may also re-cut all its bits at once (:func:`recuts`): on the
folds the other meshes install, its axes take every assignment of bits up to
relabelling (wide-s1-0008: three meshes each move two bits onto the K4 and the folded
cube another installs; no single exchange pays), and :func:`lookahead` follows a re-cut
that changes nothing in price by one of another mesh. Ours: the paper screens
partitions independently.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from itertools import combinations
from typing import cast

from .context import Eval, improves
from .search import BEAM, MAX_PASSES, Search
from .space import RING, Groups, Partition, Shape, is_irregular

__all__ = ["lookahead", "recuts", "repartition", "swapped"]

REPARTITION_ROUNDS = 4  # accepted swaps at most (each followed by a beam descent)
MAX_EXCHANGES = 20  # a layer is traded against at most this many sets of the other axis's bits
MAX_RECUTS = 60  # re-cuts of one mesh ranked per round at most (the first in enumeration order)
RECUTS_PRICED = 4  # per mesh, the best re-cuts at multiplicity 1 that get allocations
RECUTS_SETTLED = 2  # per mesh, the best of those that re-choose their folds
PLATEAU_FOLLOWED = 1  # neutral re-cuts that the lookahead follows by a second one
LOOKAHEAD_WINDOW = 0.01  # second re-cuts kept within this share of the state (at the search's effort)
LOOKAHEAD_KEPT = 2  # and at most this many, for the final polish

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


def _exchanges(state: Eval, bits_a: Bits, bits_b: Bits) -> Iterator[tuple[Bits, Bits]]:
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
            if len(piece) < 2 or len(piece) > len(other) or math.comb(len(other), len(piece)) > MAX_EXCHANGES:
                continue
            for back in combinations(other, len(piece)):
                pair = (back, piece) if flip else (piece, back)
                if pair not in seen:
                    seen.add(pair)
                    yield pair


def _bit_types(search: Search, state: Eval, mesh: int) -> dict[int, tuple[int, ...]]:
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


def _moves(search: Search, state: Eval) -> Iterator[tuple[Search, list[Groups], list[Shape], list[int], int]]:
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
                    other = Search(ctx, swapped(partition, m, first, second, out, into))
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


def _tables(sizes: list[int], counts: list[int]) -> Iterator[list[list[int]]]:
    """Every table of non-negative integers with row sums ``sizes`` and column sums
    ``counts`` (axis by bit type: how many bits of each type an axis takes)."""
    if not sizes:
        if not any(counts):
            yield []
        return
    row: list[int] = []

    def fill(k: int, need: int) -> Iterator[list[int]]:
        if k == len(counts):
            if need == 0:
                yield list(row)
            return
        if need > sum(counts[k:]):
            return
        for take in range(min(need, counts[k]), -1, -1):
            row.append(take)
            yield from fill(k + 1, need - take)
            row.pop()

    for first in fill(0, sizes[0]):
        left = [c - t for c, t in zip(counts, first, strict=True)]
        for rest in _tables(sizes[1:], left):
            yield [first, *rest]


def recuts(search: Search, state: Eval, mesh: int) -> Iterator[tuple[Search, list[Groups], list[Shape], list[int]]]:
    """The mesh's bits assigned anew to its axes, one assignment per class of those that
    differ only by bits of equal types (what the other meshes see of a bit,
    :func:`_bit_types`, and the own layer holding it), the current one excepted, at most
    :data:`MAX_RECUTS`: the new search, the state with the mesh's own axes keeping the
    layers that stay inside their bits (:func:`_kept`; the rest align to what the others
    install) and those axes."""
    ctx = search.ctx
    parts = search.partition[mesh]
    own = [j for j, ax in enumerate(ctx.axes) if ax.mesh == mesh]
    seen_by_others = _bit_types(search, state, mesh)
    held: dict[int, tuple[int, int]] = {}  # bit -> (own axis, its layer), -2 - bit on irregular folds
    for j in own:
        irregular = is_irregular(state.shapes[j])
        for g, layer in enumerate(state.profiles[j]):
            for b in layer:
                if irregular:
                    held[b] = (j, -2 - b)
                elif len(layer) >= 2 and state.shapes[j] != RING:
                    held[b] = (j, g)
    types = {b: (t, held.get(b, (-1, -1))) for b, t in seen_by_others.items()}
    bits = sorted((b for part in parts for b in part), key=lambda b: (types[b], -b))
    classes: list[list[int]] = []
    for b in bits:
        if classes and types[classes[-1][0]] == types[b]:
            classes[-1].append(b)
        else:
            classes.append([b])
    yielded = 0
    for table in _tables([len(part) for part in parts], [len(c) for c in classes]):
        if yielded == MAX_RECUTS:
            return
        taken = [0] * len(classes)
        axes: list[Bits] = []
        for row in table:
            chosen = [b for k, take in enumerate(row) for b in classes[k][taken[k]:taken[k] + take]]
            taken = [t + take for t, take in zip(taken, row, strict=True)]
            axes.append(tuple(sorted(chosen, reverse=True)))
        if [sorted(types[b] for b in axis) for axis in axes] == [sorted(types[b] for b in p) for p in parts]:
            continue  # the current assignment, up to relabelling
        partition = (*search.partition[:mesh], tuple(axes), *search.partition[mesh + 1:])
        other = Search(ctx, partition)
        profiles, shapes = list(state.profiles), list(state.shapes)
        for j in own:
            profiles[j], shapes[j] = _kept(other, j, state.profiles[j], state.shapes[j])
        yielded += 1
        yield other, profiles, shapes, own


def _kept(search: Search, j: int, groups: Groups, shape: Shape) -> tuple[Groups, Shape]:
    """Axis j on its new bits keeps the layers it had that lie inside them (the rest of
    its bits as unit masks), or goes to its cube if that is no shape of it; a ring or an
    irregular fold is kept only on the same bits."""
    block = search.blocks[j]
    cube = (search.profiles[j], search.shapes[j])
    if shape == RING or is_irregular(shape):
        return (groups, shape) if set(block) == {b for g in groups for b in g} else cube
    layers = [g for g in groups if len(g) >= 2 and set(g) <= set(block)]
    used = {b for g in layers for b in g}
    new = (*layers, *((b,) for b in block if b not in used))
    cut = tuple(sorted((len(g) for g in new), reverse=True))
    return (new, cut) if cut in search.ctx.axes[j].shapes else cube


def _settle(search: Search, start: Eval, moved: list[int], own: int, effort: int) -> Eval:
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


def _settled(
    search: Search, state: Eval, mesh: int, effort: int, late: Callable[[], bool],
) -> list[tuple[Search, Eval]]:
    """The mesh's most promising re-cuts (:func:`recuts`), settled: ranked with every
    generator at multiplicity 1 (past the first few, the bound there is the price: no
    allocation), the :data:`RECUTS_PRICED` best priced at ``effort``, and the :data:`RECUTS_SETTLED` best
    of those re-choose their folds (:func:`_settle`). Remembered: the lookahead starts
    where the hill climb's last round ended."""
    key = (search.partition, tuple(state.profiles), tuple(state.shapes), mesh, effort)
    if key in search.ctx.settled:
        return cast("list[tuple[Search, Eval]]", search.ctx.settled[key])
    ranked = _best(recuts(search, state, mesh), -1, RECUTS_PRICED, late)
    priced = _best(((other, r.profiles, r.shapes, own) for other, r, own in ranked), effort, RECUTS_SETTLED, late)
    settled = [(other, _settle(other, result, own, len(own), effort)) for other, result, own in priced]
    if not late():  # a list cut short by the deadline is not the whole answer
        search.ctx.settled[key] = settled
    return settled


def _recut(
    search: Search, state: Eval, incumbent: Eval | None, effort: int, late: Callable[[], bool],
) -> tuple[Search, Eval] | None:
    """The best settled re-cut (:func:`_settled`) of any mesh that improves on ``incumbent``."""
    best: tuple[Search, Eval] | None = None
    for m in range(len(search.partition)):
        for other, result in _settled(search, state, m, effort, late):
            if improves(result, incumbent):
                incumbent, best = result, (other, result)
    return best


def lookahead(
    search: Search, state: Eval, effort: int, late: Callable[[], bool],
) -> list[tuple[Search, Eval]]:
    """Two re-cuts in two meshes, the first neutral: from each settled re-cut that prices
    like ``state`` (at ``effort``; at most :data:`PLATEAU_FOLLOWED`), the settled re-cuts
    of every other mesh; the :data:`LOOKAHEAD_KEPT` best within :data:`LOOKAHEAD_WINDOW`
    of ``state``. They may win only under the allocator's local search (wide-s1-0029:
    three meshes' heavy single-bit axes on one unit mask, whose multiplicity the greedy
    allocations split badly), so the planner polishes them with its final states."""
    incumbent = search.evaluate(state.profiles, state.shapes, effort)
    if incumbent is None:
        return []
    neutral = [(m, other, result) for m in range(len(search.partition))
               for other, result in _settled(search, state, m, effort, late)
               if result.ports == incumbent.ports
               and math.isclose(result.objective, incumbent.objective, rel_tol=1e-12)]
    found: list[tuple[float, int, int, Search, Eval]] = []
    for m, other, result in neutral[:PLATEAU_FOLLOWED]:
        for m2 in range(len(search.partition)):
            if m2 != m and not late():
                found += [(r.objective, r.ports, len(found) + k, o, r)
                          for k, (o, r) in enumerate(_settled(other, result, m2, effort, late))
                          if r.objective <= incumbent.objective * (1 + LOOKAHEAD_WINDOW)]
    found.sort(key=lambda item: item[:3])
    return [(o, r) for *_, o, r in found[:LOOKAHEAD_KEPT]]


def _best(
    trials: Iterator[tuple[Search, list[Groups], list[Shape], list[int]]], effort: int, count: int,
    late: Callable[[], bool],
) -> list[tuple[Search, Eval, list[int]]]:
    """The ``count`` best configurations priced at ``effort`` (lower objective, fewer
    ports, earlier): the rest are skipped by the bound once ``count`` are held."""
    kept: list[tuple[float, int, int, Search, Eval, list[int]]] = []
    for k, (search, profiles, shapes, own) in enumerate(trials):
        if late():
            break
        cutoff = kept[-1][0] if len(kept) == count else None
        result = search.evaluate(profiles, shapes, effort, cutoff=cutoff)
        if result is not None:
            kept = sorted([*kept, (result.objective, result.ports, k, search, result, own)],
                          key=lambda item: item[:3])[:count]
    return [(search, result, own) for _, _, _, search, result, own in kept]


def repartition(
    search: Search, state: Eval, screen_effort: int, effort: int, late: Callable[[], bool],
) -> tuple[Search, Eval]:
    """Hill climb over bit exchanges and re-cuts from a final state (see the module): every
    move is priced by one descent pass at ``screen_effort``, the best that improves on the state
    (priced alike) gets a beam descent at ``effort`` and is kept if it improves there too;
    at most :data:`REPARTITION_ROUNDS` rounds."""
    for _ in range(REPARTITION_ROUNDS):
        if late():
            break
        best: tuple[Search, Eval] | None = None
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
            start: Eval | None = None
            for trial_p, trial_s in trials:
                result = other.evaluate(trial_p, trial_s, screen_effort)
                if improves(result, start):
                    start = result
            if start is None:
                continue
            result = _settle(other, start, moved, own, screen_effort)
            if improves(result, incumbent):
                incumbent, best = result, (other, result)
        if best is None:  # no exchange pays: whole re-cuts of a mesh
            best = _recut(search, state, incumbent, screen_effort, late)
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
