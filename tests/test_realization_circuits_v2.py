"""The columnar circuits file ``ocsplan.circuits/2``: round trips beside /1, an independent reader,
the writer's choice of format, its schema and its bounded reader on hostile input."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

from ocsplan.cli import app
from ocsplan.deploy.repair import repair
from ocsplan.errors import PlanError
from ocsplan.instance import Axis, Budget, Demand, Instance, Mesh
from ocsplan.plan import write_plan
from ocsplan.planning.stacked import plan_stacked
from ocsplan.realization.circuits import (
    Circuits,
    NodePort,
    circuits_to_columns,
    dumps_circuits,
    load_circuits,
    loads_circuits,
)
from ocsplan.realization.realize import realize
from ocsplan.schemas import schema

from .realize_cases import SMALL_FABRIC, fabric, named_plan, small_fabric, small_plan

CASES = ("table6-ocs-single", "table6-nvl576", "megatron-nvl576", "ring", "two-level", "stacked", "repaired",
         "columns")


@cache
def case(name: str) -> Circuits:
    """Realizations of several kinds; "columns" is the two-level one with a node table and cross-connects
    the circuits do not give (so /2 writes them as columns)."""
    if name.startswith("table6"):
        return realize(named_plan("paper-multimesh-n256"), fabric("ocs-single" if name.endswith("single")
                                                                  else "nvl576-all-ocs"))
    if name == "megatron-nvl576":
        return realize(named_plan("megatron-5t-n512-b1"), fabric("nvl576-all-ocs"))
    if name == "ring":
        return realize(named_plan("paper-table7-ring-single"), fabric("ocs-single"))
    if name == "two-level":
        return realize(small_plan(), small_fabric())
    if name == "stacked":
        axes = tuple(Axis(size, (Demand("all-reduce", 8000, 1.0),)) for size in (8, 72))
        plan = plan_stacked(Instance("s", Budget(576, 16, 0.52e-6, 5e10), (Mesh("mesh", (8, 72), axes),)))
        return realize(plan, fabric("nvl576-all-ocs-serve576"))
    if name == "repaired":
        return repair(case("two-level"), small_fabric(), (17,)).circuits
    assert name == "columns"
    c = case("two-level")
    nodes = list(c.nodes)
    nodes[3] = tuple(reversed(nodes[3]))  # not sorted by port
    nodes[5] = (NodePort(nodes[5][0].port, 1, 2, "extra"), *nodes[5][1:])  # a label no circuit has
    devices = list(c.devices)
    first = devices[0]
    devices[0] = replace(first, cross_connects=tuple((b, a) for a, b in first.cross_connects))  # higher port first
    return replace(c, nodes=tuple(nodes), devices=tuple(devices))


# -- an independent reader: json and plain Python only, nothing of ocsplan ---------------------------


def expand(doc: dict[str, Any]) -> dict[str, Any]:
    """The /1 dict of a /2 dict, as docs/formats.md describes /2."""
    out = {key: doc[key] for key in ("plan", "fabric", "placement", "ports_used", "reserved_ports", "counts",
                                     "notes", "generators")}
    out["schema"] = "ocsplan.circuits/1"
    labels, scopes, ids = doc["strings"]["labels"], doc["strings"]["scopes"], doc["strings"]["devices"]
    col = doc["circuits"]
    circuits = []
    hop = 0
    for i in range(col["count"]):
        path = []
        for _ in range(col["stages"][i]):
            path.append([ids[col["hop_device"][hop]], col["hop_enter"][hop], col["hop_leave"][hop]])
            hop += 1
        circuits.append({"a": [col["a"][i], col["a_port"][i]], "b": [col["b"][i], col["b_port"][i]],
                         "generator": labels[col["label"][i]], "scope": scopes[col["scope"][i]], "path": path})
    assert hop == len(col["hop_device"])
    out["circuits"] = circuits
    table = doc["nodes"]
    nodes: list[list[list[Any]]] = [[] for _ in range(table["count"])]
    if table["from"] == "circuits":
        for x in circuits:
            (a, pa), (b, pb) = x["a"], x["b"]
            nodes[a].append([pa, b, pb, x["generator"]])
            nodes[b].append([pb, a, pa, x["generator"]])
        nodes = [sorted(node, key=lambda e: e[0]) for node in nodes]
    else:
        at = 0
        for n, count in enumerate(table["ports"]):
            for k in range(at, at + count):
                nodes[n].append([table["port"][k], table["peer"][k], table["peer_port"][k], labels[table["label"][k]]])
            at += count
    out["nodes"] = nodes
    dev = doc["devices"]
    cross = dev["cross_connects"]
    devices = []
    at = 0
    for i in range(dev["count"]):
        ident = ids[dev["id"][i]]
        if cross["from"] == "paths":
            pairs = sorted([min(h[1], h[2]), max(h[1], h[2])] for x in circuits for h in x["path"] if h[0] == ident)
        else:
            pairs = [[cross["a"][k], cross["b"][k]] for k in range(at, at + cross["count"][i])]
            at += cross["count"][i]
        devices.append({"id": ident, "level": dev["level"][i], "rail": dev["rail"][i], "index": dev["index"][i],
                        "radix": dev["radix"][i], "cross_connects": pairs})
    out["devices"] = devices
    routes = []
    for r in doc["routes"]:
        grid: list[list[Any]] = [[None] * r["phases"] for _ in range(r["nodes"])]
        cell = 0
        for row, run in r["runs"]:
            for _ in range(run):
                phase, x = divmod(cell, r["nodes"])
                grid[x][phase] = [[x ^ d, ports] for d, ports in r["rows"][row]]
                cell += 1
        assert cell == r["nodes"] * r["phases"]
        routes.append({**{k: r[k] for k in ("mesh", "axis", "demand", "collective", "schedule", "multiplicity",
                                             "bits", "phases")}, "table": grid})
    out["routes"] = routes
    return out


# -- round trips -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", CASES)
def test_v2_reads_as_v1_and_the_independent_reader_agrees(name: str) -> None:
    """load(/2) == load(/1) == the realization; the independent expansion of the /2 file is the /1 file;
    /2 validates against its schema; "columns" takes the explicit columns, the others derive."""
    c = case(name)
    v1, v2 = dumps_circuits(c, "1"), dumps_circuits(c, "2")
    assert loads_circuits(v2, "c2.json") == loads_circuits(v1, "c1.json") == c
    doc = json.loads(v2)
    assert doc["schema"] == "ocsplan.circuits/2" and list(doc)[:9] == list(json.loads(v1))[:9]
    assert expand(doc) == json.loads(v1)
    jsonschema.validate(doc, schema("circuits-2"))
    derived = (doc["nodes"]["from"], doc["devices"]["cross_connects"]["from"])
    assert derived == (("columns", "columns") if name == "columns" else ("circuits", "paths"))
    assert len(v2) < len(v1)


def test_cayley_tables_are_one_run_per_phase() -> None:
    """The Cayley schedules of Table 6 give each phase one row for every node: one run per phase."""
    doc = circuits_to_columns(case("table6-ocs-single"))
    assert doc["routes"] and all(len(r["runs"]) == r["phases"] for r in doc["routes"])


@cache
def bench(n: int) -> Circuits:
    import sys

    from .conftest import ROOT

    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from bench_scale import fabric as bench_fabric
        from bench_scale import megatron
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    from ocsplan.planning.heuristic import plan_heuristic

    inst = megatron(n)
    return realize(plan_heuristic(inst), bench_fabric(inst.budget.world, inst.budget.ports))


@pytest.mark.slow
def test_bench_scale_at_4096_is_written_as_v2(tmp_path: Path) -> None:
    """scripts/bench_scale.py's instance at N = 4096 (77,824 circuits, beyond /1's 65,536): the one writer
    picks /2, /1 is refused, the file reads back equal, and the independent reader gives what /1 would hold."""
    from ocsplan.realization.circuits import circuits_to_dict, write_circuits

    c = bench(12)
    assert len(c.circuits) == 77824
    with pytest.raises(PlanError, match="a circuits file holds at most 65536"):
        dumps_circuits(c, "1")
    path = tmp_path / "c.json"
    write_circuits(c, path)
    doc = json.loads(path.read_text())
    assert doc["schema"] == "ocsplan.circuits/2"
    assert load_circuits(path) == c
    assert expand(doc) == json.loads(json.dumps(circuits_to_dict(c)))


# -- the writer's choice -------------------------------------------------------------------------------


def test_auto_writes_v1_byte_for_byte_within_its_limits() -> None:
    for name in ("two-level", "table6-ocs-single"):
        assert dumps_circuits(case(name)) == dumps_circuits(case(name), "1")
        assert json.loads(dumps_circuits(case(name)))["schema"] == "ocsplan.circuits/1"
    with pytest.raises(ValueError, match="circuits format '3'"):
        dumps_circuits(case("two-level"), "3")


def test_auto_writes_v2_beyond_v1s_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Beyond /1's circuits or bytes, auto writes /2 and format "1" is refused; beyond /2's limits too,
    every format is refused before writing."""
    from ocsplan.realization.circuits import columnar, formats

    c = case("two-level")
    for name, value in (("MAX_CIRCUITS", 100), ("MAX_JSON_BYTES", 10_000)):
        with monkeypatch.context() as m:
            m.setattr(formats, name, value)
            assert json.loads(dumps_circuits(c))["schema"] == "ocsplan.circuits/2"
            with pytest.raises(PlanError, match="a circuits file holds at most"):
                dumps_circuits(c, "1")
    for name, value, message in (("MAX_COLUMNAR_CIRCUITS", 100, "256 circuits, a columnar circuits file holds"),
                                 ("MAX_ROUTE_ENTRIES", 100, "routing-table entries in"),
                                 ("MAX_COLUMNAR_BYTES", 10_000, "MiB of JSON, a columnar circuits file"),
                                 ("MAX_ROUTE_EXPANSION", 0, "expands to at most 0 of each per character")):
        with monkeypatch.context() as m:
            m.setattr(formats, "MAX_CIRCUITS", 100)
            m.setattr(columnar, name, value)
            for fmt in ("auto", "2"):
                with pytest.raises(PlanError, match=message):
                    dumps_circuits(c, fmt)


