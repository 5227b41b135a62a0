"""Round 4 of the hostile inputs (issue 38): each case in a subprocess with 1 GiB of address
space and a timeout: the documented status, one line naming the option or file, no traceback,
no output file."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from .round4 import CASES4, Case4, build, digests

ROOT = Path(__file__).resolve().parent.parent.parent
GIB = 1 << 30


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return build(tmp_path_factory.mktemp("hostile4"))


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (GIB, GIB))


def run(case: Case4, files: dict[str, str], src: str, timeout: float) -> tuple[int, str, list[str]]:
    """Exit status, stderr, and the outputs that exist afterwards (shared with the sweep script)."""
    env = dict(os.environ, PYTHONPATH=src, COLUMNS="200")
    before = digests(case, files)
    argv = [sys.executable, "-m", "ocsplan", *(a.format(**files) for a in case.argv)]
    if case.stdout:
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
def test_round4(case: Case4, files: dict[str, str]) -> None:
    status, stderr, written = run(case, files, str(ROOT / "src"), 120)
    lines = [x for x in stderr.splitlines() if x.strip()]
    assert "Traceback" not in stderr, stderr[-2000:]
    assert status == case.status, stderr
    assert len(lines) == 1, lines
    assert case.line(files) in lines[0], lines[0]
    assert not written, written
