"""Decode on a fabric (paper §5.4, §6, App. B.4, B.6): demand -> plan -> price.

The stage above the workload model and the network model: a step's
collective demand (``ocsplan.workload``) is planned (``ocsplan.planning``,
all-OCS) and priced on the fabric analytically or by Simlette
(``ocsplan.simlette``); ``pareto`` sweeps the best split per cell.
``technology`` keys the pricing by the fabric's technology, ``cache`` keeps
the plans (in memory, and on disk through the files layer).
"""

from __future__ import annotations

from .cache import PlanCache
from .pareto import CSV_COLUMNS, Cell, cells_csv, pareto_sweep, png_bytes
from .pricing import NATIVE, NETWORKS, Priced, price_native, price_planned
from .ranking import SplitChoice, best_step, time_splits
from .step import decode_step, plan_for
from .technology import PRICERS, StepDemand, Technology

__all__ = [
    "CSV_COLUMNS",
    "NATIVE",
    "NETWORKS",
    "PRICERS",
    "Cell",
    "PlanCache",
    "Priced",
    "SplitChoice",
    "StepDemand",
    "Technology",
    "best_step",
    "cells_csv",
    "decode_step",
    "pareto_sweep",
    "plan_for",
    "png_bytes",
    "price_native",
    "price_planned",
    "time_splits",
]
