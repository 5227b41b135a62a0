"""The contention model of hybrid fabrics (EPS leaves, OCS uplinks) against Simlette, both computed here (issue 44).

Reference: Simlette's message mode on the same fabric and the same uplink routes, never a stored
number: every uplink and port carries the flits Simlette's port did, and the time lies within 5 %
of Simlette's completion time.
"""

from __future__ import annotations

import tomllib
from typing import cast

import numpy as np
import pytest

from ocsplan.cayley import Topology, expand
from ocsplan.decode.pricing import EPS_MODELS, native_sends
from ocsplan.plan import GeneratorPlan, Plan
from ocsplan.realization.fabrics import FabricSpec, load_fabric, parse_fabric
from ocsplan.schedules import SCHEDULES
from ocsplan.simlette import SimOptions, contention, network_factory, simulate_workload
from ocsplan.simlette.circuitmap import RackRoutes, hybrid_uplinks
from ocsplan.simlette.contention import hybrid_shape
from ocsplan.simlette.engine import Engine
from ocsplan.simlette.runner import Runner
from ocsplan.simlette.switched import SwitchedNetwork
from ocsplan.simlette.timing import DL_FLIT
from ocsplan.simlette.traffic import Workload, program_workload

from .conftest import ROOT

WORLD = 64


def _fabric(name: str, rack: int, up: int) -> FabricSpec:
    """64 accelerators, 4 ports, EPS leaves of ``rack`` down and ``up`` uplinks joined by an OCS."""
    text = f"""
name = "{name}"
accelerators = 64
ports = 4
link = "400Gb/s"
[racks]
size = {rack}
[[level]]
technology = "eps"
radix = {rack + up}
down = {rack}
up = {up}
[[level]]
technology = "ocs"
radix = 64
"""
    return parse_fabric(tomllib.loads(text), name)


# 8 racks of 8 with 4 uplinks: offsets 4-7 get one each (the balanced choice), 1, 2, 3 take two hops;
# 4 racks of 16 with 4 uplinks: offsets 1, 2, 3, and offset 1 two uplinks (blocks sprayed over them)
FABRICS = {"hops": (8, 4), "ways": (16, 4)}


def _routes(spec: FabricSpec, bits: tuple[int, ...], world: int) -> RackRoutes:
    """The uplinks a stand-in plan of every rank pair of the axis asks for (as ``native_routes``)."""
    masks = sorted({expand(g, bits) for g in range(1, 1 << len(bits))})
    plan = Plan("t", "native", "native", world, spec.ports, 0, 1e-6, spec.link,
                tuple(GeneratorPlan(m, 1, "fold") for m in masks), (), 0.0)
    return hybrid_uplinks(plan, spec)


def _network(spec: FabricSpec, bits: tuple[int, ...], world: int) -> tuple[object, SwitchedNetwork]:
    """Simlette's message-mode network factory on ``spec`` with the axis's uplink routes, and one network
    from it (neither depends on the schedule)."""
    factory = network_factory(spec, SimOptions(mode="message"), ports=spec.ports,
                              routes=_routes(spec, bits, world))
    net = factory(Engine(DL_FLIT / spec.link, False), lambda _m: None)
    assert isinstance(net, SwitchedNetwork) and net.routes is not None
    return factory, net


def _setup(spec: FabricSpec, schedule: str, layout: str, bits: tuple[int, ...], payload: int,
           world: int) -> tuple[Workload, object, SwitchedNetwork]:
    a = len(bits)
    topo = Topology.from_profile([a]) if layout == "flat" else Topology.cube(a)
    workload = program_workload(SCHEDULES[schedule].build(topo, payload), bits, world)
    return (workload, *_network(spec, bits, world))


def _times(spec: FabricSpec, schedule: str, layout: str, bits: tuple[int, ...], payload: int,
           world: int = WORLD, model: str = "contention") -> tuple[float, float]:
    """(Simlette's time, the model's time) of the native schedule on ``spec``."""
    simulated, (time,) = _models(spec, schedule, layout, bits, payload, world, (model,))
    return simulated, time


