"""The fabric fields of a circuits file against the fabric file (``ocsplan validate --fabric``).

Kept apart from :mod:`.validate`, which re-derives everything from the circuits
file alone: this check needs the fabric file and the wiring rule of
:mod:`.wiring` (README "Fabric files"), shared with the realizer.
"""

from __future__ import annotations

from .circuits import Circuits
from .fabrics import FabricSpec
from .fault import Fault
from .wiring import converters, inventory, wiring

__all__ = ["fabric_faults"]

_FIELDS = ("name", "accelerators", "ports", "link_Bps", "rack_size", "serving_racks", "levels",
           "wiring.domain", "wiring.groups", "wiring.down", "wiring.up", "wiring.spines", "wiring.fanout")


def fabric_faults(c: Circuits, spec: FabricSpec) -> list[Fault]:
    """Every fabric field and hardware count of ``c`` that the fabric file does not give."""
    f, wire = c.fabric, wiring(spec)
    want = (spec.name, spec.accelerators, spec.ports, spec.link, spec.rack_size, spec.serving_racks,
            tuple(spec.levels), wire.domain, wire.groups, wire.down, wire.up, wire.spines, wire.fanout)
    got = (f.name, f.accelerators, f.ports, f.link_Bps, f.rack_size, f.serving_racks, tuple(f.levels),
           f.domain, f.groups, f.down, f.up, f.spines, f.fanout)
    faults = [Fault(f"fabric.{field} is {a}, the fabric file {spec.source or spec.name} gives {b}")
              for field, a, b in zip(_FIELDS, got, want, strict=True) if a != b]
    if c.counts.installed != inventory(spec):
        faults.append(Fault("counts.installed differ from the fabric's inventory"))
    total = len(c.circuits)
    crossing = sum(1 for circ in c.circuits if len(circ.path) == 3)
    count, kind = converters(spec, 2 * total, 2 * crossing)
    used = c.counts.used
    if (used.converters, used.converter_kind) != (count, kind):
        faults.append(Fault(f"counts.used: {used.converters} {used.converter_kind} converters, "
                            f"the fabric needs {count} {kind}"))
    return faults
