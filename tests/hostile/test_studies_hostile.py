"""Study CSV under hostile conditions (issue 13): two runs on one --out, two at once,
a foreign file, a cut-off file, the umask; and Ctrl-C during a CP-SAT solve."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ocsplan.cli import app
from ocsplan.errors import InstanceError
from ocsplan.instance import dumps_instance
from ocsplan.studies.results import CSV_COLUMNS, Result, read_study, update_results, write_results
from ocsplan.studies.runner import run_study

from ..tiny import TINY

ROOT = Path(__file__).resolve().parent.parent.parent
runner = CliRunner()


def _row(name: str, method: str = "heuristic") -> Result:
    return Result(instance=name, path=f"{name}.toml", digest=name, n=4, meshes=1, demands=1, ports=8, method=method,
                  status="heuristic", objective_s=1e-6, bound_s=None, seconds=0.1, ports_used=8, time_limit=None)


def _write_instances(directory: Path, names: list[str]) -> list[Path]:
    paths = []
    for inst in TINY:
        if inst.name in names:
            path = directory / f"{inst.name}.toml"
            path.write_text(dumps_instance(inst))
            paths.append(path)
    return paths


def test_two_studies_in_sequence_keep_both_row_sets(tmp_path: Path) -> None:
    out = tmp_path / "study.csv"
    first = _write_instances(tmp_path, ["two-axes"])
    second = _write_instances(tmp_path, ["two-demands"])
    assert first and second
    run_study(first, ["heuristic"], out)
    run_study(second, ["heuristic"], out)
    rows, dropped = read_study(out)
    assert sorted(r.instance for r in rows) == ["two-axes", "two-demands"] and dropped == 0


def _writer(path: str, prefix: str, count: int) -> None:
    for k in range(count):
        update_results([_row(f"{prefix}{k}")], path)


def test_two_writers_at_once_lose_no_row(tmp_path: Path) -> None:
    out = str(tmp_path / "study.csv")
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(out, prefix, 25)) for prefix in ("a", "b")]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join()
    assert all(proc.exitcode == 0 for proc in procs)
    rows, _ = read_study(out)
    assert sorted(r.instance for r in rows) == sorted(f"{p}{k}" for p in "ab" for k in range(25))


def test_a_rerun_replaces_its_own_rows_only(tmp_path: Path) -> None:
    out = tmp_path / "study.csv"
    update_results([_row("x"), _row("y")], out)
    update_results([replace(_row("x"), objective_s=2e-6)], out)
    rows = {r.instance: r for r in read_study(out)[0]}
    assert set(rows) == {"x", "y"} and rows["x"].objective_s == 2e-6 and rows["y"].objective_s == 1e-6


def test_foreign_file_is_refused_not_overwritten(tmp_path: Path) -> None:
    out = tmp_path / "notes.csv"
    out.write_text("name,age\nalice,3\n")
    with pytest.raises(InstanceError, match="not a study CSV"):
        update_results([_row("x")], out)
    with pytest.raises(InstanceError, match="not a study CSV"):
        write_results([_row("x")], out)
    assert out.read_text() == "name,age\nalice,3\n"


def test_cut_off_csv_keeps_complete_rows(tmp_path: Path) -> None:
    out = tmp_path / "study.csv"
    write_results([_row("x"), _row("y"), _row("z")], out)
    text = out.read_text()
    out.write_text(text[: len(text) - 20])  # the last row cut off mid-line
    rows, dropped = read_study(out)
    assert [r.instance for r in rows] == ["x", "y"] and dropped == 1
    paths = _write_instances(tmp_path, ["two-axes"])
    result = runner.invoke(app, ["study", str(paths[0]), "--csv", str(out), "--methods", "heuristic"])
    assert result.exit_code == 0, result.output
    assert "dropped 1" in result.stderr
    assert {"x", "y", "two-axes"} <= {r.instance for r in read_study(out)[0]}


def test_header_only_and_cut_header(tmp_path: Path) -> None:
    out = tmp_path / "study.csv"
    out.write_text(",".join(CSV_COLUMNS) + "\n")
    assert read_study(out) == ([], 0)
    out.write_text(",".join(CSV_COLUMNS)[:30])
    with pytest.raises(InstanceError):
        read_study(out)


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_output_honours_the_umask(tmp_path: Path, umask: int) -> None:
    out = tmp_path / "study.csv"
    old = os.umask(umask)
    try:
        write_results([_row("x")], out)
    finally:
        os.umask(old)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask


CTRL_C = """
import os, signal, sys, threading
# Python's own handler, as in a terminal, even when started from a shell that ignores SIGINT (nohup, &)
signal.signal(signal.SIGINT, signal.default_int_handler)
from ocsplan.instance import load_instance
from ocsplan.planning.exact import plan_cpsat
plan_cpsat(load_instance(sys.argv[1]))
# after a CP-SAT solve, Ctrl-C must still reach Python
try:
    os.kill(os.getpid(), signal.SIGINT)
    threading.Event().wait(5)
except KeyboardInterrupt:
    print("after: interrupted")
# and during one: the search stops and Ctrl-C is re-raised
from ortools.sat.python import cp_model
from ocsplan.planning.exact.cpsat import _solve
m = cp_model.CpModel()
xs = [m.new_int_var(0, 200, f"x{i}") for i in range(80)]
m.add_all_different(xs)
for i in range(79):
    m.add(xs[i] + xs[i + 1] != 100)
m.maximize(sum((i % 7 + 1) * x for i, x in enumerate(xs)))
s = cp_model.CpSolver()
s.parameters.max_time_in_seconds = 120
s.parameters.num_workers = 1
threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
try:
    _solve(s, m)
    print("during: solve finished without the interrupt")
except KeyboardInterrupt:
    print("during: interrupted")
"""


def test_ctrl_c_after_and_during_a_cpsat_solve(tmp_path: Path) -> None:
    path = _write_instances(tmp_path, ["two-axes"])[0]
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run([sys.executable, "-c", CTRL_C, str(path)], capture_output=True, text=True, timeout=300,
                          env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split("\n")[:2] == ["after: interrupted", "during: interrupted"], proc.stdout
