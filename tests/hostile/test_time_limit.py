"""--time-limit bounds the whole exact run, and L = n is answered at once (issue 13)."""

from __future__ import annotations

import math
import time

import pytest

from ocsplan.instance import loads_instance
from ocsplan.planning.check import check_plan
from ocsplan.planning.exact import plan_cpsat, plan_milp
from ocsplan.planning.exact.cpsat import CpSatBackend
from ocsplan.planning.exact.solve import ExactRun
from ocsplan.planning.heuristic import cube_only, plan_heuristic

# four meshes of three axes, n = 10: tens of thousands of partitions (issue 13's hang)
WIDE = """
name = "wide"
[fabric]
world = 1024
ports = {ports}
latency = "0.52us"
link = "400Gb/s"
[[mesh]]
name = "a"
shape = [8, 16, 8]
axes = [{{collective="all-reduce", payload="4KiB"}}, {{collective="all-gather", payload="8KiB"}},
        {{collective="all-to-all", payload="1KiB"}}]
[[mesh]]
name = "b"
shape = [4, 32, 8]
axes = [{{collective="all-reduce", payload="64KiB"}}, {{collective="all-to-all", payload="8KiB"}},
        {{collective="all-gather", payload="1KiB"}}]
[[mesh]]
name = "c"
shape = [16, 8, 8]
axes = [{{collective="all-to-all", payload="4KiB"}}, {{collective="all-reduce", payload="8KiB"}},
        {{collective="all-reduce", payload="1KiB"}}]
[[mesh]]
name = "d"
shape = [2, 64, 8]
axes = [{{collective="all-gather", payload="4KiB"}}, {{collective="all-reduce", payload="2KiB"}},
        {{collective="all-to-all", payload="512B"}}]
"""

SMALL_CUBE = """
name = "cube-only"
[fabric]
world = 64
ports = 6
latency = "0.52us"
link = "400Gb/s"
[[mesh]]
name = "a"
shape = [8, 8]
axes = [{ collective = "all-reduce", payload = "4KiB" }, { collective = "all-gather", payload = "64KiB" }]
[[mesh]]
name = "b"
shape = [4, 16]
axes = [{ collective = "all-to-all", payload = "1KiB", weight = 3 }, { collective = "all-reduce", payload = "32KiB" }]
"""


def test_heuristic_stops_at_a_passed_deadline_with_a_valid_plan() -> None:
    inst = loads_instance(WIDE.format(ports=16), "wide.toml")
    plan = plan_heuristic(inst, deadline=time.perf_counter())
    assert any(note.startswith("time limit") for note in plan.notes)
    assert check_plan(plan, inst) == []


@pytest.mark.parametrize("planner", [plan_cpsat, plan_milp], ids=["cpsat", "milp"])
def test_exact_run_returns_the_seed_when_the_limit_runs_out(planner: object) -> None:
    inst = loads_instance(WIDE.format(ports=16), "wide.toml")
    assert callable(planner)
    plan = planner(inst, time_limit=0.5)
    assert plan.status == "feasible" and plan.bound_s is None
    assert any("time limit reached while building the model" in note for note in plan.notes)
    assert check_plan(plan, inst) == []


def test_only_the_base_cube_fits_is_answered_without_a_solver() -> None:
    inst = loads_instance(WIDE.format(ports=10), "wide.toml")
    assert cube_only(inst)
    plan = plan_cpsat(inst)
    assert plan.status == "optimal" and plan.bound_s == plan.objective_s
    assert check_plan(plan, inst) == []


def test_cube_only_optimum_agrees_with_the_cpsat_model() -> None:
    # an independent route to the optimum: the full CP-SAT model over every partition
    inst = loads_instance(SMALL_CUBE, "cube-only.toml")
    assert cube_only(inst)
    quick = plan_cpsat(inst)
    assert any("without a solver" in note for note in quick.notes)
    full = ExactRun(inst).solve(CpSatBackend(), "cpsat")
    assert full.status == "optimal"
    assert math.isclose(quick.objective_s, full.objective_s, rel_tol=1e-9)


# 2^20 ranks (MAX_WORLD) and 4096 ports (MAX_PORTS): the heuristic's first partition alone
# used to run for minutes (a breadth-first search over 2^20 labels per topology)
MAXIMAL = """
name = "maximal"
[fabric]
world = 1048576
ports = 4096
latency = "0.52us"
link = "400Gb/s"
[[mesh]]
name = "a"
shape = {shape}
axes = [{axes}]
"""
MAXIMAL_CASES = {
    "one-axis": ([1 << 20], ['{collective="all-reduce", payload="4KiB"}']),
    "two-axes": ([1024, 1024], ['{collective="all-reduce", payload="4MiB"}',
                                '{collective="all-to-all", payload="64KiB"}']),
    "twenty-axes": ([2] * 20, ['{collective="all-reduce", payload="4KiB"}', '{collective="all-gather", payload="1KiB"}',
                               '{collective="all-to-all", payload="2KiB"}'] * 6 + ['{}'] * 2),
}


class _Ticks:
    """A clock that moves one second per reading: the deadline passes after a fixed
    number of checks, whatever the machine's speed."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        self.now += 1.0
        return self.now


@pytest.mark.parametrize("checks", [0, 3, 60])
@pytest.mark.parametrize("case", sorted(MAXIMAL_CASES))
def test_heuristic_on_a_maximal_instance_stops_inside_the_search(
    case: str, checks: int, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from ocsplan.planning import heuristic

    shape, axes = MAXIMAL_CASES[case]
    inst = loads_instance(MAXIMAL.format(shape=shape, axes=", ".join(axes)), "maximal.toml")
    assert inst.n == 20 and inst.budget.ports == 4096
    clock = _Ticks()
    monkeypatch.setattr(heuristic, "time", clock)
    plan = plan_heuristic(inst, deadline=float(checks))
    assert any(note.startswith("time limit") for note in plan.notes), plan.notes
    assert check_plan(plan, inst) == []
