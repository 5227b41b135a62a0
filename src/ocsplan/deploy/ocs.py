"""The fabric as files an OCS controller, a technician and a network tool read (issue 41).

From a circuits file alone (``ocsplan realize --out``):

- ``devices/<device>.csv``: per OCS device its cross-connects, one ``in_port,out_port`` row
  per pair (the smaller port first: a cross-connect is duplex, each stated once), sorted;
- ``cross-connects.json``: every device with its id, level, rail, index, radix and
  cross-connects (a device without any is listed empty);
- ``cabling.csv``: every cable, one row each: the two ends, each an accelerator port (with the
  plan rank that accelerator runs) or a device port, its kind, the rack of each end, and the
  circuit that uses it (a port carries one circuit, so a cable carries one); a circuit's cables
  are consecutive rows from its end a to its end b;
- ``<mesh>.<axis>.graphml``: each axis's host graph (the circuits its routing tables use),
  nodes with rank, accelerator and rack, edges with generator, multiplicity and OCS hops;
- ``index.json`` (schema ``ocsplan.ocs-export/1``): the files and their counts, and what the
  other files cannot say and :mod:`ocsplan.deploy.ocs_import` needs to rebuild the circuits
  file: the placement method, the fabric source, the notes and how many routing tables.

Pure: returns the texts; the CLI writes the directory atomically. The reader that checks them
(``tests/test_deploy_ocs.py``) uses csv, json and networkx's GraphML reader only.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping

from ..realization.circuits import Circuit, Circuits, by_port

__all__ = ["CABLE_COLUMNS", "NO_RANK", "OCS_SCHEMA", "ocs_files"]

OCS_SCHEMA = "ocsplan.ocs-export/1"
CABLE_COLUMNS = ("cable", "a_kind", "a", "a_port", "a_rank", "a_rack", "b_kind", "b", "b_port", "b_rank", "b_rack",
                 "medium", "circuit")
NO_RANK = "-"
"""The rank (and a level-2 device's rack) column of an end that has none."""


def _device_rack(c: Circuits, device: str, level: int, index: int) -> str:
    """A level-1 device of a two-level fabric sits in rack ``index``; other devices serve every rack."""
    return str(index) if level == 1 and len(c.fabric.levels) == 2 else NO_RANK


def _cables(c: Circuits) -> list[tuple[str, ...]]:
    """Every cable of every circuit, from end a through its devices to end b."""
    devices = {d.id: d for d in c.devices}
    rows: list[tuple[str, ...]] = []
    accelerator = c.placement.accelerator
    for number, circuit in enumerate(c.circuits):
        ends: list[tuple[str, str, int, str, str]] = [
            ("accelerator", str(accelerator[circuit.a]), circuit.a_port, str(circuit.a),
             str(accelerator[circuit.a] // c.fabric.rack_size))]
        for hop in circuit.path:
            d = devices[hop.device]
            rack = _device_rack(c, d.id, d.level, d.index)
            ends.append(("device", d.id, hop.enter, NO_RANK, rack))
            ends.append(("device", d.id, hop.leave, NO_RANK, rack))
        ends.append(("accelerator", str(accelerator[circuit.b]), circuit.b_port, str(circuit.b),
                     str(accelerator[circuit.b] // c.fabric.rack_size)))
        for k in range(0, len(ends), 2):
            a, b = ends[k], ends[k + 1]
            rows.append((a[0], a[1], str(a[2]), a[3], a[4], b[0], b[1], str(b[2]), b[3], b[4], "fiber", str(number)))
    return [(str(i), *row) for i, row in enumerate(rows)]


def _csv(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    import csv

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


def _axis_circuits(c: Circuits) -> dict[tuple[str, int], set[int]]:
    """Per (mesh, axis): the circuits its demands' routing tables send on."""
    index = by_port(c)
    number = {id(circuit): i for i, circuit in enumerate(c.circuits)}
    out: dict[tuple[str, int], set[int]] = {}
    for route in c.routes:
        used = out.setdefault((route.mesh, route.axis), set())
        for node, phases in enumerate(route.table):
            for phase in phases:
                for _, ports in phase:
                    for port in ports:
                        found: Circuit | None = index.get((node, port))
                        if found is not None:
                            used.add(number[id(found)])
    return out


def _graphml(c: Circuits, used: set[int]) -> str:
    import networkx as nx

    multiplicity = {g.label: g.multiplicity for g in c.generators}
    graph = nx.MultiGraph()
    accelerator = c.placement.accelerator
    ranks = sorted({end for i in used for end in (c.circuits[i].a, c.circuits[i].b)})
    for rank in ranks:
        graph.add_node(rank, rank=rank, accelerator=accelerator[rank],
                       rack=accelerator[rank] // c.fabric.rack_size)
    for i in sorted(used):
        circuit = c.circuits[i]
        graph.add_edge(circuit.a, circuit.b, key=i, circuit=i, generator=circuit.generator,
                       multiplicity=multiplicity.get(circuit.generator, 1), hops=len(circuit.path),
                       a_port=circuit.a_port, b_port=circuit.b_port)
    buffer = io.BytesIO()
    nx.write_graphml(graph, buffer)
    return buffer.getvalue().decode("utf-8")


def ocs_files(c: Circuits) -> dict[str, str]:
    """Relative path -> text of every file of the OCS export of ``c`` (deterministic)."""
    files: dict[str, str] = {}
    devices = []
    for d in sorted(c.devices, key=lambda d: d.id):
        pairs = sorted((min(a, b), max(a, b)) for a, b in d.cross_connects)
        files[f"devices/{d.id}.csv"] = _csv(("in_port", "out_port"), [(str(a), str(b)) for a, b in pairs])
        devices.append({"id": d.id, "level": d.level, "rail": d.rail, "index": d.index, "radix": d.radix,
                        "technology": c.fabric.levels[d.level - 1].technology,
                        "cross_connects": [list(p) for p in pairs]})
    files["cross-connects.json"] = json.dumps({"schema": OCS_SCHEMA, "devices": devices}, indent=1) + "\n"
    cables = _cables(c)
    files["cabling.csv"] = _csv(CABLE_COLUMNS, cables)
    graphs: dict[str, int] = {}
    for (mesh, axis), used in sorted(_axis_circuits(c).items()):
        name = f"{mesh}.{axis}.graphml"
        files[name] = _graphml(c, used)
        graphs[name] = len(used)
    files["index.json"] = json.dumps(_index(c, files, len(cables), graphs), indent=1) + "\n"
    return files


def _index(c: Circuits, files: Mapping[str, str], cables: int, graphs: Mapping[str, int]) -> dict[str, object]:
    return {
        "schema": OCS_SCHEMA,
        "plan": {"instance": c.plan.instance, "world": c.plan.world},
        "fabric": {"name": c.fabric.name, "source": c.fabric.source, "accelerators": c.fabric.accelerators,
                   "rack_size": c.fabric.rack_size, "levels": [lv.technology for lv in c.fabric.levels]},
        "placement": {"method": c.placement.method,
                      "slot_bits": None if c.placement.slot_bits is None else list(c.placement.slot_bits)},
        "routes": len(c.routes),
        "notes": list(c.notes),
        "counts": {"devices": len(c.devices), "cross_connects": sum(len(d.cross_connects) for d in c.devices),
                   "circuits": len(c.circuits), "cables": cables},
        "graphs": dict(graphs),
        "files": sorted([*files, "index.json"]),
    }
