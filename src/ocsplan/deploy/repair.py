"""Repair of failed accelerators onto spares with the fewest cross-connect changes.

A workload-static fabric is reconfigured once, off the critical path: each failed
accelerator's ranks move to a spare (an installed accelerator that runs no rank; the
racks beyond ``racks.serving`` hold them), and only the circuits that end on a moved
rank are re-pathed; every other cross-connect stays. Which spare takes which failed
accelerator is an assignment problem (:func:`scipy.optimize.linear_sum_assignment`)
over failed x spare costs, lexicographic: cross-connects removed and added, then OCS
hops of the re-pathed circuits, then a spare outside the failed one's rack.

A re-pathed circuit keeps the rail (port index) of the old one. Inside one level-1
device it is one cross-connect; between racks it takes level 1, level 2, level 1,
keeping the surviving end's uplink cable and level-2 device when a free cable from the
spare's rack reaches the same level-2 device (one cross-connect changed there instead
of three), otherwise the first free (level-2 device, cable, cable). A fabric without
the free cables refuses with the rail and racks (RealizationError, exit status 3).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..errors import InstanceError, RealizationError
from ..realization.circuits import Circuit, Circuits, GeneratorUse, Hop, Placement
from ..realization.fabrics import FabricSpec
from ..realization.paths import count_hardware, devices_of, node_table, route_circuit, scope_of
from ..realization.wiring import Wiring, wiring

__all__ = ["DIFF_COLUMNS", "DeviceDiff", "Move", "Repair", "Repath", "diff_files", "diff_of", "diff_to_dict",
           "earlier_failures", "parse_failed", "rebuild", "repair", "spares"]

REPAIRED = "repaired"
"""Placement method of a repaired circuits file: the accelerator list is the record."""


@dataclass(frozen=True)
class Move:
    """A failed accelerator's ranks onto a spare, and what re-pathing them costs."""

    failed: int
    spare: int
    ranks: tuple[int, ...]
    circuits: int  # circuits re-pathed
    changes: int  # cross-connects removed plus added
    hops_before: int  # OCS devices crossed by those circuits, before and after
    hops_after: int


@dataclass(frozen=True)
class DeviceDiff:
    """One OCS device: cross-connects removed and added by the repair, and how many stay."""

    device: str
    removed: tuple[tuple[int, int], ...]
    added: tuple[tuple[int, int], ...]
    kept: int


@dataclass(frozen=True)
class Repath:
    """A circuit a circuit or device fault took down, on its new path (:mod:`.repath`)."""

    circuit: int
    a: int
    b: int
    generator: str
    port_before: int  # the port index at both ends (a spare port after a move off the rail)
    port_after: int
    before: tuple[str, ...]  # OCS devices crossed, from a to b
    after: tuple[str, ...]
    changes: int  # cross-connects removed plus added for it


@dataclass(frozen=True)
class Repair:
    circuits: Circuits
    moves: tuple[Move, ...]
    diff: tuple[DeviceDiff, ...]
    repaths: tuple[Repath, ...] = ()

    @property
    def changes(self) -> int:
        return sum(len(d.removed) + len(d.added) for d in self.diff)


# -- input ---------------------------------------------------------------------------


def parse_failed(values: Sequence[str], c: Circuits) -> tuple[int, ...]:
    """Accelerator ids of ``--failed accelerator:ID`` values; InstanceError naming the value."""
    out: list[int] = []
    for value in values:
        kind, _, name = value.partition(":")
        if kind != "accelerator" or not name.isdigit():
            raise InstanceError("--failed", "", f"{value!r}: expected accelerator:ID here (circuit and device "
                                "faults are repaired apart: one repair per kind)")
        a = int(name)
        if a >= c.fabric.accelerators:
            raise InstanceError("--failed", "", f"{value!r}: accelerator ids of fabric {c.fabric.name} are "
                                f"0..{c.fabric.accelerators - 1}")
        if a in out:
            raise InstanceError("--failed", "", f"{value!r}: given twice")
        out.append(a)
    if not out:
        raise InstanceError("--failed", "", "give at least one accelerator:ID")
    return tuple(out)


_NOTE = "repaired: accelerator "


def earlier_failures(c: Circuits) -> frozenset[int]:
    """Accelerators an earlier repair of this file took out (its notes name them)."""
    return frozenset(int(n[len(_NOTE):].split()[0]) for n in c.notes if n.startswith(_NOTE))


