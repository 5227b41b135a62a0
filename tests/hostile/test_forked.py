"""The fork server (:mod:`tests.hostile.forked`) against ``python -c``: a crash reaches stderr as
a traceback with status 1, ``RLIMIT_AS`` applies, a hang is killed at the timeout. (The round-4
cases themselves are compared in ``test_round4.py``.)"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from .forked import Completed, ForkServer

ROOT = Path(__file__).resolve().parent.parent.parent
GIB = 1 << 30


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT / "src"), COLUMNS="200")


def _plain(function: str, limit: int) -> subprocess.CompletedProcess[str]:
    """``tests.hostile.children.<function>()`` by ``python -c`` under ``limit`` bytes of address space."""

    def set_limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    code = f"from tests.hostile.children import {function}; {function}()"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=_env(),
                          cwd=ROOT, preexec_fn=set_limit)


def _forked(server: ForkServer, function: str, limit: int, timeout: float = 60) -> Completed:
    return server.call(f"tests.hostile.children:{function}", cwd=str(ROOT), env=_env(), limit=limit,
                       timeout=timeout)


@pytest.mark.parametrize(("function", "last"), [("crash", "RuntimeError: a deliberate crash"),
                                                ("allocate_2_gib", "MemoryError")])
def test_a_failing_child_ends_as_the_interpreter_would(fork_server: ForkServer, function: str, last: str) -> None:
    plain, forked = _plain(function, GIB), _forked(fork_server, function, GIB)
    for proc in (plain, forked):
        assert proc.returncode == 1, proc.stderr
        assert proc.stderr.startswith("Traceback (most recent call last):\n"), proc.stderr
        assert proc.stderr.splitlines()[-1] == last, proc.stderr
        assert proc.stdout == ""


def test_the_address_space_limit_is_what_fails_the_allocation(fork_server: ForkServer) -> None:
    forked = _forked(fork_server, "allocate_2_gib", 4 * GIB)
    assert (forked.returncode, forked.stdout, forked.stderr) == (0, f"{2 << 30}\n", "")


def test_a_hang_is_killed_at_the_timeout_and_the_server_goes_on(fork_server: ForkServer) -> None:
    with pytest.raises(subprocess.TimeoutExpired):
        _forked(fork_server, "hang", GIB, timeout=1)
    forked = _forked(fork_server, "crash", GIB)
    assert forked.returncode == 1 and "a deliberate crash" in forked.stderr
