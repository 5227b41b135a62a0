"""Batch optimality-gap studies and side-by-side comparisons of planners.

One :class:`Result` per (instance, method); :func:`table_rows` adds what needs
every method of an instance (its proven optimum, the best proven bound, each
row's gap and flags). Results are cached by instance content hash in the
study's own CSV: a rerun solves only instances (or methods, or time limits)
that changed, and an interrupted study keeps every row finished so far, since
the CSV is rewritten (atomically) after each one.

This module is a study *reporter*: it shows a progress bar and builds rich
tables; the CLI prints them.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
import multiprocessing
import os
import signal
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

from .errors import InfeasibleError, InstanceError, OcsplanError
from .files import write_atomic
from .instance import Instance, dumps_instance, load_instance

__all__ = [
    "CSV_COLUMNS",
    "EXACT_METHODS",
    "Result",
    "Summary",
    "collect_paths",
    "instance_digest",
    "plot_gaps",
    "read_results",
    "run_method",
    "run_study",
    "summarize",
    "table_rows",
    "write_results",
]

EXACT_METHODS = frozenset({"cpsat", "milp"})
# relative tolerance under which two objectives count as equal
TOLERANCE = 1e-6


@dataclass(frozen=True)
class Result:
    """One method's answer on one instance (``error`` set when it failed)."""

    instance: str
    path: str
    digest: str
    n: int
    meshes: int
    demands: int
    ports: int
    method: str
    status: str
    objective_s: float | None
    bound_s: float | None
    seconds: float
    ports_used: int | None
    time_limit: float | None
    error: str = ""
    code: str = ""  # fingerprint of the planner code that produced the row


CSV_COLUMNS = (
    "instance",
    "n",
    "meshes",
    "demands",
    "L",
    "method",
    "status",
    "objective_s",
    "bound_s",
    "gap",
    "bound_gap",
    "seconds",
    "ports_used",
    "time_limit",
    "flag",
    "hash",
    "code",
    "path",
    "error",
)


@cache
def code_fingerprint() -> str:
    """Hash of the package's Python sources: a cached row is reused only if the code
    that produced it is unchanged."""
    digest = hashlib.sha256()
    root = Path(__file__).resolve().parent
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def instance_digest(instance: Instance) -> str:
    """Content hash of an instance (its canonical TOML, so formatting does not count)."""
    return hashlib.sha256(dumps_instance(instance).encode()).hexdigest()[:16]


