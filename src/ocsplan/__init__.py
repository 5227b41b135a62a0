"""ocsplan: plan workload-static optical circuit switched scale-up fabrics for LLM decode.

Layers, bottom to top; a module imports only from its own layer or a lower one
(``tests/test_layers.py`` reads this list and walks every import):

  L0  errors units limits gcpause  one error base, units and their parser, documented limits;
                               the garbage collector's pause
  L1  files fields schemas plotting  the only file access: bounded reads, atomic writes; typed field readers;
                               JSON Schemas; matplotlib's one backend choice (Agg)
  L2  cayley circulant executor  graphs of Z_2^n and Z_N (one shortest-path routine); local/Dask jobs
  L3  schedules                collective schedules: executable phases, validity, closed forms, verifier
  L4  instance cost plan       instance files, Eq. 1, the plan's types, assembly and JSON codecs
  L5  planning                 instance -> plan: search space, heuristic, exact models, baselines, checkers
  L6  realization              plan -> circuits: fabric files, wiring, colouring, Clos routing, validator
  L7  workload                 model -> demand, compute, memory, power (no network model)
  L8  simlette                 circuits -> simulated times (SimPy; OCS, EPS, hybrid fabrics)
  L9  studies                  many instances -> a study: families, results cache, runner, summary
  L10 decode                   demand -> plan -> price (analytical or Simlette), Pareto sweeps
  L11 deploy report            MSCCL export and its checker, OCS files, faults, repair; HTML report
  L12 cli                      thin typer commands: read, call one stage, print
This module and ``__main__`` are facades over the layers and exempt.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .errors import InfeasibleError, InstanceError, OcsplanError, PlanError, RealizationError, SolverUnavailable

if TYPE_CHECKING:
    from .cayley import Topology
    from .instance import Axis, Budget, Demand, Instance, Mesh, load_instance, loads_instance
    from .plan import Plan, load_plan, write_plan
    from .planning.check import check_plan
    from .planning.registry import PLANNERS, solve
    from .schedules import SCHEDULES

# The library's names, imported on first use (PEP 562): `import ocsplan.cli` and
# `ocsplan --help` do not pay for the planner, the schedules and the Cayley graphs.
_LAZY = {
    "Topology": "cayley", "Axis": "instance", "Budget": "instance", "Demand": "instance", "Instance": "instance",
    "Mesh": "instance", "load_instance": "instance", "loads_instance": "instance", "Plan": "plan",
    "load_plan": "plan", "write_plan": "plan", "check_plan": "planning.check", "PLANNERS": "planning.registry",
    "solve": "planning.registry", "SCHEDULES": "schedules",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ocsplan' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


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
