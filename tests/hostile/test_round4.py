"""Round 4 of the hostile inputs (issue 38): each case in a process of its own with 1 GiB of
address space and a timeout: the documented status, one line naming the option or file, no
traceback, no output file. The process is forked from a server that has imported the CLI
(:mod:`tests.hostile.forked`); :func:`run` without a server starts ``python -m ocsplan``."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from .forked import Completed, ForkServer
from .round4 import CASES4, Case4, build, digests

ROOT = Path(__file__).resolve().parent.parent.parent
GIB = 1 << 30


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return build(tmp_path_factory.mktemp("hostile4"))


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (GIB, GIB))


def run(case: Case4, files: dict[str, str], src: str, timeout: float,
        server: ForkServer | None = None) -> tuple[int, str, list[str]]:
    """Exit status, stderr, and the outputs that exist afterwards: in a child of ``server``, or
    without one in a subprocess (``python -m ocsplan``)."""
    env = dict(os.environ, PYTHONPATH=src, COLUMNS="200")
    before = digests(case, files)
    args = [a.format(**files) for a in case.argv]
    argv = [sys.executable, "-m", "ocsplan", *args]
    proc: Completed | subprocess.CompletedProcess[str]
    if server is not None:
        proc = server.run(args, cwd=files["dir"], env=env, limit=GIB, timeout=timeout,
                          stdout=case.stdout.format(**files) if case.stdout else None)
    elif case.stdout:
        with open(case.stdout.format(**files), "w") as sink:
            proc = subprocess.run(argv, stdout=sink, stderr=subprocess.PIPE, text=True, timeout=timeout, env=env,
                                  preexec_fn=_limit, cwd=files["dir"])
    else:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env, preexec_fn=_limit,
                              cwd=files["dir"])
    written = [o for o in case.outputs if Path(o.format(**files)).exists()]
    written += [f"{p} (changed)" for p, digest in digests(case, files).items() if before[p] != digest]
    return proc.returncode, proc.stderr, written


@pytest.mark.parametrize("case", CASES4, ids=lambda c: c.id)
def test_round4(case: Case4, files: dict[str, str], fork_server: ForkServer) -> None:
    status, stderr, written = run(case, files, str(ROOT / "src"), 120, fork_server)
    lines = [x for x in stderr.splitlines() if x.strip()]
    assert "Traceback" not in stderr, stderr[-2000:]
    assert status == case.status, stderr
    assert len(lines) == 1, lines
    assert case.line(files) in lines[0], lines[0]
    assert not written, written


# a refusal naming an option (exit 2), one with stdout on /dev/full, a file refused by the checker
# (exit 1), and click's usage error (its one line names the program as ``python -m`` does)
USAGE = Case4("usage-unknown-option", ("solve", "{instance_toml}", "--no-such-option"), 2,
              "python -m ocsplan solve: No such option: --no-such-option")
SAME = ("faults-sample-20001", "solve-stdout-full", "export-check-proto-bogus")


@pytest.mark.parametrize("case", [*({c.id: c for c in CASES4}[i] for i in SAME), USAGE], ids=lambda c: c.id)
def test_a_forked_child_answers_as_the_subprocess(case: Case4, files: dict[str, str],
                                                  fork_server: ForkServer) -> None:
    """The same status, the same stderr byte for byte, the same files written, either way."""
    plain = run(case, files, str(ROOT / "src"), 120)
    assert plain[0] == case.status and case.line(files) in plain[1], plain
    assert run(case, files, str(ROOT / "src"), 120, fork_server) == plain
