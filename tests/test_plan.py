from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from ocsplan.errors import PlanError
from ocsplan.instance import load_instance
from ocsplan.plan import (
    Decision,
    DemandDecision,
    DemandPlan,
    Plan,
    assemble,
    dumps_plan,
    load_plan,
    loads_plan,
    write_plan,
)
from ocsplan.planning.check import check_plan
from ocsplan.planning.heuristic import plan_heuristic

from .conftest import instance_path


@pytest.fixture(scope="module")
def table6():  # type: ignore[no-untyped-def]
    inst = load_instance(instance_path("paper-multimesh-n256"))
    return inst, plan_heuristic(inst)


def test_json_round_trip(table6, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    inst, plan = table6
    path = tmp_path / "plan.json"
    write_plan(plan, path)
    again = load_plan(path)
    assert again == plan
    assert dumps_plan(again) == path.read_text()
    assert check_plan(again, inst) == []


def test_assemble_by_hand() -> None:
    # Table 6 decided by hand: the size-4 axis K4 with one-shot-dvo, the size-64 axis
    # K8□K8 with coset-factored parallel, (16,16) on K4□K4 and K8□K2 (all p = 1).
    inst = load_instance(instance_path("paper-multimesh-n256"))
    attention = ((7, 6), (5, 4, 3, 2, 1, 0))
    ffn = ((7, 6, 5, 4), (3, 2, 1, 0))
    cfp = "coset-factored-parallel"
    decision = Decision(
        partitions=(attention, ffn),
        choices=(
            ((DemandDecision("one-shot-dvo", ((7, 6),)),), (DemandDecision(cfp, ((5, 4, 3), (2, 1, 0))),)),
            ((DemandDecision(cfp, ((7, 6), (5, 4))),), (DemandDecision(cfp, ((2, 1, 0), (3,))),)),
        ),
    )
    plan = assemble(inst, decision, method="manual", status="manual")
    assert check_plan(plan, inst) == []
    assert plan.ports_used == 17
    # 0.52 + 4096/5e10, 2 x 0.52 + 32768/5e10, twice 2 x 0.52 + 4096/5e10 (seconds)
    expected = (0.52e-6 + 4096 / 5e10) + (1.04e-6 + 32768 / 5e10) + 2 * (1.04e-6 + 4096 / 5e10)
    assert plan.objective_s == pytest.approx(expected, rel=1e-12)


def _with_demand(plan: Plan, demand: DemandPlan) -> Plan:
    """The plan with the demand of attention axis 1 replaced."""
    mesh = plan.meshes[0]
    axis = replace(mesh.axes[1], demands=(demand,))
    return replace(plan, meshes=(replace(mesh, axes=(mesh.axes[0], axis)), *plan.meshes[1:]))


def test_check_plan_catches_corruption(table6) -> None:  # type: ignore[no-untyped-def]
    inst, plan = table6
    mesh = plan.meshes[0]
    axis = mesh.axes[1]
    demand = axis.demands[0]
    slow = replace(demand, time_s=demand.time_s * 2)
    bad_time = _with_demand(plan, slow)
    assert any("time" in p for p in check_plan(bad_time, inst))

    greedy = replace(demand, multiplicity=2)
    bad_p = _with_demand(plan, greedy)
    assert any("multiplicity 2 >" in p for p in check_plan(bad_p, inst))

    no_cube = replace(plan, generators=plan.generators[1:], ports_used=plan.ports_used - 1)
    assert any("base cube generator" in p for p in check_plan(no_cube, inst))

    over = replace(plan, generators=tuple(replace(g, multiplicity=2) for g in plan.generators), ports_used=34)
    assert any("port budget exceeded" in p for p in check_plan(over, inst))

    wrong_objective = replace(plan, objective_s=plan.objective_s * 0.9)
    assert any("objective" in p for p in check_plan(wrong_objective, inst))

    moved = replace(mesh, axes=(replace(mesh.axes[0], bits=(7, 5)), axis))
    wrong_bits = replace(plan, meshes=(moved, *plan.meshes[1:]))
    assert check_plan(wrong_bits, inst)


@pytest.mark.parametrize(
    "text",
    ["{", "[]", '{"schema": "ocsplan.plan/0"}', '{"schema": "ocsplan.plan/1", "generators": [{"mask": "12"}]}'],
)
def test_malformed_plan_json(text: str) -> None:
    with pytest.raises(PlanError):
        loads_plan(text, "p.json")
