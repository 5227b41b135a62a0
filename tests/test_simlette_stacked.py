"""Simlette on stacked-link plans: ideal mode equals the closed form, message mode
agrees with the network model, the circuits follow the circulants."""

from __future__ import annotations

from pathlib import Path

import pytest

from ocsplan.errors import InstanceError
from ocsplan.instance import Axis, Budget, Demand, Instance, Mesh
from ocsplan.planning.stacked import plan_stacked
from ocsplan.realization.fabrics import load_fabric
from ocsplan.simlette import SimOptions, simulate_plan
from ocsplan.simlette.stacked import gen_key, stacked_circuits, stacked_workload

FABRICS = Path(__file__).resolve().parent.parent / "simulate" / "fabrics"


def instance(shape: tuple[int, ...], ports: int, payload: int = 8000) -> Instance:
    world = 1
    for size in shape:
        world *= size
    axes = tuple(Axis(size, (Demand("all-reduce", payload, 1.0),)) for size in shape)
    return Instance("s", Budget(world, ports, 0.52e-6, 5e10), (Mesh("mesh", shape, axes),))


@pytest.mark.parametrize(
    ("shape", "ports", "fabric"),
    [
        ((8, 72), 16, "nvl576-all-ocs-serve576.toml"),  # 576 accelerators, issue 11's acceptance
        ((3, 5), 10, "ocs-single.toml"),  # odd sizes, complete axes, K3 on two copies
        ((5, 6), 5, "ocs-single.toml"),  # a ring C5 and C6(1,3)
    ],
)
def test_ideal_mode_equals_the_closed_form(shape: tuple[int, ...], ports: int, fabric: str) -> None:
    plan = plan_stacked(instance(shape, ports))
    report = simulate_plan(plan, load_fabric(FABRICS / fabric), SimOptions(mode="ideal"))
    assert len(report.demands) == len(shape)
    for d in report.demands:
        assert d.closed_form_s is not None
        assert d.simulated_s == pytest.approx(d.closed_form_s, rel=1e-12)


def test_message_mode_on_576_accelerators() -> None:
    plan = plan_stacked(instance((8, 72), 16))
    spec = load_fabric(FABRICS / "nvl576-all-ocs-serve576.toml")
    report = simulate_plan(plan, spec, SimOptions())
    for d in report.demands:
        # the network model (Table 9 hops, flits) against the simulation: same phases, no contention
        assert d.simulated_s == pytest.approx(d.analytical_s, rel=0.02)
    # look-ahead changes the events, never the times (a later phase's message decided
    # early must not delay the node's current phase)
    slow = simulate_plan(plan, spec, SimOptions(lookahead=False), only=lambda m, i, k: i == 1)
    assert slow.demands[0].simulated_s == pytest.approx(report.demands[1].simulated_s)


def test_workload_groups_and_circuits() -> None:
    plan = plan_stacked(instance((3, 5), 10))
    spec = load_fabric(FABRICS / "ocs-single.toml")
    w = stacked_workload(plan, 0, 1, 0)
    assert (w.groups, w.group_size) == (3, 5)
    # axis 1 (stride 1): rank 7 = coordinates (1, 2); its K5 neighbours are 5, 6, 8, 9
    assert sorted({s.dst for s in w.sends[7][0]}) == [5, 6, 8, 9]
    cmap, ports = stacked_circuits(plan, spec)
    axis0, axis1 = plan.meshes[0].axes
    assert axis0.circulant is not None and axis1.circulant is not None
    # 10 ports: K3 (2) and K5 (4) leave 4, two more copies of K3; a K3 copy is one odd
    # 3-cycle per group: three colors (ports) per copy
    assert axis0.circulant.multiplicity == 3 and plan.ports_used == 10
    assert len(cmap.of(0, gen_key(0, 1))) == 3
    # K5 = offsets {1, 4} and {2, 3}: two 5-cycles per group, 3 colors each
    assert ports == 3 * 3 + 3 + 3


def test_limited_buffers_refused() -> None:
    plan = plan_stacked(instance((8, 8), 10))
    with pytest.raises(InstanceError, match="--buffer"):
        simulate_plan(plan, load_fabric(FABRICS / "ocs-single.toml"), SimOptions(buffer=4096))


def test_sweep_on_a_stacked_plan() -> None:
    from ocsplan.simlette.sweep import sweep

    plan = plan_stacked(instance((6, 10), 7))
    spec = load_fabric(FABRICS / "ocs-single.toml")
    rows = sweep(plan, spec, SimOptions(mode="ideal"), [1024, 4096], "all")
    assert {(r.demand, r.schedule) for r in rows} == {
        (f"mesh[{i}].0 all-reduce", s) for i in (0, 1) for s in ("one-shot", "one-shot-dvo")}
    for r in rows:
        assert r.simulated_s == pytest.approx(r.closed_form_s, rel=1e-12)
    with pytest.raises(InstanceError, match="does not run all-reduce on a circulant"):
        sweep(plan, spec, SimOptions(mode="ideal"), [1024], "coset-factored")
