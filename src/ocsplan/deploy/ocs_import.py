"""An OCS export read back into a circuits file: ``ocsplan import-ocs DIR --plan --fabric --out``.

The round trip of :mod:`ocsplan.deploy.ocs` (issue 41): the circuits and the devices come from
the files alone. Every circuit is walked over ``cabling.csv`` and the cross-connects of
``cross-connects.json`` (checked against ``devices/<id>.csv``) from its end a, the accelerator
end of its first cable, to the accelerator at the other end; its ranks are the cabling's
``a_rank``/``b_rank`` of those ends, which is also the placement (rank -> accelerator). The
``index.json`` gives what the other files cannot: the placement method and slot bits, the
fabric source, the notes and whether the file had routing tables.

What a circuit file derives from the plan and the fabric is derived again, with the
realizer's own pieces and nothing else: the generator of a circuit is the plan's generator of
its port (:func:`ocsplan.realization.realize.port_assignment`, which also gives the ports
reserved beyond the plan's and the routing tables: they depend on the plan only), the scope is
its number of OCS hops on a one- or two-level fabric, and the fabric reference, node table,
per-generator use and hardware counts are computed as the realizer computes them.

A directory whose files disagree with each other, with the plan or with the fabric is refused
with one line naming the file and the field (PlanError, exit status 2); the caller also runs
:func:`ocsplan.realization.validate.validate` on the result.
"""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..errors import PlanError
from ..files import read_text
from ..plan import Plan
from ..realization.circuits import Circuit, Circuits, Device, GeneratorUse, Hop, Placement, parse_label
from ..realization.fabrics import FabricSpec
from ..realization.paths import count_hardware, fabric_ref, node_table, scope_of
from ..realization.realize import port_assignment
from ..realization.wiring import wiring
from .ocs import CABLE_COLUMNS, NO_RANK, OCS_SCHEMA

__all__ = ["import_ocs"]

_DEVICE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
End = tuple[str, str, int]  # (kind, accelerator or device id, port)


class _Dir:
    """The export directory's files, each read once, errors naming the file."""

    def __init__(self, directory: Path) -> None:
        if not directory.is_dir():
            raise PlanError(f"{directory}: not a directory (give the --out of ocsplan export --format ocs)")
        self.directory = directory

    def fail(self, name: str, field: str, message: str) -> PlanError:
        where = f"{self.directory / name}: {field}: " if field else f"{self.directory / name}: "
        return PlanError(where + message)

    def text(self, name: str) -> str:
        path = self.directory / name
        return read_text(path, lambda message: PlanError(f"{path}: {message}"))

    def json(self, name: str) -> dict[str, Any]:
        from ..files import read_json_file

        return read_json_file(self.directory / name)

    def rows(self, name: str, header: Sequence[str]) -> list[list[str]]:
        rows = list(csv.reader(io.StringIO(self.text(name))))
        if not rows or tuple(rows[0]) != tuple(header):
            raise self.fail(name, "header", f"expected {','.join(header)}")
        for i, row in enumerate(rows[1:], start=2):
            if len(row) != len(header):
                raise self.fail(name, f"line {i}", f"{len(row)} fields, expected {len(header)}")
        return rows[1:]


def _int(d: _Dir, name: str, field: str, text: str, low: int = 0, high: int = 1 << 40) -> int:
    if not text.isdigit() or not low <= int(text) <= high:
        raise d.fail(name, field, f"{text[:20]!r} is not an integer in {low}..{high}")
    return int(text)


def _check_index(d: _Dir, index: Mapping[str, Any], plan: Plan, spec: FabricSpec) -> None:
    from ..schemas import first_error

    found = first_error(index, "ocs-export-1")
    if found is not None:
        raise d.fail("index.json", found[0], found[1])
    theirs, f = index["plan"], index["fabric"]
    for field, got, want in (("plan.instance", theirs["instance"], plan.instance),
                             ("plan.world", theirs["world"], plan.world),
                             ("fabric.name", f["name"], spec.name),
                             ("fabric.accelerators", f["accelerators"], spec.accelerators),
                             ("fabric.rack_size", f["rack_size"], spec.rack_size),
                             ("fabric.levels", f["levels"], [lv.technology for lv in spec.levels])):
        if got != want:
            where = "--plan" if field.startswith("plan") else "--fabric"
            raise d.fail("index.json", field, f"the export has {got}, {where} has {want}")


