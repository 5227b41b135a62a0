"""Planner strategies keyed by name: ``solve(instance, method)`` is the one entry point."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import OcsplanError
from ..instance import Instance, require_shared_host
from ..plan import Plan
from .exact import plan_cpsat, plan_milp
from .heuristic import plan_heuristic
from .stacked import plan_stacked

__all__ = ["PLANNERS", "SHAPE_FREE", "solve"]

Planner = Callable[..., Plan]

PLANNERS: dict[str, Planner] = {
    "heuristic": lambda instance, **_: plan_heuristic(instance),
}

# -- exact planners (issue 3): options time_limit, workers, export -----------------------
PLANNERS["cpsat"] = lambda instance, **options: plan_cpsat(instance, **options)
PLANNERS["milp"] = lambda instance, **options: plan_milp(instance, **options)

# -- stacked-link allocation (issue 11): options seed ------------------------------------
PLANNERS["stacked"] = lambda instance, **options: plan_stacked(instance, **options)

# planners that take any world and axis sizes (the others need powers of two)
SHAPE_FREE = frozenset({"stacked"})


def solve(instance: Instance, method: str = "heuristic", **options: Any) -> Plan:
    """Plan ``instance`` with the named method (heuristic, and exact backends when present)."""
    planner = PLANNERS.get(method)
    if planner is None:
        raise OcsplanError(f"unknown method {method!r} (known: {', '.join(sorted(PLANNERS))})")
    if method not in SHAPE_FREE:
        require_shared_host(instance)
    return planner(instance, **options)
