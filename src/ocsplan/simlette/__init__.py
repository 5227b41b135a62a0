"""Simlette: a flit-level discrete-event simulator of scale-up fabrics (paper §5, App. C; DESIGN §7).

Accelerators with L ports, links of rate R, UALink-style 64 B TL flits packed
into 640 B DL flits with per-port request and response credits; OCS circuits
from a plan (or its realization), single- and two-level EPS with spraying,
and the hybrid. The executable schedules run data-driven on every collective
group of an axis at once, in ``ideal``, ``message`` or ``flit`` mode.
"""

from __future__ import annotations

from .circuitmap import CircuitMap, Link, circuits_from_plan, circuits_from_realization, hybrid_uplinks
from .report import DemandResult, LinkStat, SimReport, analytical, dumps_report, report_to_dict
from .runner import SimulationError
from .runs import FLIT_LIMIT, MODES, SIM_MODES, SimOptions, simulate_workload
from .simulate import SIMULATORS, simulate_plan, simulate_program
from .technology import NETWORK_PIECES, network_factory
from .timing import DL_FLIT, TL_FLIT, Stages, dl_flits
from .traffic import ORDERS, Workload, demand_workload, program_workload

__all__ = [
    "DL_FLIT",
    "FLIT_LIMIT",
    "MODES",
    "NETWORK_PIECES",
    "ORDERS",
    "SIMULATORS",
    "SIM_MODES",
    "TL_FLIT",
    "CircuitMap",
    "DemandResult",
    "Link",
    "LinkStat",
    "SimOptions",
    "SimReport",
    "SimulationError",
    "Stages",
    "Workload",
    "analytical",
    "circuits_from_plan",
    "circuits_from_realization",
    "demand_workload",
    "dl_flits",
    "dumps_report",
    "hybrid_uplinks",
    "network_factory",
    "program_workload",
    "report_to_dict",
    "simulate_plan",
    "simulate_program",
    "simulate_workload",
]
