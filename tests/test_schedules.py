"""The schedule catalogue: semantic verification and closed-form conformance.

Every schedule runs on every valid topology of the conformance matrix (cubes
Q1..Q6, every block fold of up to 6 bits, FQ3, Q4+1100, Q4+1111): the
executable program must compute its collective (symbolic verifier) and its
ideal cost (per-link accounting, p = 1) must equal the closed form exactly.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from fractions import Fraction

import pytest

from ocsplan.cayley import Topology
from ocsplan.planning.space import integer_partitions
from ocsplan.schedules import SCHEDULES, Item, ScheduleError, Transfer, ideal_cost, verify

PAYLOAD = 3 * 64 * 1024  # divisible by every segment count used below

MATRIX: dict[str, Topology] = {}
for _a in range(1, 7):
    for _shape in integer_partitions(_a):
        MATRIX[Topology.from_profile(_shape).name] = Topology.from_profile(_shape)
MATRIX["FQ3"] = Topology.with_folds(3, [0b111])
MATRIX["Q4+1100"] = Topology.with_folds(4, [0b1100])
MATRIX["Q4+1111"] = Topology.with_folds(4, [0b1111])

CASES = [
    pytest.param(name, topo_name, id=f"{name}@{topo_name}")
    for topo_name, topo in MATRIX.items()
    for name, sched in SCHEDULES.items()
    if sched.valid(topo)
]


@pytest.mark.parametrize(("schedule", "topology"), CASES)
def test_conformance(schedule: str, topology: str) -> None:
    topo = MATRIX[topology]
    sched = SCHEDULES[schedule]
    program = sched.build(topo, PAYLOAD)
    verify(program, topo)
    ideal = ideal_cost(program)
    form = sched.cost(topo)
    assert (ideal.h, ideal.v, ideal.u) == (form.h, form.v_factor * PAYLOAD, form.u)
    used = {t.gen for phase in program.phases for t in phase}
    assert used <= sched.uses(topo)


def _profiles_by_brute_force(bits: int) -> set[tuple[int, ...]]:
    """Every way to split ``bits`` into sub-block sizes (multisets), from all compositions."""
    out = set()
    for cuts in itertools.product((False, True), repeat=bits - 1):
        parts, run = [], 1
        for cut in cuts:
            if cut:
                parts.append(run)
                run = 1
            else:
                run += 1
        parts.append(run)
        out.add(tuple(sorted(parts, reverse=True)))
    return out


def test_matrix_is_complete() -> None:
    # 29 block folds of 1..6 bits (p(1) + ... + p(6) = 1 + 2 + 3 + 5 + 7 + 11) plus FQ3,
    # Q4+1100 (the block fold Q4[2,1,1] with its tiling searched rather than given), Q4+1111
    assert len(MATRIX) == 32
    folds = [t for name, t in MATRIX.items() if name not in ("FQ3", "Q4+1100", "Q4+1111")]
    want = {(a, s) for a in range(1, 7) for s in _profiles_by_brute_force(a)}
    assert len(want) == 29
    seen = set()
    for topo in folds:
        # a block fold of sub-blocks of k bits is a product of complete graphs K_{2^k}:
        # 2^a nodes, degree sum(2^k - 1); the generators are the non-zero masks inside a block
        # the sub-blocks: the bits that some generator's mask joins (connected components)
        blocks = [{b} for b in range(topo.bits)]
        for g in topo.gens:
            touched = [blk for blk in blocks if any(g >> b & 1 for b in blk)]
            blocks = [blk for blk in blocks if blk not in touched] + [set().union(*touched)]
        profile = tuple(sorted((len(blk) for blk in blocks), reverse=True))
        assert topo.degree == sum((1 << k) - 1 for k in profile)
        assert topo.size == 1 << topo.bits
        seen.add((topo.bits, profile))
    assert seen == want
    # FQ3: Q3 plus the all-ones mask; Q4 plus one 2-bit fold; Q4 plus the all-ones mask
    assert [MATRIX[x].degree for x in ("FQ3", "Q4+1100", "Q4+1111")] == [4, 5, 5]
    # every schedule is exercised, and every schedule valid on a cube is valid on all six
    assert {name for name, sched in SCHEDULES.items()} == {c.values[0] for c in CASES}
    for name, sched in SCHEDULES.items():
        if sched.valid(Topology.cube(1)):
            assert all(sched.valid(Topology.cube(a)) for a in range(1, 7)), name


# Paper Table 4: h / v (in units of sigma) of the all-reduce schedules.
TABLE4: dict[str, dict[str, tuple[int, int | Fraction]]] = {
    "Q3": {
        "recursive-doubling": (3, 3),
        "one-shot": (3, 12),
        "coset-factored": (3, 3),
        "coset-factored-parallel": (3, 1),
    },
    "FQ3": {
        "recursive-doubling": (3, 3),
        "one-shot": (2, 6),
        "coset-factored": (2, 2),
        "coset-factored-parallel": (2, 1),
    },
    "Q4": {
        "recursive-doubling": (4, 4),
        "one-shot": (4, 32),
        "coset-factored": (4, 4),
        "coset-factored-parallel": (4, 1),
    },
    "Q4+1100": {
        "recursive-doubling": (4, 4),
        "one-shot": (3, 20),
        "coset-factored": (3, 3),
        "coset-factored-parallel": (3, 1),
    },
    "Q4+1111": {
        "recursive-doubling": (4, 4),
        "one-shot": (2, 7),
        "coset-factored": (3, 3),
        "coset-factored-parallel": (3, 1),
    },
}
_T4_TOPO = {
    "Q3": Topology.cube(3),
    "FQ3": MATRIX["FQ3"],
    "Q4": Topology.cube(4),
    "Q4+1100": MATRIX["Q4+1100"],
    "Q4+1111": MATRIX["Q4+1111"],
}


@pytest.mark.parametrize(("topology", "schedule"), [(t, s) for t, row in TABLE4.items() for s in row])
def test_table4(topology: str, schedule: str) -> None:
    form = SCHEDULES[schedule].cost(_T4_TOPO[topology])
    assert (form.h, form.v_factor) == TABLE4[topology][schedule]


def _radices(shape: tuple[int, ...]) -> list[int]:
    return [1 << k for k in shape]


def _prod(xs: list[int]) -> int:
    out = 1
    for x in xs:
        out *= x
    return out


def _design_formula(schedule: str, shape: tuple[int, ...]) -> tuple[int, Fraction]:
    """DESIGN §3 closed forms on a block fold, written out independently."""
    r = _radices(shape)
    ell = len(r)
    size = _prod(r)
    a = sum(shape)
    if schedule == "recursive-doubling":
        return a, Fraction(a)
    if schedule == "coset-factored":
        return ell, Fraction(ell)
    if schedule == "coset-factored-parallel":
        return ell, Fraction(1)
    if schedule == "rs-ag":
        desc = sorted(r, reverse=True)
        return 2 * ell, 2 * sum((Fraction(1, _prod(desc[: j + 1])) for j in range(ell)), Fraction(0))
    if schedule == "ring":
        return 2 * (size - 1), Fraction(2 * (size - 1), size)
    if schedule == "layered":
        asc = sorted(r)
        return ell, sum((Fraction(_prod(asc[:j]), size) for j in range(ell)), Fraction(0))
    if schedule == "bruck":
        return ell, sum((Fraction(1, x) for x in r), Fraction(0))
    if schedule == "bruck-parallel":
        return ell, Fraction(1, min(r))
    if schedule == "rs-ag-parallel" and len(set(r)) == 1:
        return 2 * ell, Fraction(2, ell) * sum((Fraction(1, r[0] ** t) for t in range(1, ell + 1)), Fraction(0))
    if schedule == "one-shot":
        # ball sizes of a product of complete graphs: elementary symmetric sums of (r_j - 1)
        e = [Fraction(1)]
        for x in r:
            e = [e[k] + (e[k - 1] * (x - 1) if k else 0) for k in range(len(e))] + [e[-1] * (x - 1)]
        balls = [sum(e[: k + 1], Fraction(0)) for k in range(ell + 1)]
        return ell, sum(balls[:ell], Fraction(0))
    raise KeyError(schedule)


FORMULA_CASES = [
    (s, shape)
    for a in range(1, 7)
    for shape in integer_partitions(a)
    for s in (
        "recursive-doubling",
        "coset-factored",
        "coset-factored-parallel",
        "rs-ag",
        "ring",
        "layered",
        "bruck",
        "bruck-parallel",
        "rs-ag-parallel",
        "one-shot",
    )
    if not (s == "rs-ag-parallel" and len(set(shape)) > 1)
]


@pytest.mark.parametrize(("schedule", "shape"), FORMULA_CASES)
def test_design_closed_forms(schedule: str, shape: tuple[int, ...]) -> None:
    topo = Topology.from_profile(shape) if not SCHEDULES[schedule].cube_only else Topology.cube(sum(shape))
    form = SCHEDULES[schedule].cost(topo)
    assert (form.h, form.v_factor) == _design_formula(schedule, shape)


def test_figure17_phase_counts() -> None:
    # Paper Figure 17 / App. C.3.1: on the N = 512 cube RS+AG takes 18 phases, the others 9
    cube = Topology.cube(9)
    assert SCHEDULES["rs-ag"].cost(cube).h == 18
    assert SCHEDULES["rs-ag-parallel"].cost(cube).h == 18
    for name in ("recursive-doubling", "one-shot", "coset-factored", "coset-factored-parallel"):
        assert SCHEDULES[name].cost(cube).h == 9
    # the parallel variants send 9 times less data on the most loaded link
    cf, cfp = SCHEDULES["coset-factored"].cost(cube), SCHEDULES["coset-factored-parallel"].cost(cube)
    assert cf.v_factor == 9 * cfp.v_factor
    assert SCHEDULES["rs-ag"].cost(cube).v_factor == 9 * SCHEDULES["rs-ag-parallel"].cost(cube).v_factor


def test_recursive_doubling_cannot_use_folds() -> None:
    # App. A.2 "binding the cost model": folds do not shorten recursive doubling
    assert SCHEDULES["recursive-doubling"].cost(Topology.from_profile((3, 3))).h == 6
    assert not SCHEDULES["recursive-doubling"].valid(MATRIX["FQ3"].__class__(3, frozenset({1, 2, 5})))


# -- the verifier rejects broken programs -------------------------------------------


def _program(name: str = "coset-factored", shape: tuple[int, ...] = (2, 1)):  # type: ignore[no-untyped-def]
    topo = Topology.from_profile(shape)
    return topo, SCHEDULES[name].build(topo, 1024)


def test_verifier_rejects_a_missing_transfer() -> None:
    topo, program = _program()
    first = program.phases[0][1:]
    broken = replace(program, phases=(first, *program.phases[1:]))
    with pytest.raises(ScheduleError, match=r"ends with inputs|holds the sum"):
        verify(broken, topo)


def test_verifier_rejects_double_counting() -> None:
    topo, program = _program()
    extra = program.phases[-1] + (program.phases[-1][0],)
    broken = replace(program, phases=(*program.phases[:-1], extra))
    with pytest.raises(ScheduleError, match="counted twice"):
        verify(broken, topo)


def test_verifier_rejects_a_non_edge() -> None:
    topo, program = _program()
    t = program.phases[0][0]
    bad = Transfer(t.src, t.dst ^ 1 if t.dst ^ 1 != t.src else t.dst ^ 2, t.gen, t.nbytes, t.items)
    broken = replace(program, phases=((bad, *program.phases[0][1:]), *program.phases[1:]))
    with pytest.raises(ScheduleError, match="not an edge"):
        verify(broken, topo)


def test_verifier_rejects_wrong_byte_count() -> None:
    topo, program = _program()
    t = program.phases[0][0]
    bad = replace(t, nbytes=t.nbytes / 2)
    broken = replace(program, phases=((bad, *program.phases[0][1:]), *program.phases[1:]))
    with pytest.raises(ScheduleError, match="declares"):
        verify(broken, topo)


def test_verifier_rejects_forwarding_unheld_data() -> None:
    topo, program = _program("bruck", (1, 1))
    t = program.phases[0][0]
    item = t.items[0]
    bad = replace(t, items=(Item("route", item.segs, item.sources | (1 << (t.dst)), item.dests),), nbytes=t.nbytes * 2)
    broken = replace(program, phases=((bad, *program.phases[0][1:]), *program.phases[1:]))
    with pytest.raises(ScheduleError, match="not held"):
        verify(broken, topo)


# -- block folds without a search: the one-shot-dvo closed form and the tree's options ----

BLOCK_FOLDS = [shape for bits in range(1, 9) for shape in integer_partitions(bits)]


@pytest.mark.parametrize("sizes", BLOCK_FOLDS, ids=[",".join(map(str, s)) for s in BLOCK_FOLDS])
def test_tree_closed_forms_are_the_balanced_tree_costs(sizes: tuple[int, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    from ocsplan.cayley import cayley_distances
    from ocsplan.schedules import trees

    topo = Topology.from_profile(sizes)
    # the tree as on any generator set: parent options found by distances
    monkeypatch.setattr(trees, "block_fold_groups", lambda gens, bits: None)
    generic = trees.balanced_parents.__wrapped__(topo)
    monkeypatch.undo()
    assert trees.balanced_parents.__wrapped__(topo) == generic  # the block-fold options: the same tree
    dist = cayley_distances(sorted(topo.gens), topo.bits)
    loads = [[0] * (1 << topo.bits) for _ in range(max(dist) + 1)]
    for label, gen in generic.items():
        loads[dist[label]][gen] += 1
    form = SCHEDULES["one-shot-dvo"].cost(topo)
    assert form.h == max(dist) == len(sizes)
    assert form.v_factor == sum(max(row) for row in loads[1:])
    assert form.u == max(sum(1 for x in row if x) for row in loads[1:]) == topo.degree
    # tree-gather sends one block (1/size of the payload) per label along the same trees
    gather = SCHEDULES["tree-gather"].cost(topo)
    assert (gather.h, gather.v_factor, gather.u) == (form.h, form.v_factor / topo.size, form.u)


def test_one_program_cache_serves_every_consumer() -> None:
    """schedules.program is the one cache of builds (issue 43 goal 2): equal to a fresh build, the same
    object on a second call, and the function Simlette's traffic, the pricing, faults and export call."""
    from ocsplan.decode import pricing
    from ocsplan.deploy import export, faults
    from ocsplan.schedules import SCHEDULES, program
    from ocsplan.simlette import traffic

    topo = Topology(3, frozenset(range(1, 8)))
    for name in ("one-shot", "rs-ag", "bruck"):
        built = program(name, topo, 4096)
        assert built == SCHEDULES[name].build(topo, 4096) and program(name, topo, 4096) is built
    assert all(vars(module)["build"] is program for module in (traffic, pricing, faults, export))


