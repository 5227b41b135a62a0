"""MSCCL export: every exportable schedule on cubes and folds runs correctly under the
independent checker and has the closed form's phases h and bytes per link v."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections import Counter
from fractions import Fraction

import pytest

from ocsplan.cayley import Topology
from ocsplan.deploy import MscclError, check_xml, program_xml
from ocsplan.schedules import SCHEDULES, closed_form

PAYLOAD = 1 << 20

TOPOLOGIES = [
    Topology(3, frozenset({1, 2, 4})),
    Topology(4, frozenset({1, 2, 4, 8})),
    Topology(4, frozenset({1, 2, 4, 8, 3, 12})),  # folded pairs
    Topology(5, frozenset({1, 2, 4, 8, 16})),
]


def _cases() -> list[tuple[str, Topology]]:
    return [
        (name, topo)
        for topo in TOPOLOGIES
        for name, s in SCHEDULES.items()
        if s.valid(topo) and (topo.bits <= 4 or not name.endswith("-parallel"))
    ]


@pytest.mark.parametrize(("name", "topo"), _cases(), ids=lambda c: c if isinstance(c, str) else c.name)
def test_export_runs_and_costs_the_closed_form(name: str, topo: Topology) -> None:
    program = SCHEDULES[name].build(topo, PAYLOAD)
    try:
        text = program_xml(program, name)
    except MscclError as exc:  # only the executor's limits may refuse an expressible schedule
        assert "the executor allows" in str(exc)
        return
    cost = check_xml(text, name, topo.gens, 0, program.unit)
    form = closed_form(name, topo)
    assert cost.h == form.h
    assert cost.v == form.v_factor * PAYLOAD


def test_executor_step_limit_refused_in_one_line() -> None:
    topo = Topology(6, frozenset(1 << i for i in range(6)))  # one-shot floods 63 inputs per neighbour
    with pytest.raises(MscclError, match=r"one-shot.*MSCCL_MAX_NUM_STEPS") as info:
        program_xml(SCHEDULES["one-shot"].build(topo, PAYLOAD), "x")
    assert "\n" not in str(info.value)


def test_header_has_the_attributes_the_executor_parses() -> None:
    topo = TOPOLOGIES[0]
    root = ET.fromstring(program_xml(SCHEDULES["rs-ag"].build(topo, PAYLOAD), "x", protocol="LL128"))
    for key in ("name", "proto", "nchannels", "nchunksperloop", "ngpus", "coll", "inplace", "outofplace",
                "minBytes", "maxBytes"):
        assert key in root.attrib
    assert root.get("coll") == "allreduce" and root.get("proto") == "LL128" and root.get("ngpus") == "8"
    gpus = root.findall("gpu")
    assert len(gpus) == 8
    for gpu in gpus:
        assert {"id", "i_chunks", "o_chunks", "s_chunks"} <= set(gpu.attrib)
        for tb in gpu.findall("tb"):
            assert {"id", "send", "recv", "chan"} <= set(tb.attrib)
            for st in tb.findall("step"):
                assert {"s", "type", "srcbuf", "srcoff", "dstbuf", "dstoff", "cnt", "depid", "deps",
                        "hasdep"} <= set(st.attrib)
                assert st.get("type") in {"s", "r", "rrc", "cpy", "nop"}


def test_unknown_protocol_refused() -> None:
    with pytest.raises(MscclError, match="protocol"):
        program_xml(SCHEDULES["ring"].build(TOPOLOGIES[0], PAYLOAD), "x", protocol="fast")


def _data_steps(root: ET.Element, gpu: int) -> set[tuple[str, str, str, int, str, int, int]]:
    """(threadblock role, type, srcbuf, srcoff, dstbuf, dstoff, cnt) of a gpu's data steps."""
    out = set()
    for tb in root.findall("gpu")[gpu].findall("tb"):
        role = f"send {tb.get('send')}" if tb.get("send") != "-1" else (
            f"recv {tb.get('recv')}" if tb.get("recv") != "-1" else "local")
        for st in tb.findall("step"):
            if st.get("type") != "nop":
                out.add((role, str(st.get("type")), str(st.get("srcbuf")), int(st.get("srcoff", "")),
                         str(st.get("dstbuf")), int(st.get("dstoff", "")), int(st.get("cnt", ""))))
    return out


