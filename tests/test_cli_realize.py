"""CLI: realize, validate and solve --realize (exit codes, files, one-line errors)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ocsplan.cli import app
from ocsplan.plan import write_plan

from .conftest import instance_path
from .realize_cases import FABRICS, SMALL_FABRIC, small_plan

runner = CliRunner()


@pytest.fixture
def small(tmp_path: Path) -> tuple[Path, Path]:
    plan, fabric = tmp_path / "plan.json", tmp_path / "fabric.toml"
    write_plan(small_plan(), plan)
    fabric.write_text(SMALL_FABRIC)
    return plan, fabric


def test_realize_then_validate(small: tuple[Path, Path], tmp_path: Path) -> None:
    plan, fabric = small
    out = tmp_path / "circuits.json"
    result = runner.invoke(app, ["realize", str(plan), "--fabric", str(fabric), "--out", str(out)])
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert "256 circuits, 128 through one OCS, 128 through three (inter-rack)" in text
    assert json.loads(out.read_text())["schema"] == "ocsplan.circuits/1"
    result = runner.invoke(app, ["validate", str(out), "--plan", str(plan)])
    assert result.exit_code == 0, result.output
    assert "valid: 64 nodes, 256 circuits" in result.stdout


def test_validate_lists_faults_and_exits_1(small: tuple[Path, Path], tmp_path: Path) -> None:
    plan, fabric = small
    out = tmp_path / "circuits.json"
    assert runner.invoke(app, ["realize", str(plan), "--fabric", str(fabric), "--out", str(out)]).exit_code == 0
    data = json.loads(out.read_text())
    data["circuits"][0]["b"][0] ^= 1  # wrong peer
    out.write_text(json.dumps(data))
    result = runner.invoke(app, ["validate", str(out)])
    assert result.exit_code == 1
    node, port = data["circuits"][0]["a"]
    assert f"node {node}, port {port}: wrong peer" in result.stdout
    assert all(line.startswith(("node ", "device ", "counts ")) for line in result.stdout.splitlines())


def test_impossible_realization_exits_3_without_output(tmp_path: Path) -> None:
    out, plan = tmp_path / "circuits.json", tmp_path / "plan.json"
    result = runner.invoke(app, ["solve", str(instance_path("megatron-5t-n512-b1")), "--json", str(plan),
                                 "--realize", str(FABRICS / "nvl576-ocs-4to1.toml"), "--circuits", str(out)])
    assert result.exit_code == 3
    assert result.stderr.strip().splitlines() == [
        "infeasible: rail 0 (generator 100000000): rack 0 needs 32 uplinks to level 2, "
        "fabric nvl576-ocs-4to1 has 8"]
    assert not out.exists() and not plan.exists()


def test_realize_command_exits_3_without_output(small: tuple[Path, Path], tmp_path: Path) -> None:
    # 4 uplinks per rack and rail, but 8 circuits leave each rack on an inter-rack rail
    plan, fabric = small
    fabric.write_text(fabric.read_text().replace("up = 8", "up = 4").replace("radix = 24", "radix = 12"))
    out = tmp_path / "circuits.json"
    result = runner.invoke(app, ["realize", str(plan), "--fabric", str(fabric), "--out", str(out)])
    assert result.exit_code == 3 and not out.exists()
    assert result.stderr.strip().splitlines() == [
        "infeasible: rail 0 (generator 100000): rack 0 needs 8 uplinks to level 2, fabric small-two-level has 4"]


def test_solve_realize_table6_on_a_single_level_fabric(tmp_path: Path) -> None:
    out = tmp_path / "circuits.json"
    result = runner.invoke(app, ["solve", str(instance_path("paper-multimesh-n256")),
                                 "--realize", str(FABRICS / "ocs-single.toml"), "--circuits", str(out)])
    assert result.exit_code == 0, result.output
    assert "17 of 64 ports per node" in " ".join(result.stdout.split())
    assert json.loads(out.read_text())["ports_used"] == 17
    assert runner.invoke(app, ["validate", str(out)]).exit_code == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--placement", "diagonal"], "--placement: unknown placement"),
        (["--fabric", "missing.toml"], "missing.toml: cannot read file"),
    ],
)
def test_bad_realize_input_exits_2(small: tuple[Path, Path], args: list[str], message: str) -> None:
    plan, fabric = small
    base = ["realize", str(plan), "--fabric", str(fabric)]
    if args[0] == "--fabric":
        base = base[:2]
    result = runner.invoke(app, base + args)
    assert result.exit_code == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_malformed_circuits_file_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "c.json"
    bad.write_text('{"schema": "ocsplan.plan/1"}')
    result = runner.invoke(app, ["validate", str(bad)])
    assert result.exit_code == 2 and "schema: expected 'ocsplan.circuits/1'" in result.stderr
