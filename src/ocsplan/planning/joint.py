"""Joint moves for the heuristic: several axes change their folds in one step.

The paper's descent (and the beams of :mod:`ocsplan.planning.search`) move one axis at
a time. Two meshes whose heavy axes must change their folds together to share them
(K8^3 on both -> K16 x K8 x K4 on both) never get there: either change alone breaks the
port budget. :func:`joint` tries, from a final state, each axis on every block fold with
the other meshes' folded axes following (:func:`follow`), and each axis on an irregular
fold with every other axis re-choosing its fold at once (:func:`_compound`).
"""

from __future__ import annotations

from .context import Eval, improves
from .search import Search
from .space import RING, Groups, Shape, is_irregular

__all__ = ["follow", "joint"]


def follow(
    search: Search, j: int, groups: Groups, shape: Shape, profiles: list[Groups], shapes: list[Shape]
) -> list[tuple[list[Groups], list[Shape]]]:
    """Joint moves: axis j on ``groups`` (of ``shape``), and every other mesh's axis that
    overlaps it and pays for a block fold follows, either re-cut (its layers become the
    pieces of j's layers inside its bits, then its old layers on the bits left, the bits
    still left as unit masks or joined to one of those layers) or
    re-placed (its shape where its folds now coincide most). Two meshes whose heavy
    axes must change their folds together to share them (K8^3 -> K16 x K8 x K4 on
    both) need this: either change alone breaks the port budget."""
    layers = [g for g in groups if len(g) >= 2]
    base_p, base_s = list(profiles), list(shapes)
    base_p[j], base_s[j] = groups, shape
    followers = [k for k in search.overlaps[j] if shapes[k] != RING and not is_irregular(shapes[k])
                 and shapes[k] != search.cube_shapes[k]]
    out = []
    cuts: dict[int, tuple[list[tuple[int, ...]], list[int]]] = {}  # per follower: its layers, bits left over
    for k in followers:
        inside = set(search.blocks[k])
        pieces = [piece for g in layers if len(piece := tuple(b for b in g if b in inside)) >= 2]
        left = inside.difference(b for piece in pieces for b in piece)
        rest = [piece for g in profiles[k] if len(piece := tuple(b for b in g if b in left)) >= 2]
        left.difference_update(b for piece in rest for b in piece)
        cuts[k] = ([*pieces, *rest], [b for b in search.blocks[k] if b in left])
    # re-cut: the bits left over as unit masks, or joined to one of the layers (K8^3 + 1 bit -> K16 x K8^2)
    for merge in range(-1, max((len(cut[0]) for cut in cuts.values()), default=0)):
        recut_p, recut_s = list(base_p), list(base_s)
        for k, (cut_layers, left_bits) in cuts.items():
            new: Groups
            if 0 <= merge < len(cut_layers) and left_bits:
                joined = set(cut_layers[merge]) | set(left_bits)
                merged = tuple(b for b in search.blocks[k] if b in joined)
                new = (*cut_layers[:merge], merged, *cut_layers[merge + 1:])
            elif merge < 0:
                new = (*cut_layers, *((b,) for b in left_bits))
            else:
                continue
            cut = tuple(sorted((len(g) for g in new), reverse=True))
            if cut in search.ctx.axes[k].shapes:
                recut_p[k], recut_s[k] = new, cut
        if (recut_p != base_p or recut_s != base_s) and (recut_p, recut_s) not in out:
            out.append((recut_p, recut_s))
    placed_p = list(base_p)
    for k in followers:
        placed_p[k] = search.placements(k, shapes[k], base_p, base_s, exact=True)[0]
    if placed_p != base_p:
        out.append((placed_p, list(base_s)))
    return out


def joint(search: Search, start: Eval, effort: int) -> Eval:
    """One pass of joint moves (:func:`follow`) from ``start``: each axis by weight
    tries every block fold at its exhaustive placements with its followers; the
    best improvement is kept per axis."""
    ctx = search.ctx
    current = start
    for j in sorted(range(len(ctx.axes)), key=lambda j: (-ctx.axes[j].weight, j)):
        best = current
        for shape in ctx.axes[j].shapes:
            if shape == RING or ctx.late():
                continue
            for groups in search.placements(j, shape, current.profiles, current.shapes, exact=True):
                for profiles, shapes in follow(search, j, groups, shape, current.profiles, current.shapes):
                    result = search.evaluate(profiles, shapes, effort, cutoff=best.objective)
                    if improves(result, best):
                        best = result
        for shape in ctx.axes[j].irregular:  # frees j's block folds: the others re-choose at once
            result = _compound(search, j, shape, current, effort)
            if improves(result, best):
                best = result
        current = best
    return current

def _compound(search: Search, j: int, shape: Shape, start: Eval, effort: int) -> Eval | None:
    """Axis j on an irregular fold, then every other axis by weight its best block fold
    and placement on what is installed then (whether or not j's move pays alone); also
    from a start where the other axes give up the layers they shared with j's old
    block fold (two meshes that drop a K4 each only save its port together)."""
    profiles, shapes = list(start.profiles), list(start.shapes)
    profiles[j], shapes[j] = search.placements(j, shape, profiles, shapes)[0], shape
    starts = [(profiles, shapes)]
    shared = [set(g) for g in start.profiles[j] if len(g) >= 2]
    released_p, released_s = list(profiles), list(shapes)
    for k, groups in enumerate(profiles):
        if k == j or shapes[k] == RING or is_irregular(shapes[k]):
            continue
        kept = [g for g in groups if not (len(g) >= 2 and any(shared_layer.issuperset(g) for shared_layer in shared))]
        if len(kept) < len(groups):
            new = (*kept, *((b,) for g in groups if g not in kept for b in g))
            cut = tuple(sorted((len(g) for g in new), reverse=True))
            if cut in search.ctx.axes[k].shapes:
                released_p[k], released_s[k] = new, cut
    if released_p != profiles or released_s != shapes:
        starts.append((released_p, released_s))
    best: Eval | None = None
    for first_p, first_s in starts:
        result = _rechoose(search, j, first_p, first_s, effort)
        if improves(result, best):
            best = result
    return best


def _rechoose(search: Search, j: int, profiles: list[Groups], shapes: list[Shape], effort: int) -> Eval | None:
    """Every axis but j by weight takes its best block fold and placement on what is installed."""
    ctx = search.ctx
    current = search.evaluate(profiles, shapes, effort)
    for k in sorted(range(len(ctx.axes)), key=lambda k: (-ctx.axes[k].weight, k)):
        if k == j:
            continue
        for other in ctx.axes[k].shapes:
            for trial_p, trial_s in search.moves(k, other, profiles, shapes):
                result = search.evaluate(trial_p, trial_s, effort, None if current is None else current.objective)
                if improves(result, current):
                    current = result
        if current is not None:
            profiles, shapes = list(current.profiles), list(current.shapes)
    return current