def _devices(d: _Dir, spec: FabricSpec) -> tuple[list[Device], dict[tuple[str, int], int]]:
    """The devices of cross-connects.json (each checked against devices/<id>.csv) and, per device
    port, the port it is cross-connected to."""
    name = "cross-connects.json"
    data = d.json(name)
    if data.get("schema") != OCS_SCHEMA:
        raise d.fail(name, "schema", f"expected {OCS_SCHEMA!r}, got {str(data.get('schema'))[:40]!r}")
    listed = data.get("devices")
    if not isinstance(listed, list):
        raise d.fail(name, "devices", "expected a list")
    devices: list[Device] = []
    peer: dict[tuple[str, int], int] = {}
    for k, raw in enumerate(listed):
        field = f"devices[{k}]"
        try:
            ident, level, rail, index, radix = raw["id"], raw["level"], raw["rail"], raw["index"], raw["radix"]
            technology, pairs = raw["technology"], raw["cross_connects"]
        except (KeyError, TypeError):
            raise d.fail(name, field, "expected id, level, rail, index, radix, technology and cross_connects") from None
        if not isinstance(ident, str) or not _DEVICE_ID.fullmatch(ident):
            raise d.fail(name, f"{field}.id", f"{str(ident)[:40]!r} is not a device id")
        field = f"devices[{ident}]"
        numbers = (level, rail, index, radix)
        if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in numbers):
            raise d.fail(name, field, "level, rail, index and radix must be integers >= 0")
        if not 1 <= level <= len(spec.levels):
            raise d.fail(name, f"{field}.level", f"{level}: the fabric has {len(spec.levels)} level(s)")
        want = spec.levels[level - 1]
        if radix != want.radix or technology != want.technology:
            raise d.fail(name, f"{field}.radix", f"{technology}/{radix}, level {level} of the fabric is "
                                                 f"{want.technology}/{want.radix}")
        if devices and ident <= devices[-1].id:
            raise d.fail(name, field, "devices are not sorted by id, or an id is given twice")
        if not isinstance(pairs, list) or not all(
                isinstance(p, list) and len(p) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in p)
                for p in pairs):
            raise d.fail(name, f"{field}.cross_connects", "expected a list of [in port, out port]")
        connects = tuple((a, b) for a, b in pairs)
        if list(connects) != sorted(set(connects)) or not all(0 <= a < b < radix for a, b in connects):
            raise d.fail(name, f"{field}.cross_connects", f"expected sorted pairs 0 <= in < out < {radix}, "
                                                          "each once")
        for a, b in connects:
            if (ident, a) in peer or (ident, b) in peer:
                raise d.fail(name, f"{field}.cross_connects", f"port {a if (ident, a) in peer else b} is in two "
                                                              "cross-connects")
            peer[(ident, a)], peer[(ident, b)] = b, a
        csv_name = f"devices/{ident}.csv"
        rows = [(_int(d, csv_name, f"line {i + 2}", r[0]), _int(d, csv_name, f"line {i + 2}", r[1]))
                for i, r in enumerate(d.rows(csv_name, ("in_port", "out_port")))]
        if tuple(rows) != connects:
            raise d.fail(csv_name, "cross-connects", f"{len(rows)} row(s) that differ from the {len(connects)} "
                                                     f"of cross-connects.json")
        devices.append(Device(ident, level, rail, index, radix, connects))
    on_disk = {p.stem for p in (d.directory / "devices").glob("*.csv")}
    extra = sorted(on_disk - {x.id for x in devices})
    if extra:
        raise d.fail(f"devices/{extra[0]}.csv", "", "a device cross-connects.json does not list")
    return devices, peer


