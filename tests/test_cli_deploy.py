"""`ocsplan deploy` (issue 39): one command from a model to a consistent deployment directory."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from ocsplan.cli import app
from ocsplan.schemas import schema

runner = CliRunner()
# gpt-oss-120b on 64 accelerators at (KVP, TPA, EP, TPE) = (8, 8, 8, 8): attention mesh 8 x 8
# (KVP x TPA), FFN mesh 8 x 8 (TPE x EP), as `workload --emit` writes them
DEPLOY = ["deploy", "gpt-oss-120b", "--world", "64", "--split", "8,8,8,8", "--fabric", "all-ocs"]
TOP = {"instance.toml", "plan.json", "circuits.json", "decode-fabric.json", "decode-baseline.json", "faults.json",
       "report.html", "manifest.json"}


@pytest.fixture(scope="module")
def deployed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("deploy") / "dep"
    result = runner.invoke(app, [*DEPLOY, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "ocs/ (" in result.stdout and "8,8,8,8 (given)" in result.stdout
    return out


def _run(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def test_every_file_is_in_the_manifest_with_its_hash(deployed: Path) -> None:
    on_disk = sorted(str(p.relative_to(deployed)) for p in deployed.rglob("*") if p.is_file())
    assert set(on_disk) >= TOP and "msccl/index.json" in on_disk
    index = json.loads((deployed / "msccl" / "index.json").read_text())
    xml = sorted(f"msccl/{d['file']}" for d in index["demands"])
    ocs = [f"ocs/{name}" for name in json.loads((deployed / "ocs" / "index.json").read_text())["files"]]
    assert "ocs/cabling.csv" in ocs and "ocs/cross-connects.json" in ocs
    assert sorted(on_disk) == sorted([*TOP, "msccl/index.json", *xml, *ocs])
    manifest = json.loads((deployed / "manifest.json").read_text())
    jsonschema.validate(manifest, schema("deploy-1"))
    listed = {f["path"]: f for f in manifest["files"]}
    assert sorted(listed) == sorted(set(on_disk) - {"manifest.json"})
    for path, entry in listed.items():
        data = (deployed / path).read_bytes()
        assert entry["sha256"] == hashlib.sha256(data).hexdigest() and entry["bytes"] == len(data), path
        declared = json.loads(data).get("schema") if path.endswith(".json") else None
        assert entry["schema"] == declared, path
    assert {listed[p]["schema"] for p in ("plan.json", "circuits.json", "faults.json", "decode-fabric.json",
                                          "msccl/index.json")} == {
        "ocsplan.plan/1", "ocsplan.circuits/1", "ocsplan.faults/1", "ocsplan.decode/1", "ocsplan.export-index/2"}
    assert manifest["split"] == {"kvp": 8, "tpa": 8, "ep": 8, "tpe": 8} and manifest["splits_timed"] == 0


def test_the_files_belong_to_one_deployment(deployed: Path, tmp_path: Path) -> None:
    """Each file passes the command that checks it, and report rebuilds the same page from them."""
    d = deployed
    plan = json.loads((d / "plan.json").read_text())
    assert plan["world"] == 64
    assert {m["name"]: m["shape"] for m in plan["meshes"]} == {"attention": [8, 8], "ffn": [8, 8], "world": [64]}
    for name, fabric in (("decode-fabric.json", "nvl576-all-ocs"), ("decode-baseline.json", "nvl576-all-eps")):
        step = json.loads((d / name).read_text())
        assert (step["fabric"], step["world"], step["split"]) == (fabric, 64,
                                                                  {"kvp": 8, "tpa": 8, "ep": 8, "tpe": 8})
    # the instance is the one decode planned: solving it again gives the same plan
    _run("solve", str(d / "instance.toml"), "--json", str(tmp_path / "again.json"))
    again, mine = (json.loads(p.read_text()) for p in (tmp_path / "again.json", d / "plan.json"))
    assert {**again, "solve_seconds": 0} == {**mine, "solve_seconds": 0}
    assert "valid: 64 nodes" in _run("validate", str(d / "circuits.json"), "--plan", str(d / "plan.json"),
                                     "--fabric", "all-ocs")
    assert "schedule(s) checked" in _run("export", "--check", str(d / "msccl"))
    circuits = json.loads((d / "circuits.json").read_text())
    faults = json.loads((d / "faults.json").read_text())
    assert len(faults["faults"]) == len(circuits["circuits"])  # every circuit fault (at most 2048)
    page = tmp_path / "page.html"
    _run("report", str(d / "plan.json"), "--circuits", str(d / "circuits.json"), "--decode",
         str(d / "decode-fabric.json"), "--decode", str(d / "decode-baseline.json"), "--faults",
         str(d / "faults.json"), "--out", str(page))
    assert page.read_text() == (d / "report.html").read_text()


def test_auto_split_is_decodes(tmp_path: Path) -> None:
    """--split auto picks decode --split auto's split, and its step is decode's JSON."""
    step = tmp_path / "step.json"
    _run("decode", "gpt-oss-120b", "--world", "16", "--fabric", "ocs-single", "--json", str(step))
    out = tmp_path / "auto"
    text = _run("deploy", "gpt-oss-120b", "--world", "16", "--fabric", "ocs-single", "--baseline", "eps-single",
                "--out", str(out))
    assert (out / "decode-fabric.json").read_text() == step.read_text()
    expected = json.loads(step.read_text())["split"]
    assert json.loads((out / "manifest.json").read_text())["split"] == expected
    assert f"{expected['kvp']},{expected['tpa']},{expected['ep']},{expected['tpe']} (best of " in text


def test_the_exact_check_bounds_the_plan(deployed: Path, tmp_path: Path) -> None:
    """manifest.exact: CP-SAT's bound is a lower bound of the deployed plan, the gap is
    (objective - bound) / bound, and a proved optimum is the HiGHS MILP's optimum (another solver)."""
    manifest = json.loads((deployed / "manifest.json").read_text())
    exact = manifest["exact"]
    plan = json.loads((deployed / "plan.json").read_text())
    assert manifest["inputs"]["time_limit"] == 30.0 and exact["time_limit_s"] == 30.0
    assert exact["status"] == "optimal", exact  # 64 ranks, two 8 x 8 meshes: proved well within 30 s
    bound, objective = exact["bound_s"], plan["objective_s"]
    assert 0 < bound <= objective * (1 + 1e-9)
    assert exact["gap"] == pytest.approx(max(0.0, (objective - bound) / bound), rel=1e-12, abs=1e-15)
    assert exact["objective_s"] <= objective * (1 + 1e-9)
    _run("solve", str(deployed / "instance.toml"), "--method", "milp", "--json", str(tmp_path / "milp.json"))
    milp = json.loads((tmp_path / "milp.json").read_text())
    assert milp["status"] == "optimal"
    assert bound == pytest.approx(milp["objective_s"], rel=1e-6)
    assert plan["objective_s"] == pytest.approx(milp["objective_s"], rel=1e-6)  # the heuristic is optimal here


