"""Repair of circuit and device faults: re-path the affected circuits through free OCS ports.

A circuit keeps its two accelerator ports: the plan gives each generator its port index
on every node (the validator and the MSCCL export read it so), and in a rail-optimized
fabric port k of an accelerator is cabled to one level-1 device of rail k only. What a
repair can change is the part of the path above level 1: the uplink cables, the level-2
device, and the cross-connects joining them. So, on a two-level fabric:

- ``circuit:ID`` (a failed transceiver, fiber or OCS port on the circuit's light path, its
  place unknown): the circuit's cross-connect in its rack, or its uplink cables and its
  level-2 ports, are avoided. A circuit between racks takes another (level-2 device,
  cable, cable); a circuit inside a rack climbs to a level-2 device on one cable of its
  rack and comes back on another (a hairpin: three OCS hops instead of one).
- ``device:ID`` of a level-2 device: every circuit through it takes another level-2 device
  of its rail.
- A level-1 device, or any device of a single-level fabric, is refused with the reason:
  the accelerators' port k reaches no other device, so only moving ranks
  (``repair --failed accelerator:ID``) or a new plan helps.

Which new path each affected circuit takes is one assignment (a 0-1 program solved by
:func:`scipy.optimize.milp` with HiGHS): exactly one path per circuit, each device port at
most once, ports of untouched circuits and of failed parts excluded; the fewest
cross-connect changes first, then the earliest (level-2 device, cable, cable) in the
wiring's order. The changes are counted against the healthy file, cross-connect by
cross-connect, as the OCS controller applies them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import csr_array

from ..errors import InstanceError, RealizationError
from ..realization.circuits import Circuit, Circuits, Hop
from ..realization.fabrics import FabricSpec
from ..realization.wiring import Wiring, wiring
from .faults import failed_circuits
from .repair import Repair, Repath, diff_of, rebuild

__all__ = ["DEVICE_NOTE", "failed_devices", "parse_faults", "repath"]

DEVICE_NOTE = "repaired: device "
"""Note prefix of a device an earlier repair took out of service (kept out of later repairs)."""

_Port = tuple[str, int]  # (device id, port)


@dataclass(frozen=True)
class _Option:
    """One new path of an affected circuit and the device ports it takes."""

    path: tuple[Hop, ...]
    ports: tuple[_Port, ...]
    changes: int  # cross-connects removed plus added, against the circuit's healthy path


def parse_faults(values: Sequence[str], c: Circuits) -> tuple[str, ...]:
    """``--failed circuit:ID`` / ``device:ID`` values, checked against the file (one line naming the value)."""
    out: list[str] = []
    for value in values:
        kind = value.partition(":")[0]
        if kind not in ("circuit", "device"):
            raise InstanceError("--failed", "", f"{value!r}: expected circuit:ID or device:ID here "
                                "(accelerator faults are repaired apart: one repair per kind)")
        failed_circuits(c, value, "--failed")  # the id exists
        if value in out:
            raise InstanceError("--failed", "", f"{value!r}: given twice")
        out.append(value)
    if not out:
        raise InstanceError("--failed", "", "give at least one circuit:ID or device:ID")
    return tuple(out)


def failed_devices(c: Circuits) -> frozenset[str]:
    """Devices an earlier repair of this file took out of service (its notes name them)."""
    return frozenset(n[len(DEVICE_NOTE):].split()[0] for n in c.notes if n.startswith(DEVICE_NOTE))


def _pairs(path: Sequence[Hop]) -> set[tuple[str, int, int]]:
    return {(h.device, min(h.enter, h.leave), max(h.enter, h.leave)) for h in path}


def _hop_ports(path: Sequence[Hop]) -> list[_Port]:
    return [(h.device, p) for h in path for p in (h.enter, h.leave)]


def _level(ident: str) -> int:
    return int(ident.split(".", 1)[0][1:])


def _affected(c: Circuits, wire: Wiring, faults: Sequence[str]
              ) -> tuple[list[int], set[_Port], set[tuple[str, int, int]], set[str]]:
    """(affected circuits, banned device ports, banned cross-connects, failed devices); a fault no
    path can avoid is refused with the reason (RealizationError, exit 3)."""
    if not wire.two_level:
        raise RealizationError(
            f"--failed {faults[0]}: fabric {c.fabric.name} has one switching level: every accelerator's port k "
            "is cabled to one device of rail k, so no other path exists (repair --failed accelerator:ID moves "
            "ranks to spares)")
    affected: set[int] = set()
    ports: set[_Port] = set()
    pairs: set[tuple[str, int, int]] = set()
    devices = set(failed_devices(c))
    for fault in faults:
        kind, _, name = fault.partition(":")
        hit, _ = failed_circuits(c, fault, "--failed")
        if kind == "device":
            if _level(name) == 1:
                raise RealizationError(
                    f"--failed {fault}: a level-1 device; the rack's accelerators reach rail "
                    f"{name.split('.')[1][1:]} through it alone and the plan fixes each generator's port, so no "
                    "path avoids it (repair --failed accelerator:ID for each of its accelerators, or plan again)")
            devices.add(name)
        else:
            x = c.circuits[hit[0]]
            if len(x.path) == 1:
                pairs |= _pairs(x.path)  # the rack's cross-connect; its down ports are the circuit's own
            else:
                first, middle, last = x.path
                ports.update({(first.device, first.leave), (middle.device, middle.enter),
                              (middle.device, middle.leave), (last.device, last.enter)})
        affected.update(hit)
    return sorted(affected), ports, pairs, devices


def _options(x: Circuit, acc: Sequence[int], wire: Wiring, busy: set[_Port], banned: set[_Port],
             pairs: set[tuple[str, int, int]], devices: set[str]) -> list[_Option]:
    """Every level-2 path of circuit ``x`` on its rail over free ports, in the wiring's order."""
    rail = x.a_port
    (ga, sa), (gb, sb) = wire.attach(acc[x.a]), wire.attach(acc[x.b])
    l1a, l1b = wire.l1_id(rail, ga), wire.l1_id(rail, gb)
    old = _pairs(x.path)
    out: list[_Option] = []
    for spine in range(wire.spines):
        l2 = wire.l2_id(rail, spine)
        if l2 in devices:
            continue
        for ja in range(wire.fanout):
            for jb in range(wire.fanout):
                if ga == gb and ja == jb:
                    continue  # a hairpin needs two cables
                up_a, l2_a = wire.uplink(ga, spine, ja)
                up_b, l2_b = wire.uplink(gb, spine, jb)
                path = (Hop(l1a, sa, up_a), Hop(l2, l2_a, l2_b), Hop(l1b, up_b, sb))
                taken = ((l1a, up_a), (l2, l2_a), (l2, l2_b), (l1b, up_b))
                if any(p in busy or p in banned for p in taken) or _pairs(path) & pairs:
                    continue
                out.append(_Option(path, taken, len(old ^ _pairs(path))))
    return out


