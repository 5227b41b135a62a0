"""Fabric wiring and installed counts, checked against the paper's Figure 25."""

from __future__ import annotations

from pathlib import Path

import pytest

from ocsplan.errors import InstanceError
from ocsplan.realization.circuits import Hop
from ocsplan.realization.fabrics import load_fabric, parse_fabric
from ocsplan.realization.paths import route_circuit
from ocsplan.realization.wiring import Wiring, inventory, wiring

FABRICS = Path(__file__).resolve().parent.parent / "simulate" / "fabrics"


def test_all_ocs_matches_figure_25b() -> None:
    # Figure 25(b): level 1 "x648 chips of 72 ports, 64 used", level 2 "x288 chips of 72
    # ports, 72 used; 1,152 logical switches", "XPU - level 1: 20,736 fiber links,
    # converters: 20,736 cpo", "level 1 - level 2: 20,736 fiber links".
    inv = inventory(load_fabric(FABRICS / "nvl576-all-ocs.toml"))
    one, two = inv.levels
    assert (one.technology, one.devices, one.ports // one.devices, one.links_below, one.medium) == (
        "ocs",
        648,
        64,
        20736,
        "fiber",
    )
    assert (two.devices, two.ports // two.devices, two.logical, two.links_below, two.medium) == (
        288,
        72,
        1152,
        20736,
        "fiber",
    )
    assert (inv.converters, inv.converter_kind) == (20736, "cpo")


def test_hybrid_matches_figure_25a() -> None:
    # Figure 25(a): level 1 EPS "x648 chips of 72 ports, 40 used", level 2 OCS "x72 chips
    # of 72 ports, 72 used; 288 logical switches", "XPU - level 1: 20,736 copper links",
    # "level 1 - level 2: 5,184 fiber links, converters: 5,184 pluggable".
    inv = inventory(load_fabric(FABRICS / "nvl576-hybrid.toml"))
    one, two = inv.levels
    assert (one.technology, one.devices, one.ports // one.devices, one.links_below, one.medium) == (
        "eps",
        648,
        40,
        20736,
        "copper",
    )
    assert (two.technology, two.devices, two.ports // two.devices, two.logical, two.links_below) == (
        "ocs",
        72,
        72,
        288,
        5184,
    )
    assert (inv.converters, inv.converter_kind) == (5184, "pluggable")


def test_rail_wiring_of_the_all_ocs_fabric() -> None:
    # 18 racks x 32 uplinks per rail = 576 level-2 ports = 8 devices of 72, 4 cables each.
    wire = wiring(load_fabric(FABRICS / "nvl576-all-ocs.toml"))
    assert (wire.domain, wire.groups, wire.down, wire.up, wire.spines, wire.fanout) == (32, 18, 32, 32, 8, 4)
    assert wire.attach(35) == (1, 3)
    assert wire.uplink(group=17, spine=7, j=3) == (32 + 7 * 4 + 3, 17 * 4 + 3)
    assert wire.l1_id(5, 3) == "L1.k05.r03" and wire.l2_id(5, 7) == "L2.k05.d07"
    assert wire.parse_id("L1.k05.r03") == (1, 5, 3) and wire.parse_id("L2.k05.d07") == (2, 5, 7)


def test_route_circuit_follows_the_wiring() -> None:
    """The all-OCS fabric (racks of 32, 32 uplinks, 8 level-2 devices, 4 cables each): uplink
    ``down + i * fanout + j`` of rack r is port ``r * fanout + j`` of level-2 device i (module docstring)."""
    wire = wiring(load_fabric(FABRICS / "nvl576-all-ocs.toml"))
    assert route_circuit(wire, 5, 33, 35) == (Hop("L1.k05.r01", 1, 3),)
    assert route_circuit(wire, 5, 0, 35, (7, 3, 1)) == (
        Hop("L1.k05.r00", 0, 32 + 7 * 4 + 3), Hop("L2.k05.d07", 0 * 4 + 3, 1 * 4 + 1),
        Hop("L1.k05.r01", 32 + 7 * 4 + 1, 3))
    hairpin = route_circuit(wire, 0, 33, 35, (2, 0, 1))  # one rack, two of its cables
    assert [h.device for h in hairpin] == ["L1.k00.r01", "L2.k00.d02", "L1.k00.r01"]
    with pytest.raises(ValueError):
        route_circuit(wire, 5, 0, 35)  # two racks need a cable


def test_parse_id_inverts_the_ids() -> None:
    """Every id a wiring builds, on one or two levels (racks up to 100), reads back as (level, rail, index)."""
    wires = [wiring(load_fabric(FABRICS / "nvl576-all-ocs.toml")),
             wiring(parse_fabric(_fabric([{"technology": "ocs", "radix": 16}])))]
    for wire in wires:
        for rail in (0, 7, 17, 123):
            for index in (0, 9, 10, 99, 100):
                assert wire.parse_id(wire.l1_id(rail, index)) == (1, rail, index)
                assert wire.parse_id(wire.l2_id(rail, index)) == (2, rail, index)
    with pytest.raises(ValueError):
        Wiring.parse_id("L1.k05")


def _fabric(levels: list[dict[str, object]], racks: dict[str, int] | None = None, n: int = 64) -> dict[str, object]:
    data: dict[str, object] = {"name": "t", "accelerators": n, "ports": 8, "link": "400Gb/s", "level": levels}
    if racks:
        data["racks"] = racks
    return data


def test_single_level_split_into_devices() -> None:
    fab = parse_fabric(_fabric([{"technology": "ocs", "radix": 16}]))
    wire = wiring(fab)
    assert (wire.domain, wire.groups, wire.two_level) == (16, 4, False)
    assert wire.l1_id(2, 3) == "L1.k02.d03"
    assert inventory(fab).levels[0].devices == 8 * 4


@pytest.mark.parametrize(
    ("levels", "racks", "field"),
    [
        # racks of 16 do not fit 8 down ports
        (
            [{"technology": "ocs", "radix": 16, "down": 8, "up": 8}, {"technology": "ocs", "radix": 16}],
            {"size": 16},
            "racks.size",
        ),
        # 16 racks with one cable each need 16 > 8 level-2 ports
        (
            [{"technology": "ocs", "radix": 8, "down": 4, "up": 4}, {"technology": "ocs", "radix": 8}],
            {"size": 4},
            "level[1].down",
        ),
    ],
)
def test_unwireable_fabrics_name_the_field(levels: list[dict[str, object]], racks: dict[str, int], field: str) -> None:
    with pytest.raises(InstanceError) as info:
        wiring(parse_fabric(_fabric(levels, racks), "f.toml"))
    assert info.value.field == field
