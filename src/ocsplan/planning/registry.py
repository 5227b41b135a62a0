"""Planner strategies keyed by name: ``solve(instance, method)`` is the one entry point."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import OcsplanError
from ..instance import Instance
from ..plan import Plan
from .exact import plan_cpsat, plan_milp
from .heuristic import plan_heuristic

__all__ = ["PLANNERS", "solve"]

Planner = Callable[..., Plan]

PLANNERS: dict[str, Planner] = {
    "heuristic": lambda instance, **_: plan_heuristic(instance),
}

# -- exact planners (issue 3): options time_limit, workers, export -----------------------
PLANNERS["cpsat"] = lambda instance, **options: plan_cpsat(instance, **options)
PLANNERS["milp"] = lambda instance, **options: plan_milp(instance, **options)


def solve(instance: Instance, method: str = "heuristic", **options: Any) -> Plan:
    """Plan ``instance`` with the named method (heuristic, and exact backends when present)."""
    planner = PLANNERS.get(method)
    if planner is None:
        raise OcsplanError(f"unknown method {method!r} (known: {', '.join(sorted(PLANNERS))})")
    return planner(instance, **options)
