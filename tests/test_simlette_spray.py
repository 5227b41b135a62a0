"""Simlette's spraying granularity over equal links (``--spray packet|message|flit-K``, issue 44 goal 2).

Reference: a brute force written here, flit by flit: each message's flits over the source ports
(contiguous pieces round-robin from a per-node pointer, the first ``flits mod L`` pieces one flit
longer), then at the leaf and at the spine the link each flit takes under the granularity, counted
per link and compared with the flits Simlette's ports carried.
"""

from __future__ import annotations

import random
import tomllib
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ocsplan.cayley import Topology
from ocsplan.cli import app
from ocsplan.realization.fabrics import FabricSpec, parse_fabric
from ocsplan.schedules import SCHEDULES
from ocsplan.simlette import SimOptions, network_factory
from ocsplan.simlette.devices import parse_spray
from ocsplan.simlette.engine import Engine
from ocsplan.simlette.runner import Runner
from ocsplan.simlette.timing import DL_FLIT
from ocsplan.simlette.traffic import Send, Workload, program_workload

from .conftest import EPS_TINY, ROOT

WORLD, RACK, L, UP, SPINES = 16, 4, 2, 4, 2


def _spec() -> FabricSpec:
    return parse_fabric(tomllib.loads(EPS_TINY), "eps-tiny")


