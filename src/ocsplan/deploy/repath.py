"""Repair of circuit and device faults: re-path the affected circuits through free OCS ports.

In a rail-optimized fabric port k of an accelerator is cabled to one level-1 device of rail k,
and the plan gives each generator its port indices. A circuit a fault takes down can move in two
ways, both over ports nothing else uses:

- **on its rail**, keeping its two accelerator ports: through another level-2 device and other
  uplink cables (between racks), or up to level 2 and back on two cables of its rack (a hairpin,
  three OCS hops instead of one, for a circuit inside a rack);
- **onto a spare port**: a port index no generator owns (the plan uses ``ports_used`` of the
  fabric's L; the rest are spare) and free at both ends; the circuit then runs on that rail's
  devices (one device in a rack or on a single level, level 1, 2, 1 between racks). The validator
  accepts a circuit on a port no generator owns, and the faults analysis reads it as its generator's.

Faults: ``circuit:ID`` is a failure on the circuit's light path whose place is unknown: the new path
reuses none of its cross-connects, uplink cables or level-2 ports (a failed transceiver or the
fiber to level 1 is avoided only by a spare port: say so by failing the device or the accelerator).
``device:ID``: every circuit through the device moves off it; a level-1 device (or a device of a
single-level fabric) leaves only the spare ports.

Which path each affected circuit takes is one assignment (a 0-1 program, :func:`scipy.optimize.milp`
with HiGHS): exactly one path per circuit, each device port at most once, ports of untouched
circuits and of failed parts excluded; the fewest cross-connect changes first (counted against the
healthy file, as the OCS controller applies them), then paths on the circuit's own rail (spare ports
kept for later), then the wiring's order. No path: refused with the reason (exit 3).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..errors import InstanceError, RealizationError
from ..realization.circuits import Circuit, Circuits, Hop, Route
from ..realization.fabrics import FabricSpec
from ..realization.paths import route_circuit
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

    rail: int  # the port index at both ends
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


def _affected(c: Circuits, faults: Sequence[str]
              ) -> tuple[list[int], set[_Port], set[tuple[str, int, int]], set[str]]:
    """(affected circuits, banned device ports, banned cross-connects, failed devices)."""
    affected: set[int] = set()
    ports: set[_Port] = set()
    pairs: set[tuple[str, int, int]] = set()
    devices = set(failed_devices(c))
    for fault in faults:
        kind, _, name = fault.partition(":")
        hit, _ = failed_circuits(c, fault, "--failed")
        if kind == "device":
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


def _spare_rails(c: Circuits) -> list[int]:
    """Port indices no generator owns: the plan's unused ports, free for spare circuits."""
    owned = {p for g in c.generators for p in g.ports}
    return [p for p in range(c.fabric.ports) if p not in owned]


def _options(x: Circuit, acc: Sequence[int], wire: Wiring, rails: Sequence[int], busy: set[_Port],
             banned: set[_Port], pairs: set[tuple[str, int, int]], devices: set[str]) -> list[_Option]:
    """Every path of circuit ``x`` over free ports: its own rail first, then each spare rail, each
    in the wiring's order (one device, then level-2 devices and cable pairs)."""
    (ga, sa), (gb, sb) = wire.attach(acc[x.a]), wire.attach(acc[x.b])
    old = _pairs(x.path)
    out: list[_Option] = []
    for rail in rails:
        l1a, l1b = wire.l1_id(rail, ga), wire.l1_id(rail, gb)
        if l1a in devices or l1b in devices:
            continue
        ends = ((l1a, sa), (l1b, sb))  # the accelerators' own fibers: taken on a spare rail
        paths: list[tuple[tuple[Hop, ...], tuple[_Port, ...]]] = []
        if ga == gb:
            paths.append((route_circuit(wire, rail, acc[x.a], acc[x.b]), ends))
        for spine in range(wire.spines):
            l2 = wire.l2_id(rail, spine)
            if l2 in devices:
                continue
            for ja in range(wire.fanout):
                for jb in range(wire.fanout):
                    if ga == gb and ja == jb:
                        continue  # a hairpin needs two cables
                    path = route_circuit(wire, rail, acc[x.a], acc[x.b], (spine, ja, jb))
                    cables = ((l1a, path[0].leave), (l2, path[1].enter), (l2, path[1].leave), (l1b, path[2].enter))
                    paths.append((path, (*ends, *cables)))
        for path, taken in paths:
            if any(p in busy or p in banned for p in taken) or _pairs(path) & pairs:
                continue
            out.append(_Option(rail, path, taken, len(old ^ _pairs(path))))
    return out


def _assign(options: Sequence[Sequence[_Option]]) -> list[int] | None:
    """One option per circuit, each port at most once, fewest changes then earliest options;
    None when no assignment exists."""
    alone = _each_alone(options)
    if alone is not None:
        return alone
    # scipy here, not at import: a refused or MILP-free repair does not pay its 0.3 s import
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import csr_array

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


