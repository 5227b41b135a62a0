"""One executor for every batch command: local processes or a Dask cluster.

``Executor(jobs=K)`` runs tasks on K local processes (K = 1: in this process);
``Executor(scheduler="tcp://host:8786")`` runs them on an existing Dask
distributed cluster, ``scheduler="local"`` on a ``LocalCluster`` of K worker
processes started here (``pip install ocsplan[cluster]``; Dask is imported
only then). Results come back as they finish, through a callback, so the
caller can write each one at once; Ctrl-C stops the run and keeps them.

A task which raises, or whose worker dies, is run once more; a second
failure comes back as a :class:`Failure`, never as a lost task. Local
processes: after a worker died, the tasks that were running with it run again
one at a time, and only a task that kills its worker when alone is charged,
so one bad task cannot take others down with it. Dask: the scheduler
reschedules a task whose worker died (``distributed.scheduler.allowed-failures``
times, 0 on ``local``) and then reports it; we submit it once more.
"""

from __future__ import annotations

import asyncio
import math
import multiprocessing
import re
import signal
import socket
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .errors import InstanceError, OcsplanError
from .files import code_fingerprint
from .limits import CONNECT_TIMEOUT_S, MAX_CONNECT_TIMEOUT_S

__all__ = ["CONNECT_TIMEOUT_S", "Executor", "Failure", "check_address", "describe_error"]

# a scheduler address: [tcp:// | tls://] host : port, host a name, an IPv4 or a bracketed IPv6 address
_ADDRESS = re.compile(r"(?:(?P<scheme>[a-z]+)://)?(?P<host>[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\]):(?P<port>[0-9]{1,5})")
_SCHEMES = ("tcp", "tls")


def check_address(scheduler: str) -> str:
    """``scheduler`` as ``local`` or a well-formed ``[tcp|tls]://HOST:PORT``; InstanceError
    (exit 2) otherwise, before Dask is imported (Dask's own parser fails in odd ways)."""
    if scheduler == "local":
        return scheduler
    match = _ADDRESS.fullmatch(scheduler)
    if match is None or len(scheduler) > 255:
        raise InstanceError("--scheduler", "", f"malformed address {scheduler[:60]!r} (use tcp://HOST:PORT or local)")
    scheme = match["scheme"]
    if scheme is not None and scheme not in _SCHEMES:
        raise InstanceError("--scheduler", "", f"unknown protocol {scheme[:20]!r} (use {' or '.join(_SCHEMES)})")
    port = int(match["port"])
    if not 1 <= port <= 65535:
        raise InstanceError("--scheduler", "", f"port must be between 1 and 65535, got {port}")
    return scheduler


def _probe(scheduler: str, timeout: float) -> None:
    """A TCP connection to the scheduler's port within ``timeout`` (before any work starts,
    so an unreachable cluster is one line and no progress bar or output file)."""
    match = _ADDRESS.fullmatch(scheduler)
    assert match is not None  # check_address ran
    host = match["host"].strip("[]")
    try:
        with socket.create_connection((host, int(match["port"])), timeout=timeout):
            pass
    except OSError as exc:
        reason = "timed out" if isinstance(exc, TimeoutError) else (exc.strerror or type(exc).__name__)
        raise OcsplanError(f"--scheduler {scheduler}: cannot connect within --connect-timeout {timeout:g} s"
                           f" ({reason})") from None

T = TypeVar("T")
R = TypeVar("R")

# Local worker processes are replaced after this many tasks (solver memory).
_TASKS_PER_CHILD = 50


@dataclass(frozen=True)
class Failure:
    """A task that failed on every attempt; ``error`` describes the last failure."""

    error: str
    attempts: int


