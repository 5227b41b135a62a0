"""Progress bars of realize and validate (issue 42 goal 5): on a terminal, above the documented size
(``cli/realize.py``: BAR_CIRCUITS, BAR_FILE_BYTES), never with --quiet or piped; the outputs are the
same bytes with or without a bar; validate's core reports every check it runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from ocsplan.cli import app
from ocsplan.cli import realize as realize_cli
from ocsplan.plan import load_plan
from ocsplan.realization.circuits import load_circuits
from ocsplan.realization.validate import validate

from .conftest import ROOT, instance_path
from .test_cli_console import BAR, terminal_stderr

__all__ = ["terminal_stderr"]  # the fixture, used by name

SINGLE = str(ROOT / "simulate" / "fabrics" / "ocs-single.toml")


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("progress")
    paths = {"plan": d / "plan.json", "circuits": d / "c.json"}
    for args in (["solve", str(instance_path("paper-multimesh-n256")), "--json", str(paths["plan"])],
                 ["realize", str(paths["plan"]), "--fabric", SINGLE, "--out", str(paths["circuits"])]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
    return paths


def _run(args: list[str]) -> tuple[str, str]:
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.stdout, result.stderr


@pytest.mark.usefixtures("terminal_stderr")
def test_realize_bar_above_the_size_only(files: dict[str, Path], tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    plan = load_plan(files["plan"])
    circuits = plan.world * plan.ports_used // 2  # each circuit takes a port at both ends
    assert circuits < realize_cli.BAR_CIRCUITS  # this small plan: no bar
    args = ["realize", str(files["plan"]), "--fabric", SINGLE, "--out"]
    plain_out, plain_err = _run([*args, str(tmp_path / "a.json")])
    assert BAR not in plain_err
    monkeypatch.setattr(realize_cli, "BAR_CIRCUITS", circuits)  # now at the size
    shown_out, shown_err = _run([*args, str(tmp_path / "b.json")])
    assert BAR in shown_err and f"realize: {circuits} circuits" in shown_err and "\x1b" not in shown_out
    quiet_out, quiet_err = _run([*args, str(tmp_path / "c.json"), "--quiet"])
    assert BAR not in quiet_err
    assert plain_out.replace("a.json", "x") == shown_out.replace("b.json", "x") == quiet_out.replace("c.json", "x")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes() == files["circuits"].read_bytes()
    assert len(load_circuits(tmp_path / "b.json").circuits) == circuits


@pytest.mark.usefixtures("terminal_stderr")
def test_validate_bar_above_the_size_only(files: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    size = files["circuits"].stat().st_size
    assert size < realize_cli.BAR_FILE_BYTES
    args = ["validate", str(files["circuits"]), "--plan", str(files["plan"])]
    plain_out, plain_err = _run(args)
    monkeypatch.setattr(realize_cli, "BAR_FILE_BYTES", size)
    shown_out, shown_err = _run(args)
    _, quiet_err = _run([*args, "--quiet"])
    assert BAR not in plain_err and BAR in shown_err and BAR not in quiet_err
    assert "validate: " in shown_err and plain_out == shown_out and "valid:" in plain_out


def test_validate_reports_each_check(files: dict[str, Path]) -> None:
    circuits, plan = load_circuits(files["circuits"]), load_plan(files["plan"])
    alone: list[tuple[int, int]] = []
    with_plan: list[tuple[int, int]] = []
    assert validate(circuits, progress=lambda done, total: alone.append((done, total))) == []
    assert validate(circuits, plan, progress=lambda done, total: with_plan.append((done, total))) == []
    for seen in (alone, with_plan):
        assert [done for done, _ in seen] == list(range(1, len(seen) + 1)) and {t for _, t in seen} == {len(seen)}
    assert len(with_plan) == len(alone) + 1  # the plan's coverage is one more check