def collect_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Instance files: files as given, directories searched for ``*.toml`` (sorted)."""
    out: list[Path] = []
    for item in paths:
        path = Path(item)
        if path.is_dir():
            out.extend(sorted(path.rglob("*.toml")))
        else:
            out.append(path)
    seen: set[Path] = set()
    unique = []
    for path in out:
        if path not in seen:
            seen.add(path)
            unique.append(path)
    return unique


def run_method(
    instance: Instance,
    path: str,
    method: str,
    time_limit: float | None = None,
    workers: int | None = None,
) -> Result:
    """Plan ``instance`` with ``method``; failures become a row with ``error`` set."""
    from .planners import solve

    options: dict[str, Any] = {}
    if method in EXACT_METHODS:
        if time_limit is not None:
            options["time_limit"] = time_limit
        if workers is not None:
            options["workers"] = workers
    start = time.perf_counter()

    def row(status: str, objective: float | None, bound: float | None, used: int | None, error: str = "") -> Result:
        return Result(
            instance=instance.name,
            path=path,
            digest=instance_digest(instance),
            n=instance.n,
            meshes=len(instance.meshes),
            demands=len(instance.demands()),
            ports=instance.fabric.ports,
            method=method,
            status=status,
            objective_s=objective,
            bound_s=bound,
            seconds=time.perf_counter() - start,
            ports_used=used,
            time_limit=time_limit if method in EXACT_METHODS else None,
            error=error,
            code=code_fingerprint(),
        )

    try:
        plan = solve(instance, method, **options)
    except InfeasibleError as exc:
        return row("infeasible", None, None, None, str(exc))
    except OcsplanError as exc:
        return row("error", None, None, None, str(exc))
    return row(plan.status, plan.objective_s, plan.bound_s, plan.ports_used)


# -- derived columns ---------------------------------------------------------------------


def _optimum(rows: Sequence[Result]) -> float | None:
    proven = [r.objective_s for r in rows if r.status == "optimal" and r.objective_s is not None]
    return min(proven) if proven else None


def _best_bound(rows: Sequence[Result]) -> float | None:
    bounds = [r.bound_s for r in rows if r.bound_s is not None]
    return max(bounds) if bounds else None


def _flag(row: Result, peers: Sequence[Result], optimum: float | None) -> str:
    if row.objective_s is None:
        return ""
    flags = []
    if optimum is not None and row.objective_s > optimum * (1 + TOLERANCE):
        flags.append("worse than proven optimum")
    if row.status == "optimal":
        better = [p for p in peers if p.objective_s is not None and p.objective_s < row.objective_s * (1 - TOLERANCE)]
        if better:
            flags.append(f"claims optimal but {better[0].method} is better")
    return "; ".join(flags)


def table_rows(results: Sequence[Result]) -> list[dict[str, Any]]:
    """CSV rows: results plus L, gap (to the proven optimum), bound_gap, flag."""
    by_instance: dict[str, list[Result]] = {}
    for r in results:
        by_instance.setdefault(r.digest, []).append(r)
    rows = []
    for r in results:
        peers = by_instance[r.digest]
        optimum = _optimum(peers)
        bound = _best_bound(peers)
        obj = r.objective_s
        gap = None if obj is None or optimum is None or optimum <= 0 else max(0.0, (obj - optimum) / optimum)
        bound_gap = None if obj is None or bound is None or bound <= 0 else max(0.0, (obj - bound) / bound)
        rows.append(
            {
                "instance": r.instance,
                "n": r.n,
                "meshes": r.meshes,
                "demands": r.demands,
                "L": r.ports,
                "method": r.method,
                "status": r.status,
                "objective_s": obj,
                "bound_s": r.bound_s,
                "gap": gap,
                "bound_gap": bound_gap,
                "seconds": r.seconds,
                "ports_used": r.ports_used,
                "time_limit": r.time_limit,
                "flag": _flag(r, peers, optimum),
                "hash": r.digest,
                "code": r.code,
                "path": r.path,
                "error": r.error,
            }
        )
    return rows


def _fmt(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def dumps_results(results: Sequence[Result]) -> str:
    """CSV text of results (columns :data:`CSV_COLUMNS`)."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in table_rows(results):
        writer.writerow({k: _fmt(row[k]) for k in CSV_COLUMNS})
    return buf.getvalue()


def write_results(results: Sequence[Result], path: str | Path) -> None:
    write_atomic(path, dumps_results(results))


def _num(text: str) -> float | None:
    return float(text) if text not in ("", None) else None


def read_results(path: str | Path) -> list[Result]:
    """Results from a study CSV (the cache); a missing file gives none."""
    target = Path(path)
    if not target.exists():
        return []
    try:
        with target.open(encoding="utf-8", newline="") as handle:
            out = []
            for line, row in enumerate(csv.DictReader(handle), start=2):
                try:
                    limit = _num(row["time_limit"])
                    used = _num(row["ports_used"])
                    out.append(
                        Result(
                            instance=row["instance"],
                            path=row["path"],
                            digest=row["hash"],
                            n=int(row["n"]),
                            meshes=int(row["meshes"]),
                            demands=int(row["demands"]),
                            ports=int(row["L"]),
                            method=row["method"],
                            status=row["status"],
                            objective_s=_num(row["objective_s"]),
                            bound_s=_num(row["bound_s"]),
                            seconds=float(row["seconds"]),
                            ports_used=None if used is None else int(used),
                            time_limit=limit,
                            error=row.get("error", "") or "",
                            code=row.get("code", "") or "",
                        )
                    )
                except (KeyError, TypeError, ValueError) as exc:
                    raise InstanceError(str(path), f"line {line}", f"not a study row: {exc}") from None
            return out
    except OSError as exc:
        raise InstanceError(str(path), "", f"cannot read: {exc.strerror or exc}") from None


# -- summary -----------------------------------------------------------------------------


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


# -- running -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Task:
    path: str
    method: str
    time_limit: float | None
    workers: int | None


def _run_task(task: _Task) -> Result:
    instance = load_instance(task.path)
    return run_method(instance, task.path, task.method, task.time_limit, task.workers)


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _reusable(cached: Result, time_limit: float | None) -> bool:
    if cached.status == "error" or cached.code != code_fingerprint():
        return False
    if cached.method not in EXACT_METHODS:
        return True
    return cached.status in ("optimal", "infeasible") or cached.time_limit == time_limit


