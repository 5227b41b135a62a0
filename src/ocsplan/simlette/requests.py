"""What a plan simulation or sweep is asked for, beyond the plan, fabric and options: the
arguments every plan kind's simulator and sweeper takes, written once (shared-host and stacked
plans each have one, :data:`ocsplan.simlette.simulate.SIMULATORS` and
:data:`ocsplan.simlette.sweep.SWEEPERS`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..cost import phase_time
from ..plan import DemandPlan, Plan
from ..schedules import ClosedForm
from .circuitmap import Realization
from .report import SweepRow

if TYPE_CHECKING:
    from ..executor import Executor

__all__ = ["Selector", "SimRequest", "SweepRequest"]

Selector = Callable[[int, int, int], bool]
"""``only(mesh, axis, demand)``: whether a demand is simulated."""


@dataclass(frozen=True)
class SimRequest:
    """A plan simulation: the circuits (a realization of the plan; None: realized with ``placement``),
    which demands (``only``), and a payload replacing theirs (the closed form re-evaluated for it)."""

    circuits: Realization | None = None
    only: Selector | None = None
    payload: int | None = None
    placement: str = "contiguous"

    def selects(self, mesh: int, axis: int, demand: int) -> bool:
        return self.only is None or self.only(mesh, axis, demand)

    def priced(self, plan: Plan, d: DemandPlan, form: Callable[[], ClosedForm]) -> tuple[int, float]:
        """The payload demand ``d`` runs with and its closed-form time: its own, or ``payload`` with
        the closed form ``form()`` re-evaluated for it (Eq. 1 at the plan's lambda and R)."""
        if self.payload is None:
            return d.payload_bytes, d.time_s
        f = form()
        return self.payload, phase_time(f.h, f.volume(self.payload), d.multiplicity, plan.latency_s, plan.link_Bps)


@dataclass(frozen=True)
class SweepRequest:
    """A sweep: every selected demand x schedule (``plan``, ``all`` or a list) x payload, here or on
    ``executor``; ``on_row`` sees each row as it finishes."""

    payloads: Sequence[int]
    schedules: str = "plan"
    only: Selector | None = None
    placement: str = "contiguous"
    executor: Executor | None = None
    on_row: Callable[[SweepRow], None] | None = None

    def selects(self, mesh: int, axis: int, demand: int) -> bool:
        return self.only is None or self.only(mesh, axis, demand)