def _models(spec: FabricSpec, schedule: str, layout: str, bits: tuple[int, ...], payload: int,
            world: int, models: tuple[str, ...]) -> tuple[float, list[float]]:
    """Simlette's time and each model's time of the native schedule on ``spec``: one simulation, each
    model on a network of its own from the same factory."""
    workload, factory, net = _setup(spec, schedule, layout, bits, payload, world)
    simulated = simulate_workload(workload, factory, mode="message", rate=spec.link)  # type: ignore[arg-type]
    sends = native_sends(schedule, layout, 1 << len(bits), payload)
    times = []
    for k, model in enumerate(models):
        if k:
            net = factory(Engine(DL_FLIT / spec.link, False), lambda _m: None)  # type: ignore[operator]
            assert isinstance(net, SwitchedNetwork)
        times.append(EPS_MODELS[model](sends, bits, world, net, spec.rack_size))
    return simulated.simulated_s, times


BITS = [(5, 4, 3), (5, 4, 3, 2, 1, 0), (4, 3, 2, 1), (5, 2, 1, 0)]
SCHEDULES_FLAT = [("one-shot", "flat"), ("rs-ag", "flat"), ("layered", "flat"), ("bruck", "flat")]


@pytest.mark.parametrize("fabric", sorted(FABRICS))
@pytest.mark.parametrize(("schedule", "layout"), [*SCHEDULES_FLAT, ("rs-ag", "cube")])
@pytest.mark.parametrize("bits", BITS)
@pytest.mark.parametrize("payload", [264, 65536])
def test_every_link_carries_simlettes_flits(fabric: str, schedule: str, layout: str, bits: tuple[int, ...],
                                            payload: int) -> None:
    """Every OCS uplink and every source port: the model's flits, summed over the phases, are Simlette's."""
    spec = _fabric(fabric, *FABRICS[fabric])
    workload, factory, net = _setup(spec, schedule, layout, bits, payload, WORLD)
    runner = Runner(workload, Engine(DL_FLIT / spec.link, False), factory)  # type: ignore[arg-type]
    runner.run()
    shape, _ = hybrid_shape(net)
    sends = native_sends(schedule, layout, 1 << len(bits), payload)
    vectors = contention._hybrid_vectors(sends, bits, WORLD, shape)
    ports = np.sum([v[0] for v in vectors], axis=0)
    links = np.sum([v[1] for v in vectors], axis=0)
    L, U = spec.ports, len(shape.masks)
    seen = np.zeros_like(links)
    checked = 0
    for key, port in runner.net.ports.items():
        assert isinstance(key, tuple)
        if key[0] == "l2":
            rack, rail, u = (cast(int, v) for v in key[1:])
            seen[(rack * L + rail) * U + u] = port.flits
            checked += 1
        elif key[0] == "src":
            assert port.flits == ports[cast(int, key[2])], key
    assert np.array_equal(seen, links)
    assert checked or not links.any()


@pytest.mark.parametrize("fabric", sorted(FABRICS))
@pytest.mark.parametrize(("schedule", "layout"), [("one-shot", "flat"), ("layered", "flat"), ("bruck", "flat")])
@pytest.mark.parametrize("bits", BITS)
@pytest.mark.parametrize("payload", [264, 4096, 65536])
def test_one_phase_within_5_percent_of_simlette(fabric: str, schedule: str, layout: str, bits: tuple[int, ...],
                                                payload: int) -> None:
    simulated, model = _times(_fabric(fabric, *FABRICS[fabric]), schedule, layout, bits, payload)
    assert model == pytest.approx(simulated, rel=0.05)


@pytest.mark.parametrize("fabric", sorted(FABRICS))
@pytest.mark.parametrize("bits", BITS)
@pytest.mark.parametrize("payload", [264, 4096])
def test_two_shot_within_5_percent_of_simlette(fabric: str, bits: tuple[int, ...], payload: int) -> None:
    # with 2-8 KiB pieces Simlette overlaps the two phases more than the phase sum does
    # (up to +11 % on 8 ranks one per rack): docs/eps.md, not asserted here
    simulated, model = _times(_fabric(fabric, *FABRICS[fabric]), "rs-ag", "flat", bits, payload)
    assert model == pytest.approx(simulated, rel=0.05)


def test_the_paper_world_all_reduce_within_2_percent() -> None:
    """The two-shot world all-reduce of 4 KiB on the paper's hybrid (512 ranks, 16 racks, masks 8-15,
    offsets 1-7 over two uplinks): within 2 % of Simlette; the symmetric model is over a third fast."""
    spec = load_fabric(ROOT / "simulate" / "fabrics" / "nvl576-hybrid.toml")
    bits = tuple(range(8, -1, -1))
    simulated, (model, symmetric) = _models(spec, "rs-ag", "flat", bits, 4096, 512, ("contention", "symmetric"))
    assert model == pytest.approx(simulated, rel=0.02)
    assert symmetric < simulated / 1.5


