"""The compact form of the exact models: the partition chosen bit by bit (cpsat.md 5b).

References: the independent brute force (tests/exact_bruteforce.py) for the optima,
and a brute force over every assignment of bits to axis classes here for the claim
that the canonical rows keep exactly one partition per symmetry class.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from functools import cache
from itertools import combinations, product

import pytest

from ocsplan.instance import Instance
from ocsplan.planning.exact import ExactRun, enumerate_candidates
from ocsplan.planning.exact.candidates import COMPACT_FROM
from ocsplan.planning.exact.cpsat import CpSatBackend
from ocsplan.planning.exact.milp import MilpBackend
from ocsplan.planning.exact.model import Formulation, build_formulation
from ocsplan.planning.space import candidate_partitions

from .exact_bruteforce import brute_force
from .tiny import AG, AR, TINY, KiB, tiny

# three multi-axis meshes: two of them free once the first is fixed
# (the brute force takes about two minutes on it: the exact forms are compared instead)
THREE = tiny(
    "three-split-meshes",
    4,
    7,
    [
        ((4, 4), [[(AR, 4 * KiB, 1.0, "auto")], [(AG, 8 * KiB, 2.0, "auto")]]),
        ((2, 8), [[(AR, 64 * KiB, 1.0, "auto")], []]),
        ((2, 2, 4), [[(AG, KiB, 3.0, "auto")], [(AR, KiB, 1.0, "auto")], []]),
    ],
)


@cache
def optimum(name: str) -> float:
    return brute_force(next(i for i in TINY if i.name == name))


@pytest.mark.parametrize("method", ["cpsat", "milp"])
@pytest.mark.parametrize("seeded", [True, False], ids=["seeded", "unseeded"])
@pytest.mark.parametrize("inst", TINY, ids=lambda i: i.name)
def test_compact_form_matches_brute_force(inst: Instance, seeded: bool, method: str) -> None:
    run = ExactRun(inst, use_heuristic=seeded, compact=True)
    assert run.candidates.compact and run.candidates.partitions == ()
    if run.seed is not None:  # the heuristic's plan is a canonical partition: a valid hint
        hint = run.formulation.hint_from_plan(run.seed)
        assert hint is not None and run.formulation.model.violations(hint) == []
    backend = CpSatBackend(workers=1) if method == "cpsat" else MilpBackend()
    plan = run.solve(backend, method)
    assert plan.status == "optimal"
    assert math.isclose(plan.objective_s, optimum(inst.name), rel_tol=1e-9)


@pytest.mark.parametrize("method", ["cpsat", "milp"])
def test_compact_form_matches_the_partition_list(method: str) -> None:
    # three split meshes (14 partition classes): both forms prove the same optimum
    got = []
    for compact in (False, True):
        run = ExactRun(THREE, use_heuristic=False, compact=compact)
        assert run.candidates.compact is compact
        backend = CpSatBackend(workers=1) if method == "cpsat" else MilpBackend()
        plan = run.solve(backend, method)
        assert plan.status == "optimal"
        got.append(plan.objective_s)
    assert math.isclose(got[0], got[1], rel_tol=1e-9)


def _assignments(n: int, sizes: tuple[int, ...]) -> Iterator[tuple[int, ...]]:
    """Every map bit -> class with the given class sizes (as a tuple indexed by bit)."""

    def rec(left: frozenset[int], c: int) -> Iterator[dict[int, int]]:
        if c == len(sizes):
            yield {}
            return
        for chosen in combinations(sorted(left), sizes[c]):
            for rest in rec(left - set(chosen), c + 1):
                yield {**rest, **dict.fromkeys(chosen, c)}

    for owner in rec(frozenset(range(n)), 0):
        yield tuple(owner[b] for b in range(n))


def _partition_rows_hold(form: Formulation, values: dict[int, int]) -> bool:
    rows = [r for r in form.model.rows if r.name.startswith(("bit_class_", "class_size_", "canonical_"))]
    for row in rows:
        lhs = sum(c * values.get(v, 0) for v, c in row.terms)
        if not (lhs <= row.rhs if row.sense == "<=" else lhs >= row.rhs if row.sense == ">=" else lhs == row.rhs):
            return False
    return True


@pytest.mark.parametrize("inst", [THREE, next(i for i in TINY if i.name == "three-meshes")], ids=lambda i: i.name)
def test_canonical_rows_keep_one_partition_per_symmetry_class(inst: Instance) -> None:
    form = build_formulation(enumerate_candidates(inst, compact=True))
    layout, n = form.cand.layout, form.cand.n
    # the first mesh is fixed: every other class map is tried; a class map's symmetry
    # class (orbit under bit permutations) is its table of bit types
    fixed = tuple(form.first_class)
    kept: Counter[tuple[tuple[tuple[int, ...], int], ...]] = Counter()
    tried = 0
    for rows in product(*(list(_assignments(n, mc.sizes)) for mc in layout[1:])):
        tried += 1
        values = {form.cls[(pos, c, b)]: 1 for pos, row in enumerate(rows, start=1) for b, c in enumerate(row)}
        table = tuple(sorted(Counter(tuple(r[b] for r in (fixed, *rows)) for b in range(n)).items()))
        kept[table] += 0
        if _partition_rows_hold(form, values):
            kept[table] += 1
    assert set(kept.values()) == {1}  # every class kept, and only once
    assert tried > len(kept)  # the rows do cut (there is symmetry to break)
    # the same count as the heuristic's enumeration of representatives
    assert len(kept) == len(candidate_partitions(inst))


def test_a_permuted_partition_is_rejected() -> None:
    run = ExactRun(THREE, compact=True)
    assert run.seed is not None
    form = run.formulation
    hint = form.hint_from_plan(run.seed)
    assert hint is not None
    # swap the class maps of two bits of different type in a free mesh: same cost, not canonical
    pos = 1
    mc = form.cand.layout[pos]
    cls = {b: next(c for c in range(len(mc.classes)) if hint[form.cls[(pos, c, b)]]) for b in range(form.cand.n)}
    first = form.first_class
    upper, lower = next(
        (u, lo) for u in range(form.cand.n) for lo in range(u) if cls[u] < cls[lo] and first[u] == first[lo]
    )
    swapped = dict(hint)
    for b, c in ((upper, cls[lower]), (lower, cls[upper])):
        for k in range(len(mc.classes)):
            swapped[form.cls[(pos, k, b)]] = int(k == c)
    assert any(v.startswith("canonical_") for v in form.model.violations(swapped))


def test_compact_form_from_many_classes() -> None:
    # the compact form is the default beyond COMPACT_FROM partition classes
    assert len(candidate_partitions(THREE)) <= COMPACT_FROM
    assert not enumerate_candidates(THREE).compact
    wide = tiny(
        "many-classes",
        8,
        10,
        [((4, 4, 16), [[(AR, KiB, 1.0, "auto")], [(AR, 2 * KiB, 1.0, "auto")], [(AG, KiB, 1.0, "auto")]])] * 3,
    )
    assert len(candidate_partitions(wide)) > COMPACT_FROM
    assert enumerate_candidates(wide).compact
    assert not enumerate_candidates(wide, compact=False).compact  # unless told otherwise
    assert enumerate_candidates(THREE, compact=True).compact
