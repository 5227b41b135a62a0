"""The exact model's rows over its variables (formulations/cpsat.md, formulations/milp.md)."""

from __future__ import annotations

import itertools

from ...cayley import mask_of
from ..space import RING, Shape, is_irregular, shape_folds
from .candidates import DemandCandidates
from .symmetry import twin_pairs
from .variables import Variables, shape_name, shared_degree

__all__ = ["add_rows"]


def _mult(shape: Shape, k: int) -> int:
    """Layers of ``k`` bits the shape asks for (none on a ring or an irregular fold)."""
    return 0 if shape == RING or is_irregular(shape) else sum(1 for x in shape if x == k)


def add_rows(form: Variables) -> list[tuple[int, int]]:
    """Every row, in a fixed order: partition, axes, demands, multiplicities, ports,
    then the valid inequalities and the symmetry rows; the twin pairs the rows order."""
    if form.cand.compact:
        _compact_rows(form)
    else:
        form.model.add("one_partition", [(v, 1) for v in form.part], "==", 1)
        for (j, b), v in form.own.items():
            form.model.add(f"owns_{j}_{b}", [(v, 1)] + [(p, -c) for p, c in form.owns(j, b)], "==", 0)
    _axis_rows(form)
    for d, dc in enumerate(form.cand.demands):
        _demand_rows(form, d, dc)
    _multiplicity_rows(form)
    _port_row(form)
    _valid_inequalities(form)
    _symmetry_rows(form)
    return _twin_rows(form)


def _compact_rows(form: Variables) -> None:
    """The partition bit by bit: every bit in one class of each mesh, classes of their
    sizes, and the bits' types (tuple of classes) non-decreasing from the top bit down,
    which leaves exactly one partition per symmetry class (formulations, section 5b)."""
    cand, mdl = form.cand, form.model
    layout, n = cand.layout, cand.n
    for pos, mc in enumerate(layout[1:], start=1):
        for b in range(n):
            terms = [(form.cls[(pos, c, b)], 1) for c in range(len(mc.classes))]
            mdl.add(f"bit_class_{mc.mesh}_{b}", terms, "==", 1)
        for c, size in enumerate(mc.sizes):
            terms = [(form.cls[(pos, c, b)], 1) for b in range(n)]
            mdl.add(f"class_size_{mc.mesh}_{c}", terms, "==", size)
    width = max((len(mc.classes) for mc in layout), default=1)
    for lower in range(n - 1):
        upper = lower + 1
        if len(layout) < 2 or form.first_class[upper] != form.first_class[lower]:
            continue  # the first mesh's class already orders the two bits
        terms = []
        for pos, mc in enumerate(layout[1:], start=1):
            weight = width ** (len(layout) - 1 - pos)
            for c in range(1, len(mc.classes)):
                terms += [(form.cls[(pos, c, lower)], weight * c), (form.cls[(pos, c, upper)], -weight * c)]
        mdl.add(f"canonical_{lower}", terms, ">=", 0)


def _axis_rows(form: Variables) -> None:
    """Per axis: one shape, disjoint layers of the shape's sizes, folds inside them installed."""
    mdl = form.model
    for j, ax in enumerate(form.cand.axes):
        mdl.add(f"one_shape_{j}", [(v, 1) for v in form.shape[j].values()], "==", 1)
        for b in form.bits(j):
            terms = [(v, 1) for layer, v in form.layer[j].items() if b in layer]
            if terms:
                own = form.owner(j, b)
                if own is None:
                    mdl.add(f"layers_disjoint_{j}_{b}", terms, "<=", 1)
                else:
                    mdl.add(f"layers_disjoint_{j}_{b}", [*terms, (own, -1)], "<=", 0)
        for size in range(2, max((len(x) for x in ax.layers), default=1) + 1):
            terms = [(v, 1) for layer, v in form.layer[j].items() if len(layer) == size]
            terms += [(v, -_mult(s, size)) for s, v in form.shape[j].items() if _mult(s, size)]
            mdl.add(f"shape_count_{j}_{size}", terms, "==", 0)
        for g, v in form.inside[j].items():
            terms = [(v, 1)] + [
                (y, -1) for layer, y in form.layer[j].items() if g & ~mask_of(layer) == 0
            ]
            mdl.add(f"inside_{j}_{g}", terms, "==", 0)
            mdl.add(f"installed_{j}_{g}", [(form.fold[g], 1), (v, -1)], ">=", 0)