def test_small_all_gather_in_canonical_form_derived_by_hand() -> None:
    """Layered all-gather on Q2 (4 ranks, one 1 KiB chunk each, output rank-major): phase 0 over
    generator 2, phase 1 over generator 1 carrying two chunks. Both ends of every transfer are
    named on both steps; nops are written as msccl-tools writes them."""
    root = ET.fromstring(program_xml(SCHEDULES["layered"].build(Topology(2, frozenset({1, 2})), 4096), "ag"))
    assert (root.get("minBytes"), root.get("maxBytes")) == ("4096", "4096")
    assert _data_steps(root, 0) == {
        ("local", "cpy", "i", 0, "o", 0, 1),
        ("send 2", "s", "o", 0, "o", 0, 1), ("recv 2", "r", "o", 2, "o", 2, 1),
        ("send 1", "s", "o", 0, "o", 0, 1), ("send 1", "s", "o", 2, "o", 2, 1),
        ("recv 1", "r", "o", 1, "o", 1, 1), ("recv 1", "r", "o", 3, "o", 3, 1),
    }
    assert _data_steps(root, 1) == {
        ("local", "cpy", "i", 0, "o", 1, 1),
        ("send 3", "s", "o", 1, "o", 1, 1), ("recv 3", "r", "o", 3, "o", 3, 1),
        ("send 0", "s", "o", 1, "o", 1, 1), ("send 0", "s", "o", 3, "o", 3, 1),
        ("recv 0", "r", "o", 0, "o", 0, 1), ("recv 0", "r", "o", 2, "o", 2, 1),
    }
    nops = [st.attrib for st in root.iter("step") if st.get("type") == "nop"]
    assert nops
    for a in nops:
        assert (a["srcbuf"], a["srcoff"], a["dstbuf"], a["dstoff"], a["cnt"], a["hasdep"]) == ("i", "-1", "o", "-1",
                                                                                                "0", "0")
        assert a["depid"] != "-1"


@pytest.mark.parametrize("name", ["layered", "rs-ag", "bruck", "recursive-doubling"])
def test_no_zero_count_data_step_and_no_wait_on_a_nop(name: str) -> None:
    root = ET.fromstring(program_xml(SCHEDULES[name].build(TOPOLOGIES[0], PAYLOAD), name))
    for gpu in root.findall("gpu"):
        tbs = gpu.findall("tb")
        for tb in tbs:
            steps = tb.findall("step")
            assert steps[-1].get("type") != "nop"
            for st in steps:
                if st.get("type") != "nop":
                    assert 1 <= int(st.get("cnt", "")) <= 71
                if st.get("depid") != "-1":
                    target = tbs[int(st.get("depid", ""))].findall("step")[int(st.get("deps", ""))]
                    assert target.get("type") != "nop" and target.get("hasdep") == "1"


# The pairing and count rules, brute force and written here (not check.py's code): every send and every
# receive of a connection, listed in threadblock step order, matched by position.

def _rule_violations(text: str) -> list[str]:
    root = ET.fromstring(text)
    sends: dict[tuple[int, int, int], list[dict[str, str]]] = {}
    recvs: dict[tuple[int, int, int], list[dict[str, str]]] = {}
    bad = []
    for gpu in root.findall("gpu"):
        x = int(gpu.get("id", ""))
        for tb in gpu.findall("tb"):
            chan = int(tb.get("chan", ""))
            for st in tb.findall("step"):
                a = dict(st.attrib)
                if a["type"] != "nop" and not 0 < int(a["cnt"]) < 72:
                    bad.append(f"gpu {x} {a}: count")
                if a["type"] == "s":
                    sends.setdefault((x, int(tb.get("send", "")), chan), []).append(a)
                elif a["type"] in ("r", "rrc"):
                    recvs.setdefault((int(tb.get("recv", "")), x, chan), []).append(a)
                elif a["type"] not in ("nop", "cpy", "re"):
                    bad.append(f"gpu {x} {a}: unexpected type")
    for key in sorted(set(sends) | set(recvs)):
        ss, rs = sends.get(key, []), recvs.get(key, [])
        if len(ss) != len(rs):
            bad.append(f"{key}: {len(ss)} sends, {len(rs)} receives")
            continue
        for s, r in zip(ss, rs, strict=True):
            for field in ("srcbuf", "srcoff", "dstbuf", "dstoff", "cnt"):
                if s[field] != r[field]:
                    bad.append(f"{key}: send {s} and receive {r} differ on {field}")
    return bad


CATALOGUE = [Topology(b, frozenset(1 << i for i in range(b))) for b in range(3, 7)] + [
    Topology(4, frozenset({1, 2, 4, 8, 3, 12})),  # folded pairs
    Topology(4, frozenset({1, 2, 4, 8, 15})),  # a fold across the whole cube
]


