"""What a study found: per-row gaps and flags against the proven optimum, per-method
summary statistics and the gap plot. A study reporter: it builds tables and plots, the CLI prints them."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..plotting import pyplot
from .results import TOLERANCE, Result, table_rows

__all__ = ["Summary", "gap_figure", "gap_image", "summarize"]










@dataclass(frozen=True)
class Summary:
    """Per method: counts, gaps to proven optima, solve-time percentiles."""

    method: str
    runs: int
    optimal: int
    feasible: int
    failed: int
    compared: int  # rows with a proven optimum to compare with
    at_optimum: int
    mean_gap: float | None
    median_gap: float | None
    max_gap: float | None
    time_p50: float
    time_p90: float
    time_max: float


def _percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return math.nan
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def summarize(results: Sequence[Result]) -> list[Summary]:
    rows = table_rows(results)
    out = []
    for method in dict.fromkeys(r.method for r in results):
        mine = [row for row in rows if row["method"] == method]
        gaps = [row["gap"] for row in mine if row["gap"] is not None]
        times = [row["seconds"] for row in mine]
        out.append(
            Summary(
                method=method,
                runs=len(mine),
                optimal=sum(1 for row in mine if row["status"] == "optimal"),
                feasible=sum(1 for row in mine if row["status"] == "feasible"),
                failed=sum(1 for row in mine if row["status"] in ("error", "infeasible", "unknown")),
                compared=len(gaps),
                at_optimum=sum(1 for g in gaps if g <= TOLERANCE),
                mean_gap=statistics.fmean(gaps) if gaps else None,
                median_gap=statistics.median(gaps) if gaps else None,
                max_gap=max(gaps) if gaps else None,
                time_p50=_percentile(times, 0.5),
                time_p90=_percentile(times, 0.9),
                time_max=max(times) if times else math.nan,
            )
        )
    return out


def gap_figure(results: Sequence[Result]) -> Any:
    """A matplotlib figure: each method's gap to the proven optimum (%) against n
    (log2 world size), one scatter and one line of means per method, both in the legend.

    Gaps are at least 0 and so is the axis: an objective below a proven optimum (beyond
    TOLERANCE: the exact solver stopped within its own optimality tolerance) is drawn at 0,
    and a note under the plot counts those points. Tick labels are plain numbers."""
    plt = pyplot()
    from matplotlib.ticker import FuncFormatter

    rows = [row for row in table_rows(results) if row["gap"] is not None]
    methods = list(dict.fromkeys(row["method"] for row in rows))
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=120)
    for k, method in enumerate(methods):
        mine = [row for row in rows if row["method"] == method]
        offset = (k - (len(methods) - 1) / 2) * 0.12
        xs = [row["n"] + offset + 0.01 * (int(row["hash"][:4], 16) % 7 - 3) for row in mine]
        ys = [100 * row["gap"] for row in mine]
        ax.scatter(xs, ys, s=12, alpha=0.6, label=method, clip_on=False)  # a 0 % point sits on the axis
        by_n: dict[int, list[float]] = {}
        for row in mine:
            by_n.setdefault(row["n"], []).append(100 * row["gap"])
        ns = sorted(by_n)
        ax.plot(
            [n + offset for n in ns],
            [statistics.fmean(by_n[n]) for n in ns],
            marker="_",
            linewidth=1,
            color=ax.collections[-1].get_facecolor()[0],
            label=f"{method} (mean per n)",
        )
    ax.set_xlabel("instance size n (world = 2^n accelerators)")
    ax.set_ylabel("gap to proven optimum (%)")
    ax.set_yscale("symlog", linthresh=0.1)
    ax.set_ylim(bottom=0.0)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
    sizes = sorted({row["n"] for row in rows})
    if sizes:  # n is an integer: a tick at each size studied
        ax.set_xticks(sizes, [str(n) for n in sizes])
        ax.set_xlim(sizes[0] - 0.5, sizes[-1] + 0.5)
    ax.grid(True, alpha=0.3)
    ax.legend(title="method")
    ax.set_title("optimality gap against instance size")
    clamped = sum(1 for row in rows if row["below_optimum"])
    if clamped:
        fig.text(0.01, 0.01, f"note: {clamped} point(s) below a proven optimum drawn at 0 "
                 "(the optimum's row is flagged in the CSV: claims optimal but ... is better)", fontsize=7)
    fig.tight_layout(rect=(0, 0.04 if clamped else 0, 1, 1))
    return fig


def gap_image(results: Sequence[Result], fmt: str) -> bytes:
    """:func:`gap_figure` as ``fmt`` (png, pdf or svg) bytes; an SVG or PDF carries no date, so the
    same results give the same bytes."""
    import io

    import matplotlib.pyplot as plt

    fig = gap_figure(results)
    try:
        buffer = io.BytesIO()
        dated = {"svg": {"Date": None}, "pdf": {"CreationDate": None}}
        with plt.rc_context({"svg.hashsalt": "ocsplan"}):
            fig.savefig(buffer, format=fmt, metadata=dated.get(fmt))
        return buffer.getvalue()
    finally:
        plt.close(fig)
