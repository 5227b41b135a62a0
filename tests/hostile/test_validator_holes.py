"""Issue 13's eight validator holes, each a single corruption of a valid realization."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from ocsplan.errors import PlanError
from ocsplan.planning.check import check_plan
from ocsplan.realization.circuits import circuits_from_dict, circuits_to_dict
from ocsplan.realization.fabric_check import fabric_faults
from ocsplan.realization.validate import validate

from .test_validator_mutations import realized

Data = dict[str, Any]


def _route_of_multiplicity_two(d: Data) -> Data:
    return next(r for r in d["routes"] if r["multiplicity"] == 2)


def hole1(d: Data) -> None:  # multiplicity 2 -> 1, each entry keeps one port
    r = _route_of_multiplicity_two(d)
    r["multiplicity"] = 1
    for node in r["table"]:
        for phase in node:
            for entry in phase:
                entry[1] = entry[1][:1]


def hole2(d: Data) -> None:  # one entry's ports [a, b] -> [a, a]
    r = _route_of_multiplicity_two(d)
    entry = next(e for node in r["table"] for phase in node for e in phase)
    entry[1] = [entry[1][0], entry[1][0]]


def hole3(d: Data) -> None:  # the route's multiplicity changes, its entries stay
    _route_of_multiplicity_two(d)["multiplicity"] = 1


def hole5(d: Data) -> None:
    d["fabric"]["link_Bps"] /= 4


def hole6(d: Data) -> None:
    d["counts"]["used"]["accelerator_ports"] += 7


def hole7(d: Data) -> None:  # a cross-connect listed twice
    dev = d["devices"][0]
    dev["cross_connects"].append(list(dev["cross_connects"][0]))


def hole8(d: Data) -> None:  # inter-rack -> intra-rack, three hops stay
    circ = next(c for c in d["circuits"] if c["scope"] == "inter-rack")
    circ["scope"] = "intra-rack"


@pytest.mark.parametrize(
    ("case", "corrupt"),
    [
        ("megatron-nvl576-all-ocs", hole1),
        ("megatron-nvl576-all-ocs", hole2),
        ("megatron-nvl576-all-ocs", hole3),
        ("table6-ocs-single", hole5),
        ("table6-ocs-single", hole6),
        ("table6-ocs-single", hole7),
        ("megatron-nvl576-all-ocs", hole8),
    ],
)
def test_hole_is_closed(case: str, corrupt: Callable[[Data], None]) -> None:
    plan, spec, circuits = realized(case)
    data = circuits_to_dict(circuits)
    corrupt(data)
    try:
        mutant = circuits_from_dict(data, "mutant.json")
    except PlanError:
        return
    assert fabric_faults(mutant, spec) + validate(mutant, plan)


def test_hole4_plan_objective_halved() -> None:
    plan, _, circuits = realized("table6-ocs-single")
    halved = replace(plan, objective_s=plan.objective_s / 2)
    assert any("objective" in p for p in check_plan(halved))
    assert validate(circuits, halved)  # the file's plan reference no longer matches either
