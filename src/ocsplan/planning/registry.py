"""Planner strategies keyed by name: ``solve(instance, method)`` is the one entry point."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..errors import OcsplanError
from ..instance import Instance, require_shared_host
from ..plan import Plan

__all__ = ["PLANNERS", "SHAPE_FREE", "solve"]

Planner = Callable[..., Plan]



def _heuristic(instance: Instance, irregular: bool = True, time_limit: float | None = None, **_: Any) -> Plan:
    from .heuristic import plan_heuristic  # numpy too is imported only when a planner runs

    deadline = None if time_limit is None else time.perf_counter() + time_limit  # anytime: best plan so far
    return plan_heuristic(instance, deadline=deadline, irregular=irregular)


def _cpsat(instance: Instance, **options: Any) -> Plan:
    from .exact import plan_cpsat  # OR-Tools is imported only when an exact method runs

    return plan_cpsat(instance, **options)


def _milp(instance: Instance, **options: Any) -> Plan:
    from .exact import plan_milp  # PuLP and HiGHS likewise

    return plan_milp(instance, **options)


# the exact planners take the options time_limit, workers and export; the heuristic time_limit;
# all three take irregular
PLANNERS: dict[str, Planner] = {
    "heuristic": _heuristic,
    "cpsat": _cpsat,
    "milp": _milp,
}


def _stacked(instance: Instance, **options: Any) -> Plan:
    from .stacked import plan_stacked  # stacked-link allocation (issue 11): option seed

    return plan_stacked(instance, **options)


PLANNERS["stacked"] = _stacked

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
