"""Paper Eq. 1, T = h * lambda + v / (p * R), in one place: :func:`phase_time`.

Planners (plan assembly, the exact candidates' prices, the ``schedules``
table) call it. Two places compute the same quantity on purpose from other
inputs: ``schedules.verify.ideal_time`` measures h and v on an executable
program (the conformance check), and the heuristic splits T into its latency
and bandwidth parts to rank options.
"""

from __future__ import annotations

from .cayley import Topology
from .instance import Budget
from .schedules import closed_form

__all__ = ["demand_cost", "phase_time"]


def phase_time(h: int, volume: float, multiplicity: int, latency: float, rate: float) -> float:
    """Completion time of h phases moving ``volume`` bytes over the busiest edge."""
    if multiplicity < 1:
        raise ValueError(f"multiplicity must be >= 1, got {multiplicity}")
    return h * latency + volume / (multiplicity * rate)


def demand_cost(
    schedule: str, topology: Topology, payload: int, multiplicity: int, budget: Budget
) -> tuple[int, float, float]:
    """(h, v in bytes, T in seconds) of one collective call."""
    form = closed_form(schedule, topology)
    volume = form.volume(payload)
    return form.h, volume, phase_time(form.h, volume, multiplicity, budget.latency, budget.link)