def _assign(options: Sequence[Sequence[_Option]]) -> list[int] | None:
    """One option per circuit, each port at most once, fewest changes then earliest options;
    None when no assignment exists."""
    flat = [(i, j, o) for i, row in enumerate(options) for j, o in enumerate(row)]
    width = max(len(row) for row in options)
    tie = len(options) * width + 1  # the order term never outweighs one change
    cost = np.array([o.changes * tie + j for _, j, o in flat], dtype=float)
    port_ids: dict[_Port, int] = {}
    rows, cols = [], []
    for k, (_, _, o) in enumerate(flat):
        for p in o.ports:
            rows.append(port_ids.setdefault(p, len(port_ids)))
            cols.append(k)
    each = csr_array((np.ones(len(flat)), ([i for i, _, _ in flat], list(range(len(flat))))),
                     shape=(len(options), len(flat)))
    use = csr_array((np.ones(len(rows)), (rows, cols)), shape=(len(port_ids), len(flat)))
    result = milp(cost, integrality=np.ones(len(flat)), bounds=Bounds(0, 1),
                  constraints=[LinearConstraint(each, 1, 1), LinearConstraint(use, 0, 1)])
    if result.status != 0 or result.x is None:
        return None
    chosen = [-1] * len(options)
    for k, (i, j, _) in enumerate(flat):
        if result.x[k] > 0.5:
            chosen[i] = j
    return chosen


def repath(c: Circuits, spec: FabricSpec, faults: Sequence[str]) -> Repair:
    """Re-path the circuits the faults take down through free level-2 ports (see the module)."""
    wire = wiring(spec)
    affected, banned, pairs, devices = _affected(c, wire, faults)
    mine = set(affected)
    busy = {p for i, x in enumerate(c.circuits) if i not in mine for p in _hop_ports(x.path)}
    acc = c.placement.accelerator
    options = [_options(c.circuits[i], acc, wire, busy, banned, pairs, devices) for i in affected]
    for i, row in zip(affected, options, strict=True):
        if not row:
            x = c.circuits[i]
            why = ("a circuit inside a rack climbs to level 2 on two cables of its rack to one device, and "
                   f"each level-1 device has {wire.fanout} per level-2 device") if wire.fanout < 2 and \
                len(x.path) == 1 else "every cable pair to a working level-2 device of its rail is taken or failed"
            raise RealizationError(f"--failed {', '.join(faults)}: no free path for circuit {i} (ranks {x.a} and "
                                   f"{x.b}, rail {x.a_port}): {why}")
    chosen = _assign(options)
    if chosen is None:
        raise RealizationError(f"--failed {', '.join(faults)}: the free level-2 ports cannot carry all "
                               f"{len(affected)} affected circuits at once")
    paths = {i: options[k][j].path for k, (i, j) in enumerate(zip(affected, chosen, strict=True))}
    circuits = tuple(replace(x, path=paths[i], scope="inter-rack") if i in paths else x
                     for i, x in enumerate(c.circuits))
    repaths = tuple(Repath(i, c.circuits[i].a, c.circuits[i].b, c.circuits[i].generator,
                           tuple(h.device for h in c.circuits[i].path), tuple(h.device for h in paths[i]),
                           len(_pairs(c.circuits[i].path) ^ _pairs(paths[i]))) for i in affected)
    changes = sum(r.changes for r in repaths)
    devices_out = [f"{DEVICE_NOTE}{f.partition(':')[2]} failed; its circuits re-pathed through level 2"
                   for f in faults if f.startswith("device:")]
    notes = (*devices_out, f"repaired: {', '.join(faults)}: {len(affected)} circuit(s) re-pathed through "
                           f"level 2, {changes} cross-connect change(s)")
    repaired = rebuild(c, spec, wire, circuits, tuple(acc), notes)
    return Repair(repaired, (), diff_of(c, repaired), repaths)
