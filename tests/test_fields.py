"""Strict keys (issue 24, docs/hostile.md): unknown keys refused with the nearest known key,
every shipped file still loads, and a HuggingFace config.json keeps its unused keys (listed by --verbose)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ocsplan.cli import app
from ocsplan.errors import InstanceError, OcsplanError
from ocsplan.fields import KeySpec, strict_tree, unknown_keys
from ocsplan.instance import load_instance
from ocsplan.realization.fabrics import load_fabric
from ocsplan.workload import load_accelerator, load_model
from ocsplan.workload.accelerator import accelerator_catalogue
from ocsplan.workload.model import catalogue, parse_model

from .conftest import ROOT

CONFIG = ROOT / "tests" / "data" / "gpt-oss-120b" / "config.json"


def _fail(field: str, message: str) -> OcsplanError:
    return InstanceError("f.toml", field, message)


@pytest.mark.parametrize(("key", "message"), [
    ("prots", "f.toml: prots: unknown key (did you mean 'ports'?)"),
    ("wrld", "f.toml: wrld: unknown key (did you mean 'world'?)"),
    ("zzzz", "f.toml: zzzz: unknown key (known keys: latency, ports, world)"),
])
def test_unknown_key_names_the_nearest(key: str, message: str) -> None:
    with pytest.raises(OcsplanError) as info:
        unknown_keys({"world": 1, key: 2}, {"world", "ports", "latency"}, _fail)
    assert str(info.value) == message


def test_known_keys_pass() -> None:
    unknown_keys({"world": 1, "ports": 2}, {"world", "ports", "latency"}, _fail)


SPEC: KeySpec = {"a": {"b": None}, "items": ({"x": None, "y": {"z": None}},)}


@pytest.mark.parametrize(("data", "field"), [
    ({"a": {"c": 1}}, "a.c"),
    ({"items": [{"x": 1}, {"x": 1, "y": {"zz": 1}}]}, "items[1].y.zz"),
    ({"items": [{"x": 1, "w": 0}], "q": 1}, "q"),  # an object's own keys before its children's
])
def test_strict_tree_finds_nested_unknown_keys(data: dict[str, object], field: str) -> None:
    with pytest.raises(InstanceError) as info:
        strict_tree(data, SPEC, _fail)
    assert info.value.field == field


def test_strict_tree_leaves_wrong_types_to_the_reader() -> None:
    strict_tree({"a": 3, "items": "not a list"}, SPEC, _fail)


@pytest.mark.parametrize("path", sorted(p.relative_to(ROOT) for p in (ROOT / "instances").rglob("*.toml")),
                         ids=str)
def test_every_shipped_instance_loads(path: Path) -> None:
    assert load_instance(ROOT / path).meshes


@pytest.mark.parametrize("path", sorted((ROOT / "simulate" / "fabrics").glob("*.toml")), ids=lambda p: p.name)
def test_every_shipped_fabric_loads(path: Path) -> None:
    assert load_fabric(path).accelerators >= 2


@pytest.mark.parametrize("name", catalogue())
def test_every_catalogue_model_loads(name: str) -> None:
    assert load_model(name).layers >= 1


@pytest.mark.parametrize("name", accelerator_catalogue())
def test_every_catalogue_accelerator_loads(name: str) -> None:
    assert load_accelerator(name).ports >= 1


def test_config_json_keeps_ignoring_unused_keys() -> None:
    model = load_model(str(CONFIG))
    raw = json.loads(CONFIG.read_text())
    assert "rope_theta" in raw and "rope_theta" in model.unused
    assert "num_hidden_layers" not in model.unused
    assert set(model.unused) < set(raw)


def test_model_toml_is_strict(tmp_path: Path) -> None:
    text = (ROOT / "src" / "ocsplan" / "workload" / "data" / "models" / "megatron-5t.toml").read_text()
    path = tmp_path / "m.toml"
    path.write_text(text + "rope_theta = 10000\n")
    with pytest.raises(InstanceError, match="rope_theta: unknown key"):
        load_model(str(path))
    # the same key in a dict read as a HuggingFace config is only recorded
    assert "rope_thet" in parse_model({**json.loads(CONFIG.read_text()), "rope_thet": 1}).unused


def test_verbose_lists_the_unused_keys() -> None:
    result = CliRunner().invoke(app, ["splits", str(CONFIG), "--world", "64", "--verbose"])
    assert result.exit_code == 0, result.stderr
    assert "keys not used by the model:" in result.stderr and "rope_theta" in result.stderr
    quiet = CliRunner().invoke(app, ["splits", str(CONFIG), "--world", "64"])
    assert quiet.exit_code == 0 and "rope_theta" not in quiet.stderr
