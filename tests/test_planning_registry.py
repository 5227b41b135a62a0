"""The planner registry's traits (exact, shape-free, options) say what each planner does."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from ocsplan.errors import OcsplanError
from ocsplan.instance import load_instance
from ocsplan.planning.registry import EXACT_METHODS, METHODS, PLANNERS, SHAPE_FREE, method_info, solve

ROOT = Path(__file__).resolve().parents[1]
RING = ROOT / "instances" / "paper-table7-ring-single.toml"
STACKED = ROOT / "instances" / "stacked" / "n576-8x72.toml"  # 576 ranks: not a power of two


def test_every_planner_has_traits() -> None:
    assert set(METHODS) == set(PLANNERS)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_exact_methods_prove_a_bound_and_the_others_do_not(method: str) -> None:
    plan = solve(load_instance(RING if method not in SHAPE_FREE else STACKED), method)
    if method in EXACT_METHODS:
        assert plan.bound_s is not None and plan.bound_s <= plan.objective_s * (1 + 1e-9)
    else:
        assert plan.bound_s is None


@pytest.mark.parametrize("method", sorted(METHODS))
def test_shape_free_planners_alone_take_a_world_not_a_power_of_two(method: str) -> None:
    instance = load_instance(STACKED)
    if method in SHAPE_FREE:
        assert solve(instance, method).objective_s > 0
    else:
        with pytest.raises(OcsplanError):
            solve(instance, method)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_declared_options_reach_the_planner(method: str) -> None:
    """Each option a method declares is a parameter of the function that plans with it."""
    if method == "heuristic":  # the registry turns time_limit into plan_heuristic's deadline
        function = PLANNERS["heuristic"]
    else:
        module = "ocsplan.planning.stacked" if method == "stacked" else "ocsplan.planning.exact"
        function = getattr(__import__(module, fromlist=["_"]), f"plan_{method}")
    assert method_info(method).options <= set(inspect.signature(function).parameters)


def test_an_unregistered_planner_is_a_plain_heuristic() -> None:
    assert method_info("no-such-method") == method_info("no-such-method").__class__()
