"""`ocsplan faults`: the JSON (ocsplan.faults/1, its schema, the report's reader), the tables, bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

from ocsplan.cli import app
from ocsplan.deploy.faults import report_from_dict, report_to_dict
from ocsplan.report.sections import faults_section
from ocsplan.schemas import schema, schema_names

from .test_deploy_faults import N16, single_level

runner = CliRunner()


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("cli-faults")
    paths = {"instance": d / "n16.toml", "fabric": d / "f16.toml", "plan": d / "plan.json",
             "circuits": d / "c.json", "faults": d / "faults.json"}
    paths["instance"].write_text(N16)
    paths["fabric"].write_text(single_level(16, 8))
    for args in (["solve", str(paths["instance"]), "--json", str(paths["plan"])],
                 ["realize", str(paths["plan"]), "--fabric", str(paths["fabric"]), "--out", str(paths["circuits"])],
                 ["faults", str(paths["circuits"]), "--plan", str(paths["plan"]), "--json", str(paths["faults"])]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
    return paths


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def test_the_schema_is_shipped_and_listed() -> None:
    assert "faults-1" in schema_names()
    jsonschema.Draft202012Validator.check_schema(schema("faults-1"))
    assert schema("faults-1")["properties"]["schema"] == {"const": "ocsplan.faults/1"}
    result = runner.invoke(app, ["schema"])
    assert result.exit_code == 0 and "faults-1" in result.output.split()


@pytest.mark.parametrize("kind", ["circuit", "device", "accelerator"])
def test_written_file_validates_and_counts_every_fault(files: dict[str, Path], kind: str, tmp_path: Path) -> None:
    target = tmp_path / f"{kind}.json"
    result = runner.invoke(app, ["faults", str(files["circuits"]), "--plan", str(files["plan"]), "--kind", kind,
                                 "--json", str(target)])
    assert result.exit_code == 0, result.output
    data = load(target)
    jsonschema.validate(data, schema("faults-1"))
    circuits = load(files["circuits"])
    # 16 nodes x 8 ports / 2 circuits, one OCS plane per port, 16 accelerators
    count = {"circuit": len(circuits["circuits"]), "device": 8, "accelerator": 16}[kind]
    assert data["kind"] == kind and data["summary"]["count"] == len(data["faults"]) == count
    assert data["summary"]["stopped"] == sum(1 for f in data["faults"] if f["stopped"])
    assert "worst" in result.output and "faults that stop a demand" in result.output


def test_the_report_reads_it(files: dict[str, Path]) -> None:
    html = faults_section(report_from_dict(load(files["faults"])))
    assert "The worst fault classes" in html and 'id="faults-stopped"' in html


def test_the_reader_reads_what_the_writer_wrote(files: dict[str, Path]) -> None:
    data = load(files["faults"])
    assert report_to_dict(report_from_dict(data)) == data


def test_a_stopping_fault_is_the_worst(files: dict[str, Path]) -> None:
    data = load(files["faults"])
    stopping = [f for f in data["faults"] if f["stopped"]]
    assert stopping  # the 2-accelerator ffn axis has one generator: losing a circuit stops it
    assert data["summary"]["worst"]["stopped"]
    assert not data["summary"]["worst_running"]["stopped"]


def test_sample_and_seed(files: dict[str, Path], tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    for target in (a, b):
        result = runner.invoke(app, ["faults", str(files["circuits"]), "--plan", str(files["plan"]),
                                     "--sample", "5", "--seed", "7", "--json", str(target)])
        assert result.exit_code == 0, result.output
    assert a.read_text() == b.read_text()
    data = load(a)
    assert data["sampled"] and len(data["faults"]) == 5
    full = {f["id"]: f for f in load(files["faults"])["faults"]}
    assert all(full[f["id"]] == f for f in data["faults"])


@pytest.mark.parametrize(("args", "needle"), [
    (["--kind", "rack"], "--kind"),
    (["--sample", "0"], "--sample"),
    (["--seed", "3"], "--seed"),
    (["--plan", "OTHER"], "--plan"),
    (["--plan", "MISSING"], "missing.json"),
])
def test_bad_input_one_line_exit_2_nothing_written(files: dict[str, Path], tmp_path: Path, args: list[str],
                                                   needle: str) -> None:
    other = tmp_path / "other.json"
    result = runner.invoke(app, ["solve", str(Path(__file__).parent.parent / "instances" / "paper-multimesh-n256.toml"),
                                 "--json", str(other)])
    assert result.exit_code == 0
    args = [str(other) if a == "OTHER" else str(tmp_path / "missing.json") if a == "MISSING" else a for a in args]
    if "--plan" not in args:
        args += ["--plan", str(files["plan"])]
    target = tmp_path / "out.json"
    result = runner.invoke(app, ["faults", str(files["circuits"]), *args, "--json", str(target)])
    assert result.exit_code == 2, result.output
    assert needle in result.output and len(result.output.strip().splitlines()) == 1
    assert "Traceback" not in result.output and not target.exists()


def test_schema_rejects_a_broken_file(files: dict[str, Path]) -> None:
    good = load(files["faults"])
    for broken in ({k: v for k, v in good.items() if k != "summary"}, {**good, "schema": "ocsplan.faults/2"},
                   {**good, "faults": [{**good["faults"][0], "demands": [{"how": "maybe"}]}]}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, schema("faults-1"))


@pytest.fixture(scope="module")
def spare_files(files: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The 16-rank plan realized on a 32-accelerator single-level fabric: 16 spares."""
    d = tmp_path_factory.mktemp("cli-repair")
    paths = {"fabric": d / "f32.toml", "circuits": d / "c32.json"}
    paths["fabric"].write_text(single_level(32, 8))
    result = runner.invoke(app, ["realize", str(files["plan"]), "--fabric", str(paths["fabric"]),
                                 "--out", str(paths["circuits"])])
    assert result.exit_code == 0, result.output
    return paths


