"""`compare --resilience`: plans compared on their worst single circuit fault (issue 40 goal 4).

The heuristic plan's worst fault is recomputed by brute force with the independent fault model of
:mod:`tests.test_deploy_faults` (every circuit of the plan realized on a single-level OCS, every
demand's degraded T by a networkx graph and Eq. 1 written out), the worst over the faults that stop
nothing.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from ocsplan.cli import app
from ocsplan.instance import loads_instance
from ocsplan.planning.heuristic import plan_heuristic
from ocsplan.realization.fabrics import parse_fabric
from ocsplan.realization.realize import realize
from ocsplan.schemas import schema

from .test_deploy_faults import N16, expected, single_level

runner = CliRunner()


def brute_worst(text: str) -> float:
    plan = plan_heuristic(loads_instance(text, "n16.toml"))
    c = realize(plan, parse_fabric(tomllib.loads(single_level(plan.world, plan.ports)), "single.toml"))
    worst = 0.0
    for i in range(len(c.circuits)):
        rows = [(d.weight, expected(plan, c, m, a, k, f"circuit:{i}"))
                for m, mesh in enumerate(plan.meshes) for a, axis in enumerate(mesh.axes)
                for k, d in enumerate(axis.demands)]
        if any(e.T is None for _, e in rows):
            continue
        worst = max(worst, sum(w * (e.T or 0.0) for w, e in rows))
    return worst


@pytest.fixture(scope="module")
def instance(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("resilience") / "n16.toml"
    path.write_text(N16)
    return path


def test_compare_resilience_is_the_brute_force_worst(instance: Path) -> None:
    result = runner.invoke(app, ["compare", str(instance), "--methods", "heuristic,milp", "--resilience",
                                 "--json", "-"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout[result.stdout.index("{"):])
    jsonschema.validate(data, schema("compare-1"))
    rows = {r["method"]: r for r in data["resilience"]}
    assert set(rows) == {"heuristic", "milp"}
    objective = {r["method"]: r["objective_s"] for r in data["rows"]}
    assert rows["heuristic"]["worst_s"] == pytest.approx(brute_worst(N16), rel=1e-12)
    for method, row in rows.items():
        assert row["error"] == "" and row["faults"] > 0
        assert row["worst_x"] == pytest.approx(row["worst_s"] / objective[method], rel=1e-12)
        assert row["worst_x"] >= 1.0
    table = runner.invoke(app, ["compare", str(instance), "--methods", "heuristic", "--resilience"])
    assert "worst fault" in table.stdout and f"{rows['heuristic']['worst_x']:.3f}x" in table.stdout


def test_without_the_option_the_json_is_unchanged(instance: Path) -> None:
    result = runner.invoke(app, ["compare", str(instance), "--methods", "heuristic", "--json", "-"])
    data = json.loads(result.stdout[result.stdout.index("{"):])
    assert "resilience" not in data and "worst fault" not in result.stdout


@pytest.mark.parametrize("extra", [["--jobs", "2"], ["--scheduler", "local"]])
def test_resilience_runs_in_process(instance: Path, extra: list[str]) -> None:
    result = runner.invoke(app, ["compare", str(instance), "--methods", "heuristic", "--resilience", *extra])
    assert result.exit_code == 2
    assert result.output.strip().count("\n") == 0 and result.output.startswith("--resilience: ")