def _each_alone(options: Sequence[Sequence[_Option]]) -> list[int] | None:
    """Each circuit's own best option (fewest changes, then earliest; its ports distinct) when no
    two of them share a port: then it is the one assignment of least cost (a single fault's one
    circuit, mostly), and no solver is needed; None otherwise."""
    if not options:
        return None
    chosen: list[int] = []
    used: set[_Port] = set()
    for row in options:
        fit = [(o.changes, j) for j, o in enumerate(row) if len(set(o.ports)) == len(o.ports)]
        if not fit:
            return None
        j = min(fit)[1]
        if used.intersection(row[j].ports):
            return None
        used.update(row[j].ports)
        chosen.append(j)
    return chosen


def _why(x: Circuit, wire: Wiring, spares: Sequence[int], devices: set[str]) -> str:
    """Why circuit ``x`` has no free path: what its rail lacks, and the spare ports."""
    rail = x.a_port
    if not wire.two_level or any(d.startswith(f"L1.k{rail:02d}.") for d in devices):
        here = f"its rail {rail} has no other device it reaches"
    elif len(x.path) == 1 and wire.fanout < 2:
        here = f"a hairpin needs two cables from its rack to one level-2 device (fan-out {wire.fanout})"
    else:
        here = f"every cable pair to a working level-2 device of rail {rail} is taken or failed"
    spare = (f"no spare port ({', '.join(map(str, spares))}) has a free path at both ends" if spares else
             f"the plan uses all {wire.rails} ports: no spare port (plan with fewer, e.g. --reserve-ports)")
    return f"{here}, and {spare}"


def repath(c: Circuits, spec: FabricSpec, faults: Sequence[str]) -> Repair:
    """Re-path the circuits the faults take down through free ports (see the module)."""
    wire = wiring(spec)
    affected, banned, pairs, devices = _affected(c, faults)
    mine = set(affected)
    busy = {p for i, x in enumerate(c.circuits) if i not in mine for p in _hop_ports(x.path)}
    acc = c.placement.accelerator
    spares = _spare_rails(c)
    options = [_options(c.circuits[i], acc, wire, [c.circuits[i].a_port, *spares], busy, banned, pairs, devices)
               for i in affected]
    for i, row in zip(affected, options, strict=True):
        if not row:
            x = c.circuits[i]
            raise RealizationError(f"--failed {', '.join(faults)}: no free path for circuit {i} (ranks {x.a} and "
                                   f"{x.b}, port {x.a_port}): {_why(x, wire, spares, devices)}")
    chosen = _assign(options)
    if chosen is None:
        raise RealizationError(f"--failed {', '.join(faults)}: the free ports cannot carry all "
                               f"{len(affected)} affected circuits at once")
    picked = {i: options[k][j] for k, (i, j) in enumerate(zip(affected, chosen, strict=True))}
    circuits = tuple(_moved(x, picked[i], wire) if i in picked else x for i, x in enumerate(c.circuits))
    repaths = tuple(Repath(i, c.circuits[i].a, c.circuits[i].b, c.circuits[i].generator, c.circuits[i].a_port,
                           picked[i].rail, tuple(h.device for h in c.circuits[i].path),
                           tuple(h.device for h in picked[i].path), picked[i].changes) for i in affected)
    changes = sum(r.changes for r in repaths)
    spare = sum(1 for r in repaths if r.port_after != r.port_before)
    devices_out = [f"{DEVICE_NOTE}{f.partition(':')[2]} failed; its circuits re-pathed"
                   for f in faults if f.startswith("device:")]
    notes = (*devices_out, f"repaired: {', '.join(faults)}: {len(affected)} circuit(s) re-pathed ({spare} onto a "
                           f"spare port), {changes} cross-connect change(s)")
    remap = {(end, r.port_before): r.port_after for r in repaths if r.port_after != r.port_before
             for end in (r.a, r.b)}
    routed = replace(c, routes=_routes(c.routes, remap)) if remap else c
    repaired = rebuild(routed, spec, wire, circuits, tuple(acc), notes)
    return Repair(repaired, (), diff_of(c, repaired), repaths)


def _routes(routes: Sequence[Route], remap: Mapping[tuple[int, int], int]) -> tuple[Route, ...]:
    """The routing tables with every send on a moved circuit's old port on its spare port."""
    out = []
    moved = {x for x, _ in remap}  # the other nodes' rows stay as they are
    for r in routes:
        table = tuple(phases if x not in moved else
                      tuple(tuple((peer, tuple(remap.get((x, p), p) for p in ports)) for peer, ports in sends)
                            for sends in phases) for x, phases in enumerate(r.table))
        out.append(replace(r, table=table))
    return tuple(out)


def _moved(x: Circuit, o: _Option, wire: Wiring) -> Circuit:
    scope = "single-level" if not wire.two_level else "inter-rack" if len(o.path) == 3 else "intra-rack"
    return replace(x, a_port=o.rail, b_port=o.rail, path=o.path, scope=scope)
