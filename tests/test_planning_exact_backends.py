"""One shared suite run against both exact backends (CP-SAT and MILP).

Reference values: an independent brute force (tests/bruteforce.py) on tiny
instances, and the paper's Tables 6 and 7 on the named instances.
"""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path

import pytest

from ocsplan.errors import InfeasibleError, OcsplanError
from ocsplan.instance import load_instance
from ocsplan.plan import dumps_plan, loads_plan
from ocsplan.planning.check import check_plan
from ocsplan.planning.exact import ExactRun, plan_cpsat, plan_milp
from ocsplan.planning.exact.backend import Outcome
from ocsplan.planning.exact.cpsat import CpSatBackend
from ocsplan.planning.exact.milp import MilpBackend
from ocsplan.planning.exact.model import Assignment, Formulation
from ocsplan.planning.heuristic import plan_heuristic
from ocsplan.planning.registry import PLANNERS

from .exact_bruteforce import brute_force
from .tiny import TINY, tiny

ROOT = Path(__file__).resolve().parents[1]
BACKENDS = ["cpsat", "milp"]
REL = 1e-9


def backend(name: str, time_limit: float | None = None) -> CpSatBackend | MilpBackend:
    if name == "cpsat":
        return CpSatBackend(time_limit, workers=2)
    return MilpBackend(time_limit, solver="cbc" if name == "milp-cbc" else None)


@cache
def optimum(name: str) -> float:
    return brute_force(next(i for i in TINY if i.name == name))


@cache
def prepared(name: str, seeded: bool) -> ExactRun:
    return ExactRun(next(i for i in TINY if i.name == name), use_heuristic=seeded)


@pytest.mark.parametrize("method", [*BACKENDS, "milp-cbc"])
@pytest.mark.parametrize("seeded", [True, False], ids=["seeded", "unseeded"])
@pytest.mark.parametrize("name", [i.name for i in TINY])
def test_backend_matches_brute_force(method: str, seeded: bool, name: str) -> None:
    run = prepared(name, seeded)
    plan = run.solve(backend(method), method.split("-")[0])
    assert plan.status == "optimal"
    assert math.isclose(plan.objective_s, optimum(name), rel_tol=REL)
    assert plan.bound_s is not None and plan.bound_s <= plan.objective_s
    assert plan.bound_s >= optimum(name) * (1 - 1e-6)
    assert check_plan(plan, run.instance) == []


@pytest.mark.parametrize("name", [i.name for i in TINY])
def test_heuristic_never_beats_the_optimum(name: str) -> None:
    heuristic = plan_heuristic(next(i for i in TINY if i.name == name))
    assert heuristic.objective_s >= optimum(name) * (1 - REL)


def test_heuristic_handles_a_size_one_axis() -> None:
    # an axis of one rank: its collectives take no phase and no port
    inst = next(i for i in TINY if i.name == "size-one-axis")
    plan = plan_heuristic(inst)
    assert check_plan(plan, inst) == []
    assert plan.meshes[0].axes[0].demands[0].time_s == 0.0
    assert math.isclose(plan.objective_s, optimum("size-one-axis"), rel_tol=REL)


def test_exact_runs_without_a_working_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    import ocsplan.planning.exact.solve as exact_solve

    def broken(instance: object) -> None:
        raise RuntimeError("broken heuristic")

    monkeypatch.setattr(exact_solve, "plan_heuristic", broken)
    run = ExactRun(next(i for i in TINY if i.name == "size-one-axis"), use_heuristic=True)
    assert run.seed is None and "heuristic seed failed" in run.seed_failure
    plan = run.solve(backend("cpsat"), "cpsat")
    assert plan.status == "optimal" and any("seed failed" in note for note in plan.notes)


# -- named instances: values from the paper -----------------------------------------


@pytest.mark.parametrize("method", BACKENDS)
def test_paper_multimesh_n256_is_optimal_at_4_54_us(method: str) -> None:
    # Paper App. A.5.1, Table 6: T = 4.54 us with 17 of 18 ports.
    inst = load_instance(ROOT / "instances/paper-multimesh-n256.toml")
    plan = PLANNERS[method](inst, workers=2)
    assert plan.status == "optimal"
    assert round(plan.objective_s * 1e6, 2) == 4.54
    assert check_plan(plan, inst) == []


@pytest.mark.parametrize("method", BACKENDS)
@pytest.mark.parametrize(
    ("name", "micros"),
    [("ring-multi", 3660), ("ring-single", 1526), ("rsag-multi", 731), ("rsag-single", 731)],
)
def test_paper_table7_is_optimal(method: str, name: str, micros: int) -> None:
    # Paper App. A.5.1, Table 7 (times in us, rounded to whole microseconds).
    inst = load_instance(ROOT / f"instances/paper-table7-{name}.toml")
    plan = PLANNERS[method](inst)
    assert plan.status == "optimal"
    assert round(plan.objective_s * 1e6) == micros


