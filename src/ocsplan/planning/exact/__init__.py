"""Exact planners: the heuristic's search space as a CP-SAT model and as a MILP.

Both backends share the candidate enumeration (:mod:`.candidates`), the model
(:mod:`.model`: its :mod:`.variables` and :mod:`.rows` in a :mod:`.linear` model)
and the result type (a :class:`~ocsplan.plan.Plan` whose status is "optimal",
"feasible", "infeasible" or "unknown" and whose ``bound_s`` is the proven lower
bound). The formulations are written out in ``formulations/``.
"""

from __future__ import annotations

from pathlib import Path

from ...instance import Instance
from ...plan import Plan
from .backend import STATUSES, Outcome
from .candidates import Candidates, enumerate_candidates
from .linear import LinearModel
from .model import Formulation, build_formulation
from .solve import ExactRun, plan_exact

__all__ = [
    "STATUSES",
    "Candidates",
    "ExactRun",
    "Formulation",
    "LinearModel",
    "Outcome",
    "build_formulation",
    "enumerate_candidates",
    "plan_cpsat",
    "plan_exact",
    "plan_milp",
]


def plan_cpsat(
    instance: Instance,
    time_limit: float | None = None,
    workers: int | None = None,
    export: str | Path | None = None,
    irregular: bool = True,
) -> Plan:
    """Plan ``instance`` with the CP-SAT model (OR-Tools); ``irregular=False``: block folds only."""
    from .cpsat import CpSatBackend

    return plan_exact(instance, CpSatBackend(time_limit, workers), "cpsat", export, time_limit, irregular)


def plan_milp(
    instance: Instance,
    time_limit: float | None = None,
    workers: int | None = None,
    export: str | Path | None = None,
    solver: str | None = None,
    irregular: bool = True,
) -> Plan:
    """Plan ``instance`` with the MILP (PuLP; HiGHS, or CBC when HiGHS is missing)."""
    from .milp import MilpBackend

    return plan_exact(instance, MilpBackend(time_limit, workers, solver), "milp", export, time_limit, irregular)
