"""CLI of issue 3: solve --method cpsat|milp --export, compare, generate, study."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ocsplan import cli
from ocsplan.cli import plan as cli_plan
from ocsplan.instance import Instance, load_instance
from ocsplan.plan import Decision, DemandChoice, Plan, assemble, loads_plan
from ocsplan.planning.check import check_plan
from ocsplan.planning.registry import PLANNERS
from ocsplan.planning.space import candidate_partitions

from .tiny import tiny

ROOT = Path(__file__).resolve().parents[1]
N256 = str(ROOT / "instances/paper-multimesh-n256.toml")
RING = str(ROOT / "instances/paper-table7-ring-single.toml")
runner = CliRunner()


@pytest.mark.parametrize("method", ["cpsat", "milp"])
def test_solve_exact_json(method: str) -> None:
    result = runner.invoke(
        cli.app,
        ["solve", N256, "--method", method, "--json", "-", "--time-limit", "60", "--workers", "2"],
    )
    assert result.exit_code == 0, result.output
    start = result.stdout.index("{")
    plan = loads_plan(result.stdout[start:])
    assert (plan.method, plan.status) == (method, "optimal")
    assert plan.bound_s is not None and plan.bound_s <= plan.objective_s
    assert check_plan(plan, load_instance(N256)) == []


@pytest.mark.parametrize("suffix", [".mps", ".lp", ".pb.txt"])
def test_export_model(suffix: str, tmp_path: Path) -> None:
    target = tmp_path / f"model{suffix}"
    result = runner.invoke(cli.app, ["solve", RING, "--method", "cpsat", "--export", str(target)])
    assert result.exit_code == 0, result.output
    text = target.read_text()
    assert "ports" in text
    assert [p.name for p in tmp_path.iterdir()] == [target.name]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--export", "model.txt", "--method", "cpsat"],
            "--export: model.txt: unknown model format",
        ),
        (["--export", "model.mps"], "--export: needs an exact method"),
        (["--method", "gurobi"], "unknown method 'gurobi'"),
    ],
)
def test_bad_options_are_one_line(args: list[str], message: str, tmp_path: Path) -> None:
    result = runner.invoke(cli.app, ["solve", RING, *args])
    assert result.exit_code in (1, 2)
    assert message in result.output
    assert "Traceback" not in result.output


def test_infeasible_exits_3(monkeypatch: pytest.MonkeyPatch) -> None:
    # Instance files with L < n are rejected by the reader (exit 2); built in code
    # such an instance reaches the planner, which must say "infeasible" (exit 3).
    few = tiny("few-ports", 4, 3, [((16,), [[("all-reduce", 4096, 1.0, "auto")]])])
    monkeypatch.setattr(cli_plan, "load_instance", lambda path: few)
    result = runner.invoke(cli.app, ["solve", "few.toml", "--method", "milp"])
    assert result.exit_code == 3
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines == ["infeasible: few-ports: the base cube needs 4 ports, the fabric has 3"]


def test_compare_tables_and_csv(tmp_path: Path) -> None:
    target = tmp_path / "cmp.csv"
    result = runner.invoke(cli.app, ["compare", RING, N256, "--csv", str(target)])
    assert result.exit_code == 0, result.output
    assert "paper-table7-ring-single" in result.output and "paper-multimesh-n256" in result.output
    rows = list(csv.DictReader(target.open()))
    assert [r["method"] for r in rows] == ["heuristic", "cpsat", "milp"] * 2
    assert all(r["status"] == "optimal" for r in rows if r["method"] != "heuristic")
    assert all(r["flag"] == "" for r in rows)


def _cube_plan(instance: Instance, **_: object) -> Plan:
    """A deliberately poor planner: every demand on the unit masks of the first
    candidate partition at multiplicity 1, spare ports left unused."""
    partition = candidate_partitions(instance)[0]
    first = {"all-reduce": "recursive-doubling", "all-gather": "layered", "all-to-all": "bruck"}
    choices = tuple(
        tuple(
            tuple(DemandChoice(first[d.collective], tuple((b,) for b in block), 1) for d in axis.demands)
            for axis, block in zip(mesh.axes, part, strict=True)
        )
        for mesh, part in zip(instance.meshes, partition, strict=True)
    )
    return assemble(instance, Decision(partition, choices), method="cube", status="cube")


def test_compare_flags_a_plan_worse_than_the_optimum(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(PLANNERS, "cube", _cube_plan)
    result = runner.invoke(cli.app, ["compare", N256, "--methods", "cube,cpsat"])
    assert result.exit_code == 0, result.output
    assert "worse than proven optimum" in result.output
    assert "1 plan(s) worse than a proven optimum" in result.output


def test_generate_writes_valid_files(tmp_path: Path) -> None:
    result = runner.invoke(
        cli.app,
        ["generate", "--family", "helix", "--count", "3", "--seed", "4", "--out", str(tmp_path)],
    )
    assert result.exit_code == 0, result.output
    files = sorted(tmp_path.glob("*.toml"))
    assert [f.name for f in files] == [f"helix-s4-{k:04d}.toml" for k in range(3)]
    for f in files:
        load_instance(f)
    bad = runner.invoke(cli.app, ["generate", "--family", "zipf", "--out", str(tmp_path)])
    assert bad.exit_code == 2 and "unknown family 'zipf'" in bad.output


def test_study_command(tmp_path: Path) -> None:
    inst_dir = tmp_path / "inst"
    runner.invoke(
        cli.app,
        [
            "generate",
            "--family",
            "latency",
            "--count",
            "3",
            "--seed",
            "1",
            "--max-bits",
            "5",
            "--out",
            str(inst_dir),
        ],
    )
    out = tmp_path / "study.csv"
    png = tmp_path / "gaps.png"
    result = runner.invoke(
        cli.app,
        [
            "study",
            str(inst_dir),
            "--methods",
            "heuristic,cpsat",
            "--out",
            str(out),
            "--plot",
            str(png),
            "--workers",
            "1",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "study of 3 instances" in result.output
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 6 and {r["method"] for r in rows} == {"heuristic", "cpsat"}
    assert all(r["status"] == "optimal" for r in rows if r["method"] == "cpsat")
    assert png.stat().st_size > 0
    again = runner.invoke(cli.app, ["study", str(inst_dir), "--methods", "heuristic,cpsat", "--out", str(out)])
    assert again.exit_code == 0 and "6 cached" in again.output


def test_study_plan_json_is_deterministic() -> None:
    first = runner.invoke(cli.app, ["solve", RING, "--method", "cpsat", "--json", "-"])
    second = runner.invoke(cli.app, ["solve", RING, "--method", "cpsat", "--json", "-"])

    def strip(text: str) -> dict[str, object]:
        data = json.loads(text[text.index("{") :])
        data.pop("solve_seconds")
        return data

    assert strip(first.stdout) == strip(second.stdout)
