"""The contention model of EPS fabrics against Simlette's message mode, both computed here (issue 28).

Reference: Simlette itself (the event simulation of the same fabric), never fitted numbers:
the busiest link's flits must equal the flits Simlette's busiest port carried, and the
time must lie within 5 % of Simlette's completion time.
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Sequence
from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ocsplan.cayley import Topology, expand
from ocsplan.decode.pricing import EPS_MODELS, native_sends
from ocsplan.decode.step import decode_step
from ocsplan.realization.fabrics import FabricSpec, load_fabric, parse_fabric
from ocsplan.schedules import SCHEDULES
from ocsplan.simlette import SimOptions, contention, network_factory, simulate_workload
from ocsplan.simlette.contention import Sends, SwitchedShape, phase_loads
from ocsplan.simlette.engine import Engine
from ocsplan.simlette.report import DemandResult
from ocsplan.simlette.switched import SwitchedNetwork
from ocsplan.simlette.timing import DL_FLIT, dl_flits
from ocsplan.simlette.traffic import program_workload
from ocsplan.workload import load_accelerator, load_model, parse_split

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


@functools.cache
def _simlette(fabric: str, schedule: str, layout: str, bits: tuple[int, ...], payload: int) -> DemandResult:
    """Simlette's message-mode run of the native schedule: the reference, a pure function of its
    arguments (a frozen result), run once per worker for the tests that share it."""
    spec = _spec(fabric)
    a = len(bits)
    topo = Topology.from_profile([a]) if layout == "flat" else Topology.cube(a)
    workload = program_workload(SCHEDULES[schedule].build(topo, payload), bits, WORLD)
    factory = network_factory(spec, SimOptions(mode="message"), ports=spec.ports)
    return simulate_workload(workload, factory, mode="message", rate=spec.link)


def _run(fabric: str, schedule: str, layout: str, bits: tuple[int, ...], payload: int) -> tuple[float, float, object]:
    """(Simlette's time, the contention model's time, Simlette's result); the model computed afresh."""
    spec = _spec(fabric)
    a = len(bits)
    result = _simlette(fabric, schedule, layout, bits, payload)
    net = network_factory(spec, SimOptions(mode="message"), ports=spec.ports)(
        Engine(DL_FLIT / spec.link, False), lambda _m: None)
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


# -- the vectorised, memoised phase_loads against the loop it replaced (issue 37) ---------------
# Independent brute force: the per-message, per-segment loop of phase_loads before issue 37,
# copied verbatim (one np.add.at per segment over every rank); kept here as the reference.


def _reference_segments(flits: int, ports: int, up: int, spines: int) -> list[tuple[int, int, int, int]]:
    """(piece, uplink block, spine block, flits) of a message of ``flits`` (reference copy)."""
    pieces = min(ports, flits)
    base, extra = divmod(flits, ports)
    cuts = {0, flits}
    start = 0
    for i in range(pieces):
        start += base + (1 if i < extra else 0)
        cuts.add(start)
    b1 = -(-flits // up) if up else flits
    ways2 = up // spines if spines else 1
    b2 = -(-flits // ways2) if ways2 else flits
    cuts.update(range(0, flits, b1))
    cuts.update(range(0, flits, b2))
    edges = sorted(cuts)
    starts = [i * base + min(i, extra) for i in range(pieces)] + [flits]
    out = []
    piece = 0
    for a, b in pairwise(edges):
        while starts[piece + 1] <= a:
            piece += 1
        out.append((piece, a // b1, a // b2, b - a))
    return out


def reference_phase_loads(sends: Sends, bits: Sequence[int], world: int,
                          shape: SwitchedShape) -> list[dict[str, int]]:
    """Brute force (the pre-issue-37 phase_loads): every rank's every segment added link by link."""
    L, R = shape.ports, shape.rack_size
    two = shape.up > 0 and world > R
    ways2 = shape.up // shape.spines if two else 1
    src = np.arange(world, dtype=np.int64)
    rack_src = src // R
    pointer = np.zeros(world, dtype=np.int64)
    result: list[dict[str, int]] = []
    for phase in sends:
        out = np.zeros(world * L, dtype=np.int64)
        into = np.zeros(world * L, dtype=np.int64)
        racks = world // R + 1
        upl = np.zeros(racks * L * max(1, shape.up), dtype=np.int64)
        down = np.zeros(racks * L * max(1, shape.up), dtype=np.int64)
        for local, nbytes in phase:
            f = dl_flits(nbytes)
            if f <= 0:
                continue
            g = expand(local, bits)
            dst = src ^ g
            cross = (dst // R != rack_src) if two else None
            for piece, blk1, blk2, count in _reference_segments(f, L, shape.up if two else 0,
                                                                shape.spines if two else 0):
                rail = (pointer + piece) % L
                np.add.at(out, src * L + rail, count)
                np.add.at(into, dst * L + rail, count)
                if cross is not None and cross.any():
                    s, r, d = src[cross], rail[cross], dst[cross]
                    u = (s + blk1) % shape.up
                    np.add.at(upl, (rack_src[cross] * L + r) * shape.up + u, count)
                    u2 = u % shape.spines + ((s + blk2) % ways2) * shape.spines
                    np.add.at(down, ((d // R) * L + r) * shape.up + u2, count)
            pointer = (pointer + f) % L
        result.append({"out": int(out.max()), "in": int(into.max()), "up": int(upl.max()), "down": int(down.max())})
    return result


# The four paper deployments of docs/eps.md (batch 1, 5M, nvl576-all-eps): the best all-EPS and all-OCS splits
PAPER_DEPLOYMENTS = [("gpt-oss-5.3-like", "32,16,16,32"), ("gpt-oss-5.3-like", "32,16,4,128"),
                     ("megatron-5t", "4,128,16,32"), ("megatron-5t", "4,128,8,64")]


@pytest.mark.parametrize(("model", "split"), PAPER_DEPLOYMENTS)
def test_phase_loads_equal_the_brute_force_on_every_paper_demand(model: str, split: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Every (schedule, layout, bits) a paper deployment's EPS pricing asks for: exactly the loop's loads."""
    asked: set[tuple[Sends, tuple[int, ...], int, SwitchedShape]] = set()
    real = contention.phase_loads

    def record(sends: Sends, bits: Sequence[int], world: int, shape: SwitchedShape) -> list[dict[str, int]]:
        asked.add((sends, tuple(bits), world, shape))
        return real(sends, bits, world, shape)

    monkeypatch.setattr(contention, "phase_loads", record)
    contention._switched_time.cache_clear()
    spec = load_fabric(ROOT / "simulate" / "fabrics" / "nvl576-all-eps.toml")
    decode_step(load_model(model), load_accelerator("rx00"), spec, 512, parse_split(split), 1, 5_000_000)
    assert len(asked) > 10
    for sends, bits, world, shape in sorted(asked, key=repr):
        assert real(sends, bits, world, shape) == reference_phase_loads(sends, bits, world, shape), (bits, sends[:1])


@st.composite
def _cases(draw: st.DrawFn) -> tuple[Sends, tuple[int, ...], int, SwitchedShape]:
    world = draw(st.one_of(st.integers(1, 7).map(lambda k: 1 << k), st.integers(2, 100)))
    ports = draw(st.integers(1, 9))
    rack = draw(st.integers(1, world + 2))  # racks of any size, powers of two or not, or one level
    up = draw(st.integers(0, 6))
    spines = draw(st.integers(1, up)) if up else 0
    a = draw(st.integers(1, world.bit_length() - 1))
    bits = tuple(sorted(draw(st.sets(st.integers(0, world.bit_length() - 2), min_size=a, max_size=a)),
                        reverse=True))
    payload = st.one_of(st.sampled_from([0.0, 1.0, 264.0, 4096.0]), st.floats(0, 70_000, allow_nan=False))
    phase = st.lists(st.tuples(st.integers(1, (1 << a) - 1), payload), max_size=8).map(tuple)
    sends = tuple(draw(st.lists(phase, min_size=1, max_size=3)))
    return sends, bits, world, SwitchedShape(ports, rack, up, spines)


@settings(max_examples=300, deadline=None)
@given(_cases())
def test_phase_loads_equal_the_brute_force_on_random_cases(case: tuple[Sends, tuple[int, ...], int,
                                                                       SwitchedShape]) -> None:
    sends, bits, world, shape = case
    try:
        expected = reference_phase_loads(sends, bits, world, shape)
    except IndexError:  # a peer outside the world (not a power of two): the loop indexed past its links
        with pytest.raises(ValueError, match="outside"):
            phase_loads(sends, bits, world, shape)
        return
    assert phase_loads(sends, bits, world, shape) == expected


@pytest.mark.parametrize("world", [64, 512])
@pytest.mark.parametrize("rack", [8, 24, 32])
def test_phase_loads_equal_the_brute_force_on_racks_a_rank_pair_straddles(world: int, rack: int) -> None:
    """Racks that are not powers of two: some ranks of a message cross, others stay (one-shot, rs-ag, 2 phases)."""
    shape = SwitchedShape(36, rack, 8, 2)
    bits = tuple(range(world.bit_length() - 2, -1, -1))
    for schedule in ("one-shot", "rs-ag"):
        for payload in (264, 40_000):
            sends = native_sends(schedule, "flat", 1 << len(bits), payload)
            assert phase_loads(sends, bits, world, shape) == reference_phase_loads(sends, bits, world, shape)


def test_phase_loads_are_memoised_and_fresh() -> None:
    """A second call is served from the memo, and mutating a result leaves the memo alone."""
    shape = SwitchedShape(4, 8, 2, 1)
    sends = native_sends("one-shot", "flat", 8, 4096)
    first = phase_loads(sends, (5, 4, 3), WORLD, shape)
    first[0]["out"] = -1
    hits = contention._phase_loads.cache_info().hits
    assert phase_loads(sends, [5, 4, 3], WORLD, shape) == reference_phase_loads(sends, (5, 4, 3), WORLD, shape)
    assert contention._phase_loads.cache_info().hits == hits + 1


# -- the closed form per rail on aligned racks (issue 37, h-pareto) -----------------------------------------


@st.composite
def _aligned(draw: st.DrawFn) -> tuple[int, SwitchedShape, int, int]:
    """A world and rack of powers of two, uplinks dividing the rack, ways2 dividing the uplinks; rows of segments."""
    rack_bits = draw(st.integers(0, 6))
    world = 1 << draw(st.integers(rack_bits + 1, 9))
    n_up = 1 << draw(st.integers(0, rack_bits))
    ways2 = 1 << draw(st.integers(0, n_up.bit_length() - 1))
    spines = n_up // ways2
    return world, SwitchedShape(draw(st.integers(1, 9)), 1 << rack_bits, n_up, spines), ways2, draw(
        st.integers(0, 2**32 - 1))


def _loads(how: object, gen: np.ndarray, rail: np.ndarray, blk1: np.ndarray, blk2: np.ndarray,
           count: np.ndarray, world: int, shape: SwitchedShape, ways2: int) -> tuple[np.ndarray, np.ndarray]:
    links = (world // shape.rack_size + 1) * shape.ports * max(1, shape.up)
    upl, down = np.zeros(links, dtype=np.int64), np.zeros(links, dtype=np.int64)
    how(gen, rail, blk1, blk2, count, world, shape, ways2, upl, down)  # type: ignore[operator]
    return upl, down


@settings(max_examples=200, deadline=None)
@given(_aligned())
def test_aligned_cross_loads_equal_the_pairs(case: tuple[int, SwitchedShape, int, int]) -> None:
    """Every link's load, not only the busiest: the closed form per rail is the pairs' count."""
    world, shape, ways2, seed = case
    rng = np.random.default_rng(seed)
    rows = int(rng.integers(1, 60))
    gen = rng.integers(1, world, rows).astype(np.int64)
    rail = rng.integers(0, shape.ports, rows).astype(np.int64)
    blk1 = rng.integers(0, 2 * shape.up, rows).astype(np.int64)
    blk2 = rng.integers(0, 2 * shape.up, rows).astype(np.int64)
    count = rng.integers(1, 5000, rows).astype(np.int64)
    args = (gen, rail, blk1, blk2, count, world, shape, ways2)
    fast = _loads(contention._aligned_cross_loads, *args)
    pairs = _loads(contention._pair_cross_loads, *args)
    assert np.array_equal(fast[0], pairs[0]) and np.array_equal(fast[1], pairs[1])


def test_aligned_cross_loads_decline_other_racks() -> None:
    """Racks, worlds or uplinks out of line: the pairs count them (False, nothing added)."""
    one = np.ones(1, dtype=np.int64)
    for world, shape, ways2 in ((512, SwitchedShape(36, 24, 8, 2), 4), (96, SwitchedShape(4, 32, 8, 2), 4),
                                (512, SwitchedShape(4, 32, 6, 2), 3), (512, SwitchedShape(4, 32, 8, 8), 1),
                                (64, SwitchedShape(4, 64, 8, 2), 4)):
        upl, down = np.zeros(4096, dtype=np.int64), np.zeros(4096, dtype=np.int64)
        aligned = contention._aligned_cross_loads(one * 40, one * 0, one, one, one * 7, world, shape, ways2,
                                                  upl, down)
        assert aligned == (world == 512 and shape.up == 8 and shape.spines == 8)
        assert aligned or (not upl.any() and not down.any())