def spares(c: Circuits, failed: Sequence[int] = ()) -> tuple[int, ...]:
    """Installed accelerators that run no rank, did not fail now and were not repaired away before."""
    busy = set(c.placement.accelerator) | set(failed) | earlier_failures(c)
    return tuple(a for a in range(c.fabric.accelerators) if a not in busy)


# -- routing one circuit -----------------------------------------------------------------


class _Ports:
    """Which device ports carry a cross-connect (what a re-path must not take)."""

    def __init__(self, c: Circuits) -> None:
        self.used: set[tuple[str, int]] = {(d.id, p) for d in c.devices for pair in d.cross_connects for p in pair}

    def free(self, device: str, port: int, taken: set[tuple[str, int]]) -> bool:
        return (device, port) not in self.used and (device, port) not in taken


def _hop_ports(path: Sequence[Hop]) -> list[tuple[str, int]]:
    return [(h.device, p) for h in path for p in (h.enter, h.leave)]


def _route(x: Circuit, acc: Mapping[int, int], moved: frozenset[int], wire: Wiring, ports: _Ports,
           taken: set[tuple[str, int]]) -> tuple[Hop, ...]:
    """New path of circuit ``x`` once its moved ends run on ``acc``; marks the ports it takes."""
    rail = x.a_port
    ga, gb = wire.attach(acc[x.a])[0], wire.attach(acc[x.b])[0]

    def take(path: tuple[Hop, ...]) -> tuple[Hop, ...]:
        taken.update(_hop_ports(path))
        return path

    if ga == gb:
        return take(route_circuit(wire, rail, acc[x.a], acc[x.b]))
    if not wire.two_level:
        raise RealizationError(f"rail {rail}: accelerators {acc[x.a]} and {acc[x.b]} sit under different "
                          f"single-level devices (domain {wire.domain}); no path between them")
    l1a, l1b = wire.l1_id(rail, ga), wire.l1_id(rail, gb)
    # keep the surviving end's cable and level-2 device when the old path crossed level 2
    options: list[tuple[int, int, int]] = []
    if len(x.path) == 3:
        spine = wire.parse_id(x.path[1].device)[2]
        if x.a in moved and x.b not in moved:
            jb = x.path[1].leave - gb * wire.fanout
            options += [(spine, ja, jb) for ja in range(wire.fanout)]
        elif x.b in moved and x.a not in moved:
            ja = x.path[1].enter - ga * wire.fanout
            options += [(spine, ja, jb) for jb in range(wire.fanout)]
    options += [(s, ja, jb) for s in range(wire.spines) for ja in range(wire.fanout) for jb in range(wire.fanout)]
    for spine, ja, jb in options:
        up_a, l2_a = wire.uplink(ga, spine, ja)
        up_b, l2_b = wire.uplink(gb, spine, jb)
        l2 = wire.l2_id(rail, spine)
        if all(ports.free(d, p, taken) for d, p in ((l1a, up_a), (l2, l2_a), (l1b, up_b), (l2, l2_b))):
            return take(route_circuit(wire, rail, acc[x.a], acc[x.b], (spine, ja, jb)))
    raise RealizationError(f"rail {rail}: no free uplink cable pair between racks {ga} and {gb} for the "
                      f"circuit of ranks {x.a} and {x.b}")


def _pairs(path: Sequence[Hop]) -> set[tuple[str, int, int]]:
    return {(h.device, min(h.enter, h.leave), max(h.enter, h.leave)) for h in path}


def _trial(c: Circuits, wire: Wiring, ports: _Ports, acc: Mapping[int, int],
           moved: frozenset[int]) -> tuple[dict[int, tuple[Hop, ...]], int, int, int]:
    """New paths of the circuits touching ``moved``; (paths, changes, hops before, hops after)."""
    touching = [i for i, x in enumerate(c.circuits) if x.a in moved or x.b in moved]
    released = {p for i in touching for p in _hop_ports(c.circuits[i].path)}
    freed = _Ports.__new__(_Ports)
    freed.used = ports.used - released
    taken: set[tuple[str, int]] = set()
    paths = {i: _route(c.circuits[i], acc, moved, wire, freed, taken) for i in touching}
    old = {p for i in touching for p in _pairs(c.circuits[i].path)}
    new = {p for path in paths.values() for p in _pairs(path)}
    return (paths, len(old - new) + len(new - old), sum(len(c.circuits[i].path) for i in touching),
            sum(len(p) for p in paths.values()))