def _demand_rows(form: Variables, d: int, dc: DemandCandidates) -> None:
    """Demand d: one candidate, the shape it needs, the levels it asks for; its costs."""
    mdl, axes = form.model, form.cand.axes
    j = dc.axis
    picks = form.pick[d]
    mdl.add(f"one_choice_{d}", [(v, 1) for v in picks], "==", 1)
    for s, sv in form.shape[j].items():
        if s == axes[j].cube:
            continue
        terms = [(picks[c], 1) for c, ch in enumerate(dc.choices) if ch.shape == s]
        if terms:
            mdl.add(f"needs_shape_{d}_{shape_name(s)}", [*terms, (sv, -1)], "<=", 0)
    if RING in form.shape[j]:
        terms = [(picks[c], 1) for c, ch in enumerate(dc.choices) if ch.shape is None]
        mdl.add(f"not_ring_{d}", [*terms, (form.shape[j][RING], 1)], "<=", 1)
    for k, lv in form.plev[j].items():
        terms = [
            (picks[c], -1) for c, ch in enumerate(dc.choices) if ch.on_profile and ch.p >= k
        ]
        if terms:
            mdl.add(f"profile_level_{d}_{k}", [(lv, 1), *terms], ">=", 0)
    for k, lv in form.ulev[j].items():
        terms = [
            (picks[c], -1) for c, ch in enumerate(dc.choices) if not ch.ring and ch.p >= k
        ]
        if terms:
            mdl.add(f"unit_level_{d}_{k}", [(lv, 1), *terms], ">=", 0)
    for k, lv in form.rlev[j].items():
        terms = [(picks[c], -1) for c, ch in enumerate(dc.choices) if ch.ring and ch.p >= k]
        if terms:
            mdl.add(f"ring_level_{d}_{k}", [(lv, 1), *terms], ">=", 0)
    for (jj, s, k), lv in form.ilev.items():
        if jj != j:
            continue
        terms = [(picks[c], -1) for c, ch in enumerate(dc.choices) if ch.shape == s and ch.p >= k]
        if terms:
            mdl.add(f"irregular_level_{d}_{s[2]}_{k}", [(lv, 1), *terms], ">=", 0)
    for c, ch in enumerate(dc.choices):
        mdl.objective[picks[c]] = ch.cost


def _multiplicity_rows(form: Variables) -> None:
    """Generator multiplicities follow the levels of the axes that drive them."""
    mdl = form.model
    for j, ax in enumerate(form.cand.axes):
        for g in ax.folds:
            for k, lv in form.plev[j].items():
                mdl.add(
                    f"fold_level_{j}_{g}_{k}",
                    [(form.mult[(g, k)], 1), (lv, -1), (form.inside[j][g], -1)],
                    ">=",
                    -1,
                )
        for b in form.bits(j):
            own = form.owner(j, b)
            for k, lv in form.ulev[j].items():
                if own is None:  # b is in the block under every partition
                    mdl.add(
                        f"unit_mult_{j}_{b}_{k}",
                        [(form.mult[(1 << b, k)], 1), (lv, -1)],
                        ">=",
                        0,
                    )
                else:
                    terms = [(form.mult[(1 << b, k)], 1), (lv, -1), (own, -1)]
                    mdl.add(f"unit_mult_{j}_{b}_{k}", terms, ">=", -1)


def _port_row(form: Variables) -> None:
    """The port budget (Eq. 2): base cube n, folds, extra circuits, rings at 2 ports per
    unit, irregular folds at one port per mask and level."""
    cand = form.cand
    terms = [(v, 1) for v in form.fold.values()] + [(v, 1) for v in form.mult.values()]
    for j, ax in enumerate(cand.axes):
        if RING in form.shape[j]:
            terms.append((form.shape[j][RING], 2 - ax.bits))
            terms += [(v, 2) for v in form.rlev[j].values()]
        terms += [(v, shape_folds(s)) for s, v in form.shape[j].items() if is_irregular(s)]
    terms += [(v, shape_folds(s)) for (_, s, _), v in form.ilev.items()]
    form.model.add("ports", terms, "<=", cand.ports - cand.n)


