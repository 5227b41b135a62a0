"""Packaged fabrics (issue 39): the catalogue ships with the package, every command takes a short name."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ocsplan.cli import app
from ocsplan.errors import InstanceError
from ocsplan.plan import write_plan
from ocsplan.realization.fabrics import fabric_catalogue, fabric_names, load_fabric

from .conftest import ROOT
from .realize_cases import FABRICS, small_plan

runner = CliRunner()
PACKAGED = ROOT / "src" / "ocsplan" / "realization" / "data" / "fabrics"
# the files of simulate/fabrics/, each by its short name (nvl576- dropped)
SHORT = {"all-eps": "nvl576-all-eps", "all-ocs": "nvl576-all-ocs", "all-ocs-serve576": "nvl576-all-ocs-serve576",
         "eps-single": "eps-single", "hybrid": "nvl576-hybrid", "ocs-4to1": "nvl576-ocs-4to1",
         "ocs-single": "ocs-single"}


def test_the_checkout_copies_are_the_packaged_files() -> None:
    """simulate/fabrics/ stays for the README and scripts: byte for byte the package data."""
    checkout = sorted(p.name for p in FABRICS.glob("*.toml"))
    assert checkout == sorted(p.name for p in PACKAGED.glob("*.toml")) == sorted(f"{s}.toml" for s in SHORT.values())
    for name in checkout:
        assert (FABRICS / name).read_bytes() == (PACKAGED / name).read_bytes(), name


def test_names_short_and_long_load_the_file() -> None:
    assert fabric_names() == sorted(SHORT)
    assert fabric_catalogue() == {**SHORT, **{stem: stem for stem in SHORT.values()}}
    for short, stem in SHORT.items():
        from_file = load_fabric(FABRICS / f"{stem}.toml")
        for name in (short, stem):
            spec = load_fabric(name)
            assert spec.source == f"fabrics/{stem}.toml"
            assert dataclasses.replace(spec, source=from_file.source) == from_file


def test_unknown_names_and_missing_files() -> None:
    with pytest.raises(InstanceError, match=r"^--fabric: unknown fabric 'all-ocz' \(catalogue: all-eps, all-ocs, "
                                            r"all-ocs-serve576, eps-single, hybrid, ocs-4to1, ocs-single; or a "
                                            r"\.toml path\)$"):
        load_fabric("all-ocz", "--fabric")
    with pytest.raises(InstanceError, match=r"^no-such\.toml: "):
        load_fabric("no-such.toml")


def test_a_file_in_the_working_directory_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A path that exists is a path, even without .toml (as models and accelerators)."""
    text = (FABRICS / "ocs-single.toml").read_text().replace("ports = 64", "ports = 16")
    (tmp_path / "all-ocs").write_text(text)
    monkeypatch.chdir(tmp_path)
    assert load_fabric("all-ocs").ports == 16
    assert load_fabric("nvl576-all-ocs").ports == 36
    (tmp_path / "hybrid").mkdir()  # a directory is a path too, refused as one (not the catalogue's)
    with pytest.raises(InstanceError, match=r"^hybrid: .*directory"):
        load_fabric("hybrid")


def test_fabrics_lists_the_catalogue() -> None:
    result = runner.invoke(app, ["fabrics", "--json"])
    assert result.exit_code == 0, result.output
    rows = {r["name"]: r for r in json.loads(result.stdout)["fabrics"]}
    assert sorted(rows) == sorted(SHORT)
    # nvl576-all-ocs.toml: 18 racks of 32, 16 serve, 36 ports at 400 Gb/s, OCS on both levels
    assert rows["all-ocs"] == {
        "name": "all-ocs", "aliases": ["nvl576-all-ocs"], "accelerators": 576, "serving": 512, "ports": 36,
        "link_Gbps": 400.0, "rack_size": 32, "racks": 18, "levels": 2, "technology": "ocs/ocs",
        "description": "Paper Figure 25(b): 576 accelerators in 18 racks of 32, all-OCS, non-blocking; "
                       "16 racks (512) serve"}
    assert (rows["hybrid"]["technology"], rows["eps-single"]["levels"], rows["eps-single"]["accelerators"]) == (
        "eps/ocs", 1, 1024)
    table = runner.invoke(app, ["fabrics"])
    assert table.exit_code == 0 and all(re.search(rf"^(?:. )?{re.escape(n)} ", table.stdout, re.M)
                                           for n in SHORT)  # a row per name, boxed or (too wide) not


