from __future__ import annotations

import csv
import json
import math
from typing import Any

import pytest

from ocsplan.instance import Instance, load_instance, loads_instance
from ocsplan.plan import AxisPlan, Plan, dumps_plan, plan_to_dict
from ocsplan.planning import context, search
from ocsplan.planning.allocate import allocate as real_allocate
from ocsplan.planning.check import check_plan
from ocsplan.planning.heuristic import plan_heuristic
from ocsplan.planning.space import candidate_partitions

from .bruteforce import brute_force
from .conftest import ROOT, instance_path


def _axes(plan: Plan) -> list[tuple[str, int, AxisPlan]]:
    return [(mesh.name, i, axis) for mesh in plan.meshes for i, axis in enumerate(mesh.axes)]


def test_table6_latency_bound_multimesh() -> None:
    # Paper App. A.5.1, Table 6: N = 256, L = 18, T = 4.54 us, 17 of 18 ports,
    # 8 cube and 9 fold generators.
    inst = load_instance(instance_path("paper-multimesh-n256"))
    plan = plan_heuristic(inst)
    assert check_plan(plan, inst) == []
    assert plan.objective_s == pytest.approx(4.54e-6, rel=5e-3)
    assert plan.ports_used == 17 and plan.ports == 18
    assert sum(g.kind == "cube" for g in plan.generators) == 8
    assert sum(g.kind == "fold" for g in plan.generators) == 9
    expected = {  # (mesh, axis): (size, topology, degree, h, p, T in us)
        ("attention", 0): (4, "K4", 3, 1, 1, 0.60),
        ("attention", 1): (64, "Q6[3,3] = K8□K8", 14, 2, 1, 1.70),
        ("ffn", 0): (16, "Q4[2,2] = K4□K4", 6, 2, 1, 1.12),
        ("ffn", 1): (16, "Q4[3,1] = K8□K2", 8, 2, 1, 1.12),
    }
    for mesh, i, axis in _axes(plan):
        size, topo, deg, h, p, t_us = expected[(mesh, i)]
        (d,) = axis.demands
        assert (axis.size, axis.topology, axis.degree, d.phases, d.multiplicity) == (size, topo, deg, h, p)
        assert d.time_s * 1e6 == pytest.approx(t_us, abs=0.005)


@pytest.mark.parametrize(
    ("name", "axis_us", "p", "degree"),
    [  # Paper Table 7: 3660, 1526, 731, 731 us at p = 7, 17, 7, 7
        ("paper-table7-ring-multi", 3660, 7, 5),
        ("paper-table7-ring-single", 1526, 17, 2),
        ("paper-table7-rsag-multi", 731, 7, 5),
        ("paper-table7-rsag-single", 731, 7, 5),
    ],
)
def test_table7_cost_of_alignment(name: str, axis_us: float, p: int, degree: int) -> None:
    inst = load_instance(instance_path(name))
    plan = plan_heuristic(inst)
    assert check_plan(plan, inst) == []
    (d,) = plan.meshes[0].axes[1].demands
    assert d.time_s * 1e6 == pytest.approx(axis_us, rel=5e-3)
    assert d.multiplicity == p
    assert plan.meshes[0].axes[1].degree == degree


def _single_allreduce(payload: int, ports: int = 12) -> Instance:
    return loads_instance(f"""
name = "fig18"
[fabric]
world = 64
ports = {ports}
latency = "0.52us"
link = "400Gb/s"
[[mesh]]
name = "x"
shape = [64]
axes = [{{ collective = "all-reduce", payload = {payload}, schedule = "coset-factored-parallel" }}]
""")


def _regime(payload: int) -> str:
    plan = plan_heuristic(_single_allreduce(payload))
    (d,) = plan.meshes[0].axes[0].demands
    if plan.meshes[0].axes[0].topology == "Q6[2,2,2] = K4□K4□K4" and d.multiplicity == 1:
        return "fold"
    if plan.meshes[0].axes[0].topology == "Q6" and d.multiplicity == 2:
        return "multiplicity"
    return plan.meshes[0].axes[0].topology


def test_figure18_crossover() -> None:
    # Paper Figure 18 / Eq. 3: on N = 64, L = 12, coset-factored parallel, "+fold"
    # (K4□K4□K4, h = 3) wins below sigma* = 3 * 0.52 us * 50 GB/s * 2 = 156 kB and
    # "+multiplicity" (Q6, p = 2) above it.
    assert _regime(1024) == "fold"
    assert _regime(16 << 20) == "multiplicity"
    lo, hi = 1024, 16 << 20
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _regime(mid) == "fold":
            lo = mid
        else:
            hi = mid
    assert hi == pytest.approx(156_000, rel=0.01)


