"""ocsplan: plan workload-static optical circuit switched scale-up fabrics for LLM decode."""

from __future__ import annotations

from .cayley import Topology
from .errors import (
    InfeasibleError,
    InstanceError,
    OcsplanError,
    PlanError,
    RealizationError,
    SolverUnavailable,
)
from .instance import Axis, Budget, Demand, Instance, Mesh, load_instance, loads_instance
from .plan import Plan, load_plan, write_plan
from .planning.check import check_plan
from .planning.registry import PLANNERS, solve
from .schedules import SCHEDULES

__all__ = [
    "PLANNERS",
    "SCHEDULES",
    "Axis",
    "Budget",
    "Demand",
    "InfeasibleError",
    "Instance",
    "InstanceError",
    "Mesh",
    "OcsplanError",
    "Plan",
    "PlanError",
    "RealizationError",
    "SolverUnavailable",
    "Topology",
    "check_plan",
    "load_instance",
    "load_plan",
    "loads_instance",
    "solve",
    "write_plan",
]

__version__ = "0.1.0"
