"""`decode --circuits`: a step priced on a deployed or repaired realization's real OCS paths (issue 40 goal 2).

gpt-oss-120b on 64 accelerators of the all-OCS NVL576 fabric (racks of 32), split 8,8,8,8. Two references:
the healthy realization must price exactly as the plan's idealized circuits do (another route through
the code: one group of the plan's circuits against every group of the realized ones); an accelerator
moved to a spare in another rack turns the FFN EP all-gather's circuits of that rank from one OCS and
two cables into three OCS and four cables, so each of its phases gets Table 9's difference,
hop(3 OCS, 4 cables) - hop(1 OCS, 2 cables), added by hand here.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ocsplan.cli import app
from ocsplan.decode.step import plan_for
from ocsplan.deploy.repair import repair
from ocsplan.plan import Plan, dumps_plan
from ocsplan.realization.circuits import Circuits, dumps_circuits
from ocsplan.realization.fabrics import load_fabric
from ocsplan.realization.realize import realize
from ocsplan.workload import load_model
from ocsplan.workload.demand import COMM
from ocsplan.workload.splits import Split

runner = CliRunner()
BASE = ["decode", "gpt-oss-120b", "--world", "64", "--fabric", "all-ocs"]


@cache
def deployed() -> tuple[Plan, Circuits, Circuits]:
    spec = load_fabric("all-ocs", "--fabric")
    plan = plan_for(load_model("gpt-oss-120b"), spec, 64, Split(8, 8, 8, 8), 1, COMM["fp4"])
    healthy = realize(plan, spec)
    return plan, healthy, repair(healthy, spec, [17]).circuits


def step(*args: str) -> dict[str, Any]:
    result = runner.invoke(app, [*BASE, *args, "--json", "-"])
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout[result.stdout.index("{"):])
    return data


def times(data: dict[str, Any]) -> dict[tuple[str, str], float]:
    return {(c["region"], c["axis"]): c["time_s"] for c in data["collectives"]}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("decode-circuits")
    _, healthy, repaired = deployed()
    out = {"healthy": root / "healthy.json", "repaired": root / "repaired.json"}
    out["healthy"].write_text(dumps_circuits(healthy))
    out["repaired"].write_text(dumps_circuits(repaired))
    return out


def test_the_healthy_realization_prices_as_the_plan(files: dict[str, Path]) -> None:
    planned = step("--split", "8,8,8,8")
    realized = step("--split", "8,8,8,8", "--circuits", str(files["healthy"]))
    assert times(realized) == pytest.approx(times(planned), rel=1e-12)
    assert realized["step_s"] == pytest.approx(planned["step_s"], rel=1e-12)


def test_a_spare_in_another_rack_pays_its_extra_hops(files: dict[str, Path]) -> None:
    plan, healthy, repaired = deployed()
    moved = [x for x in repaired.circuits if x not in set(healthy.circuits)]
    assert moved and all(x.scope == "inter-rack" for x in moved)
    budget = load_fabric("all-ocs", "--fabric").latency
    extra = budget.hop(ocs=3, cables=4) - budget.hop(ocs=1, cables=2)  # Table 9: two OCS, two cables
    ep = next(d for m in plan.meshes if m.name == "ffn" for a in m.axes[1:] for d in a.demands)
    before = times(step("--split", "8,8,8,8", "--circuits", str(files["healthy"])))
    after = times(step("--split", "8,8,8,8", "--circuits", str(files["repaired"])))
    assert after[("ffn", "EP")] == pytest.approx(before[("ffn", "EP")] + ep.phases * extra, rel=1e-9)
    assert all(after[k] >= before[k] for k in before)


@pytest.mark.parametrize(("extra", "needle"), [
    (["--circuits", "{healthy}"], "--circuits: needs --split"),
    (["--split", "8,8,16,4", "--circuits", "{healthy}"], "--circuits: not a realization of this step's plan"),
    (["--split", "8,8,8,8", "--batch", "2", "--circuits", "{healthy}"], "--circuits: not a realization"),
    (["--split", "8,8,8,8", "--fabric", "all-eps", "--circuits", "{healthy}"], "--circuits: the eps fabric"),
])
def test_circuits_of_another_step_are_refused(files: dict[str, Path], extra: list[str], needle: str) -> None:
    args = [a.replace("{healthy}", str(files["healthy"])) for a in extra]
    result = runner.invoke(app, [*BASE, *args])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], result.output


def test_the_report_shows_the_healthy_and_the_repaired_step(files: dict[str, Path], tmp_path: Path) -> None:
    """Both decode files in one report: each column says which circuits it priced, with its own step time."""
    plan, _, _ = deployed()
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(dumps_plan(plan))
    steps = {}
    for name in ("healthy", "repaired"):
        steps[name] = tmp_path / f"decode-{name}.json"
        result = runner.invoke(app, [*BASE, "--split", "8,8,8,8", "--circuits", str(files[name]),
                                     "--json", str(steps[name])])
        assert result.exit_code == 0, result.output
    data = {name: json.loads(path.read_text()) for name, path in steps.items()}
    assert data["healthy"]["circuits"] == f"healthy.json ({len(deployed()[1].circuits)} circuits)"
    assert data["repaired"]["step_s"] > data["healthy"]["step_s"]
    assert "circuits" not in step("--split", "8,8,8,8")  # the plan's own circuits: the old file, byte for byte
    page = tmp_path / "page.html"
    result = runner.invoke(app, ["report", str(plan_file), "--decode", str(steps["healthy"]), "--decode",
                                 str(steps["repaired"]), "--out", str(page)])
    assert result.exit_code == 0, result.output
    html = page.read_text()
    row = html[html.index('data-key="circuits"'):]
    row = row[:row.index("</tr>")]
    assert "healthy.json (" in row and "repaired.json (" in row
