"""A lower bound on the time of every plan of an instance, priced by Eq. 1 or on its circuits.

Within one mesh the axes' blocks are disjoint, so the generators their demands run on
are disjoint too (an axis's options use its unit masks or the masks of its profile, all
inside its block), while every cube unit outside them still holds a port: the active
axes of a mesh hold at most ``L - (n - their bits)`` ports between them, and a small
dynamic programme splits them. With P ports an axis's demand costs at least

- the latency term of its fastest option whose generator set fits in P (one hop
  latency per phase, as Eq. 1 and the circuits network both charge), plus
- the bytes its busiest rank must send, (M - 1) / M of the payload whatever the
  schedule, spread over the P circuits each rank has for the axis.

The volume term holds whatever multiplicity each generator gets, so it bounds the
price on the plan's real circuits too (where a generator shared at a higher level
carries more than the set's least level allows for in Eq. 1). Meshes share generators,
so each mesh is bounded on its own and the bounds add up. A ring (two ports per
pseudo-generator, single-mesh instances only) lets every axis hold all L ports.

A sweep skips the instances whose bound already loses (:mod:`ocsplan.decode.ranking`).
"""

from __future__ import annotations

import math

from ..instance import Instance
from .context import Axis, Context
from .space import RING, shape_folds

__all__ = ["objective_bound"]

Latencies = list[list[tuple[float, int]]]  # per demand: (latency s, generators of its set) per option


def _latencies(ctx: Context, ax: Axis) -> Latencies:
    """Per demand of the axis: every option's latency term over every shape it may take, with
    the number of generators of the set it runs on."""
    out: Latencies = [[] for _ in ax.demands]
    for shape in ax.shapes + ax.irregular:
        profile = ax.bits + shape_folds(shape)
        for d, table in enumerate(ctx.options(ax, shape)):
            out[d].extend((lat, profile if on_profile else ax.bits) for lat, _, on_profile in table)
    return out


def _least_volume(ax: Axis, rate: float) -> float:
    """Sum over the axis's demands of w x the bytes the busiest rank must send / R, any schedule:
    of M ranks, every rank receives at least (M - 1) / M of the payload (all-gather: the others'
    pieces; all-to-all: their blocks for it; all-reduce: a value per element that depends on the
    others' inputs), so some rank sends that much."""
    size = 1 << ax.bits
    return sum(d.weight * d.payload * (size - 1) / size / rate for d in ax.demands)


def _axis_cost(latencies: Latencies, volume: float, ports: int) -> float:
    """The axis's demands with ``ports`` circuits for its generators: each at its least latency
    among the options whose set fits, and the busiest rank's bytes spread over all of them."""
    total = volume / ports if ports else 0.0
    for opts in latencies:
        total += min((lat for lat, k in opts if k <= ports), default=math.inf)
    return total


def objective_bound(instance: Instance) -> float:
    """A lower bound on sum w*T (seconds) of every plan of ``instance`` in the planner's space."""
    ctx = Context(instance, irregular=True)
    ports, n = instance.budget.ports, instance.n
    if any(RING in ax.shapes for ax in ctx.axes):  # no port budget: every axis may hold all L
        return sum(_axis_cost(_latencies(ctx, ax), _least_volume(ax, instance.budget.link), ports)
                   for ax in ctx.axes)
    total = 0.0
    for m in range(len(instance.meshes)):
        axes = [ax for ax in ctx.axes if ax.mesh == m]
        if not axes:
            continue
        budget = ports - (n - sum(ax.bits for ax in axes))
        # least[b]: the axes so far within b ports (each at least one port per unit of its block)
        least = [0.0] * (budget + 1)
        for ax in axes:
            latencies, volume = _latencies(ctx, ax), _least_volume(ax, instance.budget.link)
            cost = [_axis_cost(latencies, volume, p) if p >= ax.bits else math.inf for p in range(budget + 1)]
            least = [min((least[b - p] + cost[p] for p in range(ax.bits, b + 1)), default=math.inf)
                     for b in range(budget + 1)]
        total += least[budget]
    return total
