from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ocsplan.cayley import Topology
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
        ('name = "x"\n[fabric]\nworld = 12\nports = 4\nlatency = "1us"\nlink = "1GB/s"\n', "mesh"),
        # read fine, refused by the shared-host planner (the world is no power of two)
        ('name = "x"\n[fabric]\nworld = 12\nports = 4\nlatency = "1us"\nlink = "1GB/s"\n[[mesh]]\nshape = [12]\n',
         "fabric.world"),
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


def test_schedules_on_many_folds_finishes() -> None:
    # issue 10 item 4: 9 bits with 40 folds used to hang in the tiling search
    rng = random.Random(5)
    folds = rng.sample([m for m in range(1, 512) if m & (m - 1)], 40)
    text = ",".join(format(m, "09b") for m in folds)
    result = runner.invoke(app, ["schedules", "--bits", "9", "--folds", text, "--no-check"])
    assert result.exit_code == 0, result.output
    assert "bruck" in result.output and "degree 49" in result.output
    search = Topology.with_folds(9, folds).tiling_search
    assert ("no tiling with fewer than" in result.output) == (not search.proven)


def test_schedules_rejects_bad_mask() -> None:
    result = runner.invoke(app, ["schedules", "--bits", "4", "--folds", "11"])
    assert result.exit_code == 2
    assert result.stderr.startswith("--folds: ")


def test_frontier_nine_bits_from_the_table() -> None:
    result = runner.invoke(app, ["frontier", "--bits", "9", "--max-degree", "40"])
    assert result.exit_code == 0, result.output
    rows = {line.split("│")[1].strip(): line.split("│") for line in result.stdout.splitlines()
            if line.startswith("│")}
    # issue 10: diameter 2 at degree 39 (l(9,2) <= 39); degree 32 is open (sphere bound 2)
    assert rows["39"][2].strip() == "2"
    assert rows["32"][3].strip().startswith("open")
    assert "41" not in rows


@pytest.mark.parametrize(("args", "option"), [(["--bits", "10"], "--bits"), (["--bits", "4", "--max-degree", "0"],
                                                                            "--max-degree")])
def test_frontier_rejects_options(args: list[str], option: str) -> None:
    result = runner.invoke(app, ["frontier", *args])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"{option}: ")


def test_frontier_command() -> None:
    result = runner.invoke(app, ["frontier", "--bits", "5", "--max-degree", "10"])
    assert result.exit_code == 0
    assert "exhaustive" in result.stdout
    nine = next(line for line in result.stdout.splitlines() if line.startswith("│      9 "))
    assert nine.split("│")[2].strip() == "2"


FABRIC_576 = Path(__file__).resolve().parent.parent / "simulate" / "fabrics" / "nvl576-all-ocs-serve576.toml"

N576 = """name = "n576"
[fabric]
world = 576
ports = 16
latency = "0.52us"
link = "400Gb/s"
[[mesh]]
name = "mesh"
shape = [8, 72]
axes = [{ collective = "all-reduce", payload = "8kB" }, { collective = "all-reduce", payload = "8kB" }]
"""


def test_stacked_solve_and_shared_host_refusal(tmp_path: Path) -> None:
    path = tmp_path / "n576.toml"
    path.write_text(N576)
    result = runner.invoke(app, ["solve", str(path), "--method", "stacked", "--json", str(tmp_path / "p.json")])
    assert result.exit_code == 0, result.output
    assert "C8(1)" in result.stdout and "stacked-link" in result.stdout
    assert json.loads((tmp_path / "p.json").read_text())["schema"] == "ocsplan.plan/2"
    refused = runner.invoke(app, ["solve", str(path), "--json", str(tmp_path / "h.json")])
    assert refused.exit_code == 2
    assert refused.stderr.strip() == f"{path}: fabric.world: world 576 is not a power of two: use --method stacked"
    assert not (tmp_path / "h.json").exists()
    few = tmp_path / "few.toml"
    few.write_text(N576.replace("ports = 16", "ports = 3"))
    result = runner.invoke(app, ["solve", str(few), "--method", "stacked"])
    assert result.exit_code == 3 and result.stderr.strip().startswith(f"infeasible: {few}: 3 ports cannot connect")


def test_compare_better_column(tmp_path: Path) -> None:
    path = tmp_path / "fig15.toml"
    path.write_text(N576.replace("576", "512").replace("[8, 72]", "[8, 64]"))
    target = tmp_path / "cmp.csv"
    demands = tmp_path / "demands.csv"
    result = runner.invoke(app, ["compare", str(path), "--methods", "heuristic,stacked", "--csv", str(target),
                                 "--demands", str(demands)])
    assert result.exit_code == 0, result.output
    rows = {r["method"]: r for r in csv.DictReader(target.open())}
    # Figure 15 at L = 16: shared-host ahead
    assert rows["heuristic"]["better"] == "best" and rows["stacked"]["better"] == ""
    assert float(rows["heuristic"]["objective_s"]) < float(rows["stacked"]["objective_s"])
    per = list(csv.DictReader(demands.open()))
    assert [(r["mesh"], r["axis"]) for r in per] == [("mesh", "0"), ("mesh", "1")]
    # the 8-axis: K8 in one phase (shared-host) against the ring C8(1) in four (stacked, 2 ports)
    assert (per[0]["heuristic_phases"], per[0]["stacked_phases"], per[0]["better"]) == ("1", "4", "heuristic")
    for r in per:
        winner = min(("heuristic", "stacked"), key=lambda m: float(r[f"{m}_time_s"]))
        assert r["better"] == winner
    assert "per demand, better: heuristic 2, stacked 0, tie 0 (of 2)" in result.stdout


