"""System power of a scale-up fabric (paper App. D.4, Table 12; TDP basis).

P_sys = N_inst P_xpu + sum over devices of radix x P_port + converters x P_conv:
every installed device port counts, used or not; a pluggable sits at every
EPS end of a fiber, co-packaged optics (CPO) at every accelerator port cabled
by fiber (all-OCS). ``ports`` (L') rescales the fabric: N_inst L' / down
level-1 devices and level 1 x up / radix level-2 devices.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InstanceError
from ..realization.fabrics import FabricSpec
from ..realization.wiring import inventory

__all__ = [
    "CPO_W",
    "EPS_PORT_W",
    "OCS_PORT_W",
    "PLUGGABLE_W",
    "PowerBreakdown",
    "eps_port_power",
    "fabric_power",
    "rate_label",
    "xpu_power",
]

GBPS = 1e9 / 8  # bytes per second of 1 Gb/s


def xpu_power(rack_w: float, tray_w: float) -> float:
    """Per-XPU power incl. host share: (P_rack - 9 P_tray) / 72 (Table 12)."""
    return (rack_w - 9 * tray_w) / 72


def eps_port_power(rate_gbps: int) -> float:
    """EPS scale-up port: 1.7 kW tray / 144 ports at 400G, x1.3 per rate doubling (-35 % energy/bit)."""
    power = 1700 / 144
    rate = 400
    while rate < rate_gbps:
        rate *= 2
        power *= 1.3
    return power


# Table 12, per port, keyed by unidirectional rate in Gb/s.
EPS_PORT_W = {400: 11.81, 800: 15.35, 1600: 19.95}
OCS_PORT_W = {200: 1.36, 400: 1.50, 800: 1.65, 1600: 1.82}
PLUGGABLE_W = {400: 9.0, 800: 17.0, 1600: 30.0}
CPO_W = {400: 2.75, 800: 4.50, 1600: 7.00}


def rate_label(rate_gbps: int) -> str:
    return f"{rate_gbps / 1000:g}T" if rate_gbps >= 1000 else f"{rate_gbps}G"


@dataclass(frozen=True)
class PowerBreakdown:
    """Installed hardware and its power (W)."""

    fabric: str
    rate_gbps: int
    ports: int  # per accelerator
    accelerators: int
    xpu_w: float
    devices: tuple[tuple[int, str, int, int, float], ...]  # (level, technology, devices, radix, W per port)
    pluggables: int
    cpo: int

    @property
    def xpus_total(self) -> float:
        return self.accelerators * self.xpu_w

    @property
    def switches_total(self) -> float:
        return sum(n * radix * w for _, _, n, radix, w in self.devices)

    @property
    def pluggables_total(self) -> float:
        return self.pluggables * PLUGGABLE_W[self.rate_gbps]

    @property
    def cpo_total(self) -> float:
        return self.cpo * CPO_W[self.rate_gbps]

    @property
    def network_total(self) -> float:
        return self.switches_total + self.pluggables_total + self.cpo_total

    @property
    def total(self) -> float:
        return self.xpus_total + self.network_total


def _rate(spec: FabricSpec, rate: float | None) -> int:
    value = round((rate if rate is not None else spec.link) / GBPS)
    if value not in EPS_PORT_W and value not in OCS_PORT_W:
        raise InstanceError("rate", "", f"{value} Gb/s has no Table 12 power figures "
                                        f"(use 400G, 800G or 1600G)")
    return value


def fabric_power(spec: FabricSpec, xpu_w: float, *, rate: float | None = None,
                 ports: int | None = None) -> PowerBreakdown:
    """Table 12 power of every installed component of ``spec`` (optionally at another rate or radix)."""
    gbps = _rate(spec, rate)
    inv = inventory(spec)
    levels = spec.levels
    radix_ports = ports if ports is not None else spec.ports
    if ports is not None and ports < 1:
        raise InstanceError("ports", "", f"must be positive, got {ports}")
    scale = radix_ports / spec.ports
    counts: list[int] = []
    first = levels[0]
    l1 = inv.levels[0].devices if ports is None else -(-spec.accelerators * radix_ports // first.down)
    counts.append(l1)
    if len(levels) == 2:
        l2 = inv.levels[1].devices if ports is None else -(-l1 * first.up // levels[1].radix)
        counts.append(l2)
    xpu_links = round(inv.accelerator_ports * scale)
    uplinks = l1 * first.up if len(levels) == 2 else 0
    devices = []
    for i, (level, n) in enumerate(zip(levels, counts, strict=True)):
        table = EPS_PORT_W if level.technology == "eps" else OCS_PORT_W
        if gbps not in table:
            raise InstanceError("rate", "", f"{rate_label(gbps)} has no {level.technology.upper()} port power")
        devices.append((i + 1, level.technology, n, level.radix, table[gbps]))
    cpo = xpu_links if first.technology == "ocs" else 0
    pluggables = uplinks * sum(1 for level in levels if level.technology == "eps")
    if (cpo and gbps not in CPO_W) or (pluggables and gbps not in PLUGGABLE_W):
        raise InstanceError("rate", "", f"{rate_label(gbps)} has no converter power")
    return PowerBreakdown(spec.name, gbps, radix_ports, spec.accelerators, xpu_w, tuple(devices), pluggables, cpo)
