"""The limited Simlette buffer is a fitted parameter (7 KiB, README): check the credit
mechanism over 4-16 KiB instead of the fitted point.

Hand derivation: a port may have at most c = floor(sigma / 640 B) DL flits in flight
before a credit comes back, so while c * 640 B is below the bandwidth-delay product
R * L of one credit loop (L the loop time) a port sends c * 640 B per L instead of R.
The one-shot all-reduce (one phase) then takes t0 + V / (p * c * 640 / L): the excess
over the latency t0 times c is the same for every stalled size; from c * 640 >= R * L
on, the buffer no longer matters and the completion time is the model's.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest

from ocsplan.cayley import Topology
from ocsplan.realization.fabrics import load_fabric
from ocsplan.schedules import SCHEDULES
from ocsplan.simlette import DL_FLIT, SimOptions, simulate_program

from .conftest import ROOT

KiB = 1024
R = 50e9  # 400 Gb/s
EPS_HOP = 0.81e-6  # paper Table 9: one hop through one EPS, nominal
PORTS = 8
PAYLOAD = 128 * KiB
SIZES = [4, 5, 6, 8, 10, 12, 16]  # KiB


@pytest.fixture(scope="module")
def runs() -> dict[int, tuple[float, float, float]]:
    program = SCHEDULES["one-shot"].build(Topology.from_profile((5,)), PAYLOAD)
    spec = replace(load_fabric(ROOT / "simulate/fabrics/eps-single.toml"), accelerators=32, ports=PORTS)
    out = {}
    for kib in SIZES:
        r = simulate_program(program, spec, SimOptions(buffer=kib * KiB), ports=PORTS)
        out[kib] = (r.simulated_s, r.analytical_s, r.credit_stall_s)
    return out


def test_completion_time_falls_with_the_buffer(runs: dict[int, tuple[float, float, float]]) -> None:
    times = [runs[k][0] for k in SIZES]
    assert all(a >= b for a, b in itertools.pairwise(times))
    assert times[0] > 2 * times[-1]  # the smallest buffer is far into the stalled regime


def test_the_credit_window_limits_the_rate(runs: dict[int, tuple[float, float, float]]) -> None:
    volume = 31 * PAYLOAD  # one-shot: every rank sends its payload to the 31 others
    credits = {k: k * KiB // DL_FLIT for k in SIZES}
    # the credit loop implied by the smallest buffer: (T - t0) = V * L / (p * c * 640)
    sim4 = runs[SIZES[0]][0]
    loop = (sim4 - EPS_HOP) * PORTS * credits[SIZES[0]] * DL_FLIT / volume
    assert 100e-9 < loop < 1e-6  # a few hundred ns: cables, port and switch stages
    regimes = {"stalled": 0, "free": 0}
    for k in SIZES:
        simulated, analytical, stall = runs[k]
        assert analytical == pytest.approx(EPS_HOP + volume / (PORTS * R), rel=1e-9)
        if credits[k] * DL_FLIT < R * loop * 0.97:  # window below the bandwidth-delay product
            expected = EPS_HOP + volume * loop / (PORTS * credits[k] * DL_FLIT)
            assert simulated == pytest.approx(expected, rel=0.01)
            # the worst port's wait for credits is the whole delay over the model
            assert stall == pytest.approx(simulated - analytical, rel=0.05)
            regimes["stalled"] += 1
        elif credits[k] * DL_FLIT > R * loop * 1.03:
            assert stall == 0.0
            assert simulated == pytest.approx(analytical, rel=0.01)
            regimes["free"] += 1
    assert regimes == {"stalled": 5, "free": 2}  # 4..10 KiB below R * L (~11.6 kB), 12 and 16 above