def _symmetry_rows(form: Variables) -> None:
    """Within each class, the pivot axis's layers are runs of consecutive bits,
    largest run first (formulations: symmetry breaking)."""
    cand, mdl = form.cand, form.model
    if form.pivot is None:
        return
    j = form.pivot
    ax = cand.axes[j]
    for k, part_var in enumerate(form.part):
        block = set(ax.blocks[k])
        for ci, cls in enumerate(form.classes(k)):
            if not block.issuperset(cls) or len(cls) < 2:
                continue
            pos = {b: i for i, b in enumerate(cls)}
            for layer, v in form.layer[j].items():
                inside = sorted(pos[b] for b in layer if b in pos)
                if inside and inside[-1] - inside[0] + 1 != len(inside):
                    mdl.add(f"sym_run_{k}_{ci}_{v}", [(v, 1), (part_var, 1)], "<=", 1)
            for upper, lower in itertools.pairwise(cls):
                terms: dict[int, int] = {}
                for layer, v in form.layer[j].items():
                    share = sum(1 for b in layer if b in pos) - 1
                    if share <= 0:
                        continue
                    if upper in layer:
                        terms[v] = terms.get(v, 0) + share
                    if lower in layer:
                        terms[v] = terms.get(v, 0) - share
                if terms:
                    big = len(cls) - 1
                    terms[part_var] = terms.get(part_var, 0) - big
                    mdl.add(f"sym_order_{k}_{upper}", terms, ">=", -big)


def _twin_rows(form: Variables) -> list[tuple[int, int]]:
    """Twin axes (identical axes of one mesh, or of identical meshes) in order of
    shape (formulations: section 5c); the twin pairs."""
    twins = twin_pairs(form.cand)
    for j1, j2 in twins:
        terms = [(v, i) for i, v in enumerate(form.shape[j1].values())]
        terms += [(v, -i) for i, v in enumerate(form.shape[j2].values())]
        form.model.add(f"twins_{j1}_{j2}", terms, "<=", 0)
    return twins


def _valid_inequalities(form: Variables) -> None:
    """Per mesh: its axes' profiles are disjoint, so their fold and level counts add up."""
    cand, mdl = form.cand, form.model
    axes = cand.axes
    meshes = sorted({ax.mesh for ax in axes})
    fold_vars = [(v, 1) for v in form.fold.values()]
    levels = sorted({k for _, k in form.mult})
    need = form.need
    for j, ax in enumerate(axes):
        for k in range(2, max(form.ku[j], form.kp[j]) + 1):
            need[(j, k)] = mdl.var(
                f"need_{j}_{k}", 0, max(shared_degree(s, ax.bits) for s in ax.shapes if s != RING)
            )
    for d, dc in enumerate(cand.demands):
        j = dc.axis
        for k in range(2, max(form.ku[j], form.kp[j]) + 1):
            terms = []
            for c, ch in enumerate(dc.choices):
                if ch.ring or ch.p < k:
                    continue
                count = shared_degree(ch.shape, axes[j].bits)
                terms.append((form.pick[d][c], -count))
            if terms:
                mdl.add(f"need_{d}_{k}", [(need[(j, k)], 1), *terms], ">=", 0)
    for m in meshes:
        members = [j for j, ax in enumerate(axes) if ax.mesh == m]
        terms = [
            (v, -shape_folds(s))
            for j in members
            for s, v in form.shape[j].items()
            if s != RING and not is_irregular(s) and shape_folds(s)
        ]
        if terms and fold_vars:
            mdl.add(f"mesh_folds_{m}", fold_vars + terms, ">=", 0)
        for k in levels:
            lhs = [(v, 1) for (g, kk), v in form.mult.items() if kk == k]
            rhs = [(need[(j, k)], -1) for j in members if (j, k) in need]
            if rhs:
                mdl.add(f"mesh_level_{m}_{k}", lhs + rhs, ">=", 0)
