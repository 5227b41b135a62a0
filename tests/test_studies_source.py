"""The ``source`` column: an exact run that finds nothing better than its heuristic seed
returns the seed's plan under its own name; the study CSV and ``compare`` say so."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ocsplan import cli
from ocsplan.instance import load_instance
from ocsplan.planning.exact import ExactRun
from ocsplan.planning.exact.backend import Outcome
from ocsplan.planning.exact.cpsat import CpSatBackend
from ocsplan.planning.exact.model import Assignment, Formulation
from ocsplan.studies.results import CSV_COLUMNS, dumps_results, read_results
from ocsplan.studies.runner import run_method

ROOT = Path(__file__).resolve().parents[1]
RING = ROOT / "instances/paper-table7-ring-single.toml"


class _NoAnswer:
    """A backend that stops without a solution (what a time limit does)."""

    name = "stub"

    def solve(self, form: Formulation, hint: Assignment | None) -> Outcome:
        return Outcome("unknown", None, None, None, "stub")


def test_a_returned_seed_names_the_heuristic_as_source() -> None:
    run = ExactRun(load_instance(RING))
    plan = run.solve(_NoAnswer(), "cpsat")
    assert (plan.method, plan.source) == ("cpsat", "heuristic")
    assert run.seed is not None and run.seed.source == "heuristic"


def test_the_study_csv_keeps_the_source(tmp_path: Path) -> None:
    inst = load_instance(RING)
    rows = [run_method(inst, str(RING), m) for m in ("heuristic", "cpsat")]
    # CP-SAT proves the optimum itself: its own plan, not the seed
    assert [r.source for r in rows] == ["heuristic", "cpsat"]
    text = dumps_results(rows)
    assert "source" in CSV_COLUMNS
    parsed = list(csv.DictReader(text.splitlines()))
    assert [(r["method"], r["source"]) for r in parsed] == [("heuristic", "heuristic"), ("cpsat", "cpsat")]
    target = tmp_path / "s.csv"
    target.write_text(text)
    assert [r.source for r in read_results(target)] == ["heuristic", "cpsat"]


def test_compare_shows_a_run_that_returned_its_seed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # CP-SAT stopped before any solution (what a short time limit does; deterministic here)
    monkeypatch.setattr(CpSatBackend, "solve", lambda self, form, hint: _NoAnswer().solve(form, hint))
    target = tmp_path / "cmp.csv"
    result = CliRunner().invoke(
        cli.app, ["compare", str(RING), "--methods", "heuristic,cpsat", "--time-limit", "5", "--csv", str(target)]
    )
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(target.open()))
    assert [(r["method"], r["status"], r["source"]) for r in rows] == [
        ("heuristic", "heuristic", "heuristic"),
        ("cpsat", "unknown", "heuristic"),
    ]
    line = next(line for line in result.output.splitlines() if line.strip().startswith("│ cpsat"))
    assert "heuristic" in line
