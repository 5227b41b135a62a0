"""Accelerator files: Table 11 values and the App. B.3 step efficiencies; bad tables."""

from __future__ import annotations

from typing import Any

import pytest

from ocsplan.errors import InstanceError
from ocsplan.files import toml_data
from ocsplan.workload import accelerator_catalogue, load_accelerator, parse_accelerator


def test_table11_values() -> None:
    assert accelerator_catalogue() == ["b200", "rx00"]
    rx = load_accelerator("rx00")
    assert (rx.peak_flops, rx.hbm_bandwidth, rx.hbm_capacity, rx.ports) == (50e15, 22e12, 288e9, 36)
    assert (rx.link, rx.launch, rx.power) == (50e9, 0.8e-6, 2631.0)
    b = load_accelerator("b200")
    assert (b.peak_flops, b.hbm_bandwidth, b.hbm_capacity, b.ports, b.power) == (20e15, 8e12, 186e9, 18, 1454.0)


@pytest.mark.parametrize(
    ("size", "eta"),
    # App. B.3: 0.30 up to 1 MB, 0.60 to 10 MB, 0.75 to 100 MB, 0.90 above (bounds inclusive)
    [(1, 0.30), (1e6, 0.30), (1e6 + 1, 0.60), (1e7, 0.60), (5e7, 0.75), (1e8, 0.75), (1e8 + 1, 0.90), (1e12, 0.90)],
)
def test_memory_efficiency_steps(size: float, eta: float) -> None:
    assert load_accelerator("rx00").memory_efficiency(size) == eta


@pytest.mark.parametrize(
    ("flops", "eta"),
    # App. B.3: 0.15 up to 7 GFLOP, 0.36 to 16, 0.53 to 127, 0.73 above
    [(1e3, 0.15), (7e9, 0.15), (8e9, 0.36), (16e9, 0.36), (1e11, 0.53), (127e9, 0.53), (2e11, 0.73)],
)
def test_compute_efficiency_steps(flops: float, eta: float) -> None:
    assert load_accelerator("rx00").compute_efficiency(flops) == eta


BASE = """
peak_flops = "50PFLOP/s"
hbm_bandwidth = "22TB/s"
hbm_capacity = "288GB"
ports = 36
link = "400Gb/s"
launch = "0.8us"
power = "2631W"
memory_efficiency = [{ up_to = "1MB", efficiency = 0.3 }, { efficiency = 0.9 }]
compute_efficiency = [{ up_to = "7GFLOP", efficiency = 0.15 }, { efficiency = 0.73 }]
"""


def _data(**changes: Any) -> dict[str, Any]:
    data = toml_data(BASE, "a.toml")
    data.update(changes)
    return data


def test_bytes_units_and_default_size() -> None:
    acc = parse_accelerator(_data(), "a.toml")
    assert acc.efficiency_size == "bytes" and acc.memory_efficiency.bounds == (1e6,)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"peak_flops": "50PFLOPS"}, "peak_flops"),
        ({"hbm_bandwidth": "-1TB/s"}, "hbm_bandwidth"),
        ({"ports": 0}, "ports"),
        ({"power": "2kV"}, "power"),
        ({"efficiency_size": "words"}, "efficiency_size"),
        ({"memory_efficiency": [{"up_to": "1MB", "efficiency": 1.2}, {"efficiency": 0.9}]},
         "memory_efficiency[0].efficiency"),
        ({"memory_efficiency": [{"up_to": "1MB", "efficiency": 0.0}, {"efficiency": 0.9}]},
         "memory_efficiency[0].efficiency"),
        ({"compute_efficiency": [{"up_to": "7GFLOP", "efficiency": 0.1}, {"up_to": "5GFLOP", "efficiency": 0.2},
                                 {"efficiency": 0.3}]}, "compute_efficiency[1].up_to"),
        ({"compute_efficiency": [{"up_to": "7GFLOP", "efficiency": 0.1}]}, "compute_efficiency[0].up_to"),
        ({"colour": "green"}, "colour"),
    ],
)
def test_bad_accelerator(changes: dict[str, Any], field: str) -> None:
    with pytest.raises(InstanceError) as info:
        parse_accelerator(_data(**changes), "a.toml")
    assert info.value.field == field


def test_missing_field_and_unknown_name() -> None:
    data = _data()
    del data["launch"]
    with pytest.raises(InstanceError, match="launch: missing"):
        parse_accelerator(data, "a.toml")
    with pytest.raises(InstanceError, match="unknown accelerator"):
        load_accelerator("tpu9")