def test_ragged_tables_cannot_be_written_as_v2() -> None:
    c = case("two-level")
    r = c.routes[0]
    ragged = replace(r, table=(r.table[0][:-1], *r.table[1:]))
    with pytest.raises(PlanError, match=r"routes\[.*\]: nodes with different numbers of phases"):
        dumps_circuits(replace(c, routes=(ragged, *c.routes[1:])), "2")


def test_a_large_v2_file_is_read_with_v2s_limit(tmp_path: Path) -> None:
    """Beyond 32 MiB (padded with spaces) a file is read only if it begins as /2 does; /1 is refused unread."""
    from ocsplan.limits import MAX_JSON_BYTES

    c = case("two-level")
    pad = " " * (MAX_JSON_BYTES + 1)
    big2, big1 = tmp_path / "big2.json", tmp_path / "big1.json"
    big2.write_text(dumps_circuits(c, "2").rstrip().removesuffix("}") + pad + "}\n")
    big1.write_text(dumps_circuits(c, "1").rstrip().removesuffix("}") + pad + "}\n")
    assert load_circuits(big2) == c
    with pytest.raises(PlanError, match=f"^{big1}: larger than the limit of 32 MiB$"):
        load_circuits(big1)


# -- hostile input ---------------------------------------------------------------------------------------

