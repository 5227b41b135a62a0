"""Planner strategies keyed by name: ``solve(instance, method)`` is the one entry point."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import OcsplanError

if TYPE_CHECKING:  # the planner names are read by `ocsplan --help`: no instance or plan module on import
    from ..instance import Instance
    from ..plan import Plan

__all__ = ["EXACT_METHODS", "METHODS", "PLANNERS", "SHAPE_FREE", "MethodInfo", "method_info", "solve"]

Planner = Callable[..., "Plan"]



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


PLANNERS: dict[str, Planner] = {
    "heuristic": _heuristic,
    "cpsat": _cpsat,
    "milp": _milp,
}


def _stacked(instance: Instance, **options: Any) -> Plan:
    from .stacked import plan_stacked  # stacked-link allocation (issue 11): option seed

    return plan_stacked(instance, **options)


PLANNERS["stacked"] = _stacked


@dataclass(frozen=True)
class MethodInfo:
    """What a planner is: exact (proves a bound, reports a gap), shape-free, and the options it takes."""

    exact: bool = False
    shape_free: bool = False  # any world and axis sizes (the others need powers of two)
    options: frozenset[str] = frozenset()


_EXACT_OPTIONS = frozenset({"time_limit", "workers", "export", "irregular"})
METHODS: dict[str, MethodInfo] = {
    "heuristic": MethodInfo(options=frozenset({"time_limit", "irregular"})),
    "cpsat": MethodInfo(exact=True, options=_EXACT_OPTIONS),
    "milp": MethodInfo(exact=True, options=_EXACT_OPTIONS),
    "stacked": MethodInfo(shape_free=True, options=frozenset({"seed"})),
}
EXACT_METHODS = frozenset(name for name, info in METHODS.items() if info.exact)
SHAPE_FREE = frozenset(name for name, info in METHODS.items() if info.shape_free)


def method_info(method: str) -> MethodInfo:
    """The traits of ``method``; a planner registered without traits (a test's) is a plain heuristic."""
    return METHODS.get(method, MethodInfo())


def solve(instance: Instance, method: str = "heuristic", **options: Any) -> Plan:
    """Plan ``instance`` with the named method (heuristic, and exact backends when present)."""
    planner = PLANNERS.get(method)
    if planner is None:
        raise OcsplanError(f"unknown method {method!r} (known: {', '.join(sorted(PLANNERS))})")
    if method not in SHAPE_FREE:
        from ..instance import require_shared_host

        require_shared_host(instance)
    return planner(instance, **options)
