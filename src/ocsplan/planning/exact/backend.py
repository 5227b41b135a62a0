"""What a backend returns, and the objective scaling both backends use.

Statuses stay distinct: ``optimal`` (proven), ``feasible`` (a solution, no
proof), ``infeasible`` (proven: no solution), ``unknown`` (no solution, no proof).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from .linear import Assignment
from .model import Formulation

__all__ = ["STATUSES", "Backend", "Outcome", "objective_scale"]

STATUSES = ("optimal", "feasible", "infeasible", "unknown")


@dataclass(frozen=True)
class Outcome:
    """A backend's answer: status, the solution (if any), its model objective and the
    proven lower bound, both in seconds."""

    status: str
    values: Assignment | None
    objective: float | None
    bound: float | None
    solver: str


class Backend(Protocol):
    name: str

    def solve(self, form: Formulation, hint: Assignment | None) -> Outcome: ...


def objective_scale(form: Formulation, units: float) -> float:
    """Factor that maps seconds to solver units so that the reference objective (the
    heuristic's, or the sum of every demand's cheapest choice) becomes ``units``."""
    cand = form.cand
    ref = cand.upper_bound
    if ref is None or ref <= 0:
        ref = sum(min((c.cost for c in dc.choices), default=0.0) for dc in cand.demands)
    if ref <= 0:
        ref = 1e-6
    return units / ref
