"""Plans: the planners' shared result type, its assembly and its JSON form (DESIGN §5).

:mod:`.types` holds the decisions and the plan, :func:`assemble` turns a
planner's decision into a plan, :mod:`.codec` reads and writes the two schemas
(:mod:`.v1` shared-host, :mod:`.v2` stacked). The checker that re-derives every
number of a plan is :func:`ocsplan.planning.check.check_plan`, a layer above.
"""

from __future__ import annotations

from .assemble import assemble
from .codec import dumps_plan, load_plan, loads_plan, plan_from_dict, plan_to_dict, write_plan
from .types import (
    KINDS,
    RANKS,
    SCHEMA,
    SCHEMA_STACKED,
    SEED_NOTE,
    SHARED_HOST,
    STACKED,
    AxisPlan,
    CirculantPlan,
    Decision,
    DemandDecision,
    DemandPlan,
    GeneratorPlan,
    Groups,
    MeshPlan,
    Plan,
    Resilience,
    check_fold,
    check_groups,
    demand_topology,
    local_topology,
    plan_kind,
)

__all__ = [
    "KINDS",
    "RANKS",
    "SCHEMA",
    "SCHEMA_STACKED",
    "SEED_NOTE",
    "SHARED_HOST",
    "STACKED",
    "AxisPlan",
    "CirculantPlan",
    "Decision",
    "DemandDecision",
    "DemandPlan",
    "GeneratorPlan",
    "Groups",
    "MeshPlan",
    "Plan",
    "Resilience",
    "assemble",
    "check_fold",
    "check_groups",
    "demand_topology",
    "dumps_plan",
    "load_plan",
    "loads_plan",
    "local_topology",
    "plan_from_dict",
    "plan_kind",
    "plan_to_dict",
    "write_plan",
]