Edit = Callable[[dict[str, Any]], None]


def _set(*path: Any) -> Callable[[Any], Edit]:
    def value(new: Any) -> Edit:
        def edit(doc: dict[str, Any]) -> None:
            at = doc
            for key in path[:-1]:
                at = at[key]
            at[path[-1]] = new(at[path[-1]]) if callable(new) else new
        return edit
    return value


HOSTILE: list[tuple[str, Edit, str]] = [
    ("truncated", _set("circuits", "a")(lambda v: v[:-1]), "circuits.a: 255 entries, expected 256"),
    ("count-beyond", _set("circuits", "count")(1 << 22), "circuits.count: must be between 0 and 2097152"),
    ("count-bool", _set("circuits", "count")(True), "circuits.count: expected an integer"),
    ("column-str", _set("circuits", "b")("zero"), "circuits.b: expected a list of integers, got str"),
    ("item-str", _set("circuits", "b_port", 3)("7"), "circuits.b_port[3]: expected an integer, got '7'"),
    ("item-float", _set("circuits", "a_port", 0)(1.5), "circuits.a_port[0]: expected an integer"),
    ("item-huge", _set("circuits", "a_port", 2)(10**30), "circuits.a_port[2]: must be between -1 and"),
    ("label-index", _set("circuits", "label", 0)(99), "circuits.label[0]: must be between 0 and"),
    ("device-index", _set("circuits", "hop_device", 1)(-1), "circuits.hop_device[1]: must be between 0 and"),
    ("stages-sum", _set("circuits", "stages", 0)(lambda v: v + 1), "circuits.hop_device: 512 entries, expected"),
    ("node-out", _set("nodes", "count")(8), "circuits.a[8]: not a node of nodes.count = 8"),
    ("nodes-from", _set("nodes", "from")("magic"), "nodes.from: expected 'circuits' or 'columns'"),
    ("nodes-mixed", _set("nodes", "ports")([1]), "nodes.ports: a column where nodes is from circuits"),
    ("nodes-world", _set("nodes", "count")(1 << 21), "nodes.count: must be between 0 and 1048576"),
    ("strings-type", _set("strings", "labels")([1]), "strings.labels: expected a list of strings"),
    ("strings-missing", lambda d: d.pop("strings"), "strings: missing"),
    ("devices-len", _set("devices", "radix")(lambda v: v[1:]), "devices.radix: 79 entries, expected 80"),
    ("cross-from", _set("devices", "cross_connects", "from")(None), "devices.cross_connects.from: expected"),
    ("runs-short", _set("routes", 0, "runs", 0, 1)(lambda v: v - 1), "routes[0].runs: cover"),
    ("runs-1e12", _set("routes", 0, "runs", 0, 1)(10**12), "routes[0].runs[0][1]: must be between 1 and"),
    ("runs-zero", _set("routes", 0, "runs", 0, 1)(0), "routes[0].runs[0][1]: must be between 1 and"),
    ("run-row", _set("routes", 0, "runs", 0, 0)(5000), "routes[0].runs[0][0]: must be between 0 and"),
    ("run-shape", _set("routes", 0, "runs", 0)({"row": 0}), "routes[0].runs[0]: expected [row, cells]"),
    ("row-xor", _set("routes", 0, "rows", 0, 0, 0)(-3), "routes[0].rows[0][0][0]: must be between 0 and"),
    ("row-ports", _set("routes", 0, "rows", 0, 0, 1)("x"), "routes[0].rows[0][0][1]: expected a list"),
    ("phases-huge", _set("routes", 0, "phases")(10**12), "routes[0].phases: must be between 0 and 67108864"),
    ("cells-beyond", lambda d: d["routes"][0].update(nodes=1 << 20, phases=1 << 10, runs=[[0, 1 << 30]]),
     "routes: "),
    ("route-mesh", _set("routes", 0, "mesh")(7), "routes[0].mesh: expected a string"),
    ("unknown-key", _set("circuits", "extra")([]), "circuits.extra: unknown key"),
    ("header", _set("plan", "world")("x"), "plan.world: "),
    ("routes-type", _set("routes")({}), "routes: expected a list, got dict"),
]