def test_an_axis_inside_the_racks_of_the_paper_hybrid() -> None:
    """A 32-rank all-reduce inside each rack of the 512-rank hybrid crosses no uplink: within 5 % of Simlette."""
    spec = load_fabric(ROOT / "simulate" / "fabrics" / "nvl576-hybrid.toml")
    simulated, model = _times(spec, "one-shot", "flat", (4, 3, 2, 1, 0), 4096, world=512)
    assert model == pytest.approx(simulated, rel=0.05)


def _queues_both_ways(spec: FabricSpec, schedule: str, layout: str, bits: tuple[int, ...], payload: int,
                      world: int) -> tuple[object, object]:
    """The queues folded to rack 0 and solved for every rack (the schedule's sends alone: no workload
    is programmed, no simulation run)."""
    _, net = _network(spec, bits, world)
    shape, latencies = hybrid_shape(net)
    hop = (latencies[1] - latencies[0]) / (DL_FLIT / spec.link)
    sends = native_sends(schedule, layout, 1 << len(bits), payload)
    return (contention._hybrid_queues(sends, bits, world, shape, hop, fold=True),
            contention._hybrid_queues(sends, bits, world, shape, hop, fold=False))


def _close(folded: object, every: object) -> bool:
    """Per phase the same hop counts and landing times to 1e-9 (the queues' running max is offset per
    queue, so a queue's rounding depends on how many come before it)."""
    assert isinstance(folded, tuple) and isinstance(every, tuple) and len(folded) == len(every)
    for a, b in zip(folded, every, strict=True):
        if a is None or b is None:
            assert a is b
            continue
        assert [h for h, _ in a] == [h for h, _ in b]
        assert [t for _, t in a] == pytest.approx([t for _, t in b], rel=1e-9, abs=1e-9)
    return True


@pytest.mark.parametrize("fabric", sorted(FABRICS))
@pytest.mark.parametrize(("schedule", "layout"), [*SCHEDULES_FLAT, ("rs-ag", "cube")])
@pytest.mark.parametrize("bits", BITS)
@pytest.mark.parametrize("payload", [264, 65536])
def test_one_racks_queues_give_every_racks(fabric: str, schedule: str, layout: str, bits: tuple[int, ...],
                                           payload: int) -> None:
    """Solving rack 0's uplink queues (the XOR symmetry across racks) lands every pair as solving all
    racks' queues does: 8 racks of 8 with one- and two-hop offsets, 4 racks of 16 with two uplinks to one
    offset (blocks sprayed over them)."""
    assert _close(*_queues_both_ways(_fabric(fabric, *FABRICS[fabric]), schedule, layout, bits, payload, WORLD))


@pytest.mark.parametrize(("schedule", "bits"), [("rs-ag", tuple(range(8, -1, -1))), ("bruck", (8, 7, 6, 5)),
                                                ("one-shot", (8, 4, 2, 0))])
def test_one_racks_queues_on_the_paper_hybrid(schedule: str, bits: tuple[int, ...]) -> None:
    """The same on the paper's 512-rank hybrid (16 racks, offsets 1-7 over two uplinks)."""
    spec = load_fabric(ROOT / "simulate" / "fabrics" / "nvl576-hybrid.toml")
    assert _close(*_queues_both_ways(spec, schedule, "flat", bits, 4096, 512))


def test_uplinks_that_do_not_divide_the_rack_land_alike() -> None:
    """Three uplinks to one offset of racks of 4: block c of source s takes uplink (s + c) mod 3, which XOR
    by a rack does not keep, so the fold is not taken; the call lands every pair as the full solution."""
    shape = contention.HybridShape(ports=1, rack_size=4, masks=(1, 1, 1), paths=((), (1,)))
    sends = (((4, 2048),), ((4, 8192),))
    assert _close(contention._hybrid_queues(sends, (2, 1, 0), 8, shape, 0.5, fold=True),
                  contention._hybrid_queues(sends, (2, 1, 0), 8, shape, 0.5, fold=False))
