"""Irregular (covering-code) folds in the planners, plans, realization and Simlette.

Reference values: hand derivations written next to each test (Eq. 1 with the
table's generator sets), an independent rule and BFS for which sets the search
space takes, and the brute force of tests/exact_bruteforce.py extended by those
sets (costs from the catalogue's closed forms, not from the planner's tables).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from functools import cache
from typing import Any

import pytest

from ocsplan.cayley import Topology
from ocsplan.instance import Instance
from ocsplan.plan import Plan, dumps_plan, loads_plan
from ocsplan.planning.check import check_plan
from ocsplan.planning.covering import covering_sets
from ocsplan.planning.exact import enumerate_candidates
from ocsplan.planning.exact.cpsat import CpSatBackend
from ocsplan.planning.exact.milp import MilpBackend
from ocsplan.planning.exact.model import build_formulation
from ocsplan.planning.exact.solve import ExactRun
from ocsplan.planning.heuristic import plan_heuristic
from ocsplan.planning.space import IRREGULAR, irregular_fold, irregular_shapes, shape_options
from ocsplan.realization.fabrics import load_fabric
from ocsplan.realization.realize import realize
from ocsplan.realization.validate import validate
from ocsplan.schedules import closed_form
from ocsplan.simlette import SimOptions, simulate_plan

from .conftest import ROOT
from .exact_bruteforce import brute_force
from .tiny import tiny

LAMBDA = 0.52e-6
R = 50e9  # 400 Gb/s
AR, A2A, AG = "all-reduce", "all-to-all", "all-gather"


# -- which sets the search space takes ----------------------------------------------------


def _diameter(gens: tuple[int, ...], bits: int) -> int:
    dist = {0: 0}
    queue = deque([0])
    while queue:
        x = queue.popleft()
        for g in gens:
            if x ^ g not in dist:
                dist[x ^ g] = dist[x] + 1
                queue.append(x ^ g)
    assert len(dist) == 1 << bits
    return max(dist.values())


def _block_layers(bits: int, degree: int) -> int:
    """Fewest layers of a block fold (sub-blocks of k_i bits, degree sum 2^k_i - 1) within ``degree``."""
    best = bits  # the cube
    def rec(left: int, largest: int, parts: int, deg: int) -> None:
        nonlocal best
        if deg > degree:
            return
        if left == 0:
            best = min(best, parts)
            return
        for k in range(min(left, largest), 0, -1):
            rec(left - k, k, parts + 1, deg + (1 << k) - 1)
    rec(bits, bits, 0, 0)
    return best


@cache
def _expected_shapes(bits: int) -> tuple[tuple[int, int], ...]:
    """(degree, diameter) per diameter: the least-degree table set beating every block fold of its degree."""
    out: list[tuple[int, int]] = []
    for entry in covering_sets(bits):
        diam = _diameter(entry.generators, bits)
        if entry.degree > bits and diam < _block_layers(bits, entry.degree) and diam not in {d for _, d in out}:
            out.append((entry.degree, diam))
    return tuple(out)


@pytest.mark.parametrize("bits", range(2, 10))
def test_irregular_shapes_follow_the_rule(bits: int) -> None:
    got = irregular_shapes(bits)
    assert [(s[2]) for s in got] == [d for d, _ in _expected_shapes(bits)]
    assert all(s[0] == IRREGULAR and s[1] == bits for s in got)
    if bits >= 4:  # FQ4 (degree 5, diameter 2) is the first: below K4xK2xK2 (3 layers)
        assert got


@pytest.mark.parametrize("bits", range(4, 10))
def test_irregular_options_are_the_closed_forms(bits: int) -> None:
    for shape in irregular_shapes(bits):
        entry = next(e for e in covering_sets(bits) if e.degree == shape[2])
        topo = Topology(bits, frozenset(entry.generators))
        for collective, names in ((AR, {"one-shot", "one-shot-dvo"}), (AG, {"tree-gather"}), (A2A, {"tree-route"})):
            on = {o.schedule: (o.h, o.v_factor) for o in shape_options(collective, "auto", shape) if o.on_profile}
            assert set(on) == names
            for name, (h, v) in on.items():
                form = closed_form(name, topo)
                assert (h, v) == (form.h, float(form.v_factor))
        # the cube's options follow, off the profile
        cube = [o for o in shape_options(AR, "auto", (1,) * bits)]
        off = [o for o in shape_options(AR, "auto", shape) if not o.on_profile]
        assert [(o.schedule, o.h, o.v_factor) for o in off] == [(o.schedule, o.h, o.v_factor) for o in cube]


@pytest.mark.parametrize("block", [(3, 2, 1, 0), (9, 6, 4, 1), (7, 5, 3, 2)])
def test_irregular_fold_lies_in_its_block(block: tuple[int, ...]) -> None:
    (shape,) = irregular_shapes(4)
    (mask,) = irregular_fold(shape, block)  # FQ4: the one fold is the all-ones mask of the block
    assert mask == sum(1 << b for b in block)


# -- hand-derived plans --------------------------------------------------------------------


def _q4(ports: int, payload: int) -> Instance:
    return tiny("q4", 4, ports, [((16,), [[(AR, payload, 1.0, "auto")]])])


# 16 ranks, L = 5, 256 B. FQ4 (units + 1111, diameter 2): one-shot-dvo h = 2 and
# v = (4 + 6 + 4 + 1 ... balanced over 5 links: ceil(5/5) + ceil(10/5) = 3) sigma,
# T = 2 lambda + 3 * 256 / R. The best block fold within 5 ports is K4 x K2 x K2
# (3 layers): coset-factored parallel h = 3, v = sigma, T = 3 lambda + 256 / R.
FQ4_T = 2 * LAMBDA + 3 * 256 / R  # 1.0554 us (issue 10: 1.055 us)
BLOCK_T = 3 * LAMBDA + 256 / R  # 1.5651 us (issue 10: 1.565 us)


@pytest.mark.parametrize("method", ["heuristic", "cpsat", "milp"])
def test_fq4_beats_every_block_fold_at_five_ports(method: str) -> None:
    inst = _q4(5, 256)
    plan = _solve(inst, method)
    (axis,) = plan.meshes[0].axes
    (d,) = axis.demands
    assert d.schedule == "one-shot-dvo" and d.fold == (0b1111,) and d.phases == 2
    assert math.isclose(plan.objective_s, FQ4_T, rel_tol=1e-12)
    assert check_plan(plan, inst) == []
    block = _solve(inst, method, irregular=False)
    assert math.isclose(block.objective_s, BLOCK_T, rel_tol=1e-12)
    assert all(not d.fold for d in block.meshes[0].axes[0].demands)


# All-to-all and all-gather on FQ4 (no layers): the 10 labels at distance 2 share the 5
# generators 2 each (each has two shortest-path parents), so every distance-1 label roots
# a subtree of 3. tree-route: phase 1 carries 3 blocks of sigma/16 per link, phase 2
# carries 2: h = 2, v = 5 sigma/16. tree-gather: 1 + 2 blocks, v = 3 sigma/16. Within 5
# ports the best block fold is K4 x K2 x K2: bruck-parallel h = 3, v = sigma/2, and
# layered-parallel h = 3, v = 13 sigma/48 (tests/test_schedules.py).
@pytest.mark.parametrize(
    "collective, schedule, fq4_t, block_t",
    [
        (A2A, "tree-route", 2 * LAMBDA + 5 * 1024 / 16 / R, 3 * LAMBDA + 1024 / 2 / R),
        (AG, "tree-gather", 2 * LAMBDA + 3 * 1024 / 16 / R, 3 * LAMBDA + 13 * 1024 / 48 / R),
    ],
)
def test_fq4_serves_all_to_all_and_all_gather(collective: str, schedule: str, fq4_t: float, block_t: float) -> None:
    inst = tiny("q4-" + collective, 4, 5, [((16,), [[(collective, 1024, 1.0, "auto")]])])
    plan = plan_heuristic(inst)
    (d,) = plan.meshes[0].axes[0].demands
    assert (d.schedule, d.fold, d.phases) == (schedule, (0b1111,), 2)
    assert math.isclose(plan.objective_s, fq4_t, rel_tol=1e-12)
    assert math.isclose(plan_heuristic(inst, irregular=False).objective_s, block_t, rel_tol=1e-12)
    assert check_plan(plan, inst) == []


def test_above_the_crossover_the_block_fold_stays() -> None:
    # sigma* = (l - h) lambda R / (v - 1) = (3 - 2) * 0.52e-6 * 50e9 / 2 = 13,000 B:
    # at 16 KiB coset-factored parallel on K4 x K2 x K2 wins (3 lambda + sigma/R).
    inst = _q4(5, 16 * 1024)
    plan = plan_heuristic(inst)
    assert not plan.meshes[0].axes[0].demands[0].fold
    assert math.isclose(plan.objective_s, 3 * LAMBDA + 16 * 1024 / R, rel_tol=1e-12)


def _solve(inst: Instance, method: str, irregular: bool = True) -> Plan:
    if method == "heuristic":
        return plan_heuristic(inst, irregular=irregular)
    run = ExactRun(inst, irregular=irregular)
    backend = CpSatBackend(None, workers=2) if method == "cpsat" else MilpBackend(None)
    return run.solve(backend, method)


# -- against the brute force ----------------------------------------------------------------

IRREGULAR_TINY = [
    _q4(5, 256),
    _q4(7, 1024),
    tiny("q4-two-demands", 4, 6, [((16,), [[(AR, 512, 2.0, "auto"), (AR, 64 * 1024, 1.0, "auto")]])]),
    tiny("q4-and-q2q2", 4, 6, [((16,), [[(AR, 1024, 1.0, "auto")]]),
                               ((4, 4), [[(A2A, 2048, 1.0, "auto")], [(AR, 256, 1.0, "auto")]])]),
    tiny("q5-latency", 5, 7, [((32,), [[(AR, 512, 1.0, "auto")]])]),
    tiny("q4-mixed", 4, 6, [((16,), [[(A2A, 4096, 1.0, "auto"), (AG, 2048, 1.0, "auto")]]),
                            ((4, 4), [[(AR, 512, 1.0, "auto")], []])]),
]


@cache
def _optimum(name: str) -> float:
    return brute_force(next(i for i in IRREGULAR_TINY if i.name == name), irregular=True)


@pytest.mark.parametrize("method", ["heuristic", "cpsat", "milp"])
@pytest.mark.parametrize("name", [i.name for i in IRREGULAR_TINY])
def test_extended_space_matches_the_brute_force(method: str, name: str) -> None:
    inst = next(i for i in IRREGULAR_TINY if i.name == name)
    plan = _solve(inst, method)
    assert check_plan(plan, inst) == []
    if method == "heuristic":
        assert plan.objective_s >= _optimum(name) * (1 - 1e-9)
    else:
        assert plan.status == "optimal"
        assert math.isclose(plan.objective_s, _optimum(name), rel_tol=1e-9)


def test_the_extended_space_is_never_worse() -> None:
    for inst in IRREGULAR_TINY:
        assert _optimum(inst.name) <= brute_force(inst) * (1 + 1e-12)
    assert _optimum("q4") < brute_force(_q4(5, 256)) * 0.7  # 1.055 against 1.565 us


def test_hand_sized_extended_model() -> None:
    # n = 4, L = 8, 1 KiB: as tests/test_planning_exact_model.py's hand model, plus FQ4 (1 fold
    # <= 4 spare ports): one shape variable more; its one-shot-dvo (h 2, v 3 sigma) beats
    # one-shot (h 2, v 7 sigma) and is kept at p = 1 only (1 + (8 - 4 - 1) // 5 = 1), so
    # no irregular level variable; one needs_shape row more.
    inst = tiny("hand", 4, 8, [((16,), [[(AR, 1024, 1.0, "auto")]])])
    cand = enumerate_candidates(inst)
    (axis,) = cand.axes
    assert axis.shapes == ((1, 1, 1, 1), (3, 1), (2, 2), (2, 1, 1), (IRREGULAR, 4, 5))
    (demand,) = cand.demands
    irr = [c for c in demand.choices if c.shape == (IRREGULAR, 4, 5)]
    assert [(c.schedule, c.h, c.v_factor, c.p) for c in irr] == [("one-shot-dvo", 2, 3.0, 1)]
    mdl = build_formulation(cand).model
    assert sum(name.startswith("shape_") for name in mdl.names) == 5
    assert not [name for name in mdl.names if name.startswith("ilev_")]
    assert sum(row.name.startswith("needs_shape") for row in mdl.rows) == 4
    (ports,) = [row for row in mdl.rows if row.name == "ports"]
    shape_var = mdl.names.index("shape_0_irregular5")
    assert (shape_var, 1) in ports.terms  # one port for the fold 1111


# -- plans: JSON, checker mutations ----------------------------------------------------------


def _fq4_plan() -> Plan:
    return plan_heuristic(_q4(5, 256))


def test_plan_json_round_trip_keeps_the_fold() -> None:
    plan = _fq4_plan()
    text = dumps_plan(plan)
    assert '"fold": [\n        "1111"\n       ]' in text
    again = loads_plan(text)
    assert again == plan and dumps_plan(again) == text


def _mutate(field: str, value: Any) -> list[str]:
    plan = _fq4_plan()
    mesh = plan.meshes[0]
    axis = mesh.axes[0]
    d = replace(axis.demands[0], **{field: value})
    bad = replace(plan, meshes=(replace(mesh, axes=(replace(axis, demands=(d,)),)),))
    return check_plan(bad, _q4(5, 256))


@pytest.mark.parametrize(
    "field, value, says",
    [
        ("fold", (0b0011,), "uses"),  # a 2-bit fold: Q4 + 0011 has diameter 3, not the stated 2
        ("fold", (0b10000,), "not a fold inside"),
        ("fold", (0b0001,), "not a fold inside"),
        ("fold", (0b1111, 0b1111), "repeat"),
        ("schedule", "coset-factored", "cannot run on an irregular fold"),
        ("groups", ((3, 2), (1,), (0,)), "unit layers"),
        ("fold", (), "uses"),  # without its fold the demand drives a mask it does not have
    ],
)
def test_checker_catches_fold_mutations(field: str, value: Any, says: str) -> None:
    problems = _mutate(field, value)
    assert problems and any(says in p for p in problems), problems


def test_checker_catches_a_missing_fold_generator() -> None:
    plan = _fq4_plan()
    gens = tuple(g for g in plan.generators if g.kind != "fold")
    bad = replace(plan, generators=gens, ports_used=plan.ports_used - 1)
    assert any("fold generator 1111 not in the host" in p for p in check_plan(bad))


# -- realization and Simlette ---------------------------------------------------------------


def _wide_irregular_plan() -> Plan:
    # 64 ranks, 13 ports: the degree-13 diameter-2 set (K8 x K8 needs 14)
    inst = tiny("q6", 6, 13, [((64,), [[(AR, 256, 1.0, "auto")]])])
    plan = plan_heuristic(inst)
    (d,) = plan.meshes[0].axes[0].demands
    assert len(d.fold) == 7 and d.phases == 2
    return plan


def _routed_plan() -> Plan:
    # an all-to-all and an all-gather on FQ4 (16 ranks, 5 ports)
    inst = tiny("q4-routed", 4, 5, [((16,), [[(A2A, 1024, 1.0, "auto"), (AG, 1024, 1.0, "auto")]])])
    plan = plan_heuristic(inst)
    assert {d.schedule for d in plan.meshes[0].axes[0].demands} == {"tree-route", "tree-gather"}
    return plan


PLANS = [_fq4_plan, _wide_irregular_plan, _routed_plan]
IDS = ["fq4", "q6-degree13", "fq4-routed"]


@pytest.mark.parametrize("make", PLANS, ids=IDS)
def test_realized_irregular_plan_validates(make: Callable[[], Plan]) -> None:
    plan = make()
    fabric = load_fabric(ROOT / "simulate" / "fabrics" / "ocs-single.toml")
    circuits = realize(plan, fabric)
    assert validate(circuits, plan) == []


@pytest.mark.parametrize("make", PLANS, ids=IDS)
def test_simlette_ideal_mode_equals_the_closed_form(make: Callable[[], Plan]) -> None:
    plan = make()
    fabric = load_fabric(ROOT / "simulate" / "fabrics" / "ocs-single.toml")
    report = simulate_plan(plan, fabric, SimOptions(mode="ideal"))
    demands = plan.meshes[0].axes[0].demands
    assert len(report.demands) == len(demands)
    for row, d in zip(report.demands, demands, strict=True):
        assert math.isclose(row.simulated_s, d.time_s, rel_tol=1e-12)


@pytest.mark.parametrize("make", PLANS, ids=IDS)
def test_simlette_message_mode_runs_irregular_plans(make: Callable[[], Plan]) -> None:
    # message mode adds flit framing and the fabric's hop timing to Eq. 1: on one OCS
    # level these small messages land within a few percent of the analytical time
    plan = make()
    fabric = load_fabric(ROOT / "simulate" / "fabrics" / "ocs-single.toml")
    report = simulate_plan(plan, fabric, SimOptions(mode="message"))
    for row in report.demands:
        assert 0.99 < row.simulated_s / row.analytical_s < 1.10


@pytest.mark.parametrize("name", [i.name for i in IRREGULAR_TINY])
def test_the_heuristic_plan_warm_starts_the_model(name: str) -> None:
    # the seed's irregular folds map onto the model's shapes: a complete, feasible hint
    run = ExactRun(next(i for i in IRREGULAR_TINY if i.name == name))
    assert run.seed is not None
    hint = run.formulation.hint_from_plan(run.seed)
    assert hint is not None and run.formulation.model.violations(hint) == []
    assert math.isclose(run.formulation.model.value(hint), run.seed.objective_s, rel_tol=1e-9)