def run_study(
    paths: Sequence[Path],
    methods: Sequence[str],
    out: str | Path,
    *,
    time_limit: float | None = None,
    jobs: int = 1,
    workers: int | None = None,
    fresh: bool = False,
    on_start: Callable[[int, int], None] | None = None,
    on_result: Callable[[Result, bool], None] | None = None,
) -> tuple[list[Result], bool]:
    """Run every method on every instance; returns (results in order, interrupted?).

    ``on_start(total, cached)`` and ``on_result(result, cached)`` report progress.
    The CSV at ``out`` is the cache and is rewritten after every finished row.
    """
    instances = [(str(p), load_instance(p)) for p in paths]
    cache = {} if fresh else {(r.digest, r.method): r for r in read_results(out)}
    order: dict[tuple[str, str], int] = {}
    done: dict[tuple[str, str], Result] = {}
    tasks: list[_Task] = []
    for path, inst in instances:
        digest = instance_digest(inst)
        for method in methods:
            key = (digest, method)
            if key in order:
                continue
            order[key] = len(order)
            hit = cache.get(key)
            if hit is not None and _reusable(hit, time_limit):
                done[key] = replace(hit, path=path, instance=inst.name)
            else:
                tasks.append(_Task(path, method, time_limit, workers))
    if on_start is not None:
        on_start(len(order), len(done))
    for result in done.values():
        if on_result is not None:
            on_result(result, True)

    def ordered() -> list[Result]:
        return [done[k] for k in sorted(done, key=order.__getitem__)]

    def record(result: Result) -> None:
        done[(result.digest, result.method)] = result
        write_results(ordered(), out)
        if on_result is not None:
            on_result(result, False)

    interrupted = False
    if done and not tasks:
        write_results(ordered(), out)
    if jobs <= 1:
        try:
            for task in tasks:
                record(_run_task(task))
        except KeyboardInterrupt:
            interrupted = True
    else:
        ctx = multiprocessing.get_context("spawn")
        pool = ctx.Pool(processes=jobs, initializer=_ignore_sigint, maxtasksperchild=50)
        try:
            for result in pool.imap_unordered(_run_task, tasks):
                record(result)
            pool.close()
        except KeyboardInterrupt:
            interrupted = True
            pool.terminate()
        finally:
            pool.join()
    return ordered(), interrupted


def default_workers(jobs: int) -> int:
    """Solver threads per job so that all jobs together use the machine's cores."""
    return max(1, (os.cpu_count() or 1) // max(1, jobs))


# -- figure ----------------------------------------------------------------------------------


def plot_gaps(results: Sequence[Result], path: str | Path) -> None:
    """Scatter of each method's gap to the proven optimum against n (log2 world size)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [row for row in table_rows(results) if row["gap"] is not None]
    methods = list(dict.fromkeys(row["method"] for row in rows))
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=120)
    for k, method in enumerate(methods):
        mine = [row for row in rows if row["method"] == method]
        offset = (k - (len(methods) - 1) / 2) * 0.12
        xs = [row["n"] + offset + 0.01 * (int(row["hash"][:4], 16) % 7 - 3) for row in mine]
        ys = [100 * row["gap"] for row in mine]
        ax.scatter(xs, ys, s=12, alpha=0.6, label=method)
        by_n: dict[int, list[float]] = {}
        for row in mine:
            by_n.setdefault(row["n"], []).append(100 * row["gap"])
        ns = sorted(by_n)
        ax.plot(
            [n + offset for n in ns],
            [statistics.fmean(by_n[n]) for n in ns],
            marker="_",
            linewidth=1,
        )
    ax.set_xlabel("instance size n (world = 2^n accelerators)")
    ax.set_ylabel("gap to proven optimum (%)")
    ax.set_yscale("symlog", linthresh=0.1)
    ax.grid(True, alpha=0.3)
    ax.legend(title="method (lines: mean per n)")
    ax.set_title("optimality gap against instance size")
    fig.tight_layout()
    target = Path(path)
    tmp = target.with_name(f".{target.name}.tmp{target.suffix}")
    try:
        fig.savefig(tmp)
        os.replace(tmp, target)
    finally:
        plt.close(fig)
        if tmp.exists():
            tmp.unlink()
