"""JSON Schemas: shipped for every format, printed by `ocsplan schema`, and the suite's files validate."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

from ocsplan.cli import app
from ocsplan.schemas import first_error, schema, schema_names

from .conftest import ROOT, instance_path

runner = CliRunner()
FABRICS = ROOT / "simulate" / "fabrics"
FORMATS = ["plan-1", "plan-2", "circuits-1", "circuits-2", "simulation-1", "decode-1", "study-1", "compare-1",
           "export-index-1", "export-index-2", "rows-1", "repair-diff-1", "validation-1"]


def _run(*args: str) -> None:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Path]]:
    """Files the CLI writes, per schema name: shared-host and stacked plans, their circuits and runs."""
    d = tmp_path_factory.mktemp("schemas")
    out: dict[str, list[Path]] = {name: [] for name in FORMATS}
    plans = [("pm", instance_path("paper-multimesh-n256"), "heuristic", "ocs-single"),
             ("rs", instance_path("paper-table7-rsag-single"), "cpsat", "ocs-single"),
             ("st", ROOT / "instances" / "stacked" / "n576-8x72.toml", "stacked", "nvl576-all-ocs-serve576")]
    for tag, inst, method, fabric in plans:
        plan, circ, sim = d / f"{tag}.plan.json", d / f"{tag}.circ.json", d / f"{tag}.sim.json"
        _run("solve", str(inst), "--method", method, "--json", str(plan))
        _run("realize", str(plan), "--fabric", str(FABRICS / f"{fabric}.toml"), "--out", str(circ))
        _run("simulate", str(plan), "--fabric", str(FABRICS / f"{fabric}.toml"), "--json", str(sim))
        out["plan-2" if method == "stacked" else "plan-1"].append(plan)
        out["circuits-1"].append(circ)
        circ2 = d / f"{tag}.circ2.json"
        _run("realize", str(plan), "--fabric", str(FABRICS / f"{fabric}.toml"), "--out", str(circ2),
             "--circuits-format", "2")
        out["circuits-2"].append(circ2)
        out["simulation-1"].append(sim)
    for fabric, network in (("nvl576-all-ocs", "analytical"), ("nvl576-all-eps", "simlette")):
        step = d / f"{fabric}.{network}.dec.json"
        _run("decode", "gpt-oss-120b", "--world", "64", "--fabric", str(FABRICS / f"{fabric}.toml"),
             "--network", network, "--json", str(step))
        out["decode-1"].append(step)
    gen = d / "gen"
    _run("generate", "--family", "helix", "--count", "2", "--seed", "3", "--max-bits", "5", "--out", str(gen))
    _run("study", str(gen), "--methods", "heuristic,cpsat", "--csv", str(d / "study.csv"),
         "--json", str(d / "study.json"))
    out["study-1"].append(d / "study.json")
    fig15 = ROOT / "instances" / "stacked" / "fig15-n512-L16.toml"
    _run("compare", str(fig15), "--methods", "heuristic,stacked", "--csv", str(d / "cmp.csv"),
         "--json", str(d / "cmp.json"))
    _run("compare", str(fig15), "--methods", "heuristic,stacked", "--demands", str(d / "cmpd.csv"),
         "--json", str(d / "cmpd.json"))
    out["compare-1"] += [d / "cmp.json", d / "cmpd.json"]
    _run("export", str(d / "pm.plan.json"), "--out", str(d / "msccl"))
    out["export-index-1"].append(d / "msccl" / "index.json")
    _run("export", str(d / "pm.plan.json"), "--circuits", str(d / "pm.circ.json"), "--out", str(d / "msccl2"))
    out["export-index-2"].append(d / "msccl2" / "index.json")
    _run("splits", "gpt-oss-120b", "--world", "64", "--json", str(d / "splits.json"))
    out["rows-1"].append(d / "splits.json")
    single = str(FABRICS / "ocs-single.toml")
    for tag, failed in (("acc", "accelerator:3"), ("circ", "circuit:0")):  # a move and a re-path
        _run("repair", str(d / "pm.circ.json"), "--plan", str(d / "pm.plan.json"), "--fabric", single, "--failed",
             failed, "--no-simulate", "--out", str(d / f"{tag}.rep.json"), "--diff", str(d / f"{tag}.diff.json"))
        out["repair-diff-1"].append(d / f"{tag}.diff.json")
    _run("validate", str(d / "pm.circ.json"), "--plan", str(d / "pm.plan.json"), "--fabric", single,
         "--json", str(d / "valid.json"))
    out["validation-1"].append(d / "valid.json")
    return out


def _csv_cell(value: Any) -> str:
    """A JSON value as the study CSV writes it (repr for floats, empty for null)."""
    return "" if value is None else repr(value) if isinstance(value, float) else str(value)


@pytest.mark.parametrize(("name", "csv_name"), [("study-1", "study.csv"), ("compare-1", "cmp.csv")])
def test_json_rows_are_the_csv_rows(name: str, csv_name: str, written: dict[str, list[Path]]) -> None:
    """study/compare --json carry the same rows, columns and values as the CSV of the same run."""
    import csv

    rows = json.loads(written[name][0].read_text())["rows"]
    with (written[name][0].parent / csv_name).open(newline="") as handle:
        table = list(csv.DictReader(handle))
    assert rows and len(rows) == len(table)
    for row, line in zip(rows, table, strict=True):
        assert list(row) == list(line)
        assert {k: _csv_cell(v) for k, v in row.items()} == line


def test_compare_json_demands_are_the_demands_csv(written: dict[str, list[Path]]) -> None:
    """With --demands the JSON holds the per-demand rows too (fig15: 2 demands, 2 methods); without, none."""
    import csv

    plain, with_demands = (json.loads(p.read_text()) for p in written["compare-1"])
    assert "demands" not in plain
    with (written["compare-1"][1].parent / "cmpd.csv").open(newline="") as handle:
        table = list(csv.DictReader(handle))
    assert len(with_demands["demands"]) == len(table) == 2
    for row, line in zip(with_demands["demands"], table, strict=True):
        assert {k: _csv_cell(v) for k, v in row.items()} == line


@pytest.mark.parametrize("name", ["study-1", "compare-1"])
def test_row_schema_rejects_a_broken_row(name: str, written: dict[str, list[Path]]) -> None:
    """A row without a column, with a text objective or an unknown column does not validate."""
    good: dict[str, Any] = json.loads(written[name][0].read_text())
    row = good["rows"][0]
    broken = [{k: v for k, v in row.items() if k != "objective_s"}, {**row, "objective_s": "fast"},
              {**row, "extra": 1}]
    for bad in broken:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({**good, "rows": [bad]}, schema(name))


def test_study_json_to_stdout_is_only_json(tmp_path: Path) -> None:
    """--json - writes the document alone to stdout (the summary table goes to stderr)."""
    gen = tmp_path / "gen"
    _run("generate", "--family", "helix", "--count", "1", "--seed", "2", "--max-bits", "4", "--out", str(gen))
    result = CliRunner().invoke(app, ["study", str(gen), "--methods", "heuristic", "--csv",
                                      str(tmp_path / "s.csv"), "--json", "-"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    jsonschema.validate(doc, schema("study-1"))
    assert doc["instances"] == 1 and [r["method"] for r in doc["rows"]] == ["heuristic"]


def test_every_format_has_a_schema() -> None:
    assert set(FORMATS) <= set(schema_names())


@pytest.mark.parametrize("name", FORMATS)
def test_schema_is_valid_and_names_its_format(name: str) -> None:
    s = schema(name)
    jsonschema.Draft202012Validator.check_schema(s)
    kind, version = name.rsplit("-", 1)
    assert s["properties"]["schema"] == {"const": f"ocsplan.{kind}/{version}"}


@pytest.mark.parametrize("name", FORMATS)
def test_written_files_validate(name: str, written: dict[str, list[Path]]) -> None:
    assert written[name]
    for path in written[name]:
        jsonschema.validate(json.loads(path.read_text()), schema(name))


@pytest.mark.parametrize("name", FORMATS)
def test_schema_rejects_a_broken_file(name: str, written: dict[str, list[Path]]) -> None:
    """A file without one of its required fields, or with the wrong schema tag, does not validate."""
    good: dict[str, Any] = json.loads(written[name][0].read_text())
    required = schema(name)["required"]
    assert "schema" in required and len(required) >= 2
    missing = {k: v for k, v in good.items() if k != required[1]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(missing, schema(name))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**good, "schema": "ocsplan.other/9"}, schema(name))


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every item's path below the top level (containers and leaves)."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    out = [path] if path else []
    for key, item in items:
        out += _paths(item, (*path, key))
    return out


def _short(value: Any) -> Any:
    """``value`` with every list cut to its first 6 items."""
    if isinstance(value, dict):
        return {k: _short(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_short(v) for v in value[:6]]
    return value


@pytest.mark.parametrize("name", FORMATS)
def test_first_error_is_jsonschemas_best_match(name: str, written: dict[str, list[Path]]) -> None:
    """first_error skips the children its plain check proves valid (schemas._clean and _plain): on
    seeded corruptions of a written file, its lists cut short (an item retyped or its key dropped),
    it names the error jsonschema's own best_match picks over the whole file, and none on the file
    itself."""
    path = min(written[name], key=lambda p: p.stat().st_size)
    data = json.loads(path.read_text())
    stock = jsonschema.Draft202012Validator(schema(name))

    def reference(d: Any) -> tuple[str, str] | None:
        error = jsonschema.exceptions.best_match(stock.iter_errors(d))
        if error is None:
            return None
        return ".".join(str(p) for p in error.absolute_path) or "schema", " ".join(error.message.split())[:160]

    assert first_error(data, name) is None
    data = _short(data)  # jsonschema's own walk of a whole circuits file or export index takes a second
    paths = [p for p in _paths(data) if p[0] != "schema"]
    rng = random.Random(f"first-error/{name}")
    faulted = 0
    for _ in range(16):
        at = rng.choice(paths)
        copy = json.loads(json.dumps(data))
        parent = copy
        for key in at[:-1]:
            parent = parent[key]
        new = rng.choice(["x", None, True, 1.5, 2.0, -3, {}, [], [1], ["a", 2], {"k": 1}, "drop"])
        if new == "drop" and isinstance(parent, dict):
            del parent[at[-1]]
        else:
            parent[at[-1]] = new
        got = first_error(copy, name)
        assert got == reference(copy), at
        faulted += got is not None
    assert faulted >= 4


def test_cli_schema_lists_and_prints() -> None:
    listed = runner.invoke(app, ["schema"])
    assert listed.exit_code == 0 and listed.output.split() == schema_names()
    printed = runner.invoke(app, ["schema", "plan-1"])
    assert printed.exit_code == 0 and json.loads(printed.output) == schema("plan-1")
    bad = runner.invoke(app, ["schema", "plan-9"])
    assert bad.exit_code == 2 and "plan-1" in bad.output


def test_schemas_are_package_data() -> None:
    """The wheel ships them: pyproject's package-data names the folder's files."""
    import tomllib

    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert "schemas/*.json" in data["ocsplan"]


def test_repair_diffs_cover_moves_and_repaths(written: dict[str, list[Path]]) -> None:
    """The accelerator repair's diff lists a move, the circuit repair's a re-path; in both the stated
    change count is the devices' removed plus added cross-connects."""
    moved, repathed = (json.loads(p.read_text()) for p in written["repair-diff-1"])
    assert moved["moves"] and not moved["repaths"] and repathed["repaths"] and not repathed["moves"]
    for diff in (moved, repathed):
        assert diff["changes"] == sum(len(d["removed"]) + len(d["added"]) for d in diff["devices"])


def test_validation_json_states_what_the_file_holds(written: dict[str, list[Path]], tmp_path: Path) -> None:
    """validate --json: the counts are the circuits file's own (read here with json), and a file with a
    circuit taken out is written as invalid with its faults, exit 1."""
    verdict = json.loads(written["validation-1"][0].read_text())
    circuits_file = written["validation-1"][0].parent / "pm.circ.json"
    raw = json.loads(circuits_file.read_text())
    assert verdict["valid"] is True and verdict["faults"] == []
    assert (verdict["nodes"], verdict["circuits"], verdict["devices"]) == (
        raw["plan"]["world"], len(raw["circuits"]), len(raw["devices"]))
    raw["circuits"] = raw["circuits"][1:]
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(raw))
    out = tmp_path / "verdict.json"
    result = CliRunner().invoke(app, ["validate", str(broken), "--json", str(out)])
    assert result.exit_code == 1
    bad = json.loads(out.read_text())
    jsonschema.validate(bad, schema("validation-1"))
    assert bad["valid"] is False and bad["faults"] and bad["circuits"] == len(raw["circuits"])
