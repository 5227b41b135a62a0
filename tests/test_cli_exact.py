"""CLI of the exact methods: solve --method cpsat|milp --export, compare, generate, study."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ocsplan import cli
from ocsplan import instance as instance_module
from ocsplan.instance import Instance, load_instance
from ocsplan.plan import Decision, DemandDecision, Plan, assemble, loads_plan
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
    # the file is the model: solved on its own it gives the paper's optimum (Table 7,
    # ring-single: 1526 us) in the file's units (the heuristic's objective = 1e3, CP-SAT 1e9)
    if suffix == ".pb.txt":
        from ortools.sat.python import cp_model

        model = cp_model.CpModel()
        assert model.proto.parse_text_format(text)
        solver = cp_model.CpSolver()
        assert solver.solve(model) == cp_model.OPTIMAL
        value, units = solver.objective_value, 1e9
    else:
        import highspy

        highs = highspy.Highs()  # type: ignore[no-untyped-call]
        highs.setOptionValue("output_flag", False)
        highs.readModel(str(target))
        highs.run()
        assert highs.getModelStatus() == highspy.HighsModelStatus.kOptimal
        value, units = highs.getInfo().objective_function_value, 1e3
    reference = PLANNERS["heuristic"](load_instance(RING)).objective_s
    assert round(value / units * reference * 1e6) == 1526


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


def test_too_few_ports_for_the_cube_exits_2(monkeypatch: pytest.MonkeyPatch) -> None:
    # L < n: the shared-host methods refuse before planning, naming the field (the
    # reader accepts it, since --method stacked needs no cube); the backends' own
    # infeasibility is tested in test_exact_backends.
    few = tiny("few-ports", 4, 3, [((16,), [[("all-reduce", 4096, 1.0, "auto")]])])
    monkeypatch.setattr(instance_module, "load_instance", lambda path: few)  # solve reads it on each call
    result = runner.invoke(cli.app, ["solve", "few.toml", "--method", "milp"])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines == ["few-ports: fabric.ports: 3 ports cannot hold the base cube of 4 generators"]


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
            tuple(DemandDecision(first[d.collective], tuple((b,) for b in block), 1) for d in axis.demands)
            for axis, block in zip(mesh.axes, part, strict=True)
        )
        for mesh, part in zip(instance.meshes, partition, strict=True)
    )
    return assemble(instance, Decision(partition, choices), method="cube", status="cube")


def test_compare_flags_a_plan_worse_than_the_optimum(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(PLANNERS, "cube", _cube_plan)
    target = tmp_path / "cmp.csv"
    result = runner.invoke(cli.app, ["compare", N256, "--methods", "cube,cpsat", "--csv", str(target)])
    assert result.exit_code == 0, result.output
    assert "1 plan(s) worse than a proven optimum" in result.output
    flagged = [line for line in result.output.splitlines() if "worse than proven optimum" in line]
    assert len(flagged) == 1 and "cube" in flagged[0]
    cube, cpsat = csv.DictReader(target.open())
    assert (cube["method"], cube["flag"], cpsat["flag"]) == ("cube", "worse than proven optimum", "")
    # the gap to the optimum of paper Table 6 (4.54 us), from the cube plan's own objective
    objective = _cube_plan(load_instance(N256)).objective_s
    assert objective > 4.6e-6
    assert float(cube["gap"]) == pytest.approx(objective / 4.54e-6 - 1, abs=0.002)


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
            "--csv",
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
    again = runner.invoke(cli.app, ["study", str(inst_dir), "--methods", "heuristic,cpsat", "--csv", str(out)])
    assert again.exit_code == 0 and "6 cached" in again.output


def test_study_is_deterministic(tmp_path: Path) -> None:
    # two fresh studies of the same instances: the same rows, byte for byte, apart from
    # the timing column; and the plans behind them serialise identically
    inst_dir = tmp_path / "inst"
    gen = ["generate", "--family", "helix", "--count", "2", "--seed", "3", "--max-bits", "5", "--out", str(inst_dir)]
    assert runner.invoke(cli.app, gen).exit_code == 0
    tables = []
    for name in ("a.csv", "b.csv"):
        target = tmp_path / name
        args = ["study", str(inst_dir), "--methods", "heuristic,cpsat", "--csv", str(target), "--fresh"]
        result = runner.invoke(cli.app, args)
        assert result.exit_code == 0, result.output
        rows = list(csv.DictReader(target.open()))
        assert len(rows) == 4
        tables.append([{k: v for k, v in row.items() if k != "seconds"} for row in rows])
    assert tables[0] == tables[1]
    first = runner.invoke(cli.app, ["solve", RING, "--method", "cpsat", "--json", "-"])
    second = runner.invoke(cli.app, ["solve", RING, "--method", "cpsat", "--json", "-"])

    def strip(text: str) -> dict[str, object]:
        data: dict[str, object] = json.loads(text[text.index("{") :])
        data.pop("solve_seconds")
        return data

    assert strip(first.stdout) == strip(second.stdout)
