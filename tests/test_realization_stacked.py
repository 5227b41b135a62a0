"""Realization and validation of stacked-link plans (circulant circuit sets)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from ocsplan.errors import InstanceError, RealizationError
from ocsplan.instance import Axis, Budget, Demand, Instance, Mesh
from ocsplan.planning.stacked import plan_stacked
from ocsplan.realization.circuits import dumps_circuits, loads_circuits, parse_circulant, shift
from ocsplan.realization.fabrics import load_fabric
from ocsplan.realization.realize import realize
from ocsplan.realization.validate import validate
from ocsplan.simlette import SimOptions, simulate_plan

FABRICS = Path(__file__).resolve().parent.parent / "simulate" / "fabrics"


def instance(shape: tuple[int, ...], ports: int) -> Instance:
    world = 1
    for size in shape:
        world *= size
    axes = tuple(Axis(size, (Demand("all-reduce", 8000, 1.0),)) for size in shape)
    return Instance("s", Budget(world, ports, 0.52e-6, 5e10), (Mesh("mesh", shape, axes),))


def test_576_accelerators_realize_validate_simulate() -> None:
    # issue 11's acceptance: 8 x 72 on a fabric of 576 accelerators (18 racks of 32)
    plan = plan_stacked(instance((8, 72), 16))
    spec = load_fabric(FABRICS / "nvl576-all-ocs-serve576.toml")
    circuits = realize(plan, spec)
    assert circuits.ports_used == 16 and circuits.reserved_ports == 0
    assert circuits.counts.circuits == 576 * 16 // 2
    assert validate(circuits, plan) == []
    again = loads_circuits(dumps_circuits(circuits))
    assert validate(again, plan) == []
    # every circuit joins x and x +- s on its axis (row-major ranks)
    for c in circuits.circuits[:: 97]:
        size, stride, s = parse_circulant(c.generator)
        assert c.b in (shift(c.a, size, stride, s), shift(c.a, size, stride, -s))
    report = simulate_plan(plan, spec, SimOptions(mode="ideal"), circuits=circuits)
    assert [d.simulated_s for d in report.demands] == pytest.approx([d.closed_form_s for d in report.demands])


def test_odd_cycles_reserve_a_port_and_still_validate() -> None:
    # (3, 5) at L = 10: K3 x 3 copies and K5; K3 and the two 5-cycle pairs of K5 are odd
    # cycles, three colors each: 3 x 3 + 3 + 3 = 15 ports for the plan's 10
    plan = plan_stacked(instance((3, 5), 10))
    circuits = realize(plan, load_fabric(FABRICS / "ocs-single.toml"))
    assert (circuits.ports_used, circuits.reserved_ports) == (15, 5)
    assert validate(circuits, plan) == []
    assert any("odd cycles" in note for note in circuits.notes)


def test_validator_catches_a_wrong_peer_and_a_missing_circuit() -> None:
    plan = plan_stacked(instance((4, 6), 6))
    circuits = realize(plan, load_fabric(FABRICS / "ocs-single.toml"))
    assert validate(circuits, plan) == []
    first = circuits.circuits[0]
    wrong = replace(first, b=(first.b + 1) % plan.world if (first.b + 1) % plan.world != first.a else first.b + 2)
    faults = [str(f) for f in validate(replace(circuits, circuits=(wrong, *circuits.circuits[1:])), plan)]
    assert any("wrong peer" in f for f in faults)
    faults = [str(f) for f in validate(replace(circuits, circuits=circuits.circuits[1:]), plan)]
    assert any("missing" in f or "multiplicity asks" in f for f in faults)


def test_bad_realizations() -> None:
    plan = plan_stacked(instance((8, 72), 40))
    with pytest.raises(RealizationError, match=r"plan needs \d+ ports per node, fabric nvl576-all-ocs-serve576 has 36"):
        realize(plan, replace(load_fabric(FABRICS / "nvl576-all-ocs-serve576.toml"), ports=36))
    with pytest.raises(InstanceError, match="contiguous"):
        realize(plan, load_fabric(FABRICS / "nvl576-all-ocs-serve576.toml"), "bits")
    with pytest.raises(RealizationError, match="serves 512"):
        realize(plan, load_fabric(FABRICS / "nvl576-all-ocs.toml"))


def test_mixed_collectives_end_to_end() -> None:
    # all-gather and all-to-all on circulants (odd sizes too): realized, validated, and
    # simulated in ideal mode at exactly the plan's closed forms
    axes = (Axis(6, (Demand("all-gather", 6000, 2.0),)), Axis(9, (Demand("all-to-all", 9000, 1.0),
                                                                 Demand("all-reduce", 4096, 1.0))))
    inst = Instance("mixed", Budget(54, 8, 0.52e-6, 5e10), (Mesh("m", (6, 9), axes),))
    plan = plan_stacked(inst)
    spec = load_fabric(FABRICS / "ocs-single.toml")
    circuits = realize(plan, spec)
    assert validate(circuits, plan) == []
    report = simulate_plan(plan, spec, SimOptions(mode="ideal"), circuits=circuits)
    assert len(report.demands) == 3
    for d in report.demands:
        assert d.simulated_s == pytest.approx(d.closed_form_s, rel=1e-12)
    message = simulate_plan(plan, spec, SimOptions(), circuits=circuits)
    for d in message.demands:
        assert d.simulated_s == pytest.approx(d.analytical_s, rel=0.05)