def test_megatron_cpsat_proves_optimality_and_matches_milp() -> None:
    inst = load_instance(ROOT / "instances/megatron-5t-n512-b1.toml")
    heuristic = plan_heuristic(inst)
    cp = plan_cpsat(inst, workers=2)
    mi = plan_milp(inst)
    assert cp.status == mi.status == "optimal"
    assert math.isclose(cp.objective_s, mi.objective_s, rel_tol=1e-6)
    assert cp.objective_s <= heuristic.objective_s * (1 + REL)
    assert check_plan(cp, inst) == [] and check_plan(mi, inst) == []


@pytest.mark.parametrize("method", BACKENDS)
def test_exact_plans_pass_the_json_schema(method: str) -> None:
    inst = load_instance(ROOT / "instances/paper-multimesh-n256.toml")
    plan = PLANNERS[method](inst)
    again = loads_plan(dumps_plan(plan))
    assert again == plan
    assert check_plan(again, inst) == []
    assert again.method == method and again.status == "optimal"


# -- time limits, statuses, infeasibility ----------------------------------------------


@pytest.mark.parametrize("method", BACKENDS)
def test_time_limited_run_is_never_worse_than_its_seed(method: str) -> None:
    inst = load_instance(ROOT / "instances/megatron-5t-n512-b1.toml")
    run = ExactRun(inst)
    assert run.seed is not None
    plan = run.solve(backend(method, time_limit=0.01), method)
    # proving this optimum takes CP-SAT ~0.6 s and HiGHS ~2.5 s: 0.01 s cannot
    assert plan.status in ("feasible", "unknown")
    assert plan.objective_s <= run.seed.objective_s
    # at least the sum of every demand's cheapest choice, even before the solver has a bound
    floor = sum(min(c.cost for c in dc.choices) for dc in run.candidates.demands)
    assert plan.bound_s is not None
    assert floor * (1 - 1e-12) <= plan.bound_s < plan.objective_s
    assert check_plan(plan, inst) == []


class _Stub:
    """A backend that answers with a fixed status and no solution."""

    name = "stub"

    def __init__(self, status: str) -> None:
        self.status = status

    def solve(self, form: Formulation, hint: Assignment | None) -> Outcome:
        return Outcome(self.status, None, None, None, "stub")


def test_no_solution_returns_the_seed_relabelled() -> None:
    run = prepared("two-axes", True)
    assert run.seed is not None
    plan = run.solve(_Stub("unknown"), "cpsat")
    assert (plan.method, plan.status) == ("cpsat", "unknown")
    assert plan.objective_s == run.seed.objective_s
    assert plan.meshes == run.seed.meshes


def test_unknown_without_seed_is_an_error() -> None:
    run = prepared("two-axes", False)
    with pytest.raises(OcsplanError, match="found no plan"):
        run.solve(_Stub("unknown"), "milp")


def test_proven_infeasible_without_seed_raises_infeasible() -> None:
    run = prepared("two-axes", False)
    with pytest.raises(InfeasibleError, match="no plan fits"):
        run.solve(_Stub("infeasible"), "cpsat")


def test_infeasible_with_a_seed_is_a_modelling_error() -> None:
    run = prepared("two-axes", True)
    with pytest.raises(OcsplanError, match="modelling error"):
        run.solve(_Stub("infeasible"), "cpsat")


@pytest.mark.parametrize("method", BACKENDS)
def test_fewer_ports_than_bits_is_infeasible(method: str) -> None:
    # The loader rejects L < n; built in code, the instance reaches the planner.
    inst = tiny("too-few-ports", 4, 3, [((16,), [[("all-reduce", 4096, 1.0, "auto")]])])
    with pytest.raises(InfeasibleError, match="needs 4 ports"):
        PLANNERS[method](inst)


class _Fixed:
    """A backend that answers with a given status and a poor but feasible assignment."""

    name = "fixed"

    def __init__(self, status: str) -> None:
        self.status = status

    def solve(self, form: Formulation, hint: Assignment | None) -> Outcome:
        cand = form.cand
        cubes = [tuple((b,) for b in ax.blocks[0]) for ax in cand.axes]
        picks = [
            max(
                (c for c, ch in enumerate(dc.choices) if ch.shape is None and ch.p == 1),
                key=lambda c, dc=dc: dc.choices[c].cost,  # type: ignore[misc]
            )
            for dc in cand.demands
        ]
        values = form.complete(cand.partitions[0], cubes, picks)
        assert form.model.violations(values) == []
        value = form.model.value(values)
        return Outcome(self.status, values, value, value, "fixed")


def test_optimal_above_the_heuristic_is_reported_as_a_modelling_error() -> None:
    run = ExactRun(next(i for i in TINY if i.name == "two-axes"), use_heuristic=False)
    run.seed = plan_heuristic(run.instance)  # the seed did not bound the candidates
    with pytest.raises(OcsplanError, match="modelling error"):
        run.solve(_Fixed("optimal"), "cpsat")
    plan = run.solve(_Fixed("feasible"), "cpsat")  # merely feasible: the seed wins
    assert plan.objective_s == run.seed.objective_s and plan.status == "feasible"
