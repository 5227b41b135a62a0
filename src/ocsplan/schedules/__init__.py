"""The collective schedule catalogue (DESIGN §3): registry plus verifier."""

from __future__ import annotations

from . import allgather, allreduce, alltoall  # noqa: F401  (registration)
from .base import (
    AUTO_EXCLUDED,
    COLLECTIVES,
    SCHEDULES,
    ClosedForm,
    Item,
    Program,
    ProgramCache,
    Schedule,
    Transfer,
    closed_form,
    link_pattern,
    program,
    schedules_for,
)
from .verify import IdealCost, LinkLoads, ScheduleError, ideal_cost, ideal_time, link_loads, loads_cost, verify

__all__ = [
    "AUTO_EXCLUDED",
    "COLLECTIVES",
    "SCHEDULES",
    "ClosedForm",
    "IdealCost",
    "Item",
    "LinkLoads",
    "Program",
    "ProgramCache",
    "Schedule",
    "ScheduleError",
    "Transfer",
    "closed_form",
    "ideal_cost",
    "ideal_time",
    "link_loads",
    "link_pattern",
    "loads_cost",
    "program",
    "schedules_for",
    "verify",
]