# -- the repair -----------------------------------------------------------------------


def repair(c: Circuits, spec: FabricSpec, failed: Sequence[int],
           assignment: Mapping[int, int] | None = None) -> Repair:
    """Move the ranks of each failed accelerator to a spare, re-path their circuits.

    ``assignment`` (failed -> spare) forces the choice (the tests' brute force); by
    default the cheapest assignment is solved for."""
    wire = wiring(spec)
    ranks_of: dict[int, list[int]] = defaultdict(list)
    for x, a in enumerate(c.placement.accelerator):
        ranks_of[a].append(x)
    hit = [a for a in failed if ranks_of.get(a)]  # a failed spare only leaves the pool
    pool = spares(c, failed)
    if len(hit) > len(pool):
        raise InstanceError("--failed", "", f"{len(hit)} failed serving accelerator(s), only {len(pool)} "
                            f"spare(s) in fabric {c.fabric.name}")
    ports = _Ports(c)
    base = dict(enumerate(c.placement.accelerator))
    if assignment is None:
        assignment = _assign(c, wire, ports, base, hit, pool, ranks_of)
    elif sorted(assignment) != sorted(hit) or len(set(assignment.values())) != len(hit) \
            or not set(assignment.values()) <= set(pool):
        raise InstanceError("assignment", "", "every failed serving accelerator onto a distinct spare")
    acc = dict(base)
    for a in hit:
        for x in ranks_of[a]:
            acc[x] = assignment[a]
    moved = frozenset(x for a in hit for x in ranks_of[a])
    paths, _, _, _ = _trial(c, wire, ports, acc, moved)
    moves = []
    for a in hit:
        mine = frozenset(ranks_of[a])
        idx = [i for i, x in enumerate(c.circuits) if x.a in mine or x.b in mine]
        old = {p for i in idx for p in _pairs(c.circuits[i].path)}
        new = {p for i in idx for p in _pairs(paths[i])}
        moves.append(Move(a, assignment[a], tuple(sorted(mine)), len(idx), len(old ^ new),
                          sum(len(c.circuits[i].path) for i in idx), sum(len(paths[i]) for i in idx)))
    circuits = tuple(replace(x, path=paths[i], scope=_scope(paths[i], wire)) if i in paths else x
                     for i, x in enumerate(c.circuits))
    notes = tuple(f"{_NOTE}{m.failed} failed, its rank(s) {', '.join(map(str, m.ranks))} run on spare "
                  f"{m.spare}; {m.circuits} circuit(s) re-pathed, {m.changes} cross-connect change(s)" for m in moves)
    repaired = rebuild(c, spec, wire, circuits, tuple(acc[x] for x in range(c.plan.world)), notes)
    return Repair(repaired, tuple(moves), diff_of(c, repaired))


def _scope(path: Sequence[Hop], wire: Wiring) -> str:
    return "single-level" if not wire.two_level else "inter-rack" if len(path) == 3 else "intra-rack"


def _assign(c: Circuits, wire: Wiring, ports: _Ports, base: Mapping[int, int], hit: Sequence[int],
            pool: Sequence[int], ranks_of: Mapping[int, Sequence[int]]) -> dict[int, int]:
    """Cheapest failed -> spare assignment: changes, then hops, then a spare in another rack."""
    if not hit:
        return {}
    costs: list[list[tuple[int, int, int] | None]] = []
    for a in hit:
        row: list[tuple[int, int, int] | None] = []
        mine = frozenset(ranks_of[a])
        for s in pool:
            acc = dict(base)
            acc.update({x: s for x in mine})
            try:
                _, changes, _, hops = _trial(c, wire, ports, acc, mine)
            except RealizationError:
                row.append(None)
                continue
            row.append((changes, hops, int(wire.attach(s)[0] != wire.attach(a)[0])))
        costs.append(row)
    known = [t for row in costs for t in row if t is not None]
    if not known:
        raise RealizationError(f"--failed: no spare of fabric {c.fabric.name} can be reached by the circuits "
                          f"of accelerator {hit[0]}")
    k = len(hit)
    w_hops = k + 1
    w_changes = (max(t[1] for t in known) * k + 1) * w_hops
    big = (max(t[0] for t in known) * k + 1) * w_changes
    matrix = np.array([[big if t is None else t[0] * w_changes + t[1] * w_hops + t[2] for t in row]
                       for row in costs], dtype=np.int64)
    from scipy.optimize import linear_sum_assignment  # here: a refused repair does not pay scipy's import

    rows, cols = linear_sum_assignment(matrix)
    if any(matrix[r, col] >= big for r, col in zip(rows, cols, strict=True)):
        raise RealizationError(f"--failed: the spares of fabric {c.fabric.name} cannot take every failed accelerator")
    return {hit[r]: pool[col] for r, col in zip(rows, cols, strict=True)}


