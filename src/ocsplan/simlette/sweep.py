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
from dataclasses import fields
from typing import TYPE_CHECKING

from ..errors import InstanceError
from ..plan import SHARED_HOST, STACKED, Plan, plan_kind
from ..plotting import pyplot
from ..realization.fabrics import FabricSpec
from .report import SweepRow
from .requests import Selector, SweepRequest
from .runs import SimOptions
from .shared_host import sweep_shared_host
from .stacked import sweep_stacked

if TYPE_CHECKING:
    from ..executor import Executor

__all__ = ["SWEEPERS", "PlanSweeper", "SweepRow", "payload_range", "plot_png", "sweep", "sweep_csv"]


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


PlanSweeper = Callable[[Plan, FabricSpec, SimOptions, SweepRequest], list[SweepRow]]
"""Sweep one kind of plan (what :func:`sweep` asks, as a request)."""

SWEEPERS: dict[str, PlanSweeper] = {
    SHARED_HOST: sweep_shared_host,
    STACKED: sweep_stacked,
}


def sweep(
    plan: Plan,
    spec: FabricSpec,
    options: SimOptions,
    payloads: Sequence[int],
    schedules: str = "plan",
    only: Selector | None = None,
    placement: str = "contiguous",
    executor: Executor | None = None,
    on_row: Callable[[SweepRow], None] | None = None,
) -> list[SweepRow]:
    """Simulate every selected demand x schedule x payload, here or on ``executor``.

    Rows come back in demand x schedule x payload order; ``on_row`` sees each as it
    finishes. On an executor a failing point runs once more, then the sweep fails.
    """
    options.check()
    return SWEEPERS[plan_kind(plan)](plan, spec, options,
                                     SweepRequest(payloads, schedules, only, placement, executor, on_row))


def sweep_csv(rows: Sequence[SweepRow]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    names = [f.name for f in fields(SweepRow)]
    writer.writerow(names)
    for row in rows:
        values = (getattr(row, n) for n in names)
        writer.writerow([repr(v) if isinstance(v, float) else v for v in values])
    return out.getvalue()


def plot_png(rows: Sequence[SweepRow], title: str = "") -> bytes:
    """Completion time against payload: simulated (solid) and Eq. 1 on the fabric (dashed), as PNG."""
    plt = pyplot()

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
    return buffer.getvalue()
