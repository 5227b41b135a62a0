"""Resilience as a plan property (issue 40 goal 4): ``solve --resilience`` and ``--reserve-ports``.

The worst single circuit fault is checked against the independent recomputation of
tests/test_deploy_faults.py (a networkx graph of the surviving circuits, each fallback and relay
run by hand, Eq. 1), fault by fault, and against the faults analysis of another realization of the
same plan (the cost depends on the plan, not on where ranks sit)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from ocsplan.cli import app
from ocsplan.deploy.faults import analyse_faults
from ocsplan.deploy.resilience import resilience
from ocsplan.errors import PlanError
from ocsplan.plan import Resilience, dumps_plan, loads_plan
from ocsplan.schemas import schema

from .conftest import instance_path
from .test_deploy_faults import case, expected

runner = CliRunner()


def _by_hand(name: str) -> tuple[int, int, float | None, set[tuple[int, int, str]]]:
    """(faults, stopping faults, worst objective of the others, the worst circuits' ranks and
    generator) of every circuit fault, each demand priced by the independent recomputation."""
    plan, c = case(name)
    stopped, running = 0, []
    for i, x in enumerate(c.circuits):
        total, stops = 0.0, False
        for m, mesh in enumerate(plan.meshes):
            for j, axis in enumerate(mesh.axes):
                for k, d in enumerate(axis.demands):
                    want = expected(plan, c, m, j, k, f"circuit:{i}")
                    if want.T is None:
                        stops = True
                    else:
                        total += d.weight * want.T
        if stops:
            stopped += 1
        else:
            running.append((total, (x.a, x.b, x.generator)))
    if not running:
        return len(c.circuits), stopped, None, set()
    worst = max(t for t, _ in running)
    return len(c.circuits), stopped, worst, {who for t, who in running if t >= worst * (1 - 1e-12)}


def _named(r: Resilience) -> tuple[int, int, str]:
    ranks, _, generator = r.worst.partition(", generator ")
    a, _, b = ranks.removeprefix("ranks ").partition("-")
    return int(a), int(b), generator


@pytest.mark.parametrize("name", ["n16"])
def test_the_worst_fault_by_hand(name: str) -> None:
    plan, _c = case(name)
    r = resilience(plan)
    faults, stopped, worst, who = _by_hand(name)
    assert (r.faults, r.stopped) == (faults, stopped)
    assert (r.worst_s is None) == (worst is None)
    if worst is not None and r.worst_s is not None:
        assert r.worst_s == pytest.approx(worst, rel=1e-12)
        assert _named(r) in who


@pytest.mark.parametrize("name", ["n16", "n64"])
def test_any_realization_gives_the_same_worst(name: str) -> None:
    """The ideal single-level realization and the test's own fabric price the same worst fault."""
    plan, c = case(name)
    r = resilience(plan)
    report = analyse_faults(c, plan, "circuit")
    s = report.summary
    assert (r.faults, r.stopped) == (s.count, s.stopped)
    assert s.worst_running is not None and r.worst_s == s.worst_running.objective
    worst = {(c.circuits[int(f.id.partition(":")[2])].a, c.circuits[int(f.id.partition(":")[2])].b,
              c.circuits[int(f.id.partition(":")[2])].generator)
             for f in report.faults if not f.stopped and f.objective == r.worst_s}
    assert _named(r) in worst


def test_the_plan_json_keeps_it_and_stays_byte_identical_without() -> None:
    plan, _c = case("n16")
    without = dumps_plan(plan)
    assert '"resilience"' not in without and loads_plan(without).resilience is None
    with_r = dumps_plan(plan.__class__(**{**plan.__dict__, "resilience": resilience(plan)}))
    data = json.loads(with_r)
    jsonschema.validate(data, schema("plan-1"))
    again = loads_plan(with_r)
    assert again.resilience == resilience(plan) and dumps_plan(again) == with_r
    assert list(data).index("resilience") == list(data).index("gap") + 1


@pytest.mark.parametrize(("value", "field"), [
    ("[]", "resilience: expected an object"),
    ('{"faults": 3, "stopped": 4, "worst_s": 1e-6, "worst": ""}', "resilience.stopped"),
    ('{"faults": 3, "stopped": 0, "worst_s": "slow", "worst": ""}', "resilience.worst_s"),
    ('{"faults": 3, "stopped": 0, "worst_s": null, "worst": "", "extra": 1}', "extra"),
])
def test_a_bad_resilience_field_is_one_error_naming_it(value: str, field: str) -> None:
    plan, _c = case("n16")
    text = dumps_plan(plan).replace('"notes":', f'"resilience": {value},\n "notes":', 1)
    with pytest.raises(PlanError) as exc:
        loads_plan(text, "p.json")
    assert field in str(exc.value) and "p.json" in str(exc.value)


def test_solve_resilience_and_reserve_ports(tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    instance = instance_path("paper-multimesh-n256")
    result = runner.invoke(app, ["solve", str(instance), "--resilience", "--reserve-ports", "2", "--json", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["ports"] == 16 and data["ports_used"] <= 16  # 18 ports, 2 kept for repairs
    assert "2 port(s) per accelerator reserved for repairs: planned on 16 of 18" in data["notes"]
    r = data["resilience"]
    assert r["faults"] == 256 * data["ports_used"] // 2 and "resilience: " in result.stdout
    assert f"{r['stopped']} of {r['faults']} circuit faults stop a demand" in result.stdout.replace("\n", " ")


@pytest.mark.parametrize(("args", "needle"), [
    (["--reserve-ports", "18"], "--reserve-ports: must be between 0 and 17"),
    (["--reserve-ports", "-1"], "--reserve-ports: must be between 0 and 17"),
    (["--method", "stacked", "--resilience"], "--resilience"),
])
def test_bad_options_are_one_line(args: list[str], needle: str) -> None:
    result = runner.invoke(app, ["solve", str(instance_path("paper-multimesh-n256")), *args])
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and needle in result.stderr, result.stderr