def test_seed_only_for_stacked(tmp_path: Path) -> None:
    path = tmp_path / "n576.toml"
    path.write_text(N576)
    result = runner.invoke(app, ["solve", str(path), "--method", "stacked", "--seed", "7"])
    assert result.exit_code == 0, result.output
    refused = runner.invoke(app, ["solve", str(path), "--seed", "7"])
    assert refused.exit_code == 2
    assert refused.stderr.strip() == "--seed: only --method stacked samples, not 'heuristic'"


def test_stacked_plan_json_errors(tmp_path: Path) -> None:
    path = tmp_path / "n576.toml"
    path.write_text(N576)
    plan_path = tmp_path / "p.json"
    assert runner.invoke(app, ["solve", str(path), "--method", "stacked", "--json", str(plan_path)]).exit_code == 0
    data = json.loads(plan_path.read_text())
    data["construction"] = "woven"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    result = runner.invoke(app, ["realize", str(bad), "--fabric", str(FABRIC_576), "--out", str(tmp_path / "c.json")])
    assert result.exit_code == 2
    assert result.stderr.strip() == f"{bad}: construction: expected 'shared-host' or 'stacked', got 'woven'"
    assert not (tmp_path / "c.json").exists()


def test_circulant_command() -> None:
    result = runner.invoke(app, ["circulant", "--size", "8", "--degree", "3"])
    assert result.exit_code == 0, result.output
    # the Wagner graph C8(1,4): diameter 2; one-shot all-reduce moves 1 + 4 = 5 sigma (by hand)
    assert "C8(1,4): degree 3, diameter 2 (exhaustive" in result.stdout
    assert result.stdout.count(" ok ") == 5
    bad = runner.invoke(app, ["circulant", "--size", "9", "--degree", "3"])
    assert bad.exit_code == 2
    assert bad.stderr.strip() == "--degree: odd degree 3 on Z_9: N is odd, so no offset is its own negative"


FQ4_INSTANCE = """name = "q4-latency"
[fabric]
world = 16
ports = 5
latency = "0.52us"
link = "400Gb/s"
[[mesh]]
name = "tp"
shape = [16]
axes = [{ collective = "all-reduce", payload = "256B" }]
"""


def test_solve_no_irregular_keeps_block_folds(tmp_path: Path) -> None:
    path = tmp_path / "q4.toml"
    path.write_text(FQ4_INSTANCE)
    extended = runner.invoke(app, ["solve", str(path), "--json", str(tmp_path / "a.json")])
    block = runner.invoke(app, ["solve", str(path), "--no-irregular", "--json", str(tmp_path / "b.json")])
    assert extended.exit_code == 0 and block.exit_code == 0
    # FQ4: 2 lambda + 3 sigma / R = 1.055 us; K4xK2xK2: 3 lambda + sigma / R = 1.565 us (hand)
    a, b = load_plan(tmp_path / "a.json"), load_plan(tmp_path / "b.json")
    assert "FQ4" in extended.output and a.meshes[0].axes[0].demands[0].fold == (0b1111,)
    assert abs(a.objective_s - 1.05536e-6) < 1e-12 and abs(b.objective_s - 1.56512e-6) < 1e-12
    refused = runner.invoke(app, ["solve", str(path), "--method", "stacked", "--no-irregular"])
    assert refused.exit_code == 2 and "--no-irregular" in refused.output


def test_solve_heuristic_time_limit_returns_its_best_plan_so_far(tmp_path: Path) -> None:
    # wide-s1-0003 has 650 partition classes: a tiny limit stops the search after the first
    # screening, and the plan it returns is still a valid plan, with a note that says so
    path = Path(__file__).resolve().parent.parent / "instances" / "families" / "hard" / "wide-s1-0003.toml"
    out = tmp_path / "plan.json"
    result = runner.invoke(app, ["solve", str(path), "--time-limit", "0.001", "--json", str(out)])
    assert result.exit_code == 0, result.output
    plan = load_plan(out)
    assert check_plan(plan, load_instance(path)) == []
    assert any(note.startswith("time limit") for note in plan.notes)
    full = runner.invoke(app, ["solve", str(path), "--json", "-"])
    assert not any(note.startswith("time limit") for note in json.loads(full.stdout)["notes"])


def test_version_is_the_package_metadata() -> None:
    from importlib.metadata import version

    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout.strip() == f"ocsplan {version('ocsplan')}"