def describe_error(exc: BaseException) -> str:
    """One line for an exception: its type and message."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


class _Attempts(Generic[R]):
    """Counts failures per task; says whether a task gets another try."""

    def __init__(self, count: int, retries: int, done: Callable[[int, R | Failure], None]) -> None:
        self.failures = [0] * count
        self.retries = retries
        self.done = done

    def failed(self, index: int, error: str) -> bool:
        """Record a failure; True if the task should run again (else it is reported)."""
        self.failures[index] += 1
        if self.failures[index] > self.retries:
            self.done(index, Failure(error, self.failures[index]))
            return False
        return True


@dataclass(frozen=True)
class Executor:
    """Where batch tasks run: ``jobs`` local processes, or a Dask ``scheduler``.

    ``scheduler`` is a scheduler address (``tcp://host:8786``) or ``local``;
    with ``local``, ``jobs`` is the number of worker processes started.
    ``retries``: further attempts of a task after a failure. ``connect_timeout``:
    seconds a scheduler (and its first worker) may take to answer before the run
    stops with one line.
    """

    jobs: int = 1
    scheduler: str | None = None
    retries: int = 1
    connect_timeout: float = CONNECT_TIMEOUT_S

    def check(self) -> Executor:
        if self.jobs < 1:
            raise InstanceError("--jobs", "", f"must be >= 1, got {self.jobs}")
        if self.scheduler is not None and not self.scheduler.strip():
            raise InstanceError("--scheduler", "", "empty address (use tcp://HOST:PORT or local)")
        if not (math.isfinite(self.connect_timeout) and 0 < self.connect_timeout <= MAX_CONNECT_TIMEOUT_S):
            raise InstanceError("--connect-timeout", "", f"must be a number of seconds in"
                                f" (0, {MAX_CONNECT_TIMEOUT_S:g}], got {self.connect_timeout}")
        if self.scheduler is not None and check_address(self.scheduler) != "local":
            _probe(self.scheduler, self.connect_timeout)
        return self

    @property
    def parallel(self) -> int:
        """How many tasks run at once, as far as this process knows (1 for a remote cluster)."""
        return self.jobs if self.scheduler is None or self.scheduler == "local" else 1

    def describe(self) -> str:
        if self.scheduler is None:
            return "in process" if self.jobs == 1 else f"{self.jobs} local processes"
        if self.scheduler == "local":
            return f"Dask LocalCluster of {self.jobs} processes"
        return f"Dask scheduler {self.scheduler}"

    def run(self, fn: Callable[[T], R], tasks: Sequence[T], done: Callable[[int, R | Failure], None]) -> None:
        """Run ``fn`` on every task; ``done(index, result or Failure)`` as each finishes.

        ``fn`` must be a module-level function and tasks picklable (they cross
        process boundaries). KeyboardInterrupt propagates after the workers
        are stopped; every ``done`` call made before it stands.
        """
        self.check()
        if not tasks:
            return
        attempts: _Attempts[R] = _Attempts(len(tasks), self.retries, done)
        if self.scheduler is not None:
            _run_dask(fn, tasks, attempts, self.scheduler, self.jobs, self.connect_timeout)
        elif self.jobs == 1:
            _run_serial(fn, tasks, attempts)
        else:
            _run_processes(fn, tasks, attempts, self.jobs)


def _run_serial(fn: Callable[[T], R], tasks: Sequence[T], attempts: _Attempts[R]) -> None:
    for index, task in enumerate(tasks):
        while True:
            try:
                result = fn(task)
            except Exception as exc:
                if attempts.failed(index, describe_error(exc)):
                    continue
                break
            attempts.done(index, result)
            break


def _new_pool(jobs: int) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(
        max_workers=jobs, mp_context=multiprocessing.get_context("spawn"),
        # workers ignore Ctrl-C (the parent stops them); builtins, so a worker imports nothing for it
        initializer=signal.signal, initargs=(signal.SIGINT, signal.SIG_IGN),
        max_tasks_per_child=_TASKS_PER_CHILD,
    )


def _stop(pool: ProcessPoolExecutor) -> None:
    """Stop a pool now: pending tasks cancelled, running workers terminated."""
    processes: dict[int, Any] = dict(getattr(pool, "_processes", None) or {})
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes.values():
        if process.is_alive():
            process.terminate()
    for process in processes.values():
        process.join(timeout=5)


def _submit(pool: ProcessPoolExecutor, fn: Callable[[T], R], task: T, fresh: bool) -> Future[R] | None:
    """``pool.submit``, or None when the pool broke under it: a worker that died while the pool started
    another can leave it pickling a closed pipe (OSError) or refusing work (BrokenProcessPool). A pool
    that has run nothing yet (``fresh``) raises: a new pool would fail the same way."""
    try:
        return pool.submit(fn, task)
    except (RuntimeError, OSError):  # BrokenProcessPool is a RuntimeError
        if fresh:
            raise
        return None


def _run_processes(fn: Callable[[T], R], tasks: Sequence[T], attempts: _Attempts[R], jobs: int) -> None:
    """At most ``jobs`` tasks in flight, so every task in flight is running: when a
    worker dies, exactly those are suspects. Each runs again alone; a task is
    charged a failure only when it was the only suspect (it killed its worker)."""
    pending = deque(range(len(tasks)))
    alone: deque[int] = deque()  # suspects of a dead worker, retried one at a time
    inflight: dict[Future[R], int] = {}
    pool = _new_pool(jobs)
    fresh = True  # nothing submitted to this pool yet
    clean = False
    try:
        while pending or alone or inflight:
            broken = False  # a submission met the pool breaking (a worker died as another started)
            if alone:
                if not inflight:
                    index = alone.popleft()
                    future = _submit(pool, fn, tasks[index], fresh)
                    if future is None:
                        alone.appendleft(index)
                        broken = True
                    else:
                        inflight[future] = index
                        fresh = False
            else:
                while pending and len(inflight) < jobs:
                    index = pending.popleft()
                    future = _submit(pool, fn, tasks[index], fresh)
                    if future is None:
                        pending.appendleft(index)
                        broken = True
                        break
                    inflight[future] = index
                    fresh = False
            finished = wait(list(inflight), return_when=FIRST_COMPLETED)[0] if inflight else set()
            suspects = []
            for future in finished:
                index = inflight.pop(future)
                try:
                    result = future.result()
                except BrokenProcessPool:
                    suspects.append(index)
                except Exception as exc:
                    if attempts.failed(index, describe_error(exc)):
                        pending.appendleft(index)
                else:
                    attempts.done(index, result)
            if broken and not inflight and not suspects:  # the tasks in flight ended: a new pool, no one charged
                _stop(pool)
                pool, fresh = _new_pool(jobs), True
            if suspects:
                # the pool is broken: everything still in flight died with it
                suspects.extend(inflight.values())
                inflight.clear()
                _stop(pool)
                pool, fresh = _new_pool(jobs), True
                if len(suspects) == 1:
                    # it ran alone or its peers finished: it killed the worker
                    if attempts.failed(suspects[0], "worker process died"):
                        alone.append(suspects[0])
                else:
                    alone.extend(sorted(suspects))  # not charged: we cannot tell which one did it
        clean = True
    finally:
        if clean:
            pool.shutdown(wait=True)
        else:
            _stop(pool)


def _run_dask(
    fn: Callable[[T], R], tasks: Sequence[T], attempts: _Attempts[R], scheduler: str, jobs: int, timeout: float
) -> None:
    try:
        import dask
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise OcsplanError("--scheduler needs Dask distributed: pip install 'ocsplan[cluster]'") from None
    cluster = None
    if scheduler == "local":
        # a task whose worker dies comes back at once as KilledWorker; we retry it ourselves
        with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
            cluster = LocalCluster(
                n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=":0",
                silence_logs=50,
            )
    try:
        try:
            client = Client(cluster if cluster is not None else scheduler, timeout=f"{timeout}s")
        except (OSError, TimeoutError, ValueError, MemoryError, OverflowError) as exc:
            raise OcsplanError(f"--scheduler {scheduler}: cannot connect within --connect-timeout {timeout:g} s"
                               f" ({describe_error(exc)[:120]})") from None
        try:
            _check_workers(client, scheduler, max(timeout, 60.0) if cluster is not None else timeout)
            batch = uuid.uuid4().hex[:8]
            futures: dict[Any, int] = {}

            def submit(index: int) -> Any:
                key = f"ocsplan-{batch}-{index}-{attempts.failures[index]}"
                future = client.submit(fn, tasks[index], key=key, pure=False, retries=0)
                futures[future] = index
                return future

            stream = as_completed([submit(i) for i in range(len(tasks))])
            for future in stream:
                index = futures.pop(future)
                try:
                    result = future.result()
                except (Exception, asyncio.CancelledError) as exc:
                    if attempts.failed(index, describe_error(exc)):
                        stream.add(submit(index))
                else:
                    attempts.done(index, result)
                future.release()
        finally:
            client.close()
    finally:
        if cluster is not None:
            cluster.close()


def _fingerprint() -> str:
    return code_fingerprint()


def _check_workers(client: Any, scheduler: str, timeout: float) -> None:
    """Every worker must run this ocsplan code (else its rows would not be comparable)."""
    mine = _fingerprint()
    try:
        client.wait_for_workers(1, timeout=timeout)
    except TimeoutError:
        raise OcsplanError(f"--scheduler {scheduler}: no workers connected within {timeout:g} s") from None
    theirs: dict[str, str] = client.run(_fingerprint)
    other = sorted(w for w, fp in theirs.items() if fp != mine)
    if other:
        raise OcsplanError(
            f"--scheduler {scheduler}: worker {other[0]} runs other ocsplan code "
            f"({theirs[other[0]]}, here {mine}); install the same version on every worker")