@pytest.mark.parametrize(("edit", "names"), [(e, n) for _, e, n in HOSTILE], ids=[i for i, _, _ in HOSTILE])
def test_hostile_v2_is_one_line_naming_the_field(edit: Edit, names: str) -> None:
    doc = json.loads(dumps_circuits(case("two-level"), "2"))
    edit(doc)
    with pytest.raises(PlanError) as info:
        loads_circuits(json.dumps(doc), "h.json")
    message = str(info.value)
    assert "\n" not in message and message.startswith("h.json: "), message
    assert names in message, message


def test_cells_beyond_the_limit_are_refused_before_any_table_is_built() -> None:
    """nodes x phases of all routes within MAX_ROUTE_ENTRIES, checked before the first table is expanded."""
    doc = json.loads(dumps_circuits(case("two-level"), "2"))
    r = doc["routes"][0]
    r.update(nodes=1 << 20, phases=1 << 6, runs=[[0, 1 << 26]])
    limit = r"^h.json: routes: \d+ routing-table entries in \d+ cells, the limit is 67108864 of each$"
    with pytest.raises(PlanError, match=limit):
        loads_circuits(json.dumps(doc), "h.json")


# -- the CLI ---------------------------------------------------------------------------------------------

runner = CliRunner()


def test_validate_and_schema_accept_v2(tmp_path: Path) -> None:
    """`ocsplan validate` reads a /2 file as it reads /1 (same verdict); `ocsplan schema circuits-2` prints it."""
    plan, spec, out = tmp_path / "plan.json", tmp_path / "fabric.toml", tmp_path / "c2.json"
    write_plan(small_plan(), plan)
    spec.write_text(SMALL_FABRIC)
    out.write_text(dumps_circuits(case("two-level"), "2"))
    result = runner.invoke(app, ["validate", str(out), "--plan", str(plan), "--fabric", str(spec)])
    assert result.exit_code == 0, result.output
    assert "valid: 64 nodes, 256 circuits" in result.stdout
    printed = runner.invoke(app, ["schema", "circuits-2"])
    assert printed.exit_code == 0 and json.loads(printed.output) == schema("circuits-2")


