"""Every hostile input of issue 13 (tests/hostile/cases.py): the documented exit status,
one line on stderr naming the file and field or the option, no traceback, no output file.

The cases that hung or ran out of memory before the fix run in a process of their own with
1 GiB of address space (``RLIMIT_AS``), forked from the server of :mod:`tests.hostile.forked`
(as ``python -m ocsplan`` would run them); the rest run in-process (CliRunner)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ocsplan.cli import app

from .cases import CASES, HEAVY, Case, build
from .forked import ForkServer

ROOT = Path(__file__).resolve().parent.parent.parent
runner = CliRunner()
GIB = 1 << 30


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return build(tmp_path_factory.mktemp("hostile"))


def _check(case: Case, files: dict[str, str], status: int, stderr: str) -> None:
    lines = [x for x in stderr.splitlines() if x.strip()]
    assert "Traceback" not in stderr, stderr[-2000:]
    assert status == case.status, stderr
    assert len(lines) == 1, lines
    assert case.names in lines[0], lines[0]
    for output in case.outputs:
        assert not Path(output.format(**files)).exists(), output


@pytest.mark.parametrize("case", [c for c in CASES if c.id not in HEAVY], ids=lambda c: c.id)
def test_hostile_input(case: Case, files: dict[str, str]) -> None:
    result = runner.invoke(app, [a.format(**files) for a in case.argv])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    _check(case, files, result.exit_code, result.stderr)


@pytest.mark.parametrize("case", [c for c in CASES if c.id in HEAVY], ids=lambda c: c.id)
def test_hostile_input_bounded(case: Case, files: dict[str, str], fork_server: ForkServer) -> None:
    # the timeout only detects a hang; the limit is far above what the refusal needs
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = fork_server.run([a.format(**files) for a in case.argv], cwd=os.getcwd(), env=env, limit=GIB, timeout=120)
    _check(case, files, proc.returncode, proc.stderr)


def test_every_command_has_ten_cases() -> None:
    per_command: dict[str, int] = {}
    for case in CASES:
        per_command[case.argv[0]] = per_command.get(case.argv[0], 0) + 1
    first = {"solve", "schedules", "frontier", "compare", "generate", "study", "realize", "validate", "simulate",
             "sweep"}  # issue 13's commands: ten cases each; round 3 (issue 24) adds the workload commands
    assert first <= set(per_command) <= first | {"workload", "decode", "power", "splits", "pareto", "circulant"}
    assert min(per_command[c] for c in first) >= 10, per_command