def _walk(d: _Dir, rows: list[list[str]], peer: Mapping[tuple[str, int], int], spec: FabricSpec,
          world: int) -> tuple[list[tuple[End, End, tuple[Hop, ...]]], dict[int, int], set[tuple[str, int]]]:
    """Every circuit as (end a, end b, its hops), the placement (rank -> accelerator) and the
    device ports the walks crossed."""
    name = "cabling.csv"
    col = {c: i for i, c in enumerate(CABLE_COLUMNS)}
    other: dict[End, tuple[int, End]] = {}
    of_circuit: list[int] = []
    first: dict[int, int] = {}
    placement: dict[int, int] = {}
    runs: dict[int, int] = Counter()
    for r, row in enumerate(rows):
        line = f"cable {r}"
        if _int(d, name, f"{line}.cable", row[col["cable"]]) != r:
            raise d.fail(name, f"{line}.cable", f"{row[col['cable']]!r}: cables are numbered 0, 1, ... in order")
        if row[col["medium"]] not in ("fiber", "copper"):
            raise d.fail(name, f"{line}.medium", f"{row[col['medium']][:20]!r}: expected fiber or copper")
        ends: list[End] = []
        for side in ("a", "b"):
            kind, ident = row[col[f"{side}_kind"]], row[col[side]]
            port = _int(d, name, f"{line}.{side}_port", row[col[f"{side}_port"]])
            rack, rank = row[col[f"{side}_rack"]], row[col[f"{side}_rank"]]
            if kind == "accelerator":
                acc = _int(d, name, f"{line}.{side}", ident, 0, spec.accelerators - 1)
                if rack != str(acc // spec.rack_size):
                    raise d.fail(name, f"{line}.{side}_rack", f"{rack[:20]!r}: accelerator {acc} is in rack "
                                                              f"{acc // spec.rack_size}")
                x = _int(d, name, f"{line}.{side}_rank", rank, 0, world - 1)
                if placement.setdefault(x, acc) != acc:
                    raise d.fail(name, f"{line}.{side}_rank", f"rank {x} on accelerator {acc} and "
                                                              f"{placement[x]}")
            elif kind == "device":
                if rank != NO_RANK:
                    raise d.fail(name, f"{line}.{side}_rank", f"{rank[:20]!r}: a device end runs no rank")
                if (ident, port) not in peer:
                    raise d.fail(name, f"{line}.{side}", f"device {ident[:40]} port {port} has no cross-connect "
                                                         "in cross-connects.json")
            else:
                raise d.fail(name, f"{line}.{side}_kind", f"{kind[:20]!r}: expected accelerator or device")
            end = (kind, ident, port)
            if end in other:
                raise d.fail(name, f"{line}.{side}", f"{kind} {ident[:40]} port {port} is on cable "
                                                     f"{other[end][0]} too")
            ends.append(end)
        other[ends[0]], other[ends[1]] = (r, ends[1]), (r, ends[0])
        number = _int(d, name, f"{line}.circuit", row[col["circuit"]])
        if number != len(first) - 1 and number != len(first):
            raise d.fail(name, f"{line}.circuit", f"{number}: circuits are numbered 0, 1, ... with their cables "
                                                  "in consecutive rows")
        if number not in first:
            first[number] = r
            if ends[0][0] != "accelerator":
                raise d.fail(name, f"{line}.a_kind", f"circuit {number} starts at a device, not at its end a")
        of_circuit.append(number)
        runs[number] += 1
    accelerators = sorted(placement.values())
    if len(placement) != world or len(set(accelerators)) != world:
        missing = [x for x in range(world) if x not in placement]
        what = f"rank {missing[0]} is on no cable" if missing else "two ranks share an accelerator"
        raise d.fail(name, "a_rank", f"{what}: the placement of {world} ranks is not one accelerator each")
    circuits: list[tuple[End, End, tuple[Hop, ...]]] = []
    crossed: set[tuple[str, int]] = set()
    for number in range(len(first)):
        r = first[number]
        start: End = ("accelerator", rows[r][col["a"]], int(rows[r][col["a_port"]]))
        here, hops = start, list[Hop]()
        while True:
            cable, there = other[here]
            if of_circuit[cable] != number:
                raise d.fail(name, f"cable {cable}.circuit", f"{of_circuit[cable]}, but the light path of circuit "
                                                             f"{number} crosses it")
            if there[0] == "accelerator":
                break
            leave = peer[(there[1], there[2])]
            hops.append(Hop(there[1], there[2], leave))
            crossed.update({(there[1], there[2]), (there[1], leave)})
            here = ("device", there[1], leave)
            if here not in other:
                raise d.fail(name, f"circuit {number}", f"device {there[1]} port {leave} (cross-connected to port "
                                                        f"{there[2]}) has no cable")
            if len(hops) > runs[number]:
                raise d.fail(name, f"circuit {number}", "its light path does not reach an accelerator")
        if len(hops) + 1 != runs[number]:
            raise d.fail(name, f"circuit {number}", f"{runs[number]} cable(s), its light path crosses "
                                                    f"{len(hops) + 1}")
        circuits.append((start, there, tuple(hops)))
    return circuits, placement, crossed


def import_ocs(directory: str | Path, plan: Plan, spec: FabricSpec) -> Circuits:
    """The circuits file an OCS export directory was written from (see the module docstring);
    PlanError naming the file and field when its files disagree with each other, the plan or
    the fabric."""
    d = _Dir(Path(directory))
    index = d.json("index.json")
    _check_index(d, index, plan, spec)
    devices, peer = _devices(d, spec)
    rows = d.rows("cabling.csv", CABLE_COLUMNS)
    walked, placement, crossed = _walk(d, rows, peer, spec, plan.world)
    unused = sorted(set(peer) - crossed)
    if unused:
        raise d.fail("cross-connects.json", f"devices[{unused[0][0]}]", f"port {unused[0][1]} is cross-connected "
                                                                          "but no cable's light path crosses it")
    assigned = port_assignment(plan, routing=index["routes"] > 0)
    if len(assigned.routes) != index["routes"]:
        raise d.fail("index.json", "routes", f"{index['routes']}, the plan has {len(assigned.routes)} routing tables")
    label_of = {port: label for label, ports in assigned.ports.items() for port in ports}
    wire = wiring(spec)
    by_acc = {acc: x for x, acc in placement.items()}
    circuits = []
    for number, (a, b, hops) in enumerate(walked):
        if a[2] != b[2] or a[2] not in label_of:
            raise d.fail("cabling.csv", f"circuit {number}", f"ports {a[2]} and {b[2]}: a circuit joins one port "
                                                             "of a generator of the plan on both ends")
        scope = ("single-level" if not wire.two_level else "inter-rack" if len(hops) == 3 else "intra-rack")
        circuits.append(Circuit(by_acc[int(a[1])], a[2], by_acc[int(b[1])], b[2], label_of[a[2]], scope, hops))
    if len(circuits) != index["counts"]["circuits"]:
        raise d.fail("index.json", "counts.circuits", f"{index['counts']['circuits']}, cabling.csv has "
                                                      f"{len(circuits)}")
    used_ports = sum(len(p) for p in assigned.ports.values())
    total = Counter(c.generator for c in circuits)
    inter = Counter(c.generator for c in circuits if c.scope == "inter-rack")
    generators = tuple(
        GeneratorUse(label, *parse_label(label), multiplicity, tuple(assigned.ports[label]), total[label],
                     inter[label], scope_of(total[label], inter[label], wire.two_level))
        for label, multiplicity in assigned.plan.generators)
    slot_bits = index["placement"]["slot_bits"]
    return Circuits(
        plan=assigned.plan,
        fabric=replace(fabric_ref(spec, wire), source=index["fabric"]["source"]),
        placement=Placement(index["placement"]["method"], None if slot_bits is None else tuple(slot_bits),
                            tuple(placement[x] for x in range(plan.world))),
        ports_used=used_ports,
        reserved_ports=assigned.reserved,
        generators=generators,
        nodes=node_table(circuits, plan.world),
        circuits=tuple(circuits),
        devices=tuple(devices),
        routes=assigned.routes,
        counts=count_hardware(spec, circuits, devices, plan.world, used_ports),
        notes=tuple(index["notes"]),
    )