def _without_source(text: str) -> dict[str, object]:
    data: dict[str, object] = json.loads(text)
    data["fabric"]["source"] = ""  # type: ignore[index]
    return data


@pytest.fixture(scope="module")
def realized(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("catalogue")
    plan, circuits = folder / "plan.json", folder / "c.json"
    write_plan(small_plan(), plan)
    result = runner.invoke(app, ["realize", str(plan), "--fabric", "all-ocs", "--out", str(circuits)])
    assert result.exit_code == 0, result.output
    return plan, circuits


def test_realize_by_name_equals_realize_by_path(realized: tuple[Path, Path], tmp_path: Path) -> None:
    plan, circuits = realized
    by_path = tmp_path / "p.json"
    result = runner.invoke(app, ["realize", str(plan), "--fabric", str(FABRICS / "nvl576-all-ocs.toml"),
                                 "--out", str(by_path)])
    assert result.exit_code == 0, result.output
    assert _without_source(circuits.read_text()) == _without_source(by_path.read_text())
    solved = tmp_path / "s.json"
    result = runner.invoke(app, ["solve", str(ROOT / "instances" / "paper-table7-ring-single.toml"),
                                 "--realize", "nvl576-all-ocs", "--circuits", str(solved)])
    assert result.exit_code == 0, result.output
    assert json.loads(solved.read_text())["fabric"]["source"] == "fabrics/nvl576-all-ocs.toml"


@pytest.mark.parametrize("command", [
    ["validate", "{circuits}", "--plan", "{plan}", "--fabric", "{fabric}"],
    ["simulate", "{plan}", "--fabric", "{fabric}", "--mode", "ideal"],
    ["sweep", "{plan}", "--fabric", "{fabric}", "--csv", "{tmp}/s.csv", "--payloads", "1KiB:1KiB", "--mode", "ideal"],
    ["repair", "{circuits}", "--plan", "{plan}", "--fabric", "{fabric}", "--failed", "accelerator:0", "--out", "-"],
    ["decode", "gpt-oss-120b", "--world", "8", "--split", "1,8,8,1", "--fabric", "{fabric}"],
    ["pareto", "gpt-oss-120b", "--world", "8", "--contexts", "32Ki", "--batches", "1", "--fabrics", "{fabric}"],
    ["power", "{fabric}"],
])
def test_every_command_takes_a_name(command: list[str], realized: tuple[Path, Path], tmp_path: Path) -> None:
    """The name and the file give the same output (the file's path aside); a wrong name is one line, exit 2."""
    plan, circuits = realized
    path = str(FABRICS / "nvl576-all-ocs.toml")

    def run(fabric: str) -> tuple[int, str, str]:
        args = [a.format(circuits=circuits, plan=plan, fabric=fabric, tmp=tmp_path) for a in command]
        result = runner.invoke(app, args)
        return result.exit_code, result.stdout.replace(path, "all-ocs"), result.stderr

    code, by_name, _ = run("all-ocs")
    assert code == 0, by_name
    assert run(path)[:2] == (0, by_name)
    code, _, stderr = run("all-ocz")
    option = "FABRIC" if command[0] == "power" else "--fabrics" if command[0] == "pareto" else "--fabric"
    assert code == 2 and stderr == f"{option}: unknown fabric 'all-ocz' (catalogue: all-eps, all-ocs, " \
                                   "all-ocs-serve576, eps-single, hybrid, ocs-4to1, ocs-single; or a .toml path)\n"
