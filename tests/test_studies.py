"""Batch studies: rows, derived gaps and flags, summary, cache, interruption, figure."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ocsplan.instance import dumps_instance
from ocsplan.studies import (
    Result,
    read_results,
    run_study,
    runner,
    summarize,
    summary,
    table_rows,
    write_results,
)
from ocsplan.studies import results as study_results

from .tiny import TINY


def _result(
    name: str,
    method: str,
    status: str,
    objective: float,
    bound: float | None = None,
    seconds: float = 1.0,
) -> Result:
    return Result(
        instance=name,
        path=f"{name}.toml",
        digest=name,
        n=4,
        meshes=1,
        demands=1,
        ports=8,
        method=method,
        status=status,
        objective_s=objective,
        bound_s=bound,
        seconds=seconds,
        ports_used=8,
        time_limit=None,
    )


def test_gaps_and_flags() -> None:
    results = [
        _result("a", "heuristic", "heuristic", 1.10),
        _result("a", "cpsat", "optimal", 1.00, 1.00),
        _result("b", "heuristic", "heuristic", 2.00),
        _result("b", "cpsat", "feasible", 2.00, 1.60),
        _result("c", "heuristic", "heuristic", 0.90),
        _result("c", "cpsat", "optimal", 1.00, 1.00),
    ]
    rows = {(r["instance"], r["method"]): r for r in table_rows(results)}
    assert rows[("a", "heuristic")]["gap"] == pytest.approx(0.10)
    assert rows[("a", "heuristic")]["flag"] == "worse than proven optimum"
    assert rows[("a", "cpsat")]["gap"] == 0.0 and rows[("a", "cpsat")]["flag"] == ""
    # no proven optimum on b: no gap, but a bound gap of (2 - 1.6) / 1.6
    assert rows[("b", "heuristic")]["gap"] is None
    assert rows[("b", "heuristic")]["bound_gap"] == pytest.approx(0.25)
    # an "optimal" beaten by the heuristic is a modelling error somewhere: flagged
    assert rows[("c", "cpsat")]["flag"] == "claims optimal but heuristic is better"


def test_summary_by_hand() -> None:
    results = [
        _result("a", "heuristic", "heuristic", 1.10, seconds=1.0),
        _result("a", "cpsat", "optimal", 1.00, 1.00, seconds=2.0),
        _result("b", "heuristic", "heuristic", 1.00, seconds=3.0),
        _result("b", "cpsat", "optimal", 1.00, 1.00, seconds=4.0),
        _result("c", "heuristic", "heuristic", 1.30, seconds=5.0),
        _result("c", "cpsat", "optimal", 1.00, 1.00, seconds=6.0),
    ]
    heur, exact = summarize(results)
    # gaps 10 %, 0 %, 30 %: mean 40/3 %, median 10 %, max 30 %
    assert heur.method == "heuristic" and heur.compared == 3 and heur.at_optimum == 1
    assert heur.mean_gap == pytest.approx(0.4 / 3)
    assert heur.median_gap == pytest.approx(0.10)
    assert heur.max_gap == pytest.approx(0.30)
    assert (heur.time_p50, heur.time_max) == (3.0, 5.0)
    assert heur.time_p90 == pytest.approx(4.6)  # 3 + 0.8 * (5 - 3)
    assert (exact.optimal, exact.at_optimum, exact.max_gap) == (3, 3, 0.0)


def test_csv_round_trip(tmp_path: Path) -> None:
    results = [
        _result("a", "heuristic", "heuristic", 1.1),
        _result("a", "cpsat", "optimal", 1.0, 1.0),
    ]
    path = tmp_path / "s.csv"
    write_results(results, path)
    assert read_results(path) == results
    header = next(csv.reader(path.open()))
    assert header[:12] == [
        "instance",
        "n",
        "meshes",
        "demands",
        "L",
        "method",
        "status",
        "source",
        "objective_s",
        "bound_s",
        "gap",
        "bound_gap",
    ]


def _files(tmp_path: Path, names: list[str]) -> list[Path]:
    paths = []
    for inst in TINY:
        if inst.name in names:
            path = tmp_path / f"{inst.name}.toml"
            path.write_text(dumps_instance(inst))
            paths.append(path)
    return paths


def test_study_rows_and_cache(tmp_path: Path) -> None:
    paths = _files(tmp_path, ["two-axes", "two-demands"])
    out = tmp_path / "study.csv"
    seen: list[tuple[str, bool]] = []
    results, interrupted = run_study(
        paths,
        ["heuristic", "cpsat"],
        out,
        workers=1,
        on_result=lambda r, cached: seen.append((r.method, cached)),
    )
    assert not interrupted and len(results) == 4
    assert [r.method for r in results] == ["heuristic", "cpsat"] * 2
    assert all(not cached for _, cached in seen)
    assert len(read_results(out)) == 4
    # rerun: everything comes from the cache
    seen.clear()
    again, _ = run_study(
        paths,
        ["heuristic", "cpsat"],
        out,
        workers=1,
        on_result=lambda r, cached: seen.append((r.method, cached)),
    )
    assert [c for _, c in seen] == [True] * 4
    assert [(r.instance, r.method, r.objective_s) for r in again] == [
        (r.instance, r.method, r.objective_s) for r in results
    ]
    # change one instance: only its two rows are solved again
    text = paths[0].read_text().replace("ports = 7", "ports = 8")
    paths[0].write_text(text)
    seen.clear()
    run_study(
        paths,
        ["heuristic", "cpsat"],
        out,
        workers=1,
        on_result=lambda r, cached: seen.append((r.instance, cached)),
    )
    assert sorted(seen) == [
        ("two-axes", False),
        ("two-axes", False),
        ("two-demands", True),
        ("two-demands", True),
    ]
    # rows produced by other planner code are not reused
    text = out.read_text()
    out.write_text(text.replace(study_results.code_fingerprint(), "otherversion"))
    seen.clear()
    run_study(paths, ["heuristic"], out, workers=1, on_result=lambda r, cached: seen.append((r.instance, cached)))
    assert sorted(seen) == [("two-axes", False), ("two-demands", False)]


def test_interrupt_keeps_finished_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = _files(tmp_path, ["two-axes", "two-demands"])
    out = tmp_path / "study.csv"
    real = runner._run_task
    calls = {"n": 0}

    def flaky(task: object) -> Result:
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(task)  # type: ignore[arg-type]

    monkeypatch.setattr(runner, "_run_task", flaky)
    results, interrupted = run_study(paths, ["heuristic", "cpsat"], out, workers=1)
    assert interrupted and len(results) == 2
    assert [(r.instance, r.method) for r in read_results(out)] == [
        ("two-axes", "heuristic"),
        ("two-axes", "cpsat"),
    ]


def test_parallel_jobs_give_the_same_rows(tmp_path: Path) -> None:
    paths = _files(tmp_path, ["two-axes", "two-demands", "requested"])
    serial, _ = run_study(paths, ["heuristic", "milp"], tmp_path / "a.csv", workers=1)
    parallel, _ = run_study(paths, ["heuristic", "milp"], tmp_path / "b.csv", jobs=2, workers=1)
    assert [(r.instance, r.method, r.status, r.objective_s) for r in serial] == [
        (r.instance, r.method, r.status, r.objective_s) for r in parallel
    ]


def test_plot_bytes() -> None:
    results = [
        _result("a", "heuristic", "heuristic", 1.1),
        _result("a", "cpsat", "optimal", 1.0, 1.0),
    ]
    assert summary.gap_image(results, "png")[:8] == b"\x89PNG\r\n\x1a\n"
    svg = summary.gap_image(results, "svg")
    assert b"<dc:date>" not in svg and svg == summary.gap_image(results, "svg")  # no date: the same bytes
    assert summary.gap_image(results, "pdf").startswith(b"%PDF")
    # what is plotted: heuristic 1.1 s against the proven 1.0 s is a 10 % gap, cpsat 0 %,
    # both at n = 4 (spread by less than 0.2 so that the methods do not overlap)
    fig = summary.gap_figure(results)
    (ax,) = fig.axes
    points = {c.get_label(): c.get_offsets() for c in ax.collections}
    assert set(points) == {"heuristic", "cpsat"}
    assert [float(y) for _, y in points["heuristic"]] == pytest.approx([10.0])
    assert [float(y) for _, y in points["cpsat"]] == pytest.approx([0.0])
    assert all(abs(float(x) - 4) < 0.2 for pts in points.values() for x, _ in pts)
    means = sorted(float(y) for line in ax.lines for y in line.get_ydata())
    assert means == pytest.approx([0.0, 10.0])
    assert ax.get_ylabel() == "gap to proven optimum (%)"


_PROBE = """import sys
from filelock import FileLock, Timeout
try:
    FileLock(sys.argv[1]).acquire(timeout=0)