@pytest.mark.parametrize("name", ["paper-multimesh-n256", "megatron-5t-n512-b1"])
def test_deterministic(name: str) -> None:
    inst = load_instance(instance_path(name))
    first, second = plan_to_dict(plan_heuristic(inst)), plan_to_dict(plan_heuristic(inst))
    first.pop("solve_seconds")
    second.pop("solve_seconds")
    assert json.dumps(first) == json.dumps(second)


def test_megatron_plan_is_valid() -> None:
    inst = load_instance(instance_path("megatron-5t-n512-b1"))
    plan = plan_heuristic(inst)
    assert check_plan(plan, inst) == []
    assert plan.ports_used <= 36
    assert json.loads(dumps_plan(plan))["schema"] == "ocsplan.plan/1"
    # Eq. 1 by hand over the plan's demands: T = h * lambda + v / (p * R), 0.52 us, 50 GB/s
    total = 0.0
    for mesh in plan.meshes:
        for axis in mesh.axes:
            for d in axis.demands:
                t = d.phases * 0.52e-6 + d.volume_bytes / (d.multiplicity * 50e9)
                assert d.time_s == pytest.approx(t, rel=1e-12)
                total += d.weight * t
    assert plan.objective_s == pytest.approx(total, rel=1e-12)
    # the optimum both exact backends prove (CP-SAT and HiGHS, tests/test_planning_exact_backends.py)
    assert plan.objective_s == pytest.approx(512.0899333e-6, rel=1e-8)
    assert plan.ports_used == sum(g.ports for g in plan.generators)  # every circuit takes a port


TINY = {
    "latency-ar": ("[4]", 6, '{ collective = "all-reduce", payload = "1KiB" }', None),
    "bandwidth-ar": ("[8]", 9, '{ collective = "all-reduce", payload = "16MiB" }', None),
    "mixed-axis": (
        "[8]",
        8,
        '{ demands = [{ collective = "all-reduce", payload = "4KiB", weight = 8 },'
        ' { collective = "all-gather", payload = "4MiB" }] }',
        None,
    ),
    "a2a": ("[8]", 7, '{ collective = "all-to-all", payload = "64KiB" }', None),
    "two-axes": (
        "[4, 4]",
        7,
        '{ collective = "all-reduce", payload = "4KiB" }',
        '{ collective = "all-gather", payload = "1MiB" }',
    ),
    "two-meshes": ("[2, 8]", 6, '{ collective = "none" }', '{ collective = "all-reduce", payload = "2KiB" }'),
}


def _tiny(name: str) -> Instance:
    shape, ports, first, second = TINY[name]
    world = 16 if "," in shape or shape == "[4]" else 8
    if shape == "[4]":
        world = 4
    axes = f"[{first}]" if second is None else f"[{first}, {second}]"
    extra = ""
    if name == "two-meshes":
        world = 16
        extra = """
[[mesh]]
name = "b"
shape = [4, 4]
axes = [{ collective = "all-reduce", payload = "8KiB" }, { collective = "none" }]
"""
    return loads_instance(f"""
name = "{name}"
[fabric]
world = {world}
ports = {ports}
latency = "0.52us"
link = "400Gb/s"
[[mesh]]
name = "a"
shape = {shape}
axes = {axes}
{extra}""")


@pytest.mark.parametrize("name", sorted(TINY))
def test_heuristic_against_brute_force(name: str) -> None:
    inst = _tiny(name)
    plan = plan_heuristic(inst)
    assert check_plan(plan, inst) == []
    optimum = brute_force(inst)
    assert plan.objective_s >= optimum * (1 - 1e-12)
    assert plan.objective_s == pytest.approx(optimum, rel=1e-9)


def test_candidate_partitions_are_distinct() -> None:
    # a single 1-D mesh has one partition; (4, 64) with (16, 16) has three symmetry
    # classes: 0, 1 or 2 of the size-4 axis's bits inside the first size-16 axis
    single = load_instance(instance_path("paper-table7-rsag-single"))
    assert len(candidate_partitions(single)) == 1
    multimesh = load_instance(instance_path("paper-multimesh-n256"))
    parts = candidate_partitions(multimesh)
    assert len(parts) == len(set(parts)) == 3
    overlaps = sorted(len(set(p[0][0]) & set(p[1][0])) for p in parts)
    assert overlaps == [0, 1, 2]


