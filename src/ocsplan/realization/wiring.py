"""Physical wiring of a fabric file: rails, devices and cables (paper App. C.7, Figure 25).

Every fabric is rail-optimized: port index k of every accelerator (rail k)
goes to a level-1 device of rail k, and a level-2 device serves one rail.

- Single level: rail k is one OCS plane, split into ``groups`` devices that
  each take ``down`` consecutive accelerators (one device when the radix
  covers them all). Accelerator a, port k = port ``a % down`` of device
  ``L1.k<k>.d<a // down>``.
- Two levels: racks of ``rack_size`` accelerators. Slot s of rack r, port k
  = down port s of ``L1.k<k>.r<r>``; its uplinks are ports ``down ..
  down + up - 1``. Rail k has ``spines`` level-2 devices ``L2.k<k>.d<i>``,
  the fewest that divide ``up`` and give each level-2 device at most its
  ``down`` ports; each level-1 device then has ``fanout = up / spines``
  cables to each of them: uplink ``down + i * fanout + j`` of rack r is port
  ``r * fanout + j`` of ``L2.k<k>.d<i>``.

:func:`inventory` counts what is installed, as in Figure 25: devices, ports
wired per device, cables per level and E/O converters (co-packaged optics at
an accelerator cabled by fiber; a pluggable at every EPS end of a fiber).
Cables to an EPS level 1 are copper inside the rack, everything else fiber.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..errors import InstanceError
from .fabrics import FabricSpec

__all__ = [
    "Inventory",
    "LevelCount",
    "Wiring",
    "converters",
    "inventory",
    "wiring",
]


@dataclass(frozen=True)
class Wiring:
    """Where every cable of a rail-optimized fabric goes (see the module docstring)."""

    accelerators: int
    rails: int  # ports per accelerator
    domain: int  # accelerators under one level-1 device of a rail (rack size, or down)
    groups: int  # level-1 devices per rail (racks, or devices of a single-level plane)
    down: int  # level-1 down ports; uplinks start at this index
    up: int  # level-1 uplinks (0: single level)
    spines: int  # level-2 devices per rail (0: single level)
    fanout: int  # cables from one level-1 device to each level-2 device of its rail
    l1_radix: int
    l2_radix: int = 0

    @property
    def two_level(self) -> bool:
        return self.spines > 0

    def l1_id(self, rail: int, group: int) -> str:
        return _device_id(1, rail, "r" if self.two_level else "d", group)

    def l2_id(self, rail: int, index: int) -> str:
        return _device_id(2, rail, "d", index)

    @staticmethod
    def parse_id(ident: str) -> tuple[int, int, int]:
        """(level, rail, index) of a device id :meth:`l1_id` or :meth:`l2_id` built (``L1.k03.r07``,
        ``L2.k03.d01``); ValueError for another string."""
        level, rail, index = ident.split(".")
        return int(level[1:]), int(rail[1:]), int(index[1:])

    def attach(self, accelerator: int) -> tuple[int, int]:
        """(level-1 group, down port) of an accelerator on any rail."""
        return divmod(accelerator, self.domain)

    def uplink(self, group: int, spine: int, j: int) -> tuple[int, int]:
        """(level-1 port, level-2 port) of cable j between a group and a spine of one rail."""
        return self.down + spine * self.fanout + j, group * self.fanout + j


@lru_cache(maxsize=1 << 16)
def _device_id(level: int, rail: int, kind: str, index: int) -> str:
    """A device id, one string object per device (every hop through it shares it)."""
    return f"L{level}.k{rail:02d}.{kind}{index:02d}"


def wiring(fabric: FabricSpec) -> Wiring:
    """The wiring of a fabric; InstanceError when its numbers cannot be cabled."""
    first = fabric.levels[0]
    if not fabric.two_level:
        domain = min(first.down, fabric.accelerators)
        groups = -(-fabric.accelerators // domain)
        return Wiring(fabric.accelerators, fabric.ports, domain, groups, first.down, 0, 0, 0, first.radix)
    second = fabric.levels[1]
    if fabric.rack_size > first.down:
        raise InstanceError(fabric.source, "racks.size",
                            f"racks of {fabric.rack_size} exceed the {first.down} down ports of level 1")
    racks = fabric.racks
    for spines in range(1, first.up + 1):
        if first.up % spines == 0 and racks * (first.up // spines) <= second.down:
            return Wiring(fabric.accelerators, fabric.ports, fabric.rack_size, racks, first.down,
                          first.up, spines, first.up // spines, first.radix, second.radix)
    raise InstanceError(fabric.source, "level[1].down",
                        f"{racks} racks need more than the {second.down} down ports of a level-2 device")


@dataclass(frozen=True)
class LevelCount:
    """One switching level: devices, ports and the cables to the level below."""

    level: int
    technology: str
    devices: int  # installed, or used (with at least one cross-connect)
    ports: int  # device ports wired (installed) or in a cross-connect (used), all devices
    logical: int  # logical switches: devices at level 1; rails x uplinks at level 2 (Figure 25)
    links_below: int  # cables to the level below (the accelerators for level 1)
    medium: str  # "fiber" or "copper"


@dataclass(frozen=True)
class Inventory:
    """Hardware counts of a fabric (installed) or of one realization (used)."""

    accelerators: int
    accelerator_ports: int
    levels: tuple[LevelCount, ...]
    converters: int
    converter_kind: str  # "cpo", "pluggable", "cpo+pluggable" or "none"


def _converter_kind(cpo: int, pluggable: int) -> str:
    kinds = [name for name, count in (("cpo", cpo), ("pluggable", pluggable)) if count]
    return "+".join(kinds) or "none"


def converters(fabric: FabricSpec, xpu_links: int, uplinks: int) -> tuple[int, str]:
    """E/O converters for the given cable counts (accelerator-level 1, level 1-level 2)."""
    techs = [level.technology for level in fabric.levels]
    cpo = xpu_links if techs[0] == "ocs" else 0
    pluggable = uplinks * sum(1 for t in techs if t == "eps") if fabric.two_level else 0
    return cpo + pluggable, _converter_kind(cpo, pluggable)


def inventory(fabric: FabricSpec) -> Inventory:
    """What a fabric installs; Figure 25 (b) gives 648 + 288 devices and 20,736 cables per level."""
    wire = wiring(fabric)
    first = fabric.levels[0]
    xpu_links = fabric.accelerators * fabric.ports
    l1_devices = wire.rails * wire.groups
    medium = "fiber" if first.technology == "ocs" else "copper"
    levels = [LevelCount(1, first.technology, l1_devices,
                         xpu_links + l1_devices * wire.up, l1_devices, xpu_links, medium)]
    uplinks = 0
    if wire.two_level:
        second = fabric.levels[1]
        uplinks = l1_devices * wire.up
        l2_devices = wire.rails * wire.spines
        levels.append(LevelCount(2, second.technology, l2_devices, uplinks,
                                 wire.rails * wire.up, uplinks, "fiber"))
    count, kind = converters(fabric, xpu_links, uplinks)
    return Inventory(fabric.accelerators, xpu_links, tuple(levels), count, kind)
