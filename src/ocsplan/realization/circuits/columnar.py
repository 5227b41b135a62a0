"""Columnar circuits files (schema ``ocsplan.circuits/2``): the writer and the bounded reader.

The header (``plan`` to ``generators``) is /1's. The bodies are integer columns with string
tables (docs/formats.md "Circuits JSON (``ocsplan.circuits/2``)"): the circuits and their hops
flat; the node table and the devices' cross-connects either derived from the circuits (written
only when the derivation gives them exactly) or as columns; each routing table as its distinct
rows (entries ``[peer XOR node, ports]``) and a run-length list of which row each (phase, node)
cell holds. The reader checks every count, length, index and the expanded sizes against
:data:`~ocsplan.limits.MAX_COLUMNAR_CIRCUITS` and :data:`~ocsplan.limits.MAX_ROUTE_ENTRIES`
before it builds anything, and builds the :class:`Circuits` the /1 file of the same
realization reads as.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from itertools import accumulate
from operator import attrgetter
from typing import Any

from ...errors import PlanError
from ...fields import KeySpec, strict_tree
from ...gcpause import paused_gc
from ...limits import (
    MAX_COLUMNAR_BYTES,
    MAX_COLUMNAR_CIRCUITS,
    MAX_ROUTE_ENTRIES,
    MAX_ROUTE_EXPANSION,
    MAX_WORLD,
    check_int,
)
from .codec import KEYS as KEYS_1
from .codec import bounded, header_from_dict, header_to_dict, malformed
from .types import Circuit, Circuits, Device, Hop, NodePort, Route

__all__ = [
    "COLUMNAR_HEAD",
    "KEYS_2",
    "SCHEMA_2",
    "circuits_from_columns",
    "circuits_to_columns",
    "dumps_columnar",
]

SCHEMA_2 = "ocsplan.circuits/2"
# how a /2 file begins (its schema key first, as the writer puts it): a file larger than /1's limit is
# read with /2's only when its first bytes match
COLUMNAR_HEAD = re.compile(r'\A\ufeff?\s*\{\s*"schema"\s*:\s*"ocsplan\.circuits/2"')
_MAX_INT = 1 << 40  # any integer field, as in /1
_HEADER = ("schema", "plan", "fabric", "placement", "ports_used", "reserved_ports", "counts", "notes",
           "generators")
_CIRCUIT_COLUMNS = ("a", "a_port", "b", "b_port", "label", "scope", "stages", "hop_device", "hop_enter",
                    "hop_leave")
_NODE_COLUMNS = ("ports", "port", "peer", "peer_port", "label")
_DEVICE_COLUMNS = ("id", "level", "rail", "index", "radix")
_ROUTE_HEAD = ("mesh", "axis", "demand", "collective", "schedule", "multiplicity", "bits", "phases")
KEYS_2: KeySpec = {
    **{key: KEYS_1[key] for key in _HEADER},
    "strings": dict.fromkeys(("labels", "scopes", "devices")),
    "circuits": dict.fromkeys(("count", *_CIRCUIT_COLUMNS)),
    "nodes": dict.fromkeys(("count", "from", *_NODE_COLUMNS)),
    "devices": {**dict.fromkeys(("count", *_DEVICE_COLUMNS)),
                "cross_connects": dict.fromkeys(("from", "count", "a", "b"))},
    "routes": (dict.fromkeys((*_ROUTE_HEAD, "nodes", "rows", "runs")),),
}


# -- writer ---------------------------------------------------------------------------


def _node_table(circuits: Sequence[Circuit], count: int) -> tuple[tuple[NodePort, ...], ...] | None:
    """The node table the circuits give (each end's port, peer, peer's port and label, in circuit
    order, then each node's entries stably sorted by port), as the realizer builds it; None when an
    end is no node of ``count``."""
    table: list[list[NodePort]] = [[] for _ in range(count)]
    for c in circuits:
        if not (0 <= c.a < count and 0 <= c.b < count):
            return None
        table[c.a].append(NodePort(c.a_port, c.b, c.b_port, c.generator))
        table[c.b].append(NodePort(c.b_port, c.a, c.a_port, c.generator))
    port = attrgetter("port")
    return tuple(tuple(sorted(node, key=port)) for node in table)


def _cross_connects(circuits: Sequence[Circuit], ids: Sequence[str]) -> list[tuple[tuple[int, int], ...]]:
    """Each device's cross-connects as the circuits' paths give them: the hops on it as (lower port,
    higher port), sorted."""
    pairs: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for c in circuits:
        for h in c.path:
            pairs[h.device].append((h.enter, h.leave) if h.enter <= h.leave else (h.leave, h.enter))
    return [tuple(sorted(pairs.get(ident, ()))) for ident in ids]


def _rows(r: Route, where: str) -> tuple[list[Any], list[list[int]]]:
    """A routing table's distinct rows (entries ``[peer XOR node, ports]``) and its runs
    ``[row, cells]`` over the cells phase-major (phase 0's nodes, then phase 1's)."""
    phases = r.phases
    if any(len(node) != phases for node in r.table):
        raise PlanError(f"circuits: {where}: nodes with different numbers of phases, which "
                        f"ocsplan.circuits/2 cannot hold")
    index: dict[tuple[tuple[int, tuple[int, ...]], ...], int] = {}
    runs: list[list[int]] = []
    for phase in range(phases):
        for x, node in enumerate(r.table):
            row = tuple([(peer ^ x, ports) for peer, ports in node[phase]])
            k = index.setdefault(row, len(index))
            if runs and runs[-1][0] == k:
                runs[-1][1] += 1
            else:
                runs.append([k, 1])
    if any(not 0 <= d < _MAX_INT for row in index for d, _ in row):
        raise PlanError(f"circuits: {where}: a peer out of 0 .. 2^40, which ocsplan.circuits/2 cannot hold")
    return [[[d, list(ports)] for d, ports in row] for row in index], runs


def circuits_to_columns(c: Circuits) -> dict[str, Any]:
    """The /2 dict of a realization (keys in the order :func:`dumps_columnar` writes them)."""
    labels: dict[str, int] = {}
    scopes: dict[str, int] = {}
    devices: dict[str, int] = {d.id: 0 for d in c.devices}
    for i, ident in enumerate(devices):
        devices[ident] = i
    hops = [h for x in c.circuits for h in x.path]
    circuits = {
        "count": len(c.circuits),
        "a": [x.a for x in c.circuits], "a_port": [x.a_port for x in c.circuits],
        "b": [x.b for x in c.circuits], "b_port": [x.b_port for x in c.circuits],
        "label": [labels.setdefault(x.generator, len(labels)) for x in c.circuits],
        "scope": [scopes.setdefault(x.scope, len(scopes)) for x in c.circuits],
        "stages": [len(x.path) for x in c.circuits],
        "hop_device": [devices.setdefault(h.device, len(devices)) for h in hops],
        "hop_enter": [h.enter for h in hops], "hop_leave": [h.leave for h in hops],
    }
    nodes: dict[str, Any] = {"count": len(c.nodes), "from": "circuits"}
    if _node_table(c.circuits, len(c.nodes)) != c.nodes:
        entries = [e for node in c.nodes for e in node]
        nodes = {"count": len(c.nodes), "from": "columns", "ports": [len(node) for node in c.nodes],
                 "port": [e.port for e in entries], "peer": [e.peer for e in entries],
                 "peer_port": [e.peer_port for e in entries],
                 "label": [labels.setdefault(e.generator, len(labels)) for e in entries]}
    connects: dict[str, Any] = {"from": "paths"}
    if _cross_connects(c.circuits, [d.id for d in c.devices]) != [d.cross_connects for d in c.devices]:
        pairs = [pair for d in c.devices for pair in d.cross_connects]
        connects = {"from": "columns", "count": [len(d.cross_connects) for d in c.devices],
                    "a": [a for a, _ in pairs], "b": [b for _, b in pairs]}
    routes = []
    for r in c.routes:
        rows, runs = _rows(r, f"routes[{r.mesh}:{r.axis}:{r.demand}]")
        routes.append({"mesh": r.mesh, "axis": r.axis, "demand": r.demand, "collective": r.collective,
                       "schedule": r.schedule, "multiplicity": r.multiplicity, "bits": list(r.bits),
                       "phases": r.phases, "nodes": len(r.table), "rows": rows, "runs": runs})
    return {
        **header_to_dict(c, SCHEMA_2),
        "strings": {"labels": list(labels), "scopes": list(scopes), "devices": list(devices)},
        "circuits": circuits,
        "nodes": nodes,
        "devices": {"count": len(c.devices), "id": [devices[d.id] for d in c.devices],
                    "level": [d.level for d in c.devices], "rail": [d.rail for d in c.devices],
                    "index": [d.index for d in c.devices], "radix": [d.radix for d in c.devices],
                    "cross_connects": connects},
        "routes": routes,
    }


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def dumps_columnar(c: Circuits) -> str:
    """/2 JSON text: the header as /1 writes it, then a line per column (a route per line).

    A realization beyond what the reader accepts (:data:`~ocsplan.limits.MAX_COLUMNAR_CIRCUITS`,
    :data:`~ocsplan.limits.MAX_ROUTE_ENTRIES`, :data:`~ocsplan.limits.MAX_COLUMNAR_BYTES`) is a PlanError."""
    if len(c.circuits) > MAX_COLUMNAR_CIRCUITS:
        raise PlanError(f"circuits: {len(c.circuits)} circuits, a columnar circuits file holds at most "
                        f"{MAX_COLUMNAR_CIRCUITS}")
    entries = sum(len(cell) for r in c.routes for node in r.table for cell in node)
    cells = sum(len(node) for r in c.routes for node in r.table)
    if max(entries, cells) > MAX_ROUTE_ENTRIES:
        raise PlanError(f"circuits: {entries} routing-table entries in {cells} cells, a columnar circuits file "
                        f"holds at most {MAX_ROUTE_ENTRIES} of each")
    with paused_gc():
        data = circuits_to_columns(c)
    parts = []
    for key, value in data.items():
        if key == "generators" and value:
            parts.append(f" {_compact(key)}: [\n" + ",\n".join("  " + _compact(v) for v in value) + "\n ]")
        elif key in ("circuits", "nodes", "devices"):
            body = ",\n".join(f"  {_compact(k)}:{_compact(v)}" for k, v in value.items())
            parts.append(f" {_compact(key)}: {{\n{body}\n }}")
        elif key == "routes" and value:
            parts.append(f" {_compact(key)}: [\n" + ",\n".join("  " + _compact(v) for v in value) + "\n ]")
        else:
            parts.append(f" {_compact(key)}: {json.dumps(value, ensure_ascii=False)}")
    text = "{\n" + ",\n".join(parts) + "\n}\n"
    if len(text) > MAX_COLUMNAR_BYTES:
        raise PlanError(f"circuits: {len(text) >> 20} MiB of JSON, a columnar circuits file holds at most "
                        f"{MAX_COLUMNAR_BYTES >> 20} MiB")
    if max(entries, cells) > MAX_ROUTE_EXPANSION * len(text):
        raise PlanError(f"circuits: {entries} routing-table entries in {cells} cells for {len(text)} characters "
                        f"of a columnar circuits file, which expands to at most {MAX_ROUTE_EXPANSION} of each "
                        "per character (write it as ocsplan.circuits/1)")
    return text


# -- reader ---------------------------------------------------------------------------


Fail = Callable[[str, str], PlanError]


def _get(data: object, key: str, where: str, fail: Fail) -> Any:
    if not isinstance(data, Mapping):
        raise fail(where, f"expected an object, got {type(data).__name__}")
    if key not in data:
        raise fail(f"{where}.{key}", "missing")
    return data[key]


def _column(data: object, key: str, where: str, fail: Fail, length: int | None,
            low: int = -1, high: int = _MAX_INT) -> list[int]:
    """The integer column ``key`` of ``length`` entries (any length when None), each in [low, high]."""
    return _ints(_get(data, key, where, fail), f"{where}.{key}", fail, length, low, high)


def _ints(value: object, field: str, fail: Fail, length: int | None, low: int = -1,
          high: int = _MAX_INT) -> list[int]:
    """A list of ``length`` integers (any length when None), each in [low, high], checked at C speed."""
    if not isinstance(value, list):
        raise fail(field, f"expected a list of integers, got {type(value).__name__}")
    if length is not None and len(value) != length:
        raise fail(field, f"{len(value)} entries, expected {length}")
    if not set(map(type, value)) <= {int}:
        i = next(i for i, v in enumerate(value) if type(v) is not int)
        raise fail(f"{field}[{i}]", f"expected an integer, got {repr(value[i])[:40]}")
    if value and (min(value) < low or max(value) > high):
        i = next(i for i, v in enumerate(value) if not low <= v <= high)
        shown = v if (v := value[i]).bit_length() <= 64 else f"an integer of {v.bit_length()} bits"
        raise fail(f"{field}[{i}]", f"must be between {low} and {high}, got {shown}")
    return value


def _top(data: Mapping[str, Any], key: str, fail: Fail, kind: type = dict) -> Any:
    """A top-level body: an object (or a list)."""
    if key not in data:
        raise fail(key, "missing")
    if not isinstance(data[key], kind):
        raise fail(key, f"expected {'a list' if kind is list else 'an object'}, got {type(data[key]).__name__}")
    return data[key]


def _strings(data: object, key: str, where: str, fail: Fail) -> list[str]:
    field = f"{where}.{key}"
    value = _get(data, key, where, fail)
    if not isinstance(value, list) or not set(map(type, value)) <= {str}:
        raise fail(field, "expected a list of strings")
    return value


def _mode(data: object, where: str, fail: Fail, derived: str, columns: tuple[str, ...]) -> bool:
    """True if the object derives its table (``from`` = ``derived``), False if it has the columns;
    either way no key of the other kind."""
    how = _get(data, "from", where, fail)
    if how not in (derived, "columns"):
        raise fail(f"{where}.from", f"expected {derived!r} or 'columns', got {str(how)[:40]!r}")
    assert isinstance(data, Mapping)
    if how == derived and (extra := sorted(set(columns) & set(data))):
        raise fail(f"{where}.{extra[0]}", f"a column where {where} is from {derived}")
    return bool(how == derived)


def _split(values: Sequence[Any], counts: Sequence[int]) -> list[tuple[Any, ...]]:
    """``values`` cut into consecutive tuples of ``counts`` items (sum(counts) == len(values))."""
    ends = list(accumulate(counts))
    return [tuple(values[end - n:end]) for n, end in zip(counts, ends, strict=True)]


class _Route:
    """One route's checked parts, expanded only once every route is checked."""

    def __init__(self, r: object, where: str, fail: Fail) -> None:
        self.raw = r
        self.where = where
        self.nodes = check_int(_get(r, "nodes", where, fail), fail, f"{where}.nodes", 0, MAX_WORLD)
        self.phases = check_int(_get(r, "phases", where, fail), fail, f"{where}.phases", 0, MAX_ROUTE_ENTRIES)
        rows = _get(r, "rows", where, fail)
        if not isinstance(rows, list):
            raise fail(f"{where}.rows", "expected a list of rows")
        self.rows: list[tuple[tuple[int, tuple[int, ...]], ...]] = []
        for i, row in enumerate(rows):
            here = f"{where}.rows[{i}]"
            if not isinstance(row, list):
                raise fail(here, "expected a list of [peer XOR node, ports]")
            entries = []
            for j, entry in enumerate(row):
                if not (isinstance(entry, list) and len(entry) == 2):
                    raise fail(f"{here}[{j}]", "expected [peer XOR node, ports]")
                d = check_int(entry[0], fail, f"{here}[{j}][0]", 0, _MAX_INT - 1)
                ports = _ints(entry[1], f"{here}[{j}][1]", fail, None)
                entries.append((d, tuple(ports)))
            self.rows.append(tuple(entries))
        runs = _get(r, "runs", where, fail)
        if not isinstance(runs, list):
            raise fail(f"{where}.runs", "expected a list of [row, cells]")
        self.cells = self.nodes * self.phases
        self.runs: list[tuple[int, int]] = []
        self.entries = done = 0
        for i, run in enumerate(runs):
            here = f"{where}.runs[{i}]"
            if not (isinstance(run, list) and len(run) == 2):
                raise fail(here, "expected [row, cells]")
            row = check_int(run[0], fail, f"{here}[0]", 0, len(self.rows) - 1)
            cells = check_int(run[1], fail, f"{here}[1]", 1, max(self.cells - done, 1))
            done += cells
            self.entries += cells * len(self.rows[row])
            self.runs.append((row, cells))
        if done != self.cells:
            raise fail(f"{where}.runs", f"cover {done} cells, expected nodes x phases = {self.cells}")

    def table(self) -> tuple[tuple[tuple[tuple[int, tuple[int, ...]], ...], ...], ...]:
        nodes = self.nodes
        table: list[list[tuple[tuple[int, tuple[int, ...]], ...]]] = [[()] * self.phases for _ in range(nodes)]
        at = 0
        for row, cells in self.runs:
            end = at + cells
            while at < end:  # one stretch of the run within one phase
                phase, x0 = divmod(at, nodes)
                x1 = min(nodes, x0 + end - at)
                entries = self.rows[row]
                if entries:
                    columns = [[(x ^ d, ports) for x in range(x0, x1)] for d, ports in entries]
                    for x, cell in zip(range(x0, x1), zip(*columns, strict=True), strict=True):
                        table[x][phase] = cell
                at += x1 - x0
        return tuple(map(tuple, table))


def circuits_from_columns(data: Mapping[str, Any], source: str = "<circuits>", size: int | None = None) -> Circuits:
    """Read a /2 circuits dict (as :func:`circuits_to_columns` writes it); PlanError naming the field
    if malformed, beyond a limit or with a key :data:`KEYS_2` does not know. ``size``, the characters
    of the file's text, bounds what its routing tables expand to
    (:data:`~ocsplan.limits.MAX_ROUTE_EXPANSION` entries and cells per character)."""

    def fail(field: str, message: str) -> PlanError:
        return PlanError(f"{source}: {field}: {message}")

    if data.get("schema") != SCHEMA_2:
        raise fail("schema", f"expected {SCHEMA_2!r}, got {str(data.get('schema'))[:80]!r}")
    strict_tree(data, KEYS_2, fail)
    with paused_gc(keep=True):
        try:
            head = header_from_dict(data)
        except (KeyError, TypeError, ValueError, IndexError, OverflowError) as exc:
            raise malformed(data, exc, source, "circuits-2") from None
        return bounded(Circuits(**head, **_bodies(data, fail, size)), source)


def _bodies(data: Mapping[str, Any], fail: Fail, size: int | None) -> dict[str, Any]:
    """Every check first (counts, lengths, indices, ranges, expanded sizes), then the build."""
    strings = _top(data, "strings", fail)
    labels, scopes, ids = (_strings(strings, key, "strings", fail) for key in ("labels", "scopes", "devices"))
    # circuits
    body = _top(data, "circuits", fail)
    count = check_int(_get(body, "count", "circuits", fail), fail, "circuits.count", 0, MAX_COLUMNAR_CIRCUITS)
    col = {key: _column(body, key, "circuits", fail, count) for key in ("a", "a_port", "b", "b_port")}
    label = _column(body, "label", "circuits", fail, count, 0, len(labels) - 1)
    scope = _column(body, "scope", "circuits", fail, count, 0, len(scopes) - 1)
    stages = _column(body, "stages", "circuits", fail, count, 0)
    hops = sum(stages)
    hop_device = _column(body, "hop_device", "circuits", fail, None, 0, len(ids) - 1)
    if len(hop_device) != hops:
        raise fail("circuits.hop_device", f"{len(hop_device)} entries, expected sum(stages) = {hops}")
    enter, leave = (_column(body, key, "circuits", fail, hops) for key in ("hop_enter", "hop_leave"))
    # nodes
    nodes_body = _top(data, "nodes", fail)
    world = check_int(_get(nodes_body, "count", "nodes", fail), fail, "nodes.count", 0, MAX_WORLD)
    node_columns: dict[str, list[int]] = {}
    if _mode(nodes_body, "nodes", fail, "circuits", _NODE_COLUMNS):
        for key in ("a", "b"):
            if col[key] and not (min(col[key]) >= 0 and max(col[key]) < world):
                i = next(i for i, v in enumerate(col[key]) if not 0 <= v < world)
                raise fail(f"circuits.{key}[{i}]", f"not a node of nodes.count = {world} (nodes from circuits)")
    else:
        per_node = _column(nodes_body, "ports", "nodes", fail, world, 0)
        entries = sum(per_node)
        node_columns = {key: _column(nodes_body, key, "nodes", fail, entries) for key in ("port", "peer", "peer_port")}
        node_columns["label"] = _column(nodes_body, "label", "nodes", fail, entries, 0, len(labels) - 1)
        node_columns["ports"] = per_node
    # devices
    dev = _top(data, "devices", fail)
    devices = check_int(_get(dev, "count", "devices", fail), fail, "devices.count", 0, MAX_COLUMNAR_BYTES)
    dcol = {key: _column(dev, key, "devices", fail, devices) for key in _DEVICE_COLUMNS if key != "id"}
    dcol["id"] = _column(dev, "id", "devices", fail, devices, 0, len(ids) - 1)
    connects = _get(dev, "cross_connects", "devices", fail)
    cc_columns: dict[str, list[int]] = {}
    if not _mode(connects, "devices.cross_connects", fail, "paths", ("count", "a", "b")):
        cc_count = _column(connects, "count", "devices.cross_connects", fail, devices, 0)
        pairs = sum(cc_count)
        cc_columns = {key: _column(connects, key, "devices.cross_connects", fail, pairs) for key in ("a", "b")}
        cc_columns["count"] = cc_count
    # routes: every one checked, the cells and entries of all of them bounded, before any is expanded
    raw_routes = _top(data, "routes", fail, list)
    routes = [_Route(r, f"routes[{i}]", fail) for i, r in enumerate(raw_routes)]
    cells = sum(r.cells for r in routes)
    entries_all = sum(r.entries for r in routes)
    if max(cells, entries_all) > MAX_ROUTE_ENTRIES:
        raise fail("routes", f"{entries_all} routing-table entries in {cells} cells, the limit is "
                   f"{MAX_ROUTE_ENTRIES} of each")
    if size is not None and max(cells, entries_all) > MAX_ROUTE_EXPANSION * size:
        raise fail("routes", f"{entries_all} routing-table entries in {cells} cells from {size} characters, "
                   f"the limit is {MAX_ROUTE_EXPANSION} of each per character of the file")
    heads = [_route_head(r.raw, r.where, fail) for r in routes]
    # the build
    hop_list = list(map(Hop, map(ids.__getitem__, hop_device), enter, leave))
    paths = _split(hop_list, stages)
    circuits = tuple(map(Circuit, col["a"], col["a_port"], col["b"], col["b_port"], map(labels.__getitem__, label),
                         map(scopes.__getitem__, scope), paths))
    if node_columns:
        flat = list(map(NodePort, node_columns["port"], node_columns["peer"], node_columns["peer_port"],
                        map(labels.__getitem__, node_columns["label"])))
        nodes = tuple(_split(flat, node_columns["ports"]))
    else:
        derived = _node_table(circuits, world)
        assert derived is not None  # every end was checked to be a node above
        nodes = derived
    id_list = [ids[i] for i in dcol["id"]]
    if cc_columns:
        cross = _split(list(zip(cc_columns["a"], cc_columns["b"], strict=True)), cc_columns["count"])
    else:
        cross = _cross_connects(circuits, id_list)
    return {
        "nodes": nodes,
        "circuits": circuits,
        "devices": tuple(map(Device, id_list, dcol["level"], dcol["rail"], dcol["index"], dcol["radix"], cross)),
        "routes": tuple(Route(*head, r.table()) for head, r in zip(heads, routes, strict=True)),
    }


def _route_head(r: object, where: str, fail: Fail) -> tuple[str, int, int, str, str, int, tuple[int, ...]]:
    """mesh, axis, demand, collective, schedule, multiplicity and bits of a route."""

    def text(key: str) -> str:
        value = _get(r, key, where, fail)
        if not isinstance(value, str):
            raise fail(f"{where}.{key}", f"expected a string, got {repr(value)[:40]}")
        return value

    def integer(key: str) -> int:
        return check_int(_get(r, key, where, fail), fail, f"{where}.{key}", -1, _MAX_INT)

    return (text("mesh"), integer("axis"), integer("demand"), text("collective"), text("schedule"),
            integer("multiplicity"), tuple(_column(r, "bits", where, fail, None)))
