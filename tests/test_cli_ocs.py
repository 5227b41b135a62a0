"""CLI: export CIRCUITS --format ocs --out DIR (files, schema, refusals, no partial directory)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from ocsplan.cli import app
from ocsplan.instance import load_instance
from ocsplan.plan import write_plan
from ocsplan.planning.heuristic import plan_heuristic
from ocsplan.realization.circuits import write_circuits
from ocsplan.realization.fabrics import load_fabric
from ocsplan.realization.realize import realize

from .conftest import ROOT, instance_path

runner = CliRunner()


@pytest.fixture(scope="module")
def paper(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The paper plan realized on a single-level and a two-level fabric."""
    d = tmp_path_factory.mktemp("cli-ocs")
    plan = plan_heuristic(load_instance(instance_path("paper-multimesh-n256")))
    write_plan(plan, d / "plan.json")
    paths = {"plan": d / "plan.json"}
    for fabric in ("ocs-single", "nvl576-all-ocs"):
        paths[fabric] = d / f"{fabric}.json"
        write_circuits(realize(plan, load_fabric(fabric)), paths[fabric])
    return paths


def _schema() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(
        json.loads((ROOT / "src" / "ocsplan" / "schemas" / "ocs-export-1.json").read_text()))


@pytest.mark.parametrize("fabric", ["ocs-single", "nvl576-all-ocs"])
def test_export_ocs_writes_every_file(paper: dict[str, Path], tmp_path: Path, fabric: str) -> None:
    out = tmp_path / "ocs"
    result = runner.invoke(app, ["export", str(paper[fabric]), "--format", "ocs", "--out", str(out)])
    assert result.exit_code == 0, result.output
    index = json.loads((out / "index.json").read_text())
    _schema().validate(index)
    written = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert written == index["files"]
    raw = json.loads(paper[fabric].read_text())
    assert sorted(p.stem for p in (out / "devices").iterdir()) == sorted(d["id"] for d in raw["devices"])
    # every circuit has one cable per OCS hop plus one: 2176 circuits x 2 (one hop) on one level
    cables = sum(1 for _ in (out / "cabling.csv").open()) - 1
    assert cables == sum(len(c["path"]) + 1 for c in raw["circuits"])
    if fabric == "ocs-single":
        assert cables == 2 * 2176
    assert f"{index['counts']['cables']} cable(s)" in result.stdout


@pytest.mark.parametrize("option", [["--protocol", "LL"], ["--max-steps", "64"], ["--circuits", "x.json"]])
def test_export_ocs_refuses_msccl_options(paper: dict[str, Path], tmp_path: Path, option: list[str]) -> None:
    out = tmp_path / "ocs"
    result = runner.invoke(app, ["export", str(paper["ocs-single"]), "--format", "ocs", "--out", str(out), *option])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and option[0] in result.stderr and "Traceback" not in result.stderr
    assert not out.exists()


def test_export_ocs_bad_input(paper: dict[str, Path], tmp_path: Path) -> None:
    taken = tmp_path / "taken"
    taken.write_text("x")
    result = runner.invoke(app, ["export", str(paper["ocs-single"]), "--format", "ocs", "--out", str(taken)])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "not a directory" in result.stderr
    assert taken.read_text() == "x"
    out = tmp_path / "ocs"
    # a plan is not a circuits file: refused naming the file, nothing written
    result = runner.invoke(app, ["export", str(paper["plan"]), "--format", "ocs", "--out", str(out)])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and str(paper["plan"]) in result.stderr
    result = runner.invoke(app, ["export", str(paper["ocs-single"]), "--format", "ocs", "--out", "/dev/null"])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    result = runner.invoke(app, ["export", str(paper["ocs-single"]), "--format", "xml", "--out", str(out)])
    assert result.exit_code == 2 and "msccl or ocs" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]


@pytest.mark.parametrize("fabric", ["ocs-single", "nvl576-all-ocs"])
def test_import_ocs_round_trip(paper: dict[str, Path], tmp_path: Path, fabric: str) -> None:
    out = tmp_path / "ocs"
    assert runner.invoke(app, ["export", str(paper[fabric]), "--format", "ocs", "--out", str(out)]).exit_code == 0
    rebuilt = tmp_path / "c2.json"
    result = runner.invoke(app, ["import-ocs", str(out), "--plan", str(paper["plan"]), "--fabric", fabric,
                                 "--out", str(rebuilt)])
    assert result.exit_code == 0, result.output
    assert rebuilt.read_bytes() == paper[fabric].read_bytes()
    result = runner.invoke(app, ["validate", str(rebuilt), "--plan", str(paper["plan"]), "--fabric", fabric])
    assert result.exit_code == 0, result.output


def test_import_ocs_of_a_repair(paper: dict[str, Path], tmp_path: Path) -> None:
    repaired = tmp_path / "repaired.json"
    result = runner.invoke(app, ["repair", str(paper["nvl576-all-ocs"]), "--plan", str(paper["plan"]), "--fabric",
                                 "nvl576-all-ocs", "--failed", "accelerator:17", "--out", str(repaired)])
    assert result.exit_code == 0, result.output
    out = tmp_path / "ocs"
    assert runner.invoke(app, ["export", str(repaired), "--format", "ocs", "--out", str(out)]).exit_code == 0
    result = runner.invoke(app, ["import-ocs", str(out), "--plan", str(paper["plan"]), "--fabric", "nvl576-all-ocs",
                                 "--out", "-"])
    assert result.exit_code == 0, result.output
    assert result.stdout == repaired.read_text()


