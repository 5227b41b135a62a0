"""The exact model's variables over one set of candidates, before any row."""

from __future__ import annotations

from ..space import RING, Shape, is_irregular, shape_degree
from .candidates import ActiveAxis, Candidates
from .linear import LinearModel

__all__ = ["Variables", "shape_name", "shared_degree"]


def shape_name(shape: Shape) -> str:
    """A shape in variable and row names: ``5x2x1``, ``ring``, ``irregular6``."""
    if is_irregular(shape):
        return f"irregular{shape[2]}"
    return "ring" if shape == RING else "x".join(map(str, shape)) or "0"


def shared_degree(shape: Shape | None, bits: int) -> int:
    """Generators of a choice that other axes may share: the unit masks alone on the cube
    or an irregular fold (whose own masks are priced apart), all of a block fold's."""
    if shape is None or is_irregular(shape):
        return bits
    return shape_degree(shape)


class Variables:
    """Variables of the exact model over one set of candidates; :mod:`.rows` adds the rows."""

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
                    pos, klass = self.class_of(ax)
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
            self.shape.append({s: mdl.var(f"shape_{j}_{shape_name(s)}") for s in ax.shapes})
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
            for b in self.bits(j):
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

    # -- helpers -----------------------------------------------------------------------

    def bits(self, j: int) -> list[int]:
        return sorted(self.cand.axes[j].span)

    def class_of(self, ax: ActiveAxis) -> tuple[int, int]:
        """(position in the layout, class) of an active axis of a multi-axis mesh."""
        pos = next(p for p, mc in enumerate(self.cand.layout) if mc.mesh == ax.mesh)
        c = next(c for c, members in enumerate(self.cand.layout[pos].classes) if ax.index in members)
        return pos, c

    def owns(self, j: int, b: int) -> list[tuple[int, int]]:
        """x[j, b] = sum over partitions owning b of part[k], as terms (var, 1)."""
        return [(self.part[k], 1) for k, block in enumerate(self.cand.axes[j].blocks) if b in block]

    def owner(self, j: int, b: int) -> int | None:
        """The variable own[j, b], None when every partition puts b in axis j's block."""
        return self.own.get((j, b))

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
