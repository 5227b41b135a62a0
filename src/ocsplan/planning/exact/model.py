"""The exact formulation (formulations/cpsat.md, formulations/milp.md) as one linear model.

Both backends translate the same :class:`LinearModel`: integer variables (most
of them binary), linear rows with integer coefficients, and a linear objective
in seconds. :class:`Formulation` builds it from the shared candidates, decodes
a solution into a :class:`~ocsplan.plan.Decision`, and turns a decision (the
heuristic's plan) into a complete assignment, the solution hint.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ...cayley import fold_masks, mask_of
from ...errors import OcsplanError
from ...plan import Decision, DemandDecision, Plan
from ..space import (
    IRREGULAR,
    RING,
    Shape,
    irregular_fold,
    is_irregular,
    mesh_classes,
    partition_of,
    shape_degree,
    shape_folds,
)
from .candidates import ActiveAxis, Candidate, Candidates, DemandCandidates, Partition
from .symmetry import Profiles, order_twins, sort_bits, twin_pairs

__all__ = ["Assignment", "Formulation", "LinearModel", "Row", "build_formulation"]

Assignment = dict[int, int]


@dataclass(frozen=True)
class Row:
    """sum(coef * var) <sense> rhs, with sense one of "<=", ">=", "=="."""

    name: str
    terms: tuple[tuple[int, int], ...]
    sense: str
    rhs: int


@dataclass
class LinearModel:
    """Integer variables with bounds, linear rows, a linear objective (seconds)."""

    names: list[str] = field(default_factory=list)
    lower: list[int] = field(default_factory=list)
    upper: list[int] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    objective: dict[int, float] = field(default_factory=dict)

    def var(self, name: str, lower: int = 0, upper: int = 1) -> int:
        self.names.append(name)
        self.lower.append(lower)
        self.upper.append(upper)
        return len(self.names) - 1

    def add(
        self, name: str, terms: Mapping[int, int] | Sequence[tuple[int, int]], sense: str, rhs: int
    ) -> None:
        items = terms.items() if isinstance(terms, Mapping) else terms
        merged: dict[int, int] = {}
        for var, coef in items:
            merged[var] = merged.get(var, 0) + coef
        self.rows.append(Row(name, tuple((v, c) for v, c in merged.items() if c), sense, rhs))

    def value(self, assignment: Mapping[int, int]) -> float:
        return sum(c * assignment.get(v, 0) for v, c in self.objective.items())

    def violations(self, assignment: Mapping[int, int]) -> list[str]:
        """Rows and bounds the assignment breaks (empty: feasible)."""
        out = []
        for v, name in enumerate(self.names):
            x = assignment.get(v, 0)
            if not self.lower[v] <= x <= self.upper[v]:
                out.append(f"{name} = {x} outside [{self.lower[v]}, {self.upper[v]}]")
        for row in self.rows:
            lhs = sum(c * assignment.get(v, 0) for v, c in row.terms)
            ok = (
                lhs <= row.rhs
                if row.sense == "<="
                else lhs >= row.rhs
                if row.sense == ">="
                else lhs == row.rhs
            )
            if not ok:
                out.append(f"{row.name}: {lhs} {row.sense} {row.rhs} fails")
        return out


def _shape_name(shape: Shape) -> str:
    if is_irregular(shape):
        return f"irregular{shape[2]}"
    return "ring" if shape == RING else "x".join(map(str, shape)) or "0"


def _mult(shape: Shape, k: int) -> int:
    """Layers of ``k`` bits the shape asks for (none on a ring or an irregular fold)."""
    return 0 if shape == RING or is_irregular(shape) else sum(1 for x in shape if x == k)


class Formulation:
    """Variables and rows of the exact model over one set of candidates."""

    def __init__(self, cand: Candidates) -> None:
        self.cand = cand
        self.model = LinearModel()
        mdl = self.model
        axes = cand.axes
        # -- partition choice
        self.part = [mdl.var(f"part_{k}") for k in range(len(cand.partitions))]
        # compact form: cls[pos, c, b] = 1 iff bit b goes to class c of the pos-th mesh of
        # the layout (pos >= 1: the first one's classes are fixed, top bits first)
        self.cls: dict[tuple[int, int, int], int] = {}
        self.first_class: list[int] = []
        if cand.layout:
            first = cand.layout[0]
            self.first_class = [c for c, size in enumerate(first.sizes) for _ in range(size)][::-1]
        if cand.compact:
            for pos, mc in enumerate(cand.layout[1:], start=1):
                for klass in range(len(mc.classes)):
                    for b in range(cand.n):
                        self.cls[(pos, klass, b)] = mdl.var(f"class_{mc.mesh}_{klass}_{b}")
        # own[j, b] = 1 iff the chosen partition puts bit b in axis j's block (only where
        # that depends on the partition). With a list of partitions one linking row each
        # keeps the other rows short; in the compact form own is a class variable.
        self.own: dict[tuple[int, int], int] = {}
        for j, ax in enumerate(axes):
            if cand.compact:
                if not ax.blocks:
                    pos, klass = self._class_of(ax)
                    for b in ax.span:
                        self.own[(j, b)] = self.cls[(pos, klass, b)]
                continue
            for b in ax.span:
                if any(b not in block for block in ax.blocks):
                    self.own[(j, b)] = mdl.var(f"own_{j}_{b}")
        # -- per axis: shapes and layers
        self.shape: list[dict[Shape, int]] = []
        self.layer: list[dict[tuple[int, ...], int]] = []
        self.inside: list[dict[int, int]] = []  # in[j, g]: fold g lies in a layer of axis j
        for j, ax in enumerate(axes):
            self.shape.append({s: mdl.var(f"shape_{j}_{_shape_name(s)}") for s in ax.shapes})
            self.layer.append({b: mdl.var(f"layer_{j}_{'.'.join(map(str, b))}") for b in ax.layers})
            self.inside.append({g: mdl.var(f"in_{j}_{g}") for g in ax.folds})
        # -- per demand: one choice
        self.pick: list[list[int]] = [
            [mdl.var(f"pick_{d}_{c}") for c in range(len(dc.choices))]
            for d, dc in enumerate(cand.demands)
        ]
        # -- levels (unary multiplicities)
        self.kp = [0] * len(axes)  # highest multiplicity an on-profile choice of axis j asks for
        self.ku = [0] * len(axes)  # ... that a choice on the unit masks (or profile) asks for
        self.kr = [0] * len(axes)  # ... of a ring choice
        for dc in cand.demands:
            for c in dc.choices:
                if c.ring:
                    self.kr[dc.axis] = max(self.kr[dc.axis], c.p)
                else:
                    self.ku[dc.axis] = max(self.ku[dc.axis], c.p)
                    if c.on_profile:
                        self.kp[dc.axis] = max(self.kp[dc.axis], c.p)
        self.plev = [
            {k: mdl.var(f"plev_{j}_{k}") for k in range(2, self.kp[j] + 1)}
            for j in range(len(axes))
        ]
        self.ulev = [
            {k: mdl.var(f"ulev_{j}_{k}") for k in range(2, self.ku[j] + 1)}
            for j in range(len(axes))
        ]
        self.rlev = [
            {k: mdl.var(f"rlev_{j}_{k}") for k in range(2, self.kr[j] + 1)}
            for j in range(len(axes))
        ]
        # irregular folds: their masks are the axis's own, at a level per (shape, k)
        ki: dict[tuple[int, Shape], int] = {}
        for dc in cand.demands:
            for c in dc.choices:
                if is_irregular(c.shape):
                    assert c.shape is not None
                    ki[(dc.axis, c.shape)] = max(ki.get((dc.axis, c.shape), 1), c.p)
        self.ilev: dict[tuple[int, Shape, int], int] = {
            (j, s, k): mdl.var(f"ilev_{j}_{s[2]}_{k}")
            for (j, s), top_i in sorted(ki.items())
            for k in range(2, top_i + 1)
        }
        # -- generators: folds installed, and their levels
        self.fold = {g: mdl.var(f"fold_{g}") for g in cand.folds()}
        top: dict[int, int] = {}
        for j, ax in enumerate(axes):
            for g in ax.folds:
                top[g] = max(top.get(g, 1), self.kp[j])
            for b in self._bits(j):
                top[1 << b] = max(top.get(1 << b, 1), self.ku[j])
        self.mult = {
            (g, k): mdl.var(f"mult_{g}_{k}") for g in sorted(top) for k in range(2, top[g] + 1)
        }
        self.need: dict[tuple[int, int], int] = {}  # generators of axis j at level >= k
        # the axis whose layers the symmetry rows put in canonical form: the most layers
        most = max((len(ax.layers) for ax in axes), default=0) if not cand.compact else 0
        self.pivot: int | None = (
            next(j for j, ax in enumerate(axes) if len(ax.layers) == most) if most else None
        )
        self._rows()

    # -- helpers -----------------------------------------------------------------------

    def _bits(self, j: int) -> list[int]:
        return sorted(self.cand.axes[j].span)

    def _class_of(self, ax: ActiveAxis) -> tuple[int, int]:
        """(position in the layout, class) of an active axis of a multi-axis mesh."""
        pos = next(p for p, mc in enumerate(self.cand.layout) if mc.mesh == ax.mesh)
        c = next(c for c, members in enumerate(self.cand.layout[pos].classes) if ax.index in members)
        return pos, c

    def _owns(self, j: int, b: int) -> list[tuple[int, int]]:
        """x[j, b] = sum over partitions owning b of part[k], as terms (var, 1)."""
        return [(self.part[k], 1) for k, block in enumerate(self.cand.axes[j].blocks) if b in block]

    def _owner(self, j: int, b: int) -> int | None:
        """The variable own[j, b], None when every partition puts b in axis j's block."""
        return self.own.get((j, b))

    # -- rows --------------------------------------------------------------------------

    def _rows(self) -> None:
        """Every row, in a fixed order: partition, axes, demands, multiplicities, ports,
        then the valid inequalities and the symmetry rows."""
        if self.cand.compact:
            self._compact_rows()
        else:
            self.model.add("one_partition", [(v, 1) for v in self.part], "==", 1)
            for (j, b), v in self.own.items():
                self.model.add(f"owns_{j}_{b}", [(v, 1)] + [(p, -c) for p, c in self._owns(j, b)], "==", 0)
        self._axis_rows()
        for d, dc in enumerate(self.cand.demands):
            self._demand_rows(d, dc)
        self._multiplicity_rows()
        self._port_row()
        self._valid_inequalities()
        self._symmetry_rows()
        self._twin_rows()

    def _compact_rows(self) -> None:
        """The partition bit by bit: every bit in one class of each mesh, classes of their
        sizes, and the bits' types (tuple of classes) non-decreasing from the top bit down,
        which leaves exactly one partition per symmetry class (formulations, section 5b)."""
        cand, mdl = self.cand, self.model
        layout, n = cand.layout, cand.n
        for pos, mc in enumerate(layout[1:], start=1):
            for b in range(n):
                terms = [(self.cls[(pos, c, b)], 1) for c in range(len(mc.classes))]
                mdl.add(f"bit_class_{mc.mesh}_{b}", terms, "==", 1)
            for c, size in enumerate(mc.sizes):
                terms = [(self.cls[(pos, c, b)], 1) for b in range(n)]
                mdl.add(f"class_size_{mc.mesh}_{c}", terms, "==", size)
        width = max((len(mc.classes) for mc in layout), default=1)
        for lower in range(n - 1):
            upper = lower + 1
            if len(layout) < 2 or self.first_class[upper] != self.first_class[lower]:
                continue  # the first mesh's class already orders the two bits
            terms = []
            for pos, mc in enumerate(layout[1:], start=1):
                weight = width ** (len(layout) - 1 - pos)
                for c in range(1, len(mc.classes)):
                    terms += [(self.cls[(pos, c, lower)], weight * c), (self.cls[(pos, c, upper)], -weight * c)]
            mdl.add(f"canonical_{lower}", terms, ">=", 0)

    def _axis_rows(self) -> None:
        """Per axis: one shape, disjoint layers of the shape's sizes, folds inside them installed."""
        mdl = self.model
        for j, ax in enumerate(self.cand.axes):
            mdl.add(f"one_shape_{j}", [(v, 1) for v in self.shape[j].values()], "==", 1)
            for b in self._bits(j):
                terms = [(v, 1) for layer, v in self.layer[j].items() if b in layer]
                if terms:
                    own = self._owner(j, b)
                    if own is None:
                        mdl.add(f"layers_disjoint_{j}_{b}", terms, "<=", 1)
                    else:
                        mdl.add(f"layers_disjoint_{j}_{b}", [*terms, (own, -1)], "<=", 0)
            for size in range(2, max((len(x) for x in ax.layers), default=1) + 1):
                terms = [(v, 1) for layer, v in self.layer[j].items() if len(layer) == size]
                terms += [(v, -_mult(s, size)) for s, v in self.shape[j].items() if _mult(s, size)]
                mdl.add(f"shape_count_{j}_{size}", terms, "==", 0)
            for g, v in self.inside[j].items():
                terms = [(v, 1)] + [
                    (y, -1) for layer, y in self.layer[j].items() if g & ~mask_of(layer) == 0
                ]
                mdl.add(f"inside_{j}_{g}", terms, "==", 0)
                mdl.add(f"installed_{j}_{g}", [(self.fold[g], 1), (v, -1)], ">=", 0)

    def _demand_rows(self, d: int, dc: DemandCandidates) -> None:
        """Demand d: one candidate, the shape it needs, the levels it asks for; its costs."""
        mdl, axes = self.model, self.cand.axes
        j = dc.axis
        picks = self.pick[d]
        mdl.add(f"one_choice_{d}", [(v, 1) for v in picks], "==", 1)
        for s, sv in self.shape[j].items():
            if s == axes[j].cube:
                continue
            terms = [(picks[c], 1) for c, ch in enumerate(dc.choices) if ch.shape == s]
            if terms:
                mdl.add(f"needs_shape_{d}_{_shape_name(s)}", [*terms, (sv, -1)], "<=", 0)
        if RING in self.shape[j]:
            terms = [(picks[c], 1) for c, ch in enumerate(dc.choices) if ch.shape is None]
            mdl.add(f"not_ring_{d}", [*terms, (self.shape[j][RING], 1)], "<=", 1)
        for k, lv in self.plev[j].items():
            terms = [
                (picks[c], -1) for c, ch in enumerate(dc.choices) if ch.on_profile and ch.p >= k
            ]
            if terms:
                mdl.add(f"profile_level_{d}_{k}", [(lv, 1), *terms], ">=", 0)
        for k, lv in self.ulev[j].items():
            terms = [
                (picks[c], -1) for c, ch in enumerate(dc.choices) if not ch.ring and ch.p >= k
            ]
            if terms:
                mdl.add(f"unit_level_{d}_{k}", [(lv, 1), *terms], ">=", 0)
        for k, lv in self.rlev[j].items():
            terms = [(picks[c], -1) for c, ch in enumerate(dc.choices) if ch.ring and ch.p >= k]
            if terms:
                mdl.add(f"ring_level_{d}_{k}", [(lv, 1), *terms], ">=", 0)
        for (jj, s, k), lv in self.ilev.items():
            if jj != j:
                continue
            terms = [(picks[c], -1) for c, ch in enumerate(dc.choices) if ch.shape == s and ch.p >= k]
            if terms:
                mdl.add(f"irregular_level_{d}_{s[2]}_{k}", [(lv, 1), *terms], ">=", 0)
        for c, ch in enumerate(dc.choices):
            mdl.objective[picks[c]] = ch.cost

    def _multiplicity_rows(self) -> None:
        """Generator multiplicities follow the levels of the axes that drive them."""
        mdl = self.model
        for j, ax in enumerate(self.cand.axes):
            for g in ax.folds:
                for k, lv in self.plev[j].items():
                    mdl.add(
                        f"fold_level_{j}_{g}_{k}",
                        [(self.mult[(g, k)], 1), (lv, -1), (self.inside[j][g], -1)],
                        ">=",
                        -1,
                    )
            for b in self._bits(j):
                own = self._owner(j, b)
                for k, lv in self.ulev[j].items():
                    if own is None:  # b is in the block under every partition
                        mdl.add(
                            f"unit_mult_{j}_{b}_{k}",
                            [(self.mult[(1 << b, k)], 1), (lv, -1)],
                            ">=",
                            0,
                        )
                    else:
                        terms = [(self.mult[(1 << b, k)], 1), (lv, -1), (own, -1)]
                        mdl.add(f"unit_mult_{j}_{b}_{k}", terms, ">=", -1)
    def _port_row(self) -> None:
        """The port budget (Eq. 2): base cube n, folds, extra circuits, rings at 2 ports per
        unit, irregular folds at one port per mask and level."""
        cand = self.cand
        terms = [(v, 1) for v in self.fold.values()] + [(v, 1) for v in self.mult.values()]
        for j, ax in enumerate(cand.axes):
            if RING in self.shape[j]:
                terms.append((self.shape[j][RING], 2 - ax.bits))
                terms += [(v, 2) for v in self.rlev[j].values()]
            terms += [(v, shape_folds(s)) for s, v in self.shape[j].items() if is_irregular(s)]
        terms += [(v, shape_folds(s)) for (_, s, _), v in self.ilev.items()]
        self.model.add("ports", terms, "<=", cand.ports - cand.n)

    # -- symmetry inside a partition -------------------------------------------------------

    def classes(self, k: int) -> list[list[int]]:
        """Bits that partition k puts on the same axis of every mesh, each class from
        the top bit down: permuting the bits of one class maps the partition to itself
        and any plan to a plan of equal cost."""
        part = self.cand.partitions[k]
        groups: dict[tuple[int, ...], list[int]] = {}
        for b in range(self.cand.n - 1, -1, -1):
            key = tuple(next(i for i, blk in enumerate(mesh) if b in blk) for mesh in part)
            groups.setdefault(key, []).append(b)
        return list(groups.values())

    def _symmetry_rows(self) -> None:
        """Within each class, the pivot axis's layers are runs of consecutive bits,
        largest run first (formulations: symmetry breaking)."""
        cand, mdl = self.cand, self.model
        if self.pivot is None:
            return
        j = self.pivot
        ax = cand.axes[j]
        for k, part_var in enumerate(self.part):
            block = set(ax.blocks[k])
            for ci, cls in enumerate(self.classes(k)):
                if not block.issuperset(cls) or len(cls) < 2:
                    continue
                pos = {b: i for i, b in enumerate(cls)}
                for layer, v in self.layer[j].items():
                    inside = sorted(pos[b] for b in layer if b in pos)
                    if inside and inside[-1] - inside[0] + 1 != len(inside):
                        mdl.add(f"sym_run_{k}_{ci}_{v}", [(v, 1), (part_var, 1)], "<=", 1)
                for upper, lower in itertools.pairwise(cls):
                    terms: dict[int, int] = {}
                    for layer, v in self.layer[j].items():
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

    def _twin_rows(self) -> None:
        """Twin axes (identical axes of one mesh, or of identical meshes) in order of
        shape (formulations: section 5c)."""
        self.twins = twin_pairs(self.cand)
        for j1, j2 in self.twins:
            terms = [(v, i) for i, v in enumerate(self.shape[j1].values())]
            terms += [(v, -i) for i, v in enumerate(self.shape[j2].values())]
            self.model.add(f"twins_{j1}_{j2}", terms, "<=", 0)

    def _hint_rank(self, j: int, profiles: Profiles, picks: Sequence[int]) -> int:
        """Index of the shape :meth:`complete` gives axis j."""
        ax = self.cand.axes[j]
        prof = profiles[j]
        shape: Shape = RING if prof is None else tuple(sorted((len(g) for g in prof), reverse=True))
        for d, dc in enumerate(self.cand.demands):
            ch = dc.choices[picks[d]]
            if dc.axis == j and ch.shape is not None and is_irregular(ch.shape):
                shape = ch.shape
        return ax.shapes.index(shape)

    def canonical(
        self, k: int, profiles: Sequence[tuple[tuple[int, ...], ...] | None]
    ) -> list[tuple[tuple[int, ...], ...] | None]:
        """The profiles after the bit permutation that puts them in the form the
        symmetry rows ask for (same partition, same cost)."""
        if self.pivot is None or profiles[self.pivot] is None:
            return list(profiles)
        pivot = profiles[self.pivot]
        assert pivot is not None
        perm = {b: b for b in range(self.cand.n)}
        block = set(self.cand.axes[self.pivot].blocks[k])
        for cls in self.classes(k):
            if not block.issuperset(cls):
                continue
            members = set(cls)
            parts = [[b for b in cls if b in g] for g in pivot]
            parts = [p for p in parts if p]
            parts.sort(key=lambda p: (-len(p), cls.index(p[0])))
            flat = [b for p in parts for b in p]
            for old, new in zip(flat, cls, strict=True):
                perm[old] = new
            assert set(flat) == members
        return [
            None if prof is None else tuple(tuple(perm[b] for b in g) for g in prof)
            for prof in profiles
        ]

    def _valid_inequalities(self) -> None:
        """Per mesh: its axes' profiles are disjoint, so their fold and level counts add up."""
        cand, mdl = self.cand, self.model
        axes = cand.axes
        meshes = sorted({ax.mesh for ax in axes})
        fold_vars = [(v, 1) for v in self.fold.values()]
        levels = sorted({k for _, k in self.mult})
        need = self.need
        for j, ax in enumerate(axes):
            for k in range(2, max(self.ku[j], self.kp[j]) + 1):
                need[(j, k)] = mdl.var(
                    f"need_{j}_{k}", 0, max(_shared_degree(s, ax.bits) for s in ax.shapes if s != RING)
                )
        for d, dc in enumerate(cand.demands):
            j = dc.axis
            for k in range(2, max(self.ku[j], self.kp[j]) + 1):
                terms = []
                for c, ch in enumerate(dc.choices):
                    if ch.ring or ch.p < k:
                        continue
                    count = _shared_degree(ch.shape, axes[j].bits)
                    terms.append((self.pick[d][c], -count))
                if terms:
                    mdl.add(f"need_{d}_{k}", [(need[(j, k)], 1), *terms], ">=", 0)
        for m in meshes:
            members = [j for j, ax in enumerate(axes) if ax.mesh == m]
            terms = [
                (v, -shape_folds(s))
                for j in members
                for s, v in self.shape[j].items()
                if s != RING and not is_irregular(s) and shape_folds(s)
            ]
            if terms and fold_vars:
                mdl.add(f"mesh_folds_{m}", fold_vars + terms, ">=", 0)
            for k in levels:
                lhs = [(v, 1) for (g, kk), v in self.mult.items() if kk == k]
                rhs = [(need[(j, k)], -1) for j in members if (j, k) in need]
                if rhs:
                    mdl.add(f"mesh_level_{m}_{k}", lhs + rhs, ">=", 0)

    # -- solutions ---------------------------------------------------------------------

    def decode(self, values: Mapping[int, int]) -> tuple[Decision, list[Candidate]]:
        """The decision a (feasible) assignment describes, and each demand's choice."""
        cand = self.cand
        instance = cand.instance
        partition = self.chosen_partition(values)
        profiles: list[tuple[tuple[int, ...], ...]] = []
        for j, ax in enumerate(cand.axes):
            block = partition[ax.mesh][ax.index]
            chosen = [layer for layer, v in self.layer[j].items() if values.get(v, 0) > 0]
            covered = {b for layer in chosen for b in layer}
            found = [tuple(sorted(layer, reverse=True)) for layer in chosen]
            found += [(b,) for b in sorted(block, reverse=True) if b not in covered]
            profiles.append(tuple(sorted(found, key=lambda g: (-len(g), [-b for b in g]))))
        choices: list[list[list[DemandDecision]]] = [
            [[] for _ in mesh.axes] for mesh in instance.meshes
        ]
        rings = set()
        picked: list[Candidate] = []
        for d, dc in enumerate(cand.demands):
            ax = cand.axes[dc.axis]
            c = next(i for i, v in enumerate(self.pick[d]) if values.get(v, 0) > 0)
            ch = dc.choices[c]
            picked.append(ch)
            block = partition[ax.mesh][ax.index]
            units = tuple((b,) for b in sorted(block, reverse=True))
            if ch.ring:
                rings.add((ax.mesh, ax.index))
            groups = profiles[dc.axis] if ch.on_profile else units
            fold: tuple[int, ...] = ()
            if is_irregular(ch.shape):
                assert ch.shape is not None
                groups, fold = units, irregular_fold(ch.shape, block)
            choices[ax.mesh][ax.index].append(DemandDecision(ch.schedule, groups, ch.p, fold))
        decision = Decision(
            partitions=partition,
            choices=tuple(tuple(tuple(c) for c in mesh) for mesh in choices),
            rings=frozenset(rings),
        )
        return decision, picked

    def chosen_partition(self, values: Mapping[int, int]) -> Partition:
        """The partition a (feasible) assignment chooses."""
        cand = self.cand
        if not cand.compact:
            return cand.partitions[next(i for i, v in enumerate(self.part) if values.get(v, 0) > 0)]
        table: dict[tuple[int, ...], int] = {}
        for b in range(cand.n):
            kind = [self.first_class[b]] if cand.layout else []
            for pos, mc in enumerate(cand.layout[1:], start=1):
                kind.append(next(c for c in range(len(mc.classes)) if values.get(self.cls[(pos, c, b)], 0) > 0))
            table[tuple(kind)] = table.get(tuple(kind), 0) + 1
        partition: Partition = partition_of(cand.instance, mesh_classes(cand.instance), table)
        for (j, b), v in self.own.items():
            ax = cand.axes[j]
            if (values.get(v, 0) > 0) != (b in partition[ax.mesh][ax.index]):
                raise OcsplanError(f"the exact model chose a partition outside the canonical ones (bit {b})")
        return partition

    def complete(
        self,
        partition: Partition,
        profiles: Sequence[tuple[tuple[int, ...], ...] | None],
        picks: Sequence[int],
    ) -> Assignment:
        """Full assignment from the primary choices: the partition (one of
        ``cand.partitions``, or any in the compact form), per axis its layers (None for a
        ring), per demand a choice index. Dependent variables take the least values the
        rows allow."""
        cand = self.cand
        values: Assignment = dict.fromkeys(range(len(self.model.names)), 0)
        if cand.compact:
            for pos, mc in enumerate(cand.layout[1:], start=1):
                for c, members in enumerate(mc.classes):
                    for i in members:
                        for b in partition[mc.mesh][i]:
                            values[self.cls[(pos, c, b)]] = 1
        else:
            values[self.part[cand.partitions.index(partition)]] = 1
            for (j, b), v in self.own.items():
                ax = cand.axes[j]
                values[v] = int(b in partition[ax.mesh][ax.index])
        for j in range(len(cand.axes)):
            prof = profiles[j]
            if prof is None:
                values[self.shape[j][RING]] = 1
                continue
            values[self.shape[j][tuple(sorted((len(g) for g in prof), reverse=True))]] = 1
            for group in prof:
                if len(group) >= 2:
                    layer = tuple(sorted(group))
                    values[self.layer[j][layer]] = 1
                    for f in fold_masks(layer):
                        values[self.inside[j][f]] = 1
                        values[self.fold[f]] = 1
        level: dict[int, int] = {}
        for d, dc in enumerate(cand.demands):
            j = dc.axis
            ch = dc.choices[picks[d]]
            values[self.pick[d][picks[d]]] = 1
            if is_irregular(ch.shape):
                assert ch.shape is not None
                values[self.shape[j][ch.shape]] = 1
                values[self.shape[j][cand.axes[j].cube]] = 0
                for k in range(2, ch.p + 1):
                    values[self.ilev[(j, ch.shape, k)]] = 1
            for k in range(2, ch.p + 1):
                if ch.ring:
                    values[self.rlev[j][k]] = 1
                    continue
                values[self.ulev[j][k]] = 1
                if ch.on_profile:
                    values[self.plev[j][k]] = 1
            if ch.ring:
                continue
            block = partition[dc.mesh][dc.axis_index]
            masks = [1 << b for b in block]
            if ch.on_profile and not is_irregular(ch.shape):
                prof = profiles[j]
                assert prof is not None
                masks += [f for group in prof if len(group) >= 2 for f in fold_masks(group)]
            for mask in masks:
                level[mask] = max(level.get(mask, 1), ch.p)
            for k in range(2, ch.p + 1):
                count = _shared_degree(ch.shape, len(block))
                key = self.need[(j, k)]
                values[key] = max(values[key], count)
        for g, p in level.items():
            for k in range(2, p + 1):
                values[self.mult[(g, k)]] = 1
        return values

    def hint_from_plan(self, plan: Plan) -> Assignment | None:
        """A complete assignment that is at least as good as ``plan`` (None if the plan
        lies outside the candidates, e.g. another partition representative)."""
        cand = self.cand
        profiles: Profiles = []
        for ax in cand.axes:
            axis = plan.meshes[ax.mesh].axes[ax.index]
            if axis.ring:
                profiles.append(None)
                continue
            found = next(
                (d.groups for d in axis.demands if any(len(g) >= 2 for g in d.groups)), None
            )
            if (
                found is None
                or tuple(sorted((len(g) for g in found), reverse=True)) not in ax.shapes
            ):
                found = tuple((b,) for b in axis.bits)
            profiles.append(found)
        picks: list[int] = []
        for dc in cand.demands:
            ax = cand.axes[dc.axis]
            dp = plan.meshes[dc.mesh].axes[dc.axis_index].demands[dc.index]
            prof = profiles[dc.axis]
            want_shape: Shape | None
            if prof is None:
                want_shape = RING
            elif dp.fold:
                want_shape = (IRREGULAR, ax.bits, ax.bits + len(dp.fold))
            elif any(len(g) >= 2 for g in dp.groups):
                want_shape = tuple(sorted((len(g) for g in prof), reverse=True))
            else:
                want_shape = None
            v_factor = dp.volume_bytes / dp.payload_bytes
            fits = [
                c
                for c, ch in enumerate(dc.choices)
                if ch.p == dp.multiplicity
                and ch.h <= dp.phases
                and ch.v_factor <= v_factor * (1 + 1e-9)
                and (
                    ch.shape == want_shape
                    or (ch.shape is None and want_shape not in (RING, ax.cube))
                )
            ]
            if not fits:
                return None
            picks.append(min(fits, key=lambda c: (dc.choices[c].cost, c)))
        # the same plan with twins in order and the bits in canonical order
        partition: Partition = tuple(
            tuple(tuple(sorted(ax.bits, reverse=True)) for ax in mesh.axes) for mesh in plan.meshes
        )
        partition, profiles, picks = order_twins(cand, partition, profiles, picks, self._hint_rank)
        partition, profiles = sort_bits(cand.instance, partition, profiles)
        if cand.compact:
            values = self.complete(partition, profiles, picks)
        else:
            if partition not in cand.partitions:
                return None
            k = cand.partitions.index(partition)
            values = self.complete(partition, self.canonical(k, profiles), picks)
        return None if self.model.violations(values) else values


def _shared_degree(shape: Shape | None, bits: int) -> int:
    """Generators of a choice that other axes may share: the unit masks alone on the cube
    or an irregular fold (whose own masks are priced apart), all of a block fold's."""
    if shape is None or is_irregular(shape):
        return bits
    return shape_degree(shape)


def build_formulation(cand: Candidates) -> Formulation:
    """The exact model over ``cand``."""
    return Formulation(cand)
