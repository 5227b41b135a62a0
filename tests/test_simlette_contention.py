"""The contention model of EPS fabrics against Simlette's message mode, both computed here (issue 28).

Reference: Simlette itself (the event simulation of the same fabric), never fitted numbers:
the busiest link's flits must equal the flits Simlette's busiest port carried, and the
time must lie within 5 % of Simlette's completion time.
"""

from __future__ import annotations

import tomllib

import pytest

from ocsplan.cayley import Topology
from ocsplan.decode.pricing import EPS_MODELS, native_sends
from ocsplan.realization.fabrics import FabricSpec, load_fabric, parse_fabric
from ocsplan.schedules import SCHEDULES
from ocsplan.simlette import SimOptions, network_factory, simulate_workload
from ocsplan.simlette.contention import SwitchedShape, phase_loads
from ocsplan.simlette.engine import Engine
from ocsplan.simlette.network import SwitchedNetwork
from ocsplan.simlette.timing import DL_FLIT
from ocsplan.simlette.traffic import program_workload

from .conftest import ROOT

WORLD = 64

# 64 accelerators in 8 racks of 8, 4 ports, leaves 8 down + 2 up (4:1 as Figure 25), one spine per rail
SMALL = """
name = "eps-small"
accelerators = 64
ports = 4
link = "400Gb/s"
[racks]
size = 8
[[level]]
technology = "eps"
radix = 10
down = 8
up = 2
[[level]]
technology = "eps"
radix = 16
"""
SINGLE = 'name = "eps-64"\naccelerators = 64\nports = 8\nlink = "400Gb/s"\n[[level]]\ntechnology = "eps"\nradix = 64\n'


def _spec(name: str) -> FabricSpec:
    if name == "nvl576-all-eps":
        return load_fabric(ROOT / "simulate" / "fabrics" / "nvl576-all-eps.toml")
    return parse_fabric(tomllib.loads(SMALL if name == "small" else SINGLE), name)


def _run(fabric: str, schedule: str, layout: str, bits: tuple[int, ...], payload: int) -> tuple[float, float, object]:
    """(Simlette's time, the contention model's time, Simlette's result)."""
    spec = _spec(fabric)
    a = len(bits)
    topo = Topology.from_profile([a]) if layout == "flat" else Topology.cube(a)
    workload = program_workload(SCHEDULES[schedule].build(topo, payload), bits, WORLD)
    factory = network_factory(spec, SimOptions(mode="message"), ports=spec.ports)
    result = simulate_workload(workload, factory, mode="message", rate=spec.link)
    net = factory(Engine(DL_FLIT / spec.link, False), lambda _m: None)
    rack = spec.rack_size if spec.two_level else spec.accelerators
    model = EPS_MODELS["contention"](native_sends(schedule, layout, 1 << a, payload), bits, WORLD, net, rack)
    return result.simulated_s, model, result


FABRIC_NAMES = ["small", "nvl576-all-eps", "single"]
BITS = [(2, 1, 0), (5, 4, 3), (5, 1, 0), (5, 4, 3, 2, 1, 0)]


@pytest.mark.parametrize("fabric", FABRIC_NAMES)
@pytest.mark.parametrize(("schedule", "layout"), [("one-shot", "flat"), ("layered", "flat"), ("bruck", "flat")])
@pytest.mark.parametrize("bits", BITS)
@pytest.mark.parametrize("payload", [264, 65536])
def test_busiest_link_is_simlettes(fabric: str, schedule: str, layout: str, bits: tuple[int, ...],
                                   payload: int) -> None:
    """One-phase schedules: the busiest link counted from the routing carries what Simlette's busiest port did."""
    spec = _spec(fabric)
    _, _, result = _run(fabric, schedule, layout, bits, payload)
    net = network_factory(spec, SimOptions(mode="message"), ports=spec.ports)(
        Engine(DL_FLIT / spec.link, False), lambda _m: None)
    assert isinstance(net, SwitchedNetwork)
    shape = SwitchedShape(net.L, net.rack_size, net.up, net.spines)
    (loads,) = phase_loads(native_sends(schedule, layout, 1 << len(bits), payload), bits, WORLD, shape)
    busiest = result.busiest  # type: ignore[attr-defined]
    assert max(loads.values()) * DL_FLIT == busiest.bytes


@pytest.mark.parametrize("fabric", FABRIC_NAMES)
@pytest.mark.parametrize(("schedule", "layout"), [("one-shot", "flat"), ("rs-ag", "flat"), ("bruck", "flat")])
@pytest.mark.parametrize("bits", BITS)
@pytest.mark.parametrize("payload", [264, 4096, 65536])
def test_within_5_percent_of_simlette(fabric: str, schedule: str, layout: str, bits: tuple[int, ...],
                                      payload: int) -> None:
    simulated, model, _ = _run(fabric, schedule, layout, bits, payload)
    assert model == pytest.approx(simulated, rel=0.05)


@pytest.mark.parametrize("bits", BITS)
@pytest.mark.parametrize("payload", [264, 65536])
def test_halving_doubling_on_one_level_within_5_percent(bits: tuple[int, ...], payload: int) -> None:
    # on two levels the phase sum overestimates large halving-doubling exchanges by up to 14 %
    # (Simlette overlaps a node's next phase with the others' last): docs/eps.md, not asserted here
    simulated, model, _ = _run("single", "rs-ag", "cube", bits, payload)
    assert model == pytest.approx(simulated, rel=0.05)


@pytest.mark.parametrize("payload", [264, 4096, 65536])
def test_the_symmetric_model_misses_incast(payload: int) -> None:
    """On 64 ranks over two racks of the paper's fabric the old model is 8-23 % fast, the new within 5 %."""
    spec = _spec("nvl576-all-eps")
    simulated, model, _ = _run("nvl576-all-eps", "one-shot", "flat", (5, 4, 3, 2, 1, 0), payload)
    net = network_factory(spec, SimOptions(mode="message"), ports=spec.ports)(
        Engine(DL_FLIT / spec.link, False), lambda _m: None)
    old = EPS_MODELS["symmetric"](native_sends("one-shot", "flat", 64, payload), (5, 4, 3, 2, 1, 0), WORLD, net,
                                  spec.rack_size)
    assert old < 0.92 * simulated
    assert model == pytest.approx(simulated, rel=0.05)
