"""The interactivity-throughput sweep of Figures 4 and 5 (paper §6.1, App. B.6).

Per (model, context, batch, fabric) every valid Helix split that fits in HBM
is timed with the analytical network; the split with the most tokens/s/user
wins the cell. Plans depend on the demand only (batch, split), not on the
context, so one plan serves every context (and, with a plan cache directory,
every rerun). ``network="simlette"`` re-simulates the splits within
``within`` of each cell's best and keeps the best simulated one.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import InstanceError, OcsplanError
from ..executor import Executor, Failure
from ..plotting import pyplot
from ..realization.fabrics import FabricSpec
from ..realization.technologies import fabric_technology
from ..workload.accelerator import Accelerator
from ..workload.demand import COMM, Precision
from ..workload.model import Model
from ..workload.splits import Split, check_world, valid_splits
from ..workload.step import Step
from .cache import PlanCache
from .ranking import Outcome, best_of, resimulated, time_splits

__all__ = ["CSV_COLUMNS", "Cell", "cells_csv", "pareto_sweep", "png_bytes"]


@dataclass(frozen=True)
class Cell:
    """One point of Figure 4: the best split of a (context, batch, fabric)."""

    model: str
    context: int
    batch: int
    fabric: str
    best: Step | None  # None when no split fits in HBM
    timed: int  # splits ranked (fitting in HBM): timed, or shown slower than the best by a lower bound
    infeasible: int  # splits whose batch does not fit


# a worker process gets the cache's directory (a pickled PlanCache starts with empty memory);
# the last field ticks the progress after each split (in this process only, else None)
Task = tuple[Model, Accelerator, FabricSpec, int, tuple[Split, ...], int, tuple[int, ...], Precision, PlanCache,
             str, tuple[int, float], float, Callable[[int], None] | None]


def _task(task: Task) -> list[list[Outcome]]:
    """One (fabric, batch): :func:`~ocsplan.decode.ranking.time_splits` over every split and context."""
    (model, acc, spec, world, splits, batch, contexts, precision, cache, network, (k, accept), slack,
     tick) = task
    return time_splits(model, acc, spec, world, splits, batch, contexts, network=network, precision=precision,
                       cache=cache, tokens_per_step=k, accept_rate=accept, slack=slack, tick=tick)


def pareto_sweep(model: Model, acc: Accelerator, fabrics: Sequence[FabricSpec], contexts: Sequence[int],
                 batches: Sequence[int], world: int, *, precision: Precision = COMM["fp4"],
                 network: str = "analytical", within: float = 0.07, executor: Executor | None = None,
                 cache: Path | None = None, progress: Callable[[int, int], None] | None = None,
                 tokens_per_step: int = 1, accept_rate: float = 1.0, spray: str = "message") -> list[Cell]:
    """Best split per (context, batch, fabric), cells in the order contexts x batches x fabrics.

    ``tokens_per_step`` and ``accept_rate``: speculative decoding as ``decode_step`` prices it.
    ``spray``: Simlette's granularity when it re-times the finalists (``network="simlette"``) on the
    fabrics with packet switches; all-OCS fabrics have none to spray (InstanceError naming ``spray``
    when no fabric has one, or the network is analytical).

    Each (fabric, batch) is one task on ``executor`` (local processes or a Dask cluster;
    default: in this process); its splits are timed best bound first and those whose lower
    bound cannot beat the best so far are skipped (:func:`~ocsplan.decode.ranking.time_splits`):
    the cells are those of timing every split. A task that fails twice stops the sweep.
    ``progress(done, total)`` after each split (on workers: each task) and, with simlette,
    each cell, in points."""
    check_world(world)
    if spray != "message" and (network != "simlette" or not any(fabric_technology(s).packet_switches for s in fabrics)):
        raise InstanceError("spray", "", f"{spray!r} needs network simlette and a fabric with packet switches "
                            f"(network {network}, fabrics {', '.join(s.name for s in fabrics)})")
    splits = valid_splits(model, world)
    ctx = tuple(contexts)
    plans = PlanCache(cache)
    ranking = "analytical" if network == "simlette" else network  # simlette re-times the finalists
    slack = 1 / (1 - within) if network == "simlette" else 1.0
    verify = (tokens_per_step, accept_rate)
    runner = executor or Executor()
    points = len(fabrics) * len(batches) * len(splits)
    total = points + (len(ctx) * len(batches) * len(fabrics) if network == "simlette" else 0)
    reported = [0]

    def tick(count: int) -> None:
        reported[0] += count
        if progress is not None:
            progress(reported[0], total)

    local = tick if runner.parallel <= 1 else None
    tasks: list[Task] = [(model, acc, spec, world, tuple(splits), b, ctx, precision, plans, ranking, verify, slack,
                          local) for spec in fabrics for b in batches]
    found: dict[int, list[list[Outcome]]] = {}
    failed: list[str] = []

    def done(index: int, result: list[list[Outcome]] | Failure) -> None:
        task = tasks[index]
        if isinstance(result, Failure):
            failed.append(f"{task[2].name} batch {task[5]}: {result.error}")
        else:
            found[index] = result
        if local is None:
            tick(len(task[4]))

    runner.run(_task, tasks, done)
    if failed:
        raise OcsplanError(f"pareto: {len(failed)} task(s) failed, first: {failed[0]}")
    table = {(t[2].name, t[5], s): outcomes for i, t in enumerate(tasks)
             for s, outcomes in zip(t[4], found[i], strict=True)}
    cells: list[Cell] = []
    for c_index, context in enumerate(ctx):
        for b in batches:
            for spec in fabrics:
                outcomes = [table[(spec.name, b, s)][c_index] for s in splits]
                fitting = [o for o in outcomes if o is not None]
                feasible = [o for o in fitting if isinstance(o, Step)]
                best = best_of(feasible) if feasible else None
                if best is not None and network == "simlette":
                    best = resimulated(feasible, model, acc, spec, world, b, context, within=within,
                                       precision=precision, cache=plans, tokens_per_step=tokens_per_step,
                                       accept_rate=accept_rate,
                                       spray=spray if fabric_technology(spec).packet_switches else "message")
                if network == "simlette" and progress is not None:
                    progress(points + len(cells) + 1, total)
                cells.append(Cell(model.name, context, b, spec.name, best, len(fitting),
                                  len(outcomes) - len(fitting)))
    return cells


CSV_COLUMNS = ("model", "context", "batch", "fabric", "technology", "network", "kvp", "tpa", "ep", "tpe",
               "splits_timed", "splits_infeasible", "step_s", "attention_s", "ffn_s", "lm_head_s", "launch_s",
               "comm_s", "tokens_per_s_user", "tokens_per_s", "power_w", "tokens_per_s_mw")


def cells_csv(cells: Sequence[Cell]) -> str:
    """CSV text, one row per cell (empty figures where no split fits)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for c in cells:
        s = c.best
        if s is None:
            writer.writerow([c.model, c.context, c.batch, c.fabric, "", "", "", "", "", "", c.timed, c.infeasible]
                            + [""] * 10)
            continue
        k = s.compute
        writer.writerow([c.model, c.context, c.batch, c.fabric, s.technology, s.network, s.split.kvp, s.split.tpa,
                         s.split.ep, s.split.tpe, c.timed, c.infeasible, repr(s.step_s), repr(k.attention_s),
                         repr(k.ffn_s), repr(k.lm_head_s), repr(k.launch_s), repr(s.comm_s),
                         repr(s.tokens_per_s_user), repr(s.tokens_per_s), repr(s.power_w),
                         repr(s.tokens_per_s_mw)])
    return buffer.getvalue()


