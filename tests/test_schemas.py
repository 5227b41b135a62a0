"""JSON Schemas: shipped for every format, printed by `ocsplan schema`, and the suite's files validate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

from ocsplan.cli import app
from ocsplan.schemas import schema, schema_names

from .conftest import ROOT, instance_path

runner = CliRunner()
FABRICS = ROOT / "simulate" / "fabrics"
FORMATS = ["plan-1", "plan-2", "circuits-1", "simulation-1", "decode-1"]


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
        out["simulation-1"].append(sim)
    for fabric, network in (("nvl576-all-ocs", "analytical"), ("nvl576-all-eps", "simlette")):
        step = d / f"{fabric}.{network}.dec.json"
        _run("decode", "gpt-oss-120b", "--world", "64", "--fabric", str(FABRICS / f"{fabric}.toml"),
             "--network", network, "--json", str(step))
        out["decode-1"].append(step)
    return out


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
    assert "schema" in required and len(required) > 3
    missing = {k: v for k, v in good.items() if k != required[1]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(missing, schema(name))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**good, "schema": "ocsplan.other/9"}, schema(name))


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