def _pick(spray: str, src: int, rail: int, flit: int, flits: int, ways: int) -> int:
    """The link (0..ways-1) a message's flit takes among ``ways`` equal ones, by the definition."""
    if spray == "packet":
        return (src + rail) % ways
    block = int(spray[5:]) if spray.startswith("flit-") else -(-flits // ways)
    return (src + flit // block) % ways


def _brute_force(workload: Workload, spray: str) -> Counter[tuple[object, ...]]:
    """Flits per leaf uplink and spine down-link, flit by flit."""
    count: Counter[tuple[object, ...]] = Counter()
    for src in workload.nodes:
        pointer = 0
        for phase in workload.sends[src]:
            for send in phase:
                f = send.flits
                sizes = [f // L + (1 if i < f % L else 0) for i in range(min(L, f))]
                rails = [r for i, size in enumerate(sizes) for r in [(pointer + i) % L] * size]
                pointer = (pointer + f) % L
                rack, target = src // RACK, send.dst // RACK
                if rack == target:
                    continue
                for flit, rail in enumerate(rails):
                    u = _pick(spray, src, rail, flit, f, UP)
                    count["up", rack, rail, u] += 1
                    spine = u % SPINES
                    downs = list(range(spine, UP, SPINES))
                    count["spdown", rail, spine, target, downs[_pick(spray, src, rail, flit, f, len(downs))]] += 1
    return count


def _simulated(workload: Workload, spray: str, mode: str = "message") -> Counter[tuple[object, ...]]:
    spec = _spec()
    factory = network_factory(spec, SimOptions(mode=mode, spray=spray).check(), ports=spec.ports)
    runner = Runner(workload, Engine(DL_FLIT / spec.link, mode == "flit"), factory)
    runner.run()
    return Counter({key: port.flits for key, port in runner.net.ports.items()
                    if isinstance(key, tuple) and key[0] in ("up", "spdown") and port.flits})


SPRAYS = ["message", "packet", "flit-1", "flit-2", "flit-3"]


@pytest.mark.parametrize("spray", SPRAYS)
@pytest.mark.parametrize(("schedule", "bits"), [("one-shot", (3, 2)), ("one-shot", (3, 2, 1, 0)), ("bruck", (3, 2, 1))])
@pytest.mark.parametrize("payload", [264, 4 * DL_FLIT, 7 * DL_FLIT * 4])
def test_every_link_carries_the_brute_forces_flits(spray: str, schedule: str, bits: tuple[int, ...],
                                                   payload: int) -> None:
    topo = Topology.from_profile([len(bits)])
    workload = program_workload(SCHEDULES[schedule].build(topo, payload), bits, WORLD)
    expected = _brute_force(workload, spray)
    assert expected  # the workload crosses racks
    assert _simulated(workload, spray) == expected


def _uneven(seed: int) -> Workload:
    """Two phases of messages of 1-9 flits between random ranks, a different mix per rank (seeded):
    no symmetry hides a wrong link choice in the per-link totals."""
    rng = random.Random(seed)
    sends: dict[int, list[list[Send]]] = {x: [[], []] for x in range(WORLD)}
    expect = {x: [0, 0] for x in range(WORLD)}
    for phase in range(2):
        for src in range(WORLD):
            for _ in range(rng.randrange(4)):
                dst = rng.choice([d for d in range(WORLD) if d != src])
                f = rng.randint(1, 9)
                sends[src][phase].append(Send(dst, src ^ dst, Fraction(f * DL_FLIT), f, float(f * DL_FLIT)))
                expect[dst][phase] += 1
    return Workload(f"uneven-{seed}", "hand", 2, tuple(range(WORLD)),
                    {x: tuple(tuple(p) for p in v) for x, v in sends.items()},
                    {x: tuple(v) for x, v in expect.items()}, 1, WORLD)


@pytest.mark.parametrize("spray", SPRAYS)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_uneven_traffic_carries_the_brute_forces_flits(spray: str, seed: int) -> None:
    workload = _uneven(seed)
    assert _simulated(workload, spray) == _brute_force(workload, spray)


@pytest.mark.parametrize("spray", SPRAYS)
def test_flit_mode_sprays_alike(spray: str) -> None:
    workload = _uneven(4)
    assert _simulated(workload, spray, "flit") == _brute_force(workload, spray)


def test_the_granularities_differ_on_one_message() -> None:
    """One 5-flit message from rank 0 to rank 4 (next rack) on the tiny fabric, by hand: ports 0 and
    1 carry flits 0-2 and 3-4. message: blocks of ceil(5/4) = 2 flits, blocks 0, 1, 2 on uplinks 0,
    1, 2 (rail 0: flits 0-1 on 0, flit 2 on 1; rail 1: flit 3 on 1, flit 4 on 2); flit-1: flit i
    on uplink i mod 4; packet: rail j's flits on uplink j."""
    send = Send(4, 4, Fraction(5 * DL_FLIT), 5, 5.0 * DL_FLIT)
    workload = Workload("one", "hand", 1, (0, 4), {0: ((send,),), 4: ((),)}, {0: (0,), 4: (1,)}, 1, 2)
    ups = {spray: {(k[2], k[3]): v for k, v in _simulated(workload, spray).items() if k[0] == "up"}
           for spray in ("message", "flit-1", "packet")}
    assert ups["message"] == {(0, 0): 2, (0, 1): 1, (1, 1): 1, (1, 2): 1}
    assert ups["flit-1"] == {(0, 0): 1, (0, 1): 1, (0, 2): 1, (1, 3): 1, (1, 0): 1}
    assert ups["packet"] == {(0, 0): 3, (1, 1): 2}


def test_message_is_the_default_and_the_parse() -> None:
    assert SimOptions().spray == "message"
    assert [parse_spray(s) for s in ("message", "packet", "flit-1", "flit-64")] == [
        ("message", 0), ("packet", 0), ("flit", 1), ("flit", 64)]
    assert [parse_spray(s) for s in ("flit-0", "flit-", "flit-x", "Packet", "flit-99999999999", "")] == [None] * 6


@pytest.mark.parametrize(("args", "needle"), [
    (["--fabric", "all-eps", "--spray", "flit-0"], "--spray: unknown granularity 'flit-0'"),
    (["--fabric", "all-eps", "--spray", "bytes"], "--spray: unknown granularity 'bytes'"),
    (["--fabric", "all-eps", "--spray", "packet", "--mode", "ideal"], "--spray: has no effect in ideal mode"),
    (["--fabric", "all-ocs", "--spray", "packet"], "--spray: has no effect on the optical fabric all-ocs"),
])
def test_bad_values_are_refused(args: list[str], needle: str, tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    solved = CliRunner().invoke(app, ["solve", str(ROOT / "instances" / "paper-multimesh-n256.toml"),
                                      "--json", str(plan)])
    assert solved.exit_code == 0, solved.output
    result = CliRunner().invoke(app, ["simulate", str(plan), *args])
    assert result.exit_code == 2
    lines = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(needle), lines
