"""The OCS export (deploy/ocs.py) read back by a reader that shares nothing with its writer:
csv, json and networkx's GraphML reader over the files, against the circuits JSON read as plain
JSON. Every circuit is walked from one accelerator to the other over cables and cross-connects
alone, so a controller and a technician holding these files rebuild the same light paths."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from ocsplan.deploy.ocs import ocs_files
from ocsplan.instance import load_instance
from ocsplan.planning.heuristic import plan_heuristic
from ocsplan.realization.circuits import dumps_circuits
from ocsplan.realization.fabrics import load_fabric
from ocsplan.realization.realize import realize

from .conftest import ROOT, instance_path

FABRICS = ROOT / "simulate" / "fabrics"


@pytest.fixture(scope="module", params=[("paper-multimesh-n256", "nvl576-all-ocs"),
                                        ("paper-multimesh-n256", "ocs-single"),
                                        ("paper-table7-ring-single", "ocs-single")])
def exported(request: pytest.FixtureRequest) -> tuple[dict[str, Any], dict[str, str]]:
    name, fabric = request.param
    plan = plan_heuristic(load_instance(instance_path(name)))
    circuits = realize(plan, load_fabric(FABRICS / f"{fabric}.toml"))
    return json.loads(dumps_circuits(circuits)), ocs_files(circuits)


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_devices_csv_and_json_agree_and_hold_every_hop(exported: tuple[dict[str, Any], dict[str, str]]) -> None:
    raw, files = exported
    listed = json.loads(files["cross-connects.json"])
    assert listed["schema"] == "ocsplan.ocs-export/1"
    assert sorted(d["id"] for d in listed["devices"]) == sorted(d["id"] for d in raw["devices"])
    pairs: dict[str, set[tuple[int, int]]] = {}
    for device in listed["devices"]:
        rows = [(int(r["in_port"]), int(r["out_port"])) for r in _rows(files[f"devices/{device['id']}.csv"])]
        assert rows == sorted(rows) and [list(r) for r in rows] == device["cross_connects"]
        assert all(a < b < device["radix"] for a, b in rows)
        pairs[device["id"]] = set(rows)
        ports = [p for r in rows for p in r]
        assert len(ports) == len(set(ports))  # a port is in at most one cross-connect
    hops = [(h[0], min(h[1], h[2]), max(h[1], h[2])) for c in raw["circuits"] for h in c["path"]]
    assert sum(map(len, pairs.values())) == len(hops)
    for device, a, b in hops:
        assert (a, b) in pairs[device]


def test_every_circuit_walks_over_cables_and_cross_connects(exported: tuple[dict[str, Any], dict[str, str]]) -> None:
    raw, files = exported
    cables = _rows(files["cabling.csv"])
    assert len(cables) == sum(len(c["path"]) + 1 for c in raw["circuits"])
    end_of: dict[tuple[str, str, int], tuple[str, str, int]] = {}
    for row in cables:
        a, b = (row["a_kind"], row["a"], int(row["a_port"])), (row["b_kind"], row["b"], int(row["b_port"]))
        assert a not in end_of and b not in end_of  # one cable per port
        end_of[a], end_of[b] = b, a
    cross: dict[tuple[str, int], int] = {}
    for device in json.loads(files["cross-connects.json"])["devices"]:
        for p, q in device["cross_connects"]:
            cross[(device["id"], p)], cross[(device["id"], q)] = q, p
    accelerator = raw["placement"]["accelerator"]
    for circuit in raw["circuits"]:
        here = ("accelerator", str(accelerator[circuit["a"][0]]), circuit["a"][1])
        stages = 0
        while True:
            there = end_of[here]
            if there[0] == "accelerator":
                break
            here = (there[0], there[1], cross[(there[1], there[2])])
            stages += 1
        assert there == ("accelerator", str(accelerator[circuit["b"][0]]), circuit["b"][1])
        assert stages == len(circuit["path"])
    racks = {row["a_rack"] for row in cables if row["a_kind"] == "accelerator"}
    size = raw["fabric"]["rack_size"]
    assert racks <= {str(acc // size) for acc in accelerator}


def _bits_mask(bits: list[int]) -> int:
    return sum(1 << b for b in bits)


def test_graphml_is_each_axis_host_graph(exported: tuple[dict[str, Any], dict[str, str]]) -> None:
    raw, files = exported
    index = json.loads(files["index.json"])
    multiplicity = {g["generator"]: g["multiplicity"] for g in raw["generators"]}
    bits = {(r["mesh"], r["axis"]): _bits_mask(r["bits"]) for r in raw["routes"]}
    assert set(index["graphs"]) == {f"{m}.{a}.graphml" for m, a in bits}
    for (mesh, axis), mask in bits.items():
        graph = nx.read_graphml(io.BytesIO(files[f"{mesh}.{axis}.graphml"].encode()), force_multigraph=True)
        assert graph.number_of_edges() == index["graphs"][f"{mesh}.{axis}.graphml"]
        degree: Counter[str] = Counter()
        for u, v, data in graph.edges(data=True):
            assert data["multiplicity"] == multiplicity[data["generator"]]
            if not data["generator"].startswith("ring:"):  # a mask: the support rule (inside the axis's bits)
                assert int(data["generator"], 2) & ~mask == 0
            a, b = int(graph.nodes[u]["rank"]), int(graph.nodes[v]["rank"])
            assert (a ^ b) & ~mask == 0  # both ends in one group of the axis
            degree[u] += 1
            degree[v] += 1
            assert data["hops"] >= 1
        for _, attrs in graph.nodes(data=True):
            assert attrs["accelerator"] == raw["placement"]["accelerator"][attrs["rank"]]
            assert attrs["rack"] == attrs["accelerator"] // raw["fabric"]["rack_size"]
        assert len(set(degree.values())) == 1  # a Cayley (or ring) host graph is regular


def test_index_counts(exported: tuple[dict[str, Any], dict[str, str]]) -> None:
    raw, files = exported
    index = json.loads(files["index.json"])
    assert index["files"] == sorted(files)
    assert index["counts"] == {"devices": len(raw["devices"]), "circuits": len(raw["circuits"]),
                               "cross_connects": sum(len(c["path"]) for c in raw["circuits"]),
                               "cables": sum(len(c["path"]) + 1 for c in raw["circuits"])}


def test_the_export_is_deterministic(tmp_path: Path) -> None:
    plan = plan_heuristic(load_instance(instance_path("paper-multimesh-n256")))
    circuits = realize(plan, load_fabric(FABRICS / "nvl576-all-ocs.toml"))
    assert ocs_files(circuits) == ocs_files(realize(plan, load_fabric(FABRICS / "nvl576-all-ocs.toml")))


def test_index_holds_to_its_schema(exported: tuple[dict[str, Any], dict[str, str]]) -> None:
    import jsonschema

    schema = json.loads((ROOT / "src" / "ocsplan" / "schemas" / "ocs-export-1.json").read_text())
    _, files = exported
    index = json.loads(files["index.json"])
    jsonschema.Draft202012Validator(schema).validate(index)
    index["counts"]["cables"] = -1
    assert not jsonschema.Draft202012Validator(schema).is_valid(index)
