"""The independent validator: good files pass, each kind of corruption is named."""

from __future__ import annotations

import ast
import copy
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from ocsplan.realization.circuits import circuits_from_dict, circuits_to_dict
from ocsplan.realization.realize import realize
from ocsplan.realization.validate import Fault, validate

from .realize_cases import small_fabric, small_plan


@cache
def _good() -> dict[str, Any]:
    return circuits_to_dict(realize(small_plan(), small_fabric()))


def _faults(data: dict[str, Any], with_plan: bool = True) -> list[str]:
    return [str(f) for f in validate(circuits_from_dict(data), small_plan() if with_plan else None)]


def _circuit(data: dict[str, Any], generator: str, scope: str) -> tuple[int, dict[str, Any]]:
    return next((i, c) for i, c in enumerate(data["circuits"]) if c["generator"] == generator and c["scope"] == scope)


def test_a_realization_validates() -> None:
    assert _faults(copy.deepcopy(_good())) == []
    assert _faults(copy.deepcopy(_good()), with_plan=False) == []


def test_port_used_twice() -> None:
    data = copy.deepcopy(_good())
    _, circ = _circuit(data, "000001", "intra-rack")
    node, port = circ["a"]
    other = next(e[0] for e in data["nodes"][node] if e[0] != port)
    circ["a"][1] = other
    assert any(line.startswith(f"node {node}, port {other}: port used twice") for line in _faults(data))


def test_wrong_peer() -> None:
    data = copy.deepcopy(_good())
    _, circ = _circuit(data, "000010", "intra-rack")
    node, port = circ["a"]
    circ["b"][0] = node ^ 0b000100  # a real neighbour, but over generator 000100
    assert any(
        line.startswith(f"node {node}, port {port}: wrong peer: generator 000010 joins node {node ^ 4}")
        for line in _faults(data)
    )


def test_missing_circuit_for_a_schedule_edge() -> None:
    # Remove one circuit of generator 001000, which the all-reduce of axis 0 (bits 5..3)
    # sends on, consistently: circuit list, node table and its cross-connects.
    data = copy.deepcopy(_good())
    i, circ = _circuit(data, "001000", "inter-rack")
    del data["circuits"][i]
    (a, pa), (b, pb) = circ["a"], circ["b"]
    data["nodes"][a] = [e for e in data["nodes"][a] if e[0] != pa]
    data["nodes"][b] = [e for e in data["nodes"][b] if e[0] != pb]
    hops = {(dev, min(x, y), max(x, y)) for dev, x, y in circ["path"]}
    for d in data["devices"]:
        d["cross_connects"] = [p for p in d["cross_connects"] if (d["id"], min(p), max(p)) not in hops]
    faults = _faults(data)
    assert any(
        line.startswith(
            f"node {a}, port {pa}: missing circuit: coset-factored-parallel (mesh m axis 0 "
            f"demand 0) sends to node {b} over generator 001000"
        )
        for line in faults
    )
    # without the plan, the multiplicity check still catches it
    assert any(
        line.startswith(f"node {a}, port {pa}: generator 001000 joins it to node {b} by 0 circuit(s)")
        for line in _faults(data, with_plan=False)
    )


def test_non_matching_cross_connect() -> None:
    data = copy.deepcopy(_good())
    device = next(
        d
        for d in data["devices"]
        if d["level"] == 1 and len(d["cross_connects"]) >= 2 and all(max(p) < 8 for p in d["cross_connects"][:2])
    )
    (p, _), (r, _) = device["cross_connects"][:2]
    device["cross_connects"][0] = [p, r]  # port r now appears in two cross-connects
    rail, rack = device["rail"], device["index"]
    node = data["placement"]["accelerator"].index(rack * 8 + r)
    assert any(
        line.startswith(f"node {node}, port {rail}: device {device['id']} port {r}: not a matching")
        for line in _faults(data)
    )


def test_route_on_a_port_without_its_peer() -> None:
    data = copy.deepcopy(_good())
    route = data["routes"][0]
    peer, ports = route["table"][5][0][0]
    ports[0] = (ports[0] + 1) % 8
    assert any(
        line.startswith(f"node 5, port {ports[0]}: ") and f"sends to node {peer} on this port" in line
        for line in _faults(data)
    )


def test_recorded_path_must_match_the_cross_connects() -> None:
    data = copy.deepcopy(_good())
    _, circ = _circuit(data, "100000", "inter-rack")
    circ["path"][1][0] = circ["path"][1][0][:-1] + "3" if circ["path"][1][0][-1] != "3" else "L2.k00.d00"
    node, port = circ["a"]
    assert any(line.startswith(f"node {node}, port {port}: recorded path") for line in _faults(data))


def test_generators_must_match_the_plan() -> None:
    data = copy.deepcopy(_good())
    data["plan"]["generators"][0][1] = 2
    assert "generators or multiplicities differ from the plan" in _faults(data)


def test_fault_lines() -> None:
    assert str(Fault("x", 3, 4)) == "node 3, port 4: x"
    assert str(Fault("x", 3)) == "node 3, port -: x"
    assert str(Fault("y", None, 7, "L2.k00.d01")) == "device L2.k00.d01, port 7: y"


def test_validator_shares_only_data_classes_and_the_reader() -> None:
    # independence from the realizer: the validator's modules (validate.py, its faults and
    # its checks against the plan) may import the data classes and reader (circuits), the
    # plan and schedules they check against, the mask helpers and each other; for stacked
    # plans the circulant graph and its schedules (not the stacked realizer); the error
    # classes and the garbage collector's pause
    folder = Path(__file__).resolve().parent.parent / "src" / "ocsplan" / "realization"
    imported = {node.module for name in ("validate.py", "fault.py", "plan_check.py")
                for node in ast.walk(ast.parse((folder / name).read_text())) if isinstance(node, ast.ImportFrom)}
    assert "plan_check" in imported  # the walk reads the modules it names
    assert imported <= {"__future__", "collections", "collections.abc", "dataclasses", "cayley", "circuits",
                        "plan", "schedules", "schedules.circulant", "circulant", "fault", "plan_check",
                        "errors", "gcpause"}


@pytest.mark.parametrize("key", ["circuits", "nodes"])
def test_malformed_files_raise_plan_error(key: str) -> None:
    from ocsplan.errors import PlanError

    data = copy.deepcopy(_good())
    data[key] = [[["x"]]] if key == "nodes" else [{"a": [0]}]
    with pytest.raises(PlanError, match="malformed circuits file"):
        circuits_from_dict(data, "c.json")
