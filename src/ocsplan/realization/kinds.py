"""The kinds of plan the stages dispatch on (realize, validate, simulate, sweep, the CLI's tables).

A shared-host plan (schema ``ocsplan.plan/1``) joins ranks by Cayley generators
of (Z2)^n; a stacked plan (``ocsplan.plan/2``, paper App. A.6) by a circulant per
axis. Each stage keeps a table keyed by :func:`plan_kind`, with the variants in
modules of their own that import the shared pieces, never the reverse.
"""

from __future__ import annotations

from ..plan import Plan

__all__ = ["KINDS", "SHARED_HOST", "STACKED", "plan_kind"]

SHARED_HOST = "shared-host"
STACKED = "stacked"
KINDS = (SHARED_HOST, STACKED)


def plan_kind(plan: Plan) -> str:
    """``"shared-host"`` or ``"stacked"``: the plan's construction."""
    return plan.construction
