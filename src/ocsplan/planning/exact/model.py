"""The exact formulation (formulations/cpsat.md, formulations/milp.md) as one linear model.

Both backends translate the same :class:`~.linear.LinearModel`: integer variables
(:mod:`.variables`, most of them binary), linear rows with integer coefficients
(:mod:`.rows`), and a linear objective in seconds. :class:`Formulation` builds it
from the shared candidates, decodes a solution into a :class:`~ocsplan.plan.Decision`,
and turns a decision (the heuristic's plan) into a complete assignment, the solution hint.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ...cayley import fold_masks
from ...errors import OcsplanError
from ...plan import Decision, DemandDecision, Plan
from ..space import IRREGULAR, RING, Shape, irregular_fold, is_irregular, mesh_classes, partition_of
from .candidates import Candidate, Candidates, Partition
from .linear import Assignment, LinearModel, Row
from .rows import add_rows
from .symmetry import Profiles, order_twins, sort_bits
from .variables import Variables, shared_degree

__all__ = ["Assignment", "Formulation", "LinearModel", "Row", "build_formulation"]


class Formulation(Variables):
    """The exact model over one set of candidates: its variables and rows, a solution
    decoded into a decision and a decision completed into a solution (the hint)."""

    def __init__(self, cand: Candidates) -> None:
        super().__init__(cand)
        self.twins = add_rows(self)

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
                count = shared_degree(ch.shape, len(block))
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


def build_formulation(cand: Candidates) -> Formulation:
    """The exact model over ``cand``."""
    return Formulation(cand)