def png_bytes(cells: Sequence[Cell]) -> bytes:
    """Figure 4 (interactivity vs throughput) above Figure 5 (step breakdown), one column per context."""
    plt = pyplot()

    contexts = sorted({c.context for c in cells})
    fabrics = list(dict.fromkeys(c.fabric for c in cells))
    batches = sorted({c.batch for c in cells})
    fig, axes = plt.subplots(2, len(contexts), figsize=(6 * len(contexts), 9), squeeze=False)
    colors = ["#d62728", "#ff7f0e", "#1f77b4", "#2ca02c", "#9467bd"]
    for j, context in enumerate(contexts):
        top, bottom = axes[0][j], axes[1][j]
        for f_index, fabric in enumerate(fabrics):
            pts = [c for c in cells if c.context == context and c.fabric == fabric and c.best is not None]
            xs = [c.best.tokens_per_s_user for c in pts if c.best is not None]
            ys = [c.best.tokens_per_s / 1e3 for c in pts if c.best is not None]
            top.plot(xs, ys, "o-", color=colors[f_index % len(colors)], label=fabric)
            for c, x, y in zip(pts, xs, ys, strict=True):
                top.annotate(str(c.batch), (x, y), textcoords="offset points", xytext=(4, 4), fontsize=8)
        top.set_xlabel("interactivity (tokens/s/user)")
        top.set_ylabel("throughput (k tokens/s)")
        top.set_title(f"{cells[0].model}, context {context}")
        top.legend()
        width = 0.8 / max(1, len(fabrics))
        for f_index, fabric in enumerate(fabrics):
            for b_index, b in enumerate(batches):
                found = [c for c in cells if c.context == context and c.fabric == fabric and c.batch == b]
                if not found or found[0].best is None:
                    continue
                s = found[0].best
                parts = [s.compute.attention_s, s.compute.ffn_s + s.compute.lm_head_s, s.comm_s, s.compute.launch_s]
                x = b_index + (f_index - (len(fabrics) - 1) / 2) * width
                base = 0.0
                for p_index, value in enumerate(parts):
                    bottom.bar(x, value * 1e3, width, bottom=base, color=["#8c564b", "#bcbd22", "#1f77b4",
                                                                          "#7f7f7f"][p_index],
                               label=["attention", "FFN + LM head", "communication", "fixed overhead"][p_index]
                               if f_index == 0 and b_index == 0 else None)
                    base += value * 1e3
        bottom.set_xticks(range(len(batches)), [str(b) for b in batches])
        bottom.set_xlabel("batch size (bars: " + ", ".join(fabrics) + ")")
        bottom.set_ylabel("decode step (ms)")
        bottom.legend()
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, metadata={"Software": None})
    plt.close(fig)
    return buffer.getvalue()
