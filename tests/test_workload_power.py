"""Power model (App. D.4, Table 12) and the ratios of Figure 28."""

from __future__ import annotations

import math

import pytest

from ocsplan.realization.fabrics import load_fabric
from ocsplan.workload.power import EPS_PORT_W, eps_port_power, fabric_power, xpu_power

from .conftest import ROOT

FABRICS = ROOT / "simulate" / "fabrics"
RUBIN = 2631.0


def _power(name: str, **kw: float) -> float:
    return fabric_power(load_fabric(FABRICS / f"nvl576-{name}.toml"), RUBIN, **kw).total  # type: ignore[arg-type]


def test_table12_derivations() -> None:
    # Table 12: XPU = (P_rack - 9 P_tray) / 72; EPS port = 1.7 kW / 144 at 400G, x1.3 per doubling
    assert math.floor(xpu_power(120e3, 1.7e3) + 0.5) == 1454
    assert math.floor(xpu_power(135e3, 1.7e3) + 0.5) == 1663  # 1662.5, rounded half up
    assert math.floor(xpu_power(220e3, 3.4e3) + 0.5) == 2631
    for rate, watts in EPS_PORT_W.items():
        assert eps_port_power(rate) == pytest.approx(watts, abs=0.005)


def test_installed_counts() -> None:
    # App. D.4 / Figure 25: all-EPS 648 + 72 EPS and 10,368 pluggables; hybrid 648 EPS + 72 OCS and 5,184;
    # all-OCS 648 + 288 OCS and 20,736 CPO
    eps = fabric_power(load_fabric(FABRICS / "nvl576-all-eps.toml"), RUBIN)
    hyb = fabric_power(load_fabric(FABRICS / "nvl576-hybrid.toml"), RUBIN)
    ocs = fabric_power(load_fabric(FABRICS / "nvl576-all-ocs.toml"), RUBIN)
    assert [(t, n) for _, t, n, _, _ in eps.devices] == [("eps", 648), ("eps", 72)] and eps.pluggables == 10368
    assert [(t, n) for _, t, n, _, _ in hyb.devices] == [("eps", 648), ("ocs", 72)] and hyb.pluggables == 5184
    assert [(t, n) for _, t, n, _, _ in ocs.devices] == [("ocs", 648), ("ocs", 288)] and ocs.cpo == 20736
    # by hand: 576 x 2631 + 720 x 72 x 11.81 + 10368 x 9
    assert eps.total == pytest.approx(576 * 2631 + 720 * 72 * 11.81 + 10368 * 9)


@pytest.mark.parametrize(
    ("options", "ratio"),
    # App. E / Figure 28: all-EPS / all-OCS power 1.33 (1.327), 1.60 at 1.6T (1.604), 1.94 at 128 ports (1.937)
    [({}, 1.327), ({"rate": 1600e9 / 8}, 1.604), ({"ports": 128}, 1.937)],
)
def test_power_ratios(options: dict[str, float], ratio: float) -> None:
    assert _power("all-eps", **options) / _power("all-ocs", **options) == pytest.approx(ratio, abs=0.0005)


@pytest.mark.parametrize(
    ("interactivity", "power_ratio", "gain"),
    # App. E: energy gain = interactivity ratio x power ratio: 1277/775 -> 118.7 %, 698/458 -> 102 %,
    # +62.8 % at 1.6T -> 161 %, +103 % at 128 ports -> 293 %
    [(1277 / 775, {}, 1.187), (698 / 458, {}, 1.02), (1.628, {"rate": 1600e9 / 8}, 1.61),
     (2.03, {"ports": 128}, 2.93)],
)
def test_energy_gain(interactivity: float, power_ratio: dict[str, float], gain: float) -> None:
    ratio = _power("all-eps", **power_ratio) / _power("all-ocs", **power_ratio)
    assert interactivity * ratio - 1 == pytest.approx(gain, abs=0.005)