except Timeout:
    print("held")
else:
    print("free")
"""


def _probe(lock: Path) -> str:
    return subprocess.run([sys.executable, "-c", _PROBE, str(lock)], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_study_lock_excludes_another_process(tmp_path: Path) -> None:
    """While one study holds the CSV's lock another process cannot take it; after, it can.
    The lock is a hidden file beside the CSV (filelock), the only thing the lock leaves."""
    target = tmp_path / "s.csv"
    lock = study_results.lock_path(target)
    assert lock == tmp_path / ".s.csv.lock"
    with study_results.study_lock(target):
        held = _probe(lock)
    assert (held, _probe(lock)) == ("held", "free")
    assert [p.name for p in tmp_path.iterdir()] == [".s.csv.lock"]


def test_results_module_does_not_need_fcntl() -> None:
    """No module-level fcntl (absent on Windows): the study modules import without it."""
    code = ("import sys; sys.modules['fcntl'] = None\n"
            "import ocsplan.studies.results, ocsplan.studies.runner, ocsplan.files; print('ok')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1] / "src")})
    assert done.stdout.strip() == "ok", done.stderr


def test_gap_plot_clamps_at_zero_with_a_note() -> None:
    """Instance b: the heuristic's 0.9 s beats cpsat's 'optimal' 1.0 s by 10 % (by hand): its gap
    is drawn at 0, the axis starts at 0, a note counts the point, and the optimum's row is
    flagged. Instance a (1.1 s against 1.0 s) is a plain 10 % gap and needs no note."""
    results = [
        _result("a", "heuristic", "heuristic", 1.1),
        _result("a", "cpsat", "optimal", 1.0, 1.0),
        _result("b", "heuristic", "heuristic", 0.9),
        _result("b", "cpsat", "optimal", 1.0, 1.0),
    ]
    rows = study_results.table_rows(results)
    assert [(r["gap"], r["below_optimum"]) for r in rows] == [
        (pytest.approx(0.1), False), (0.0, False), (0.0, True), (0.0, False)]
    assert rows[3]["flag"] == "claims optimal but heuristic is better"
    fig = summary.gap_figure(results)
    (ax,) = fig.axes
    fig.canvas.draw()
    assert ax.get_ylim()[0] == 0.0
    heuristic = next(c for c in ax.collections if c.get_label() == "heuristic")
    assert sorted(float(y) for _, y in heuristic.get_offsets()) == pytest.approx([0.0, 10.0])
    assert [t.get_text() for t in fig.texts] == [
        "note: 1 point(s) below a proven optimum drawn at 0 "
        "(the optimum's row is flagged in the CSV: claims optimal but ... is better)"]
    labels = [t.get_text() for t in ax.get_yticklabels() + ax.get_xticklabels() if t.get_text()]
    assert labels and all(label.replace(".", "", 1).isdigit() for label in labels), labels  # plain numbers
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert len(legend) == len(ax.collections) + len(ax.lines) == 4
    assert set(legend) == {"heuristic", "cpsat", "heuristic (mean per n)", "cpsat (mean per n)"}
    assert not summary.gap_figure(results[:2]).texts  # no clamp, no note


def test_instance_digest_ignores_formatting_not_content() -> None:
    """The cache key is the instance's data: the hand-formatted file and the tomli-w text of it
    hash alike; one payload byte more does not."""
    from dataclasses import replace

    from ocsplan.instance import load_instance, loads_instance

    inst = load_instance(Path(__file__).parents[1] / "instances" / "paper-multimesh-n256.toml")
    again = loads_instance(dumps_instance(inst), "elsewhere.toml")
    assert study_results.instance_digest(again) == study_results.instance_digest(inst)
    axis = inst.meshes[0].axes[0]
    bigger = replace(axis, demands=(replace(axis.demands[0], payload=axis.demands[0].payload + 1),))
    changed = replace(inst, meshes=(replace(inst.meshes[0], axes=(bigger, *inst.meshes[0].axes[1:])),
                                    *inst.meshes[1:]))
    assert study_results.instance_digest(changed) != study_results.instance_digest(inst)
