"""The independent checker catches broken MSCCL XML: a dropped step, a changed peer,
a wrong offset, a missing dependency, a non-neighbour peer."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable

import pytest

from ocsplan.cayley import Topology
from ocsplan.deploy import CheckError, check_xml, program_xml
from ocsplan.schedules import SCHEDULES

TOPO = Topology(3, frozenset({1, 2, 4}))
PAYLOAD = 1 << 20


def _xml(name: str) -> tuple[str, object]:
    program = SCHEDULES[name].build(TOPO, PAYLOAD)
    return program_xml(program, name), program.unit


def _steps(root: ET.Element, kind: str) -> list[tuple[ET.Element, ET.Element, ET.Element]]:
    return [(gpu, tb, st) for gpu in root.findall("gpu") for tb in gpu.findall("tb")
            for st in tb.findall("step") if st.get("type") == kind]


def drop_step(root: ET.Element) -> None:
    _, tb, st = _steps(root, "s")[-1]
    tb.remove(st)


def change_peer(root: ET.Element) -> None:
    gpu = root.findall("gpu")[0]
    for tb in gpu.findall("tb"):
        if tb.get("send") == "1":
            tb.set("send", "2")  # a neighbour, but not the one the schedule pairs
            return
    raise AssertionError("no send threadblock to peer 1")


def non_neighbour(root: ET.Element) -> None:
    for tb in root.findall("gpu")[0].findall("tb"):
        if tb.get("send") == "1":
            tb.set("send", "3")  # 0 XOR 3 is no generator of Q3
            return
    raise AssertionError("no send threadblock to peer 1")


def wrong_offset(root: ET.Element) -> None:
    _, _, st = _steps(root, "s")[0]
    st.set("srcoff", str(int(st.get("srcoff", "0")) + 1))


def missing_dependency(root: ET.Element) -> None:
    """Drop the waits of the threadblock that forwards data it receives elsewhere: its first
    send of a phase waits on a receive or on the phase join (a ``cpy`` of 0 chunks that waits
    for the previous phase); through a nop or an earlier step, so all waits go."""
    for gpu in root.findall("gpu"):
        tbs = gpu.findall("tb")
        for tb in tbs:
            steps = tb.findall("step")
            for st in steps:
                if st.get("type") != "s" or st.get("depid") == "-1":
                    continue
                dep = tbs[int(st.get("depid", "0"))].findall("step")[int(st.get("deps", "0"))]
                if dep.get("type") in ("r", "rrc") or (dep.get("type"), dep.get("cnt")) == ("cpy", "0"):
                    for other in steps:
                        other.set("depid", "-1")
                        other.set("deps", "-1")
                    return
    raise AssertionError("no send waiting on a receive")


MUTATIONS: list[Callable[[ET.Element], None]] = [drop_step, change_peer, non_neighbour, wrong_offset,
                                                 missing_dependency]


@pytest.mark.parametrize("name", ["recursive-doubling", "rs-ag", "layered", "bruck"])
def test_unmutated_file_passes(name: str) -> None:
    text, unit = _xml(name)
    check_xml(text, name, TOPO.gens, 0, unit)  # type: ignore[arg-type]


@pytest.mark.parametrize("mutate", MUTATIONS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("name", ["recursive-doubling", "rs-ag", "layered", "bruck"])
def test_mutation_caught(name: str, mutate: Callable[[ET.Element], None]) -> None:
    text, unit = _xml(name)
    root = ET.fromstring(text)
    mutate(root)
    with pytest.raises(CheckError):
        check_xml(ET.tostring(root, encoding="unicode"), name, TOPO.gens, 0, unit)  # type: ignore[arg-type]


def test_not_xml_is_one_line() -> None:
    with pytest.raises(CheckError, match="not XML"):
        check_xml("<algo", "f.xml", TOPO.gens, 0, 1)  # type: ignore[arg-type]
