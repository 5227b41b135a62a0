"""Traffic (simlette.traffic): a schedule on every coset of its axis, in global ranks."""

from __future__ import annotations

from collections import Counter

import pytest

from ocsplan.cayley import Topology
from ocsplan.errors import PlanError
from ocsplan.instance import load_instance
from ocsplan.planning.heuristic import plan_heuristic
from ocsplan.schedules import SCHEDULES
from ocsplan.simlette import demand_workload, dl_flits, program_workload

from .conftest import instance_path


def test_cosets_of_an_axis() -> None:
    # An axis on global bits (4, 1) of a 32-rank world: 8 groups of 4, each a coset
    # base | {0, 2, 16, 18}; K4 one-shot sends sigma to the 3 others of the group.
    program = SCHEDULES["one-shot"].build(Topology.from_profile((2,)), 1000)
    w = program_workload(program, (4, 1), 32)
    assert (w.groups, w.group_size, w.phases) == (8, 4, 1)
    assert w.nodes == tuple(range(32))
    assert w.messages == 32 * 3
    for x in w.nodes:
        peers = sorted(s.dst for s in w.sends[x][0])
        assert peers == sorted(x ^ m for m in (2, 16, 18))
        assert all(s.dst == x ^ s.gen for s in w.sends[x][0])
        assert all(s.flits == dl_flits(1000) == 2 for s in w.sends[x][0])
    incoming = Counter(s.dst for x in w.nodes for s in w.sends[x][0])
    assert all(incoming[x] == w.expect[x][0] == 3 for x in w.nodes)


def test_rank_order_sorts_each_phase_by_destination() -> None:
    program = SCHEDULES["one-shot"].build(Topology.from_profile((3,)), 640)
    plain = program_workload(program, (2, 1, 0), 8)
    ranked = program_workload(program, (2, 1, 0), 8, order="rank")
    for x in range(8):
        assert [s.dst for s in ranked.sends[x][0]] == sorted(s.dst for s in plain.sends[x][0])
    # program order: generators ascending, so at each step the nodes address a permutation
    assert len({plain.sends[x][0][0].dst for x in range(8)}) == 8
    # rank order: all nodes but node 0 address node 0 first (the two-shot incast of paper Figure 21)
    assert {ranked.sends[x][0][0].dst for x in range(1, 8)} == {0}


def test_unknown_order() -> None:
    program = SCHEDULES["one-shot"].build(Topology.from_profile((1,)), 64)
    with pytest.raises(ValueError, match="order"):
        program_workload(program, (0,), 2, order="random")


def test_demand_workload_and_the_ring() -> None:
    plan = plan_heuristic(load_instance(instance_path("paper-table7-ring-single")))
    with pytest.raises(PlanError, match="ring"):
        demand_workload(plan, 0, 1, 0)
    plan = plan_heuristic(load_instance(instance_path("paper-multimesh-n256")))
    w = demand_workload(plan, 1, 0, 0, payload=8192)  # ffn axis 0: 16 ranks on bits 7..4
    assert (w.groups, w.group_size) == (16, 16)
    assert w.schedule == plan.meshes[1].axes[0].demands[0].schedule
    other = demand_workload(plan, 1, 0, 0, schedule="recursive-doubling")
    assert other.schedule == "recursive-doubling" and other.phases == 4
