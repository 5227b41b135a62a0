"""The event core: serialization, credits, switching, against hand derivations and a brute force."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import pytest

from ocsplan.cayley import Topology
from ocsplan.realization.fabrics import load_fabric
from ocsplan.schedules import SCHEDULES
from ocsplan.simlette import DL_FLIT, SimOptions, Stages, simulate_program
from ocsplan.simlette.devices import Sink
from ocsplan.simlette.engine import Engine, Message, Piece
from ocsplan.simlette.ports import FifoPort, split_flits

from .conftest import ROOT

FABRICS = ROOT / "simulate" / "fabrics"


def _one_link(flit_mode: bool, credits: int | None, horizon: float) -> tuple[Message, FifoPort]:
    """One message of 5 flits over one link: flit time 1, wire 1, RX 1, credit return 2."""
    eng = Engine(1.0, flit_mode, horizon)
    landed: list[Message] = []
    sink = Sink(eng, rx=1.0, land=0.0, deliver=landed.append)
    port = FifoPort(eng, "a->b", wire=1.0, ret=2.0, far=sink, credits=credits)
    msg = Message(0, 1, 1, 0, Fraction(5 * DL_FLIT), 5)
    port.enqueue(Piece(0.0, 5, msg))
    eng.env.run()
    assert landed == [msg]
    return msg, port


@pytest.mark.parametrize("flit_mode", [False, True])
@pytest.mark.parametrize("horizon", [0.0, 1.5])
def test_credit_stalls_by_hand(flit_mode: bool, horizon: float) -> None:
    # Two credits. Flits 0 and 1 leave at 0 and 1. Flit k arrives at d_k + 2, is
    # processed at + 1 and its credit is back at + 2: credits at 5 (flit 0), 6 (flit 1),
    # 10 (flit 2). So flits leave at 0, 1, 5, 6, 10; the last arrives at 12 and lands
    # at 13; the port waited 3 + 3 = 6 for credits.
    msg, port = _one_link(flit_mode, 2, horizon)
    assert msg.landed == 13.0
    assert port.stall == 6.0
    assert port.flits == 5


@pytest.mark.parametrize("flit_mode", [False, True])
def test_unlimited_credits_by_hand(flit_mode: bool) -> None:
    # Back to back: the last flit leaves at 4, arrives at 6, lands at 7.
    msg, port = _one_link(flit_mode, None, 0.0)
    assert msg.landed == 7.0
    assert port.stall == 0.0


@pytest.mark.parametrize(
    ("flits", "ways", "offset", "expected"),
    [
        (10, 4, 0, [(0, 3), (1, 3), (2, 2), (3, 2)]),
        (3, 8, 6, [(6, 1), (7, 1), (0, 1)]),
        (7, 1, 0, [(0, 7)]),
    ],
)
def test_split_flits(flits: int, ways: int, offset: int, expected: list[tuple[int, int]]) -> None:
    assert split_flits(flits, ways, offset) == expected
    assert sum(c for _, c in expected) == flits


def _reference_single_phase(
    program_size: int, sends: dict[int, list[tuple[int, int]]], stages: Stages, tf: float
) -> float:
    """Brute force for one phase on one EPS rail (one port per node), unlimited buffers.

    Each node sends its messages (dst, flits) back to back from its endpoint share;
    each switch output port serves the flits that reach it in order of arrival
    (ties: sender, message, flit), one flit time each.
    """
    wire = stages.tx + stages.cable
    queue: dict[int, list[tuple[float, int, int, int]]] = {d: [] for d in range(program_size)}
    for src, msgs in sends.items():
        t = stages.send
        for i, (dst, flits) in enumerate(msgs):
            for j in range(flits):
                queue[dst].append((t + tf + wire + stages.switch_in, src, i, j))
                t += tf
    done = 0.0
    for flits_in in queue.values():
        free = 0.0
        for arrive, *_ in sorted(flits_in):
            start = max(arrive, free)
            free = start + tf
            done = max(done, start + tf + wire + stages.rx + stages.land)
    return done


@pytest.mark.parametrize("order", ["program", "rank"])
@pytest.mark.parametrize("mode", ["message", "flit"])
@pytest.mark.parametrize("payload", [640, 3 * 640 + 1, 20 * 640])
def test_single_rail_matches_brute_force(order: str, mode: str, payload: int) -> None:
    spec = replace(load_fabric(FABRICS / "eps-single.toml"), accelerators=8, ports=1)
    topo = Topology.from_profile((3,))  # K8: one phase, every node sends to the 7 others
    program = SCHEDULES["one-shot"].build(topo, payload)
    result = simulate_program(program, spec, SimOptions(mode=mode, order=order), ports=1)
    flits = -(-payload // DL_FLIT)
    sends = {}
    for x in range(8):
        peers = [x ^ g for g in sorted(topo.gens)]
        if order == "rank":
            peers.sort()
        sends[x] = [(y, flits) for y in peers]
    expected = _reference_single_phase(8, sends, Stages.from_budget(spec.latency), DL_FLIT / spec.link)
    assert result.simulated_s == pytest.approx(expected, rel=1e-12)
