"""The hybrid's level-2 uplinks balance the level-2 load (paper App. C.7; issue 44).

References: the balanced bound derived by hand, a brute force over every mask set and every
shortest route computed here, and Simlette's own uplink flits.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations, product

import pytest

from ocsplan.cayley import Topology
from ocsplan.decode.pricing import native_routes
from ocsplan.realization.fabrics import load_fabric
from ocsplan.schedules import SCHEDULES
from ocsplan.simlette import SimOptions, network_factory
from ocsplan.simlette.circuitmap import RackRoutes, hybrid_uplinks
from ocsplan.simlette.engine import Engine
from ocsplan.simlette.runner import Runner
from ocsplan.simlette.timing import DL_FLIT
from ocsplan.simlette.traffic import program_workload
from ocsplan.workload import Split, instance_for, load_model

from .conftest import ROOT

HYBRID = ROOT / "simulate" / "fabrics" / "nvl576-hybrid.toml"
DEPLOYMENTS = [("gpt-oss-5.3-like", (32, 16, 16, 32)), ("gpt-oss-5.3-like", (32, 16, 4, 128)),
               ("megatron-5t", (4, 128, 16, 32)), ("megatron-5t", (4, 128, 8, 64))]


def walked_loads(routes: RackRoutes, need: Mapping[int, int]) -> dict[int, float]:
    """Per uplink mask: the need of every offset whose route (walked hop by hop) crosses it, per uplink."""
    load = dict.fromkeys(routes.masks, 0.0)
    for delta, weight in need.items():
        rest, steps = delta, 0
        while rest:
            load[routes.next_hop[rest]] += weight
            rest ^= routes.next_hop[rest]
            steps += 1
        assert steps == routes.hops[delta]
    return {m: v / routes.masks.count(m) for m, v in load.items()}


def brute_force_busiest(need: Mapping[int, int], up: int, racks: int) -> float:
    """The least busiest-uplink load over every set of ``up`` distinct masks and, per offset, every
    smallest set of masks XORing to it (routes chosen freely: a bound no consistent routing beats)."""
    best = float("inf")
    for masks in combinations(range(1, racks), up):
        ways: dict[int, list[tuple[int, ...]]] = {}
        for size in range(1, up + 1):
            for subset in combinations(masks, size):
                x = 0
                for m in subset:
                    x ^= m
                if x in need and x not in ways:
                    ways[x] = []
                if x in need and (not ways[x] or len(ways[x][0]) == size):
                    ways[x].append(subset)
        if len(ways) < len(need):
            continue
        offsets = sorted(need)
        for choice in product(*(ways[d] for d in offsets)):
            load = dict.fromkeys(masks, 0)
            for d, route in zip(offsets, choice, strict=True):
                for m in route:
                    load[m] += need[d]
            best = min(best, max(load.values()))
    return best


@pytest.mark.parametrize(("model", "split"), DEPLOYMENTS)
def test_the_paper_deployments_meet_the_balanced_bound(model: str, split: tuple[int, ...]) -> None:
    # Every deployment's world demands need all 15 rack offsets alike (1024 circuits each per rack).
    # 8 uplinks reach at most 8 offsets directly; the other 7 cross two, so 8 + 2 * 7 = 22 crossings
    # on 8 uplinks: some uplink carries ceil(22 / 8) = 3 offsets' flows. The old choice (offsets 1-8,
    # 9-15 all over mask 8) put 8 on one.
    spec = load_fabric(HYBRID)
    inst = instance_for(load_model(model), 512, Split(*split), 1, ports=36, latency=0.52e-6, link=50e9)
    routes = hybrid_uplinks(native_routes(inst, spec), spec)
    need = dict.fromkeys(range(1, 16), 1)
    assert len(routes.masks) == 8 and len(set(routes.masks)) == 8
    assert max(routes.hops[d] for d in need) == 2
    assert max(walked_loads(routes, need).values()) == 3


def test_simlette_sees_three_flows_on_the_busiest_uplink() -> None:
    """The world all-gather of 8 B pieces on the paper's hybrid: every rack sends each offset 32 x 32
    one-flit messages, and the busiest uplink carries 3 offsets' flits where the least busy one carries
    one offset's (Simlette's own port counts)."""
    spec = load_fabric(HYBRID)
    bits = tuple(range(8, -1, -1))
    inst = instance_for(load_model("megatron-5t"), 512, Split(4, 128, 16, 32), 1, ports=36, latency=0.52e-6,
                        link=50e9)
    routes = hybrid_uplinks(native_routes(inst, spec), spec)
    workload = program_workload(SCHEDULES["layered"].build(Topology.from_profile([9]), 4096), bits, 512)
    factory = network_factory(spec, SimOptions(mode="message"), ports=spec.ports, routes=routes)
    runner = Runner(workload, Engine(DL_FLIT / spec.link, False), factory)
    runner.run()
    per_mask: dict[int, int] = {}
    for key, port in runner.net.ports.items():
        if isinstance(key, tuple) and key[0] == "l2":
            u = int(key[3])
            per_mask[routes.masks[u]] = per_mask.get(routes.masks[u], 0) + port.flits
    assert len(per_mask) == 8
    # per rack and rail a flow is 32 x 32 / 36 flits on average: over all racks and rails 1024 per offset
    assert min(per_mask.values()) == 16 * 1024
    assert max(per_mask.values()) == 3 * 16 * 1024


def test_fifo_departures_by_hand() -> None:
    # queue 0: 3 flits at 0 leave by 3, 3 flits at 1 wait until 3 and leave by 6, 1 flit at 10 by 11;
    # queue 5, alone: 2 flits at 4 leave by 6 (the queues do not mix)
    import numpy as np

    from ocsplan.simlette.uplink_fifo import fifo_departures

    slot = np.array([0, 5, 0, 0], dtype=np.int64)
    out = fifo_departures(slot, np.array([1.0, 4.0, 0.0, 10.0]), np.array([3.0, 2.0, 3.0, 1.0]))
    assert out.tolist() == [6.0, 6.0, 3.0, 11.0]
