"""The batch executor: local processes and Dask give the same study CSV as one process,
and no row is lost when a worker dies or a task fails."""

from __future__ import annotations

import csv
import io
import os
import signal
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ocsplan.errors import InstanceError, OcsplanError
from ocsplan.executor import Executor, Failure, check_address
from ocsplan.instance import write_instances
from ocsplan.studies import read_results, run_study
from ocsplan.studies.families import generate

from .executor_tasks import task

# columns that carry wall-clock time, the only ones allowed to differ between runs
TIMING = ("seconds",)


def _collect(executor: Executor, fn: Callable[[object], object], tasks: list[object]) -> dict[int, object]:
    got: dict[int, object] = {}

    def done(index: int, outcome: object) -> None:
        assert index not in got, "a task reported twice"
        got[index] = outcome

    executor.run(fn, tasks, done)
    return got


@pytest.mark.parametrize("jobs", [1, 2])
def test_every_task_reported_once_failures_retried_once(jobs: int) -> None:
    got = _collect(Executor(jobs=jobs), task, [0, 1, "fail", 3, 4])
    failure = got.pop(2)
    assert isinstance(failure, Failure) and failure.attempts == 2
    assert failure.error == "ValueError: not allowed"
    assert got == {0: 0, 1: 1, 3: 9, 4: 16}


def test_dead_workers(tmp_path: Path) -> None:
    """A task that kills its worker fails alone (twice) and takes no other row down;
    a task lost once runs again and succeeds."""
    tasks: list[object] = [0, ("flaky", str(tmp_path / "a")), 2, "die", 4, 5]
    got = _collect(Executor(jobs=2), task, tasks)
    failure = got.pop(3)
    assert isinstance(failure, Failure) and failure.attempts == 2
    assert failure.error == "worker process died"
    assert got == {0: 0, 1: "second time lucky", 2: 4, 4: 16, 5: 25}


def test_bad_jobs_and_scheduler_name_the_option() -> None:
    with pytest.raises(Exception, match="--jobs"):
        Executor(jobs=0).check()
    with pytest.raises(Exception, match="--scheduler"):
        Executor(scheduler=" ").check()


@pytest.mark.parametrize("address", ["local", "tcp://127.0.0.1:8786", "127.0.0.1:8786", "tls://node-3.lan:1",
                                     "tcp://[::1]:8786"])
def test_well_formed_scheduler_addresses(address: str) -> None:
    assert check_address(address) == address


@pytest.mark.parametrize(("address", "reason"), [
    ("tcp://", "malformed"), ("foo bar", "malformed"), ("tcp://127.0.0.1", "malformed"),
    ("tcp://127.0.0.1:abc", "malformed"), ("tcp://127.0.0.1:0", "port must be between 1 and 65535"),
    ("127.0.0.1:99999", "port must be between 1 and 65535"), ("http://127.0.0.1:8786", "unknown protocol 'http'"),
    ("x" * 300 + ":1", "malformed"),
])
def test_malformed_scheduler_addresses_are_bad_input(address: str, reason: str) -> None:
    with pytest.raises(InstanceError, match=reason) as info:
        Executor(scheduler=address).check()
    assert info.value.source == "--scheduler"


@pytest.mark.parametrize("timeout", [0.0, -1.0, float("nan"), float("inf"), 1e9])
def test_connect_timeout_is_bounded(timeout: float) -> None:
    with pytest.raises(InstanceError, match="--connect-timeout"):
        Executor(connect_timeout=timeout).check()


def _closed_port() -> int:
    """A loopback port nobody listens on: bound by us, then released."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def test_unreachable_scheduler_is_one_error_before_any_work() -> None:
    address = f"tcp://127.0.0.1:{_closed_port()}"
    with pytest.raises(OcsplanError, match=f"--scheduler {address}: cannot connect within --connect-timeout 2 s"):
        Executor(scheduler=address, connect_timeout=2.0).check()


# --- studies through the executor -------------------------------------------------------------


@pytest.fixture(scope="module")
def twenty(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder = tmp_path_factory.mktemp("family")
    return write_instances(generate("latency", 20, seed=5, min_bits=3, max_bits=4), folder)


@pytest.fixture(scope="module")
def serial_csv(twenty: list[Path], tmp_path_factory: pytest.TempPathFactory) -> str:
    out = tmp_path_factory.mktemp("serial") / "study.csv"
    results, interrupted = run_study(twenty, ["heuristic"], out, jobs=1)
    assert not interrupted and len(results) == 20 and all(r.status != "error" for r in results)
    return out.read_text()


def _without_timing(text: str) -> list[dict[str, str]]:
    rows = list(csv.DictReader(io.StringIO(text)))
    for row in rows:
        for column in TIMING:
            row.pop(column)
    return rows


def test_local_processes_give_the_serial_csv(twenty: list[Path], serial_csv: str, tmp_path: Path) -> None:
    out = tmp_path / "study.csv"
    run_study(twenty, ["heuristic"], out, executor=Executor(jobs=2))
    assert _without_timing(out.read_text()) == _without_timing(serial_csv)


@pytest.fixture(scope="module")
def cluster() -> Iterator[object]:
    """A Dask LocalCluster of two worker processes; a worker's death is reported at once."""
    dask = pytest.importorskip("dask")
    distributed = pytest.importorskip("distributed")
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        local = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=50
        )
    try:
        yield local
    finally:
        local.close()


def test_dask_gives_the_serial_csv(
    cluster: object, twenty: list[Path], serial_csv: str, tmp_path: Path
) -> None:
    out = tmp_path / "study.csv"
    address = cluster.scheduler_address  # type: ignore[attr-defined]
    results, interrupted = run_study(twenty, ["heuristic"], out, executor=Executor(scheduler=address))
    assert not interrupted and len(results) == 20
    assert _without_timing(out.read_text()) == _without_timing(serial_csv)


def test_killing_a_worker_mid_study_loses_no_row(
    cluster: object, twenty: list[Path], serial_csv: str, tmp_path: Path
) -> None:
    distributed = pytest.importorskip("distributed")
    address = cluster.scheduler_address  # type: ignore[attr-defined]
    with distributed.Client(address) as client:
        client.wait_for_workers(2)
        pids = client.run(os.getpid)
    victim = sorted(pids.values())[0]
    seen: list[str] = []

    def on_result(result: object, cached: bool) -> None:
        seen.append(result.instance)  # type: ignore[attr-defined]
        if len(seen) == 3:
            os.kill(victim, signal.SIGKILL)

    out = tmp_path / "study.csv"
    _, interrupted = run_study(twenty, ["heuristic"], out, executor=Executor(scheduler=address), on_result=on_result)
    assert not interrupted
    assert len(seen) == 20 and len(read_results(out)) == 20
    assert _without_timing(out.read_text()) == _without_timing(serial_csv)


def test_local_scheduler_needs_no_setup(twenty: list[Path], serial_csv: str, tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    out = tmp_path / "study.csv"
    run_study(twenty[:2], ["heuristic"], out, executor=Executor(jobs=2, scheduler="local"))
    assert _without_timing(out.read_text()) == _without_timing(serial_csv)[:2]
