"""Planner strategies keyed by name: ``solve(instance, method)`` is the one entry point."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import OcsplanError
from ..instance import Instance
from ..plan import Plan

__all__ = ["PLANNERS", "solve"]

Planner = Callable[..., Plan]



def _heuristic(instance: Instance, **_: Any) -> Plan:
    from .heuristic import plan_heuristic  # numpy too is imported only when a planner runs

    return plan_heuristic(instance)


def _cpsat(instance: Instance, **options: Any) -> Plan:
    from .exact import plan_cpsat  # OR-Tools is imported only when an exact method runs

    return plan_cpsat(instance, **options)


def _milp(instance: Instance, **options: Any) -> Plan:
    from .exact import plan_milp  # PuLP and HiGHS likewise

    return plan_milp(instance, **options)


# the exact planners take the options time_limit, workers and export
PLANNERS: dict[str, Planner] = {
    "heuristic": _heuristic,
    "cpsat": _cpsat,
    "milp": _milp,
}


def solve(instance: Instance, method: str = "heuristic", **options: Any) -> Plan:
    """Plan ``instance`` with the named method (heuristic, and exact backends when present)."""
    planner = PLANNERS.get(method)
    if planner is None:
        raise OcsplanError(f"unknown method {method!r} (known: {', '.join(sorted(PLANNERS))})")
    return planner(instance, **options)
