"""Running a study: every (instance, method) task on the executor (local processes or
a Dask cluster), rows written back to the CSV cache as they finish (Ctrl-C and lost
workers keep every finished row; a task lost twice becomes an error row)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import InfeasibleError, OcsplanError
from ..executor import Executor, Failure
from ..instance import Instance, load_instance
from ..plan import Plan
from .results import EXACT_METHODS, Result, code_fingerprint, instance_digest, read_results, update_results

__all__ = ["collect_paths", "default_workers", "run_method", "run_study", "solve_all"]


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
    on_plan: Callable[[Plan], None] | None = None,
) -> Result:
    """Plan ``instance`` with ``method``; failures become a row with ``error`` set.

    ``on_plan`` receives the plan when there is one (``compare --demands``)."""
    from ..planning.registry import solve

    options: dict[str, Any] = {}
    if method in EXACT_METHODS:
        if time_limit is not None:
            options["time_limit"] = time_limit
        if workers is not None:
            options["workers"] = workers
    start = time.perf_counter()

    def row(
        status: str, objective: float | None, bound: float | None, used: int | None, error: str = "", source: str = ""
    ) -> Result:
        return Result(
            instance=instance.name,
            path=path,
            digest=instance_digest(instance),
            n=instance.n,
            meshes=len(instance.meshes),
            demands=len(instance.demands()),
            ports=instance.budget.ports,
            method=method,
            status=status,
            objective_s=objective,
            bound_s=bound,
            seconds=time.perf_counter() - start,
            ports_used=used,
            time_limit=time_limit if method in EXACT_METHODS else None,
            error=error,
            code=code_fingerprint(),
            source=source,
        )

    try:
        plan = solve(instance, method, **options)
    except InfeasibleError as exc:
        return row("infeasible", None, None, None, str(exc))
    except OcsplanError as exc:
        return row("error", None, None, None, str(exc))
    if on_plan is not None:
        on_plan(plan)
    return row(plan.status, plan.objective_s, plan.bound_s, plan.ports_used, source=plan.source)


@dataclass(frozen=True)
class _Task:
    """One (instance, method) solve; carries the instance itself, so a remote worker
    needs no access to the files."""

    instance: Instance
    path: str
    method: str
    time_limit: float | None
    workers: int | None


def _run_task(task: _Task) -> Result:
    return run_method(task.instance, task.path, task.method, task.time_limit, task.workers)


def _failed(task: _Task, failure: Failure) -> Result:
    """The error row of a task lost on every attempt (its worker died, or it raised)."""
    inst = task.instance
    return Result(
        instance=inst.name,
        path=task.path,
        digest=instance_digest(inst),
        n=inst.n,
        meshes=len(inst.meshes),
        demands=len(inst.demands()),
        ports=inst.budget.ports,
        method=task.method,
        status="error",
        objective_s=None,
        bound_s=None,
        seconds=0.0,
        ports_used=None,
        time_limit=task.time_limit if task.method in EXACT_METHODS else None,
        error=f"lost after {failure.attempts} attempts: {failure.error}",
        code=code_fingerprint(),
    )


def solve_all(
    instances: Sequence[tuple[str, Instance]],
    methods: Sequence[str],
    executor: Executor,
    time_limit: float | None = None,
    workers: int | None = None,
    on_result: Callable[[Result], None] | None = None,
) -> list[Result]:
    """Every method on every (path, instance) on ``executor``: rows in instance x method order;
    ``on_result`` sees each row as it finishes (progress)."""
    tasks = [_Task(inst, path, m, time_limit, workers) for path, inst in instances for m in methods]
    rows: list[Result | None] = [None] * len(tasks)

    def record(index: int, outcome: Result | Failure) -> None:
        rows[index] = row = _failed(tasks[index], outcome) if isinstance(outcome, Failure) else outcome
        if on_result is not None:
            on_result(row)

    executor.run(_run_task, tasks, record)
    return [row for row in rows if row is not None]


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
    executor: Executor | None = None,
) -> tuple[list[Result], bool]:
    """Run every method on every instance; returns (results in order, interrupted?).

    Tasks run on ``executor`` (default: ``jobs`` local processes).
    ``on_start(total, cached)`` and ``on_result(result, cached)`` report progress.
    The CSV at ``out`` is the cache and is rewritten after every finished row,
    always in instance x method order whatever order the rows finish in.
    """
    runner = executor if executor is not None else Executor(jobs=jobs)
    runner.check()
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
                tasks.append(_Task(inst, path, method, time_limit, workers))
    if on_start is not None:
        on_start(len(order), len(done))
    for result in done.values():
        if on_result is not None:
            on_result(result, True)

    def ordered() -> list[Result]:
        return [done[k] for k in sorted(done, key=order.__getitem__)]

    def record(index: int, outcome: Result | Failure) -> None:
        result = _failed(tasks[index], outcome) if isinstance(outcome, Failure) else outcome
        done[(result.digest, result.method)] = result
        update_results(ordered(), out)  # merged under a lock, other runs' rows kept
        if on_result is not None:
            on_result(result, False)

    interrupted = False
    if done and not tasks:
        update_results(ordered(), out)  # merged under a lock, other runs' rows kept
    try:
        runner.run(_run_task, tasks, record)
    except KeyboardInterrupt:
        interrupted = True
    return ordered(), interrupted


def default_workers(jobs: int) -> int:
    """Solver threads per job so that all jobs together use the machine's cores."""
    return max(1, (os.cpu_count() or 1) // max(1, jobs))
