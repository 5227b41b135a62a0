"""Shared fixtures: paths of the named instances."""

from __future__ import annotations

import gc
import os
from pathlib import Path
from typing import Any

import pytest
import typer.main
import typer.testing

# pytest-xdist's workers start with COLUMNS=80 and LINES=24 in their environment; the tests
# expect what a plain run sees (unset: piped output is 200 columns wide), and set it themselves.
if "PYTEST_XDIST_WORKER" in os.environ:
    os.environ.pop("COLUMNS", None)
    os.environ.pop("LINES", None)

ROOT = Path(__file__).resolve().parent.parent
INSTANCES = ROOT / "instances"


@pytest.fixture
def instances_dir() -> Path:
    return INSTANCES


def instance_path(name: str) -> Path:
    return INSTANCES / f"{name}.toml"


# 16 accelerators in 4 racks of 4, 2 ports; leaves 4 down + 4 up; 2 spines per rail, each reaching a leaf
# over 2 down-links: 4 equal uplinks at a leaf, 2 equal down-links at a spine, so the world axis crosses
# racks and Simlette's spraying granularity decides its links (tests of --spray)
EPS_TINY = """
name = "eps-tiny"
accelerators = 16
ports = 2
link = "400Gb/s"
[racks]
size = 4
[[level]]
technology = "eps"
radix = 8
down = 4
up = 4
[[level]]
technology = "eps"
radix = 8
"""


# The longest tests (docs/benchmarks.md, "The test suite on both cores") start first: with two workers
# taking tests in collection order, a long test started late would be the run's tail. Matched by node id
# prefix; the order among the rest is the collection order (deterministic, so every worker agrees).
LONGEST_FIRST = (
    "tests/test_deploy_msccl.py::test_every_file_of_the_named_plans_checks_at_the_plans_own_h_and_v[paper-fig3-n512]",
    "tests/test_deploy_msccl.py::test_every_file_of_the_named_plans_checks_at_the_plans_own_h_and_v[megatron-5t-n512-b1]",
    "tests/test_simlette_contention_hybrid.py::test_the_paper_world_all_reduce_within_2_percent",
    "tests/hostile/test_validator_mutations.py::test_every_single_corruption_is_caught",
    "tests/test_deploy_repath.py::test_every_fault_against_the_brute_force",
    "tests/hostile/test_limits_worst.py",
    "tests/test_deploy_degraded.py::test_ideal_mode_is_the_degraded_T_on_every_single_circuit_fault",
    "tests/test_decode_pareto.py::test_spray_reaches_the_re_timing_on_the_switched_fabric_only",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        return next((k for k, prefix in enumerate(LONGEST_FIRST) if item.nodeid.startswith(prefix)),
                    len(LONGEST_FIRST))

    items.sort(key=rank)  # stable


def pytest_collection_finish(session: pytest.Session) -> None:
    """Young collections every 100,000 allocations, not 700, and full ones far rarer: the tests
    make millions of small acyclic objects, and each collection's cascade walks what the session keeps
    (collected items, cached plans). Only the timing of collection changes (about a fifth of the test
    time on four heavy files at 50,000; 100,000 measured the same within noise on the whole suite);
    nothing asserts on it. (No freeze: ``paused_gc(keep=True)`` unfreezes everything.)"""
    gc.set_threshold(100_000, 50, 100)


# typer's CliRunner builds the click command of the whole app on every ``invoke`` (about 40 ms: every
# command's signature and annotations evaluated again, some 1,000 ``eval`` calls), which was the largest
# single cost of the suite's in-process CLI tests (about 30 s of CPU over 784 invokes). An app does not
# change while the tests run, and click makes a fresh context per call, so each app's command is built
# once. ``python -m ocsplan`` (the subprocess and fork-server tests) builds it as users' processes do.
_BUILD = typer.main.get_command
_COMMANDS: dict[typer.Typer, Any] = {}


def _command(app: typer.Typer) -> Any:  # typer's click.Command (its own vendored click)
    if app not in _COMMANDS:
        _COMMANDS[app] = _BUILD(app)
    return _COMMANDS[app]


if getattr(typer.testing, "_get_command", None) is _BUILD:  # typer 0.29 (any other: built per invoke)
    typer.testing._get_command = _command  # type: ignore[attr-defined,assignment]  # a private name: checked above


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish() -> None:
    """Every object the session leaves is frozen (``gc.freeze``) before pytest's closing collection.
    With the thresholds above, full collections are rare, so the cycles of each finished simulation
    (Simlette's ports, engine and pieces refer to one another) wait in the oldest generation: that
    closing collection then walked and freed some ten million objects per worker, 7-25 s, and
    pytest-xdist kills a worker that has not exited 10 s after the run ends. Frozen, they are left to
    the process's exit. Nothing is reported by then: every test's outcome is already sent."""
    gc.freeze()