def test_realize_circuits_format_option(tmp_path: Path) -> None:
    """realize --circuits-format 2 writes /2 (read back as the realization); auto writes /1 here; a bad value
    is one line naming the option, exit 2."""
    plan, spec = tmp_path / "plan.json", tmp_path / "fabric.toml"
    write_plan(small_plan(), plan)
    spec.write_text(SMALL_FABRIC)
    for fmt, schema_name in (("2", "ocsplan.circuits/2"), ("auto", "ocsplan.circuits/1")):
        out = tmp_path / f"c-{fmt}.json"
        result = runner.invoke(app, ["realize", str(plan), "--fabric", str(spec), "--out", str(out),
                                     "--circuits-format", fmt])
        assert result.exit_code == 0, result.output
        assert json.loads(out.read_text())["schema"] == schema_name
        assert load_circuits(out) == replace(case("two-level"), fabric=replace(case("two-level").fabric,
                                                                                source=str(spec)))
    bad = runner.invoke(app, ["realize", str(plan), "--fabric", str(spec), "--out", str(tmp_path / "x.json"),
                              "--circuits-format", "3"])
    assert bad.exit_code == 2 and "--circuits-format: expected one of auto, 1, 2, got '3'" in bad.stderr
    assert not (tmp_path / "x.json").exists()


def test_validate_refuses_a_hostile_v2_in_one_line(tmp_path: Path) -> None:
    """A /2 file whose runs do not cover its table: exit 2, one line naming the file and the field."""
    doc = json.loads(dumps_circuits(case("two-level"), "2"))
    doc["routes"][0]["runs"][0][1] -= 1
    path = tmp_path / "bad2.json"
    path.write_text(json.dumps(doc))
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.stderr.strip().startswith(f"{path}: routes[0].runs: cover "), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
