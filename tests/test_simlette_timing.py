"""Flit sizes and the split of the Table 9 latency budget (paper §5.2-5.3, App. C.6)."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import pytest

from ocsplan.cayley import Topology
from ocsplan.realization.fabrics import LATENCY_PRESETS, load_fabric
from ocsplan.schedules import SCHEDULES
from ocsplan.simlette import SimOptions, simulate_program
from ocsplan.simlette.timing import DL_FLIT, TL_FLIT, Stages, dl_flits

from .conftest import ROOT


@pytest.mark.parametrize(
    ("nbytes", "flits"),
    [
        (0, 0),
        (1, 1),  # a message smaller than a DL flit still takes a whole one
        (64, 1),
        (640, 1),
        (641, 2),
        (Fraction(128, 3), 1),  # 42.7 B: RS+AG parallel on K8^3 at 1 KiB, first phase
        # 1 MiB / 24 = 43690.7 B -> 683 TL flits of 64 B -> 69 DL flits of 10 TL flits
        (Fraction(2**20, 24), 69),
        (40 * 1024, 64),  # paper App. C.5: a 40 KiB message spans 64 flits
    ],
)
def test_dl_flits(nbytes: int | Fraction, flits: int) -> None:
    assert dl_flits(nbytes) == flits


@pytest.mark.parametrize(
    ("nbytes", "wire_flits"),
    [(1, 1), (64, 1), (640, 1), (641, 2), (1280, 2), (1281, 3), (6400, 10)],
)
def test_a_message_occupies_whole_640_byte_flits_on_the_wire(nbytes: int, wire_flits: int) -> None:
    # UALink (paper §5.2): ten 64 B TL flits per 640 B DL flit, and a message takes whole
    # DL flits. One-shot on two accelerators over one OCS (Table 9 nominal: 520 ns per hop)
    # at 400 Gb/s: 520 ns + wire_flits x 640 B / 50 GB/s (12.8 ns a flit), by hand.
    assert (TL_FLIT, DL_FLIT) == (64, 640)
    spec = replace(load_fabric(ROOT / "simulate/fabrics/ocs-single.toml"), accelerators=2, ports=1)
    program = SCHEDULES["one-shot"].build(Topology.from_profile((1,)), nbytes)
    result = simulate_program(program, spec, SimOptions(), ports=1)
    assert result.simulated_s == pytest.approx(520e-9 + wire_flits * 640 / 50e9, rel=1e-9)


@pytest.mark.parametrize("preset", sorted(LATENCY_PRESETS))
def test_stages_add_up_to_the_budget(preset: str) -> None:
    budget = LATENCY_PRESETS[preset]
    s = Stages.from_budget(budget)
    ocs = s.send + s.wire(2, 1) + s.rx + s.land
    eps = s.send + 2 * s.wire(1) + s.switch_in + s.rx + s.land
    inter_rack = s.send + s.wire(4, 3) + s.rx + s.land
    assert ocs == pytest.approx(budget.hop(ocs=1), rel=1e-12)
    assert eps == pytest.approx(budget.hop(eps=1), rel=1e-12)
    assert inter_rack == pytest.approx(budget.hop(ocs=3, cables=4), rel=1e-12)
    # Table 9: every preset keeps 810 ns per EPS hop
    assert eps == pytest.approx(810e-9, rel=1e-12)


def test_nominal_split() -> None:
    # Table 9 nominal: 520 ns per OCS hop (the paper's lambda = 0.52 us); TX 30 ns,
    # RX 70 ns, cable 10 ns, switch 300 ns pin to pin = RX 70 + core 200 + TX 30.
    s = Stages.from_budget(LATENCY_PRESETS["nominal"])
    assert (s.tx, s.rx, s.cable) == pytest.approx((30e-9, 70e-9, 10e-9))
    assert s.switch_in + s.tx == pytest.approx(300e-9)
    assert s.send + s.wire(2, 1) + s.rx + s.land == pytest.approx(520e-9)
