"""CLI: export PLAN --out DIR, export --check DIR (round trip, refusals, no partial directory)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ocsplan.cli import app
from ocsplan.plan import write_plan

from .realize_cases import small_plan

runner = CliRunner()


@pytest.fixture
def plan(tmp_path: Path) -> Path:
    path = tmp_path / "plan.json"
    write_plan(small_plan(), path)
    return path


def test_export_then_check(plan: Path, tmp_path: Path) -> None:
    out = tmp_path / "msccl"
    result = runner.invoke(app, ["export", str(plan), "--out", str(out), "--max-steps", "4096"])
    assert result.exit_code == 0, result.output
    index = json.loads((out / "index.json").read_text())
    assert index["schema"] == "ocsplan.export-index/1"
    for d in index["demands"]:
        assert (out / d["file"]).is_file()
        accelerators = sorted(a for group in d["groups"] for a in group)
        assert accelerators == list(range(index["world"]))
    result = runner.invoke(app, ["export", "--check", str(out)])
    assert result.exit_code == 0, result.output
    assert f"{len(index['demands'])} schedule(s) checked" in result.stdout


def test_check_catches_an_edited_file(plan: Path, tmp_path: Path) -> None:
    out = tmp_path / "msccl"
    assert runner.invoke(app, ["export", str(plan), "--out", str(out), "--max-steps", "4096"]).exit_code == 0
    first = json.loads((out / "index.json").read_text())["demands"][0]["file"]
    text = (out / first).read_text()
    (out / first).write_text(text.replace('type="s"', 'type="nop"', 1))
    result = runner.invoke(app, ["export", "--check", str(out)])
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1 and first in result.stderr


def test_out_is_a_file_refused(plan: Path, tmp_path: Path) -> None:
    out = tmp_path / "taken"
    out.write_text("x")
    result = runner.invoke(app, ["export", str(plan), "--out", str(out)])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "not a directory" in result.stderr
    assert out.read_text() == "x"


def test_refusal_leaves_no_directory(plan: Path, tmp_path: Path) -> None:
    out = tmp_path / "msccl"
    result = runner.invoke(app, ["export", str(plan), "--out", str(out), "--max-steps", "1"])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "MSCCL_MAX_NUM_STEPS" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.json"]