def test_import_ocs_refusals(paper: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "ocs"
    assert runner.invoke(app, ["export", str(paper["nvl576-all-ocs"]), "--format", "ocs", "--out", str(out)]
                         ).exit_code == 0
    target = tmp_path / "c2.json"
    for fabric, words in (("ocs-single", "fabric.name"), ("nvl576-all-ocs-serve576", "fabric.name")):
        result = runner.invoke(app, ["import-ocs", str(out), "--plan", str(paper["plan"]), "--fabric", fabric,
                                     "--out", str(target)])
        assert result.exit_code == 2 and result.stderr.count("\n") == 1 and words in result.stderr
    result = runner.invoke(app, ["import-ocs", str(out), "--plan", str(paper["plan"]), "--fabric", "nvl576-all-ocs",
                                 "--out", str(paper["plan"])])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "--plan" in result.stderr
    # one cross-connect moved to free ports in both of its device's files: the cabling no longer meets it
    index = json.loads((out / "cross-connects.json").read_text())
    device = index["devices"][0]
    device["cross_connects"][-1] = [device["radix"] - 2, device["radix"] - 1]
    (out / "cross-connects.json").write_text(json.dumps(index))
    rows = "".join(f"{a},{b}\n" for a, b in device["cross_connects"])
    (out / "devices" / f"{device['id']}.csv").write_text("in_port,out_port\n" + rows)
    result = runner.invoke(app, ["import-ocs", str(out), "--plan", str(paper["plan"]), "--fabric", "nvl576-all-ocs",
                                 "--out", str(target)])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "cabling.csv" in result.stderr, result.stderr
    assert not target.exists() and "Traceback" not in result.output


def _pairs(path: Path) -> set[tuple[int, int]]:
    if not path.exists():
        return set()
    lines = path.read_text().splitlines()
    assert lines[0] == "in_port,out_port"
    return {(int(a), int(b)) for a, b in (line.split(",") for line in lines[1:])}


def test_repair_diff_dir_applied_to_the_export_gives_the_repaired_export(paper: dict[str, Path],
                                                                          tmp_path: Path) -> None:
    repaired, diff = tmp_path / "repaired.json", tmp_path / "diff"
    result = runner.invoke(app, ["repair", str(paper["nvl576-all-ocs"]), "--plan", str(paper["plan"]), "--fabric",
                                 "nvl576-all-ocs", "--failed", "accelerator:17", "--out", str(repaired),
                                 "--diff-dir", str(diff)])
    assert result.exit_code == 0, result.output
    before, after = tmp_path / "before", tmp_path / "after"
    for source, target in ((paper["nvl576-all-ocs"], before), (repaired, after)):
        assert runner.invoke(app, ["export", str(source), "--format", "ocs", "--out", str(target)]).exit_code == 0
    changed = sorted(p.name for p in (diff / "devices").iterdir())
    assert changed
    for name in changed:  # what an operator does: remove rows, then add rows, device by device
        lines = (diff / "devices" / name).read_text().splitlines()
        assert lines[0] == "action,in_port,out_port"
        actions = [line.split(",") for line in lines[1:]]
        assert [a for a, _, _ in actions] == sorted((a for a, _, _ in actions), key=lambda a: a != "remove")
        state = _pairs(before / "devices" / name)
        for action, a, b in actions:
            pair = (int(a), int(b))
            if action == "remove":
                assert pair in state
                state.remove(pair)
            else:
                assert action == "add" and pair not in state
                state.add(pair)
        assert state == _pairs(after / "devices" / name), name
    unchanged = {p.name for p in (before / "devices").iterdir()} - set(changed)
    for name in unchanged:
        assert _pairs(before / "devices" / name) == _pairs(after / "devices" / name)
    data = json.loads((diff / "diff.json").read_text())
    assert data["schema"] == "ocsplan.repair-diff/1" and data["moves"][0]["failed"] == 17
    assert sorted(f"{d['device']}.csv" for d in data["devices"]) == changed
    assert data["changes"] == sum(len(d["removed"]) + len(d["added"]) for d in data["devices"])


def test_repair_diff_dir_refused_leaves_nothing(paper: dict[str, Path], tmp_path: Path) -> None:
    repaired, diff = tmp_path / "repaired.json", tmp_path / "diff"
    diff.mkdir()
    (diff / "x").write_text("x")
    result = runner.invoke(app, ["repair", str(paper["nvl576-all-ocs"]), "--plan", str(paper["plan"]), "--fabric",
                                 "nvl576-all-ocs", "--failed", "accelerator:17", "--out", str(repaired),
                                 "--diff-dir", str(diff)])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "--diff-dir" in result.stderr
    assert not repaired.exists() and sorted(p.name for p in diff.iterdir()) == ["x"]