@pytest.mark.parametrize("topo", CATALOGUE, ids=lambda t: t.name)
def test_catalogue_files_pair_and_count(topo: Topology) -> None:
    """Every schedule family valid on Q3..Q6 and two folds: the writer's file keeps the rules."""
    names = [name for name, s in SCHEDULES.items() if s.valid(topo)]
    assert {"layered", "rs-ag", "bruck"} <= set(names)
    for name in names:
        text = program_xml(SCHEDULES[name].build(topo, PAYLOAD), name, max_steps=1 << 14)
        assert _rule_violations(text) == [], name


PLAN_CASES = {  # (ports, shape, collectives): the heuristic's choice, multiplicity p and folds
    "p1-coset-layered-parallel": (6, "[8, 8]", ("all-reduce", "all-gather")),
    "p1-bruck-parallel": (6, "[4, 16]", ("all-to-all", "all-gather")),
    "p2-bruck-parallel-p1-layered": (12, "[4, 16]", ("all-to-all", "all-gather")),
    "fold-tree-gather": (8, "[4, 16]", ("all-to-all", "all-gather")),
    "p1-layered": (12, "[8, 8]", ("all-reduce", "all-gather")),
}


@pytest.mark.parametrize("case", sorted(PLAN_CASES))
def test_exported_plans_pair_count_and_check(case: str) -> None:
    from ocsplan.deploy.export import check_export, export_msccl
    from ocsplan.instance import loads_instance
    from ocsplan.planning.heuristic import plan_heuristic

    from .realize_cases import SMALL_INSTANCE

    ports, shape, (first, second) = PLAN_CASES[case]
    text = (SMALL_INSTANCE.replace("ports = 8", f"ports = {ports}").replace("[8, 8]", shape)
            .replace('"all-reduce"', f'"{first}"').replace('collective = "all-gather"', f'collective = "{second}"'))
    plan = plan_heuristic(loads_instance(text, f"{case}.toml"))
    demands = [d for mesh in plan.meshes for axis in mesh.axes for d in axis.demands]
    if case.startswith("p2"):
        assert max(d.multiplicity for d in demands) == 2
    if case.startswith("fold"):
        assert any(d.fold for d in demands)
    files = export_msccl(plan, max_steps=1 << 12)
    for name, body in files.items():
        if name.endswith(".xml"):
            assert _rule_violations(body) == [], name
    assert len(check_export(files, case)) == len(demands)
    for entry in json.loads(files["index.json"])["demands"]:  # p parallel circuits: p channels
        root = ET.fromstring(files[entry["file"]])
        assert root.get("nchannels") == str(entry["multiplicity"])
        assert {tb.get("chan") for tb in root.iter("tb")} == {str(c) for c in range(entry["multiplicity"])}


def test_parallel_all_gather_messages_are_contiguous_runs() -> None:
    """Layered-parallel all-gather on Q3 (generators 1, 2, 4, one per layer; 3 chunks per rank,
    chunk c over the layers in rotated order): every message carries one chunk of 1, 2, then 4
    origins, so by hand each rank sends nine messages of cnt 1, 1, 1, 2, 2, 2, 4, 4, 4 (staged in
    scratch, 8 ranks x 3 chunks), receives the same, and copies its own 3 chunks twice (output and
    scratch) and the 7 x 3 chunks it received from scratch into the output."""
    topo = Topology(3, frozenset({1, 2, 4}))
    program = SCHEDULES["layered-parallel"].build(topo, 3 * 8 * 64)
    root = ET.fromstring(program_xml(program, "agp"))
    assert root.get("nchunksperloop") == "24"
    for gpu in root.findall("gpu"):
        assert (gpu.get("i_chunks"), gpu.get("o_chunks"), gpu.get("s_chunks")) == ("3", "24", "24")
        counts: dict[str, list[int]] = {"s": [], "r": [], "cpy": []}
        for st in gpu.iter("step"):
            if st.get("type") in counts:
                counts[str(st.get("type"))].append(int(st.get("cnt", "")))
        assert sorted(counts["s"]) == sorted(counts["r"]) == [1, 1, 1, 2, 2, 2, 4, 4, 4]
        assert counts["cpy"] == [1] * (6 + 21)
    cost = check_xml(program_xml(program, "agp"), "agp", topo.gens, 0, program.unit)
    form = closed_form("layered-parallel", topo)
    assert (cost.h, cost.v) == (form.h, form.v_factor * program.payload)


