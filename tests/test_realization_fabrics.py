"""Fabric overrides (App. E sweeps): each equals the fabric file edited by hand; bounds refused."""

from __future__ import annotations

import dataclasses
import re
import tomllib

import pytest

from ocsplan.errors import InstanceError
from ocsplan.realization.fabrics import FabricSpec, Overrides, load_fabric, override_fabric, parse_fabric

from .conftest import ROOT

FABRICS = ROOT / "simulate" / "fabrics"
NS = 1e-9


def _edited(name: str, old: str, new: str) -> FabricSpec:
    """The fabric file with one line replaced, parsed (a hand edit of the file)."""
    text = (FABRICS / name).read_text()
    assert re.search(f"^{re.escape(old)}$", text, re.M), old
    return parse_fabric(tomllib.loads(text.replace(old, new)), str(FABRICS / name))


def _same(a: FabricSpec, b: FabricSpec) -> None:
    """Equal fabric specs, latency terms to 1e-18 s (float sums)."""
    assert dataclasses.replace(a, latency=b.latency) == b
    for field in dataclasses.fields(b.latency):
        assert getattr(a.latency, field.name) == pytest.approx(getattr(b.latency, field.name), abs=1e-18)


# Table 9: switch core 100 / 200 / 400 ns are the presets low / nominal / high (810 ns hop each);
# App. E: accelerator egress + ingress 490 ns nominal = endpoint 390 + protocol 100.
@pytest.mark.parametrize("name", ["nvl576-all-eps.toml", "nvl576-hybrid.toml", "nvl576-all-ocs.toml"])
@pytest.mark.parametrize(
    ("over", "old", "new"),
    [
        (Overrides(link=800e9 / 8), 'link = "400Gb/s"', 'link = "800Gb/s"'),
        (Overrides(link=1600e9 / 8), 'link = "400Gb/s"', 'link = "1.6Tb/s"'),
        (Overrides(ports=64), "ports = 36", "ports = 64"),
        (Overrides(switch_core=400 * NS), 'latency = "nominal"', 'latency = "high"'),
        (Overrides(switch_core=100 * NS), 'latency = "nominal"', 'latency = "low"'),
        (Overrides(accelerator=300 * NS), 'latency = "nominal"', 'latency = { endpoint = "200ns" }'),
        (Overrides(switch_core=400 * NS, accelerator=600 * NS), 'latency = "nominal"',
         'latency = { endpoint = "500ns", eps_switch = "500ns" }'),
    ],
)
def test_override_equals_the_edited_file(name: str, over: Overrides, old: str, new: str) -> None:
    _same(override_fabric(load_fabric(FABRICS / name), over), _edited(name, old, new))


def test_switch_override_keeps_the_switch_hop() -> None:
    spec = load_fabric(FABRICS / "nvl576-all-eps.toml")
    for core in (100, 250, 400):
        hop = override_fabric(spec, Overrides(switch_core=core * NS)).latency.hop(eps=1)
        assert hop == pytest.approx(810 * NS, abs=1e-18)  # Table 9 total, every case


def test_no_override_is_the_file() -> None:
    spec = load_fabric(FABRICS / "nvl576-all-eps.toml")
    assert Overrides().empty and override_fabric(spec, Overrides()) == spec


@pytest.mark.parametrize(
    ("over", "message"),
    [
        (Overrides(ports=0), "--radix: must be between 1 and 4096"),
        (Overrides(ports=5000), "--radix: must be between 1 and 4096"),
        (Overrides(link=0.5), "--link-rate: must be between 1 and 1e+18"),
        (Overrides(switch_core=600 * NS), "--switch-latency: 600 ns leaves a negative endpoint"),
        (Overrides(switch_core=1e4), "--switch-latency: must be between"),
        (Overrides(accelerator=50 * NS), "--accelerator-latency: 50 ns is below the 100 ns"),
    ],
)
def test_override_bounds(over: Overrides, message: str) -> None:
    spec = load_fabric(FABRICS / "nvl576-all-eps.toml")
    with pytest.raises(InstanceError, match=re.escape(message)):
        override_fabric(spec, over)