def test_the_program_cache_is_bounded_by_count_and_transfers() -> None:
    """The one program cache: a hit is the same object; least recent out first; the transfers
    held stay within the budget unless the newest program alone is over it."""
    from ocsplan.schedules import ProgramCache, program

    topo = Topology.from_profile([3])
    assert program("one-shot", topo, 64) is program("one-shot", topo, 64)
    assert program("one-shot", topo, 64) == SCHEDULES["one-shot"].build(topo, 64)
    size = sum(len(p) for p in SCHEDULES["one-shot"].build(topo, 1).phases)  # 56 transfers
    cache = ProgramCache(maxsize=3, max_transfers=2 * size)
    first = cache("one-shot", topo, 1)
    cache("one-shot", topo, 2)
    assert cache.held == (2, 2 * size) and cache("one-shot", topo, 1) is first
    cache("one-shot", topo, 3)  # over the budget: payload 2, the least recent, goes
    assert cache.held == (2, 2 * size) and cache("one-shot", topo, 1) is first
    cache = ProgramCache(maxsize=2, max_transfers=size // 2)
    cache("one-shot", topo, 1)
    cache("one-shot", topo, 2)
    assert cache.held == (1, size)  # the newest stays alone
    cache = ProgramCache(maxsize=2, max_transfers=10 * size)
    for payload in (1, 2, 3):
        cache("one-shot", topo, payload)
    assert cache.held == (2, 2 * size)
    cache.cache_clear()
    assert cache.held == (0, 0)


def test_ideal_cost_is_the_cost_of_the_link_loads() -> None:
    """link_loads holds every driven (src, gen) edge's bytes per phase; loads_cost of them is the
    pre-refactor ideal_cost loop (per-phase maxima summed, generators one node drives)."""
    from collections import defaultdict

    from ocsplan.schedules import link_loads, loads_cost, program

    checked = 0
    for topo in (Topology.from_profile([3]), Topology.from_profile([2, 2]), Topology.cube(4),
                 Topology(3, frozenset({1, 2, 4, 7}))):
        for name, sched in SCHEDULES.items():
            if name == "ring" or not sched.valid(topo):
                continue
            built = program(name, topo, PAYLOAD)
            loads = link_loads(built)
            volume, ports = Fraction(0), 0
            for phase, load in zip(built.phases, loads, strict=True):
                ref: dict[tuple[int, int], Fraction] = defaultdict(Fraction)
                driven: dict[int, set[int]] = defaultdict(set)
                for t in phase:
                    ref[(t.src, t.gen)] += t.nbytes
                    driven[t.src].add(t.gen)
                assert load == ref and list(load) == list(ref)
                volume += max(ref.values())
                ports = max(ports, max(len(g) for g in driven.values()))
            expected = (len(built.phases), volume, ports)
            assert (loads_cost(loads).h, loads_cost(loads).v, loads_cost(loads).u) == expected
            assert ideal_cost(built) == loads_cost(loads)
            checked += 1
    assert checked >= 20