def rebuild(c: Circuits, spec: FabricSpec, wire: Wiring, circuits: tuple[Circuit, ...],
            accelerator: tuple[int, ...], notes: Sequence[str]) -> Circuits:
    """The repaired file: ``circuits`` on ``accelerator``, devices, node table, generator scopes and
    hardware counts derived again; ``notes`` appended (they record what failed)."""
    devices = devices_of(circuits, spec)
    inter = Counter(x.generator for x in circuits if x.scope == "inter-rack")
    generators = tuple(GeneratorUse(g.label, g.mask, g.kind, g.multiplicity, g.ports, g.circuits,
                                    inter[g.label], scope_of(g.circuits, inter[g.label], wire.two_level))
                       for g in c.generators)
    kept = tuple(n for n in c.notes if not n.startswith("placement "))
    return replace(
        c, placement=Placement(REPAIRED, c.placement.slot_bits, accelerator), generators=generators,
        nodes=node_table(circuits, c.plan.world), circuits=circuits, devices=tuple(devices),
        counts=count_hardware(spec, circuits, devices, c.plan.world, c.ports_used), notes=kept + tuple(notes))


def diff_of(old: Circuits, new: Circuits) -> tuple[DeviceDiff, ...]:
    """Per OCS device, the cross-connects removed and added from ``old`` to ``new``."""
    before = {d.id: set(d.cross_connects) for d in old.devices}
    after = {d.id: set(d.cross_connects) for d in new.devices}
    out = []
    for ident in sorted(before.keys() | after.keys()):
        b, a = before.get(ident, set()), after.get(ident, set())
        if a != b:
            out.append(DeviceDiff(ident, tuple(sorted(b - a)), tuple(sorted(a - b)), len(a & b)))
    return tuple(out)


def diff_to_dict(r: Repair, healthy: Circuits) -> dict[str, Any]:
    """The ``--diff`` JSON: per OCS device the cross-connects removed and added, and what stays."""
    changed = {d.device for d in r.diff}
    return {
        "schema": "ocsplan.repair-diff/1",
        "moves": [{"failed": m.failed, "spare": m.spare, "ranks": list(m.ranks), "circuits": m.circuits,
                   "changes": m.changes, "hops_before": m.hops_before, "hops_after": m.hops_after}
                  for m in r.moves],
        "repaths": [{"circuit": p.circuit, "a": p.a, "b": p.b, "generator": p.generator,
                     "port_before": p.port_before, "port_after": p.port_after, "before": list(p.before),
                     "after": list(p.after), "changes": p.changes} for p in r.repaths],
        "changes": r.changes,
        "devices": [{"device": d.device, "removed": [list(p) for p in d.removed],
                     "added": [list(p) for p in d.added], "kept": d.kept} for d in r.diff],
        "unchanged": {"devices": sum(1 for d in healthy.devices if d.id not in changed),
                      "cross_connects": sum(len(d.cross_connects) for d in healthy.devices)
                      - sum(len(d.removed) for d in r.diff)},
    }


DIFF_COLUMNS = ("action", "in_port", "out_port")


def diff_files(r: Repair, healthy: Circuits) -> dict[str, str]:
    """The ``--diff-dir`` directory: ``devices/<id>.csv`` per changed OCS device, in the form of
    the OCS export's ``devices/<id>.csv`` with an action first (``remove`` rows, then ``add``:
    a port is freed before it is taken again), and ``diff.json`` (the ``--diff`` JSON)."""
    import csv
    import io
    import json

    files: dict[str, str] = {}
    for d in r.diff:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(DIFF_COLUMNS)
        writer.writerows([("remove", a, b) for a, b in d.removed] + [("add", a, b) for a, b in d.added])
        files[f"devices/{d.device}.csv"] = buffer.getvalue()
    files["diff.json"] = json.dumps(diff_to_dict(r, healthy), indent=1) + "\n"
    return files