def test_time_limit_zero_skips_the_exact_check(tmp_path: Path) -> None:
    out = tmp_path / "dep"
    text = _run("deploy", "gpt-oss-120b", "--world", "16", "--split", "2,8,8,2", "--fabric", "ocs-single",
                "--baseline", "eps-single", "--time-limit", "0", "--out", str(out))
    exact = json.loads((out / "manifest.json").read_text())["exact"]
    assert exact["status"] == "skipped" and exact["bound_s"] is None and exact["gap"] is None
    assert "skipped: --time-limit 0" in text
    jsonschema.validate(json.loads((out / "manifest.json").read_text()), schema("deploy-1"))


def _left(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir())


@pytest.mark.parametrize(("args", "message"), [
    (["deploy", "no-such-model", "--fabric", "all-ocs"], "no-such-model: model: unknown model"),
    ([*DEPLOY[:4], "--split", "3,8,8,8", "--fabric", "all-ocs"], "split: KVP=3 is not a power of two"),
    ([*DEPLOY[:6], "--fabric", "all-eps"], "--fabric: nvl576-all-eps has eps/eps levels: deploy realizes circuits"),
    ([*DEPLOY[:6], "--fabric", "hybrid"], "--fabric: nvl576-hybrid has eps/ocs levels"),
    ([*DEPLOY[:6], "--fabric", "all-ocz"], "--fabric: unknown fabric 'all-ocz'"),
    ([*DEPLOY, "--baseline", "nope"], "--baseline: unknown fabric 'nope'"),
    ([*DEPLOY, "--batch", "0"], "--batch: must be in"),
    ([*DEPLOY, "--context", "lots"], "--context"),
    ([*DEPLOY, "--faults", "0"], "--faults: must be between 1 and 20000"),
    ([*DEPLOY, "--time-limit", "-1"], "--time-limit: must be a number of seconds"),
    ([*DEPLOY, "--time-limit", "nan"], "--time-limit: must be a number of seconds"),
    ([*DEPLOY, "--time-limit", "inf"], "--time-limit: must be a number of seconds"),
    ([*DEPLOY[:2], "--world", "48", "--fabric", "all-ocs"], "--world"),
])
def test_bad_input_is_one_line_and_no_directory(args: list[str], message: str, tmp_path: Path) -> None:
    result = runner.invoke(app, [*args, "--out", str(tmp_path / "dep")])
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr
    assert _left(tmp_path) == []


def test_an_existing_directory_needs_force(tmp_path: Path) -> None:
    dep = tmp_path / "dep"
    dep.mkdir()
    (dep / "old.txt").write_text("mine")
    result = runner.invoke(app, [*DEPLOY, "--out", str(dep)])
    assert result.exit_code == 2 and result.stderr == f"--out: {dep}: --out is a non-empty directory\n"
    assert _left(dep) == ["old.txt"]
    (tmp_path / "file").write_text("x")
    result = runner.invoke(app, [*DEPLOY, "--out", str(tmp_path / "file")])
    assert result.exit_code == 2 and "exists and is not a directory" in result.stderr
    result = runner.invoke(app, [*DEPLOY, "--out", str(dep), "--force"])
    assert result.exit_code == 0, result.output
    assert "old.txt" not in _left(dep) and "manifest.json" in _left(dep)
    assert _left(tmp_path) == ["dep", "file"]  # no temporary directory left beside it


def test_an_unrealizable_plan_leaves_nothing(tmp_path: Path) -> None:
    """ocs-4to1 has 8 uplinks per rack of 32: a failure after the work started leaves no directory."""
    result = runner.invoke(app, ["deploy", "gpt-oss-120b", "--world", "64", "--split", "8,8,8,8",
                                 "--fabric", "ocs-4to1", "--out", str(tmp_path / "dep")])
    assert result.exit_code == 3, result.output
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("infeasible: ")
    assert _left(tmp_path) == []