HARD = ROOT / "instances" / "families" / "hard"
ROWS = list(csv.DictReader((HARD / "optima.csv").open()))
OPTIMA = {row["instance"]: float(row["optimum_s"]) for row in ROWS}
# the space each optimum was proven in: block folds (the paper's) or with irregular folds
SPACE = {row["instance"]: row.get("space") or "block" for row in ROWS}
# known gaps (README of that folder): the heuristic may be this factor above the optimum
# (random-s99-0002, helix-s12-0014, random-s12-0005, random-s2026-0102, random-s2026-0153,
# helix-s2026-0159, bandwidth-s2026-0016 and bandwidth-s2026-0128 reach their optimum since the joint
# moves and the best-improvement irregular start; wide-s2026-0070, wide-s2026-0121 and random-s12-0019
# since the moves across partition classes, planning/repartition.py; wide-s1-0003 since the ranking
# hands over to its hill climb after 200 classes; wide-s1-0008 and wide-s1-0029 since whole re-cuts
# of a mesh and the lookahead through a neutral one)
OPEN = {"wide-s13-0001": 1.05}


@pytest.mark.parametrize("name", sorted(OPTIMA))
def test_heuristic_on_instances_that_once_defeated_it(name: str) -> None:
    # optima proven by CP-SAT and HiGHS alike (instances/families/hard/README.md)
    inst = load_instance(HARD / f"{name}.toml")
    limit = OPTIMA[name] * OPEN.get(name, 1 + 1e-6)
    if SPACE[name] == "extended":
        plan = plan_heuristic(inst)
        assert check_plan(plan, inst) == []
        assert OPTIMA[name] * (1 - 1e-9) <= plan.objective_s <= limit
        return
    plan = plan_heuristic(inst, irregular=False)
    assert check_plan(plan, inst) == []
    assert plan.objective_s >= OPTIMA[name] * (1 - 1e-9)
    assert plan.objective_s <= limit
    # the extended space contains the block one: its plan is held to the same bar
    extended = plan_heuristic(inst)
    assert check_plan(extended, inst) == [] and extended.objective_s <= limit



@pytest.mark.parametrize(
    "path", ["instances/families/hard/wide-s2026-0070.toml", "instances/families/hard/random-s12-0019.toml",
             "instances/paper-multimesh-n256.toml"],
)
def test_bound_skips_change_no_plan(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # descents, beams, joint moves and bit exchanges skip an allocation whose lower bound
    # cannot beat what they hold: fewer allocations, and the plan of the bound switched off

    inst = load_instance(ROOT / path)
    calls: list[int] = []

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real_allocate(*args, **kwargs)

    monkeypatch.setattr(context, "allocate", counting)
    with_bound = plan_to_dict(plan_heuristic(inst))
    skipping = len(calls)
    calls.clear()
    monkeypatch.setattr(context, "lower_bound", lambda *args: -math.inf)  # never above a cutoff
    without = plan_to_dict(plan_heuristic(inst))
    for d in (with_bound, without):
        d.pop("solve_seconds")
    assert with_bound == without
    assert skipping < len(calls)


class _Forgetful(dict[Any, Any]):
    """A memo that stores nothing."""

    def __setitem__(self, key: Any, value: Any) -> None:
        pass


@pytest.mark.parametrize(
    "path", ["instances/families/hard/wide-s2026-0070.toml", "instances/families/hard/helix-s12-0014.toml"],
)
def test_placements_shared_across_classes_change_no_plan(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # classes that agree on an axis's block and on what the other meshes hold of it share
    # its placements; placing afresh in every class gives the same plan

    inst = load_instance(ROOT / path)
    place = search.Search._place
    calls: list[int] = []

    def counting(self: search.Search, *args: Any) -> Any:
        calls.append(1)
        return place(self, *args)

    monkeypatch.setattr(search.Search, "_place", counting)
    monkeypatch.setattr(search, "PLACEMENTS", {})  # what earlier tests placed in this process is not shared
    shared = plan_to_dict(plan_heuristic(inst))
    placed_shared = len(calls)
    calls.clear()
    init = context.Context.__init__

    def forgetful(self: context.Context, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        self.placed = _Forgetful()

    monkeypatch.setattr(context.Context, "__init__", forgetful)
    monkeypatch.setattr(search, "PLACEMENTS", _Forgetful())  # nor across instances: every class places afresh
    afresh = plan_to_dict(plan_heuristic(inst))
    for d in (shared, afresh):
        d.pop("solve_seconds")
    assert shared == afresh
    assert placed_shared < len(calls)
