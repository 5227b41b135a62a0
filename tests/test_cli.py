from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ocsplan.cli import app
from ocsplan.instance import load_instance
from ocsplan.plan import load_plan
from ocsplan.planning.check import check_plan

from .conftest import instance_path

runner = CliRunner()


def test_solve_prints_table_and_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    result = runner.invoke(app, ["solve", str(instance_path("paper-multimesh-n256")), "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "K8□K8" in result.stdout and "17 of 18" in result.stdout
    plan = load_plan(out)
    assert check_plan(plan, load_instance(instance_path("paper-multimesh-n256"))) == []


def test_solve_json_to_stdout() -> None:
    result = runner.invoke(app, ["solve", str(instance_path("paper-table7-rsag-single")), "--json", "-"])
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["schema"] == "ocsplan.plan/1" and data["ports_used"] == 36


@pytest.mark.parametrize(
    ("content", "field"),
    [
        ('name = "x"\n[fabric]\nworld = 12\nports = 4\nlatency = "1us"\nlink = "1GB/s"\n', "fabric.world"),
        ("[fabric\n", "toml"),
    ],
)
def test_bad_instance_one_line_exit_2(tmp_path: Path, content: str, field: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(content)
    result = runner.invoke(app, ["solve", str(path), "--json", str(tmp_path / "out.json")])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{path}: {field}: ")
    assert "Traceback" not in result.output
    assert not (tmp_path / "out.json").exists()


def test_missing_instance_file(tmp_path: Path) -> None:
    result = runner.invoke(app, ["solve", str(tmp_path / "nope.toml")])
    assert result.exit_code == 2
    assert "nope.toml" in result.stderr and "cannot read" in result.stderr


def test_schedules_reproduces_table4() -> None:
    result = runner.invoke(
        app, ["schedules", "--bits", "4", "--folds", "1111", "--payload", "4KiB", "--collective", "all-reduce"]
    )
    assert result.exit_code == 0, result.output
    rows = {line.split("│")[2].strip(): line for line in result.stdout.splitlines() if line.count("│") > 5}
    # Table 4, Q4+1111: one-shot 2 / 7 sigma, coset-factored 3 / 3 sigma
    assert rows["one-shot"].split("│")[4].strip() == "2" and "│       7 │" in rows["one-shot"]
    assert rows["coset-factored"].split("│")[4].strip() == "3"
    assert "MISMATCH" not in result.stdout and result.stdout.count(" ok ") >= 8


def test_schedules_rejects_bad_mask() -> None:
    result = runner.invoke(app, ["schedules", "--bits", "4", "--folds", "11"])
    assert result.exit_code == 2
    assert result.stderr.startswith("--folds: ")


def test_frontier_command() -> None:
    result = runner.invoke(app, ["frontier", "--bits", "5", "--max-degree", "10"])
    assert result.exit_code == 0
    assert "exhaustive" in result.stdout
    nine = next(line for line in result.stdout.splitlines() if line.startswith("│      9 "))
    assert nine.split("│")[2].strip() == "2"
