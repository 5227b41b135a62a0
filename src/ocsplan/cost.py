"""The one evaluator of the cost model: T = h * lambda + v / (p * R) (paper Eq. 1)."""

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
