"""Stacked-link allocation (paper App. A.6) and stacked plans.

Allocations are derived by hand from the paper's rule (one port per axis, the
rest in proportion to N_i - 1, largest remainder); times from Eq. 1 by hand.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from ocsplan.errors import InfeasibleError, InstanceError
from ocsplan.instance import Axis, Budget, Demand, Instance, Mesh
from ocsplan.plan import CirculantPlan, Plan, dumps_plan, loads_plan
from ocsplan.planning.check import check_plan
from ocsplan.planning.check_stacked import check_stacked
from ocsplan.planning.registry import solve
from ocsplan.planning.stacked import allocate_ports, plan_stacked

LAMBDA, RATE = 0.52e-6, 5e10  # 0.52 us, 400 Gb/s
SIGMA = 8000  # Figure 15: 8 kB all-reduce


def mesh_instance(
    shape: tuple[int, ...], ports: int, collective: str = "all-reduce", schedule: str = "auto"
) -> Instance:
    world = 1
    for size in shape:
        world *= size
    axes = tuple(Axis(size, (Demand(collective, SIGMA, 1.0, schedule),)) for size in shape)
    return Instance(f"mesh-{'x'.join(map(str, shape))}-L{ports}", Budget(world, ports, LAMBDA, RATE),
                    (Mesh("mesh", shape, axes),))


@pytest.mark.parametrize(
    ("ports", "degrees", "mult"),
    [
        # (8, 64): one port each, the other L - 2 split 7 : 63, largest remainder
        (9, (2, 7), (1, 1)),  # 7 -> 0.7 / 6.3: floors 0, 6; the .7 gets the last port
        (12, (2, 10), (1, 1)),  # 10 -> 1 / 9
        (16, (2, 14), (1, 1)),  # 14 -> 1.4 / 12.6: floors 1, 12; the .6 wins
        (24, (3, 21), (1, 1)),  # 22 -> 2.2 / 19.8
        (36, (4, 32), (1, 1)),  # 34 -> 3.4 / 30.6
        (48, (6, 42), (1, 1)),  # 46 -> 4.6 / 41.4
        (64, (7, 57), (1, 1)),  # 62 -> 6.2 / 55.8
        (70, (7, 63), (1, 1)),  # sum (N_i - 1) = 70: both complete
        (80, (7, 63), (2, 1)),  # 10 spare: one more copy of K8 (7 ports) fits, K64 (63) does not
    ],
)
def test_figure15_allocation_by_hand(ports: int, degrees: tuple[int, ...], mult: tuple[int, ...]) -> None:
    plan = plan_stacked(mesh_instance((8, 64), ports))
    got = tuple(axis.degree for axis in plan.meshes[0].axes)
    assert got == degrees
    assert tuple(axis.circulant.multiplicity for axis in plan.meshes[0].axes if axis.circulant) == mult
    assert plan.ports_used <= ports
    assert check_plan(plan, mesh_instance((8, 64), ports)) == []


def test_complete_axes_time_by_hand() -> None:
    # L = 70: K8 and K64, one phase each, sigma once per link: T = lambda + sigma / R
    plan = plan_stacked(mesh_instance((8, 64), 70))
    each = LAMBDA + SIGMA / RATE
    assert [d.time_s for axis in plan.meshes[0].axes for d in axis.demands] == pytest.approx([each, each])
    assert plan.objective_s == pytest.approx(2 * each)
    # L = 80: the K8 runs on two copies, halving its transfer time
    plan = plan_stacked(mesh_instance((8, 64), 80))
    assert plan.objective_s == pytest.approx(LAMBDA + SIGMA / (2 * RATE) + each)


def test_ring_axis_time_by_hand() -> None:
    # L = 9 gives the 8-axis a ring C8(1): diameter 4; the balanced tree sends one
    # input per generator per phase, so v = 4 sigma (one-shot would move 1+3+5+7 = 16)
    plan = plan_stacked(mesh_instance((8, 64), 9))
    axis = plan.meshes[0].axes[0]
    assert axis.topology == "C8(1)" and axis.circulant is not None and axis.circulant.diameter == 4
    (d,) = axis.demands
    assert (d.schedule, d.phases, d.volume_bytes) == ("one-shot-dvo", 4, 4 * SIGMA)
    assert d.time_s == pytest.approx(4 * LAMBDA + 4 * SIGMA / RATE)


@pytest.mark.parametrize(
    ("sizes", "ports", "degrees", "idle"),
    [
        # 3 x 4 x 48 at L = 12: 9 spare split 2 : 3 : 47 -> floors 0, 0, 8, the last port
        # to the 4-axis (.52 > .35); the 3-axis's single port is a matching, not
        # connected, so it takes one from the 48-axis: (2, 2, 8)
        ((3, 4, 48), 12, (2, 2, 8), 0),
        # (5, 8) at L = 7: 5 spare -> 1.82 / 3.18: (3, 4); degree 3 on Z5 is odd on odd N,
        # so 2, and the freed port goes to the 8-axis: (2, 5)
        ((5, 8), 7, (2, 5), 0),
        # (5, 5) at L = 5: 3 spare split evenly -> 1.5 / 1.5: (3, 2) then (2, 2) and the
        # freed port fits nowhere (degree 3 on Z5 again): idle
        ((5, 5), 5, (2, 2), 1),
        ((2, 2, 2), 3, (1, 1, 1), 0),
    ],
)
def test_allocation_repairs(sizes: tuple[int, ...], ports: int, degrees: tuple[int, ...], idle: int) -> None:
    alloc = allocate_ports(sizes, ports)
    assert alloc.degrees == degrees and alloc.idle == idle
    assert alloc.ports + alloc.idle <= ports
    assert any("idle" in note for note in alloc.notes) == bool(idle)


def test_too_few_ports_is_infeasible() -> None:
    with pytest.raises(InfeasibleError, match="3 ports cannot connect 2 stacked axes"):
        plan_stacked(mesh_instance((8, 64), 3))


def test_non_power_of_two_world_plans_with_stacked_only() -> None:
    inst = mesh_instance((8, 72), 16)
    plan = solve(inst, "stacked")
    assert plan.world == 576 and check_plan(plan, inst) == []
    with pytest.raises(InstanceError, match="world 576 is not a power of two: use --method stacked"):
        solve(inst, "heuristic")


def test_only_one_shot_schedules() -> None:
    with pytest.raises(InstanceError, match=r"axes\[0\]\.schedule: coset-factored does not run all-reduce on a circ"):
        plan_stacked(mesh_instance((8, 8), 10, schedule="coset-factored"))
    with pytest.raises(InstanceError, match=r"axes\[0\]\.schedule: bruck does not run all-to-all on a circulant"):
        plan_stacked(mesh_instance((8, 8), 10, "all-to-all", schedule="bruck"))
    plan = plan_stacked(mesh_instance((8, 8), 10, schedule="one-shot"))
    assert {d.schedule for axis in plan.meshes[0].axes for d in axis.demands} == {"one-shot"}


@pytest.mark.parametrize(("collective", "schedule"), [("all-gather", "one-shot-dvo"), ("all-to-all", "one-shot")])
def test_all_gather_and_all_to_all_on_a_ring_by_hand(collective: str, schedule: str) -> None:
    # L = 4 on (8, 8): a ring C8(1) per axis, diameter 4, blocks of sigma / 8. All-gather
    # along the tree: one block per generator per phase, 4 blocks; all-to-all: 4+3+2+1 = 10
    plan = plan_stacked(mesh_instance((8, 8), 4, collective))
    d = plan.meshes[0].axes[0].demands[0]
    blocks = 4 if collective == "all-gather" else 10
    assert (d.schedule, d.phases, d.volume_bytes) == (schedule, 4, blocks * SIGMA / 8)
    assert check_plan(plan, mesh_instance((8, 8), 4, collective)) == []


def test_json_round_trip_and_checker_catches_tampering() -> None:
    inst = mesh_instance((8, 72), 24)
    plan = plan_stacked(inst)
    text = dumps_plan(plan)
    assert '"schema": "ocsplan.plan/2"' in text and '"construction": "stacked"' in text
    again = loads_plan(text)
    assert again == plan and dumps_plan(again) == text
    axis = plan.meshes[0].axes[1]
    assert axis.circulant is not None
    worse = replace(axis.circulant, diameter=axis.circulant.diameter + 1)
    first = plan.meshes[0].axes[0]

    def with_axis(circ: CirculantPlan) -> Plan:
        return replace(plan, meshes=(replace(plan.meshes[0], axes=(first, replace(axis, circulant=circ))),))

    assert any("diameter" in p for p in check_stacked(with_axis(worse), inst))
    broken = replace(axis.circulant, offsets=axis.circulant.offsets[1:])
    assert any("negative" in p for p in check_stacked(with_axis(broken), inst))
    assert any("objective" in p for p in check_stacked(replace(plan, objective_s=1.0), inst))


def test_deterministic() -> None:
    inst = mesh_instance((8, 72), 30)
    a, b = plan_stacked(inst), plan_stacked(inst)
    assert dumps_plan(replace(a, solve_seconds=0)) == dumps_plan(replace(b, solve_seconds=0))


@pytest.mark.parametrize("ports", [16, 24, 36, 48, 64, 70, 80])
def test_figure15_shape(ports: int) -> None:
    # Paper Figure 15 / App. A.6: shared-host clearly ahead from L = 16 to L = 64; once
    # L >= (8 - 1) + (64 - 1) = 70 both fully connect both axes and take the same time.
    from ocsplan.planning.heuristic import plan_heuristic

    inst = mesh_instance((8, 64), ports)
    shared, stacked = plan_heuristic(inst), plan_stacked(inst)
    if ports < 70:
        assert shared.objective_s < stacked.objective_s * 0.9
    else:
        assert shared.objective_s == pytest.approx(stacked.objective_s, rel=1e-12)
