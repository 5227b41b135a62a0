"""Completion time against buffer size (payload sigma) and schedule, with CSV and PNG writers.

For each selected demand of a plan, each schedule (the plan's, or every
schedule of the collective valid on the demand's topology) and each payload,
one simulation on the fabric; rows carry the closed form (plan lambda and
multiplicity), Eq. 1 on the fabric and the simulated time.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING

from ..cayley import expand
from ..cost import phase_time
from ..errors import InstanceError, OcsplanError
from ..files import write_atomic
from ..plan import Plan, demand_topology
from ..realization.fabrics import FabricSpec
from ..schedules import SCHEDULES, closed_form
from .circuitmap import check_fit
from .setup import prepare
from .simulate import SimOptions, network_factory, simulate_workload

if TYPE_CHECKING:
    from ..executor import Executor, Failure

__all__ = ["SweepRow", "payload_range", "sweep", "sweep_csv", "write_csv", "write_plot"]


@dataclass(frozen=True)
class SweepRow:
    demand: str
    schedule: str
    payload_bytes: int
    multiplicity: int
    phases: int
    closed_form_s: float
    analytical_s: float
    simulated_s: float
    ratio: float
    credit_stall_s: float


def payload_range(low: int, high: int) -> list[int]:
    """Powers of two times ``low`` up to ``high`` (the paper's 1 KiB .. 1 MiB axes)."""
    if low <= 0 or high < low:
        raise InstanceError("--payloads", "", f"need 0 < low <= high, got {low} and {high}")
    out = []
    size = low
    while size <= high:
        out.append(size)
        size *= 2
    return out


def _schedules(plan: Plan, m: int, i: int, k: int, which: str) -> list[str]:
    axis = plan.meshes[m].axes[i]
    d = axis.demands[k]
    if which == "plan":
        return [d.schedule]
    topo = demand_topology(d.groups, axis.bits, d.fold)
    if which == "all":
        return [s.name for s in SCHEDULES.values()
                if s.collective == d.collective and s.name != "ring" and s.valid(topo)]
    names = [x.strip() for x in which.split(",") if x.strip()]
    for name in names:
        sched = SCHEDULES.get(name)
        if sched is None or sched.collective != d.collective or name == "ring":
            raise InstanceError("--schedules", "",
                                f"{name!r} cannot run {d.collective} in the simulator")
        if not sched.valid(topo):
            raise InstanceError("--schedules", "", f"{name} is not valid on {topo.name}")
    return names


@dataclass(frozen=True)
class _Point:
    """One simulation of a sweep: demand (mesh, axis, k) x schedule x payload."""

    plan: Plan
    spec: FabricSpec
    options: SimOptions
    placement: str
    mesh: int
    axis: int
    demand: int
    schedule: str
    payload: int


def _run_point(point: _Point) -> SweepRow:
    """Simulate one sweep point; the set-up (realization, wiring, workloads) comes from this
    process's cache, so the points of one plan and fabric pay it once per process."""
    plan, spec, options = point.plan, point.spec, point.options
    setup = prepare(plan, spec, point.placement)
    cmap = routes = None
    if options.mode != "ideal":
        check_fit(plan, spec)
        if setup.technology == "ocs":
            cmap = setup.circuits()
        elif setup.technology == "hybrid":
            routes = setup.routes()
    mult = {g.mask: g.multiplicity for g in plan.generators if g.kind != "ring"}
    factory = network_factory(spec, options, ports=plan.ports, circuits=cmap, routes=routes,
                              ideal=(plan.latency_s, plan.link_Bps, mult), setup=setup)
    rate = plan.link_Bps if options.mode == "ideal" else spec.link
    mesh = plan.meshes[point.mesh]
    axis = mesh.axes[point.axis]
    d = axis.demands[point.demand]
    name, sigma = point.schedule, point.payload
    topo = demand_topology(d.groups, axis.bits, d.fold)
    used = [expand(g, sorted(axis.bits)) for g in SCHEDULES[name].uses(topo)]
    p = min((mult[g] for g in used), default=1)
    form = closed_form(name, topo)
    workload = setup.workload(point.mesh, point.axis, point.demand, options.order, sigma, name)
    result = simulate_workload(
        workload, factory, mode=options.mode, rate=rate, multiplicity=p,
        payload=sigma, collective=d.collective, lookahead=options.lookahead,
        barrier=options.barrier)
    closed = phase_time(form.h, form.volume(sigma), p, plan.latency_s, plan.link_Bps)
    return SweepRow(
        demand=f"{mesh.name}[{point.axis}].{point.demand} {d.collective}", schedule=name,
        payload_bytes=sigma, multiplicity=p, phases=workload.phases,
        closed_form_s=closed, analytical_s=result.analytical_s,
        simulated_s=result.simulated_s, ratio=result.ratio,
        credit_stall_s=result.credit_stall_s,
    )


def sweep(
    plan: Plan,
    spec: FabricSpec,
    options: SimOptions,
    payloads: Sequence[int],
    schedules: str = "plan",
    only: Callable[[int, int, int], bool] | None = None,
    placement: str = "contiguous",
    executor: Executor | None = None,
    on_row: Callable[[SweepRow], None] | None = None,
) -> list[SweepRow]:
    """Simulate every selected demand x schedule x payload, here or on ``executor``.

    Rows come back in demand x schedule x payload order; ``on_row`` sees each as it
    finishes. On an executor a failing point runs once more, then the sweep fails.
    """
    options.check()
    if plan.stacked:
        from .stacked import sweep_stacked

        return sweep_stacked(plan, spec, options, payloads, schedules, simulate_workload, network_factory, only)
    if options.mode != "ideal":
        check_fit(plan, spec)
    points = []
    for m, mesh in enumerate(plan.meshes):
        for i, axis in enumerate(mesh.axes):
            if axis.ring:
                continue
            for k, _ in enumerate(axis.demands):
                if only is not None and not only(m, i, k):
                    continue
                for name in _schedules(plan, m, i, k, schedules):
                    for sigma in payloads:
                        points.append(_Point(plan, spec, options, placement, m, i, k, name, sigma))
    if executor is None:  # here, in order; an error stops the sweep as it is
        done = []
        for point in points:
            done.append(_run_point(point))
            if on_row is not None:
                on_row(done[-1])
        return done
    from ..executor import Failure

    rows: list[SweepRow | None] = [None] * len(points)
    failed: list[str] = []

    def record(index: int, outcome: SweepRow | Failure) -> None:
        if isinstance(outcome, Failure):
            p = points[index]
            failed.append(f"{plan.meshes[p.mesh].name}[{p.axis}].{p.demand} {p.schedule} "
                          f"{p.payload} B: {outcome.error}")
            return
        rows[index] = outcome
        if on_row is not None:
            on_row(outcome)

    executor.run(_run_point, points, record)
    if failed:
        raise OcsplanError(f"{len(failed)} sweep point(s) failed; first: {failed[0]}")
    return [row for row in rows if row is not None]


def sweep_csv(rows: Sequence[SweepRow]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    names = [f.name for f in fields(SweepRow)]
    writer.writerow(names)
    for row in rows:
        values = (getattr(row, n) for n in names)
        writer.writerow([repr(v) if isinstance(v, float) else v for v in values])
    return out.getvalue()


def write_plot(rows: Sequence[SweepRow], path: str | Path, title: str = "") -> None:
    """Completion time against payload: simulated (solid) and Eq. 1 on the fabric (dashed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    keys = list(dict.fromkeys((r.demand, r.schedule) for r in rows))
    for n, key in enumerate(keys):
        sel = [r for r in rows if (r.demand, r.schedule) == key]
        xs = [r.payload_bytes for r in sel]
        color = f"C{n % 10}"
        label = key[1] if len({r.demand for r in rows}) == 1 else f"{key[0]}: {key[1]}"
        ax.plot(xs, [r.simulated_s * 1e6 for r in sel], "o-", color=color,
                label=f"{label} (simulated)")
        ax.plot(xs, [r.analytical_s * 1e6 for r in sel], "--", color=color, alpha=0.7)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("buffer size sigma (bytes)")
    ax.set_ylabel("completion time (us)")
    ax.set_title(title or "Simlette: simulated (solid) vs analytical (dashed)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=120, metadata={"Software": None})
    plt.close(fig)
    write_atomic(path, buffer.getvalue())


def write_csv(rows: Sequence[SweepRow], path: str | Path) -> None:
    write_atomic(path, sweep_csv(rows))
