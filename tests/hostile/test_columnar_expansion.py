"""What a columnar circuits file (``ocsplan.circuits/2``) may make the reader build: its run-length runs
state cells at no cost, so a few kilobytes could once ask for 2^26 routing-table entries (11 GiB and three
minutes of ``validate``). Each case runs ``ocsplan validate`` in a process of its own under 1 GiB of
address space (forked from the hostile tests' server): one line on stderr, exit 2, no traceback."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ocsplan.limits import MAX_ROUTE_EXPANSION
from ocsplan.realization.circuits import dumps_circuits
from ocsplan.realization.realize import realize

from ..realize_cases import small_fabric, small_plan
from .forked import ForkServer

ROOT = Path(__file__).resolve().parent.parent.parent
GIB = 1 << 30


def _stretched(cells_per_character: float, pad: int = 0) -> str:
    """The small two-level realization as /2 with its first route stretched: one entry per cell, as many
    phases as give ``cells_per_character`` cells per character of the text (padded by ``pad`` characters
    of notes, which a file may carry)."""
    doc = json.loads(dumps_circuits(realize(small_plan(), small_fabric()), "2"))
    doc["notes"].append("x" * pad)
    route = doc["routes"][0]
    size = len(json.dumps(doc)) + 20  # the numbers below add a few characters
    phases = int(cells_per_character * size) // route["nodes"] + 1
    route.update(phases=phases, rows=[route["rows"][0][:1]], runs=[[0, phases * route["nodes"]]])
    return json.dumps(doc)


def _validate(text: str, tmp_path: Path, fork_server: ForkServer) -> tuple[int, str]:
    path = tmp_path / "c2.json"
    path.write_text(text)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), COLUMNS="200")
    done = fork_server.run(["validate", str(path)], cwd=str(tmp_path), env=env, limit=GIB, timeout=120)
    return done.returncode, done.stderr


def test_runs_past_the_expansion_per_character_are_refused_unbuilt(tmp_path: Path,
                                                                    fork_server: ForkServer) -> None:
    text = _stretched(MAX_ROUTE_EXPANSION + 1)
    routes = json.loads(text)["routes"]  # counted by hand: every route's nodes x phases, and its runs' entries
    cells = sum(r["nodes"] * r["phases"] for r in routes)
    entries = sum(n * len(r["rows"][row]) for r in routes for row, n in r["runs"])
    assert MAX_ROUTE_EXPANSION * len(text) < cells <= entries < 1 << 26  # within the absolute limit, past the ratio
    status, stderr = _validate(text, tmp_path, fork_server)
    assert status == 2, stderr
    assert stderr.count("\n") == 1 and "Traceback" not in stderr, stderr
    assert stderr.startswith(f"{tmp_path / 'c2.json'}: routes: {entries} routing-table entries in {cells} cells "
                             f"from {len(text)} characters, the limit is {MAX_ROUTE_EXPANSION} of each per "
                             "character of the file"), stderr


def test_a_file_within_every_limit_that_outgrows_memory_is_one_line(tmp_path: Path,
                                                                     fork_server: ForkServer) -> None:
    """Padded to 3 MB, a file may state 12 M entries (about 1.2 GB once built): under 1 GiB the
    reader runs out of memory, and the command says so in one line."""
    text = _stretched(MAX_ROUTE_EXPANSION - 0.01, pad=3_000_000)
    status, stderr = _validate(text, tmp_path, fork_server)
    assert status == 2, stderr
    assert stderr.count("\n") == 1 and "Traceback" not in stderr, stderr
    assert stderr.startswith("out of memory: the inputs need more memory than this process may use"), stderr