def test_repair_writes_a_file_validate_accepts(files: dict[str, Path], spare_files: dict[str, Path],
                                              tmp_path: Path) -> None:
    new, diff = tmp_path / "new.json", tmp_path / "diff.json"
    result = runner.invoke(app, ["repair", str(spare_files["circuits"]), "--plan", str(files["plan"]),
                                 "--fabric", str(spare_files["fabric"]), "--failed", "accelerator:3",
                                 "--failed", "accelerator:9", "--out", str(new), "--diff", str(diff)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["validate", str(new), "--plan", str(files["plan"]),
                                 "--fabric", str(spare_files["fabric"])])
    assert result.exit_code == 0 and "valid" in result.output, result.output
    data, placed = load(diff), load(new)["placement"]["accelerator"]
    assert {m["failed"] for m in data["moves"]} == {3, 9} and not {3, 9} & set(placed)
    # 8 ports per accelerator, one plane per port: 2 x 8 circuits, one cross-connect swapped each
    assert data["changes"] == 2 * 2 * 8


@pytest.mark.parametrize(("failed", "fabric", "needle"), [
    (["accelerator:32"], "spare", "--failed"),
    (["accelerator:nine"], "spare", "--failed"),
    (["accelerator:1"], "healthy", "only 0 spare"),
    (["accelerator:1"], "wrong", "--fabric"),
])
def test_repair_bad_input(files: dict[str, Path], spare_files: dict[str, Path], tmp_path: Path,
                          failed: list[str], fabric: str, needle: str) -> None:
    circuits = files["circuits"] if fabric == "healthy" else spare_files["circuits"]
    spec = files["fabric"] if fabric in ("healthy", "wrong") else spare_files["fabric"]
    new, diff = tmp_path / "new.json", tmp_path / "diff.json"
    args = [a for f in failed for a in ("--failed", f)]
    result = runner.invoke(app, ["repair", str(circuits), "--plan", str(files["plan"]), "--fabric", str(spec),
                                 *args, "--out", str(new), "--diff", str(diff)])
    assert result.exit_code == 2, result.output
    assert needle in result.output and len(result.output.strip().splitlines()) == 1
    assert not new.exists() and not diff.exists()
