"""A lower bound on the objective of every plan of an instance, cheap enough to rank by.

Each demand alone at its cheapest option over every shape its axis may take (block
folds, irregular folds, the ring) and at the highest multiplicity the ports allow:
a generator's level is at most ``1 + (L - base)`` for its weight 1, the base being
every cube unit's port (n ports; L when a ring may replace units), so no set's
effective multiplicity passes it. Every plan of the planner's space costs at least
this sum; a sweep skips the instances whose bound already loses (the Pareto sweep,
:func:`ocsplan.decode.pareto.pareto_sweep`).
"""

from __future__ import annotations

from ..instance import Instance
from .context import Context
from .space import RING

__all__ = ["objective_bound"]


def objective_bound(instance: Instance) -> float:
    """A lower bound on sum w*T (seconds) of every plan of ``instance`` in the planner's space."""
    ctx = Context(instance, irregular=True)
    ring = any(RING in ax.shapes for ax in ctx.axes)
    ceiling = instance.budget.ports if ring else instance.budget.ports - instance.n + 1
    total = 0.0
    for ax in ctx.axes:
        tables = [ctx.options(ax, shape) for shape in ax.shapes + ax.irregular]
        for d in range(len(ax.demands)):
            total += min(lat + vol / ceiling for table in tables for lat, vol, _ in table[d])
    return total