def test_two_channels_split_every_message_and_cost_the_closed_form_at_p2() -> None:
    """Layered all-gather on Q2 over 2 channels (by hand): each rank's block is 2 chunks (i_chunks 2,
    o_chunks 8), channel c carrying piece c of every block; rank 0 sends its own piece to 2 on each
    channel (1 chunk), then 2 pieces (its own and rank 2's) to 1 on each channel. Per channel the
    busiest circuit carries 1 + 2 chunks of payload/8 bytes, times p = 2 circuits: v = 3/4 payload,
    the closed form's v at any p."""
    payload = 8 * 128
    program = SCHEDULES["layered"].build(Topology(2, frozenset({1, 2})), payload)
    text = program_xml(program, "ag2", channels=2)
    root = ET.fromstring(text)
    assert (root.get("nchannels"), root.get("nchunksperloop")) == ("2", "8")
    sent: Counter[tuple[str, str]] = Counter()
    gpu0 = root.findall("gpu")[0]
    assert (gpu0.get("i_chunks"), gpu0.get("o_chunks")) == ("2", "8")
    for tb in gpu0.findall("tb"):
        for st in tb.findall("step"):
            if st.get("type") == "s":
                sent[(str(tb.get("send")), str(tb.get("chan")))] += int(st.get("cnt", ""))
    assert sent == {("2", "0"): 1, ("2", "1"): 1, ("1", "0"): 2, ("1", "1"): 2}
    cost = check_xml(text, "ag2", frozenset({1, 2}), 0, Fraction(payload, 8))
    assert (cost.h, cost.v) == (2, Fraction(3, 4) * payload)


def test_channels_over_the_executor_limit_refused_in_one_line() -> None:
    program = SCHEDULES["layered"].build(Topology(2, frozenset({1, 2})), 4096)
    with pytest.raises(MscclError, match=r"33 channels, the executor allows 1\.\.32") as info:
        program_xml(program, "x", channels=33)
    assert "\n" not in str(info.value)


NAMED = ["paper-fig3-n512", "paper-multimesh-n256", "paper-table7-ring-multi", "paper-table7-rsag-multi",
         "paper-table7-rsag-single", pytest.param("megatron-5t-n512-b1", marks=pytest.mark.slow)]


@pytest.mark.parametrize("name", NAMED)
def test_every_file_of_the_named_plans_checks_at_the_plans_own_h_and_v(name: str) -> None:
    """Issue 36's acceptance: export --check on every exported file of the paper and megatron plans,
    each at the phases and bytes per link the plan itself states for its demand (Eq. 1's h and v)."""
    from ocsplan.deploy.export import check_export, export_msccl
    from ocsplan.instance import load_instance
    from ocsplan.planning.heuristic import plan_heuristic

    from .conftest import instance_path

    plan = plan_heuristic(load_instance(instance_path(name)))
    files = export_msccl(plan, max_steps=4096)  # rings and rs-ag on 128 ranks: up to 1120 steps per threadblock
    costs = check_export(files, name)
    stated = {(m.name, a, k): d for m in plan.meshes for a, axis in enumerate(m.axes)
              for k, d in enumerate(axis.demands)}
    entries = json.loads(files["index.json"])["demands"]
    assert len(costs) == len(entries) >= 1
    for entry in entries:
        demand = stated[(entry["mesh"], entry["axis"], entry["demand"])]
        cost = costs[entry["file"]]
        assert cost.h == demand.phases, entry["file"]  # the plan states v as a float; the checker's is exact
        assert float(cost.v) == pytest.approx(demand.volume_bytes, rel=1e-12), entry["file"]


def test_a_ring_that_leaves_the_cube_is_refused_in_one_line() -> None:
    """paper-table7-ring-single gives its axis a degree-2 ring off the cube (Table 7): not exported."""
    from ocsplan.deploy.export import export_msccl
    from ocsplan.instance import load_instance
    from ocsplan.planning.heuristic import plan_heuristic

    from .conftest import instance_path

    plan = plan_heuristic(load_instance(instance_path("paper-table7-ring-single")))
    with pytest.raises(MscclError, match="a ring axis leaves the cube") as info:
        export_msccl(plan)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("enabled", [True, False])
def test_export_and_check_leave_the_cyclic_collector_as_they_found_it(enabled: bool) -> None:
    """Both pause the collector for the call (millions of acyclic objects) and restore it, also on a refusal."""
    import gc

    program = SCHEDULES["layered"].build(Topology(2, frozenset({1, 2})), 4096)
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        text = program_xml(program, "x")
        assert gc.isenabled() is enabled
        check_xml(text, "x", frozenset({1, 2}), 0, Fraction(program.unit))
        assert gc.isenabled() is enabled
        with pytest.raises(MscclError):
            program_xml(program, "x", channels=33)
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()
