"""The independent checker catches broken MSCCL XML: a dropped step, a changed peer,
a wrong offset, a missing dependency, a non-neighbour peer; and each departure from the
canonical form (a send's landing place or a receive's source that disagrees with its
partner, a cnt mismatch, a zero or too large count, a wait on a step never signalled),
refused in one line naming the file and the field."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction

import pytest

from ocsplan.cayley import Topology
from ocsplan.deploy import CheckError, UnsafeXmlError, check_xml, program_xml
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
    send of a phase waits on a receive, directly or through nops, so all waits go."""
    for gpu in root.findall("gpu"):
        tbs = gpu.findall("tb")
        for tb in tbs:
            steps = tb.findall("step")
            for st in steps:
                if st.get("type") != "s" or st.get("depid") == "-1":
                    continue
                dep = tbs[int(st.get("depid", "0"))].findall("step")[int(st.get("deps", "0"))]
                if dep.get("type") in ("r", "rrc"):
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


# Canonical-form departures: (mutation, the field the one-line refusal names). Every mutated value is
# chosen by hand so that it differs from what the partner step states.

def send_lands_elsewhere(root: ET.Element) -> None:
    _, _, st = _steps(root, "s")[0]
    st.set("dstoff", str(int(st.get("dstoff", "")) + 1))


def send_lands_in_another_buffer(root: ET.Element) -> None:
    _, _, st = _steps(root, "s")[0]
    st.set("dstbuf", "s" if st.get("dstbuf") != "s" else "o")


def receive_names_wrong_source(root: ET.Element) -> None:
    _, _, st = _steps(root, "r")[0]
    st.set("srcoff", str(int(st.get("srcoff", "")) + 1))


def receive_names_wrong_buffer(root: ET.Element) -> None:
    _, _, st = _steps(root, "r")[-1]
    st.set("srcbuf", "i" if st.get("srcbuf") != "i" else "o")


def receive_count_differs(root: ET.Element) -> None:
    _, _, st = _steps(root, "r")[0]
    st.set("cnt", str(int(st.get("cnt", "")) + 1))


def zero_count_copy(root: ET.Element) -> None:
    _, _, st = _steps(root, "cpy")[0]
    st.set("cnt", "0")


def count_at_the_limit(root: ET.Element) -> None:
    """72 = MSCCL_MAX_COUNT (msccl-executor-nccl msccl_struct.h): the parser requires cnt < 72."""
    _, _, st = _steps(root, "s")[0]
    st.set("cnt", "72")


def wait_on_unsignalled_step(root: ET.Element) -> None:
    for gpu in root.findall("gpu"):
        tbs = gpu.findall("tb")
        for tb in tbs:
            for st in tb.findall("step"):
                if st.get("depid") != "-1":
                    tbs[int(st.get("depid", ""))].findall("step")[int(st.get("deps", ""))].set("hasdep", "0")
                    return
    raise AssertionError("no dependency")


CANONICAL: list[tuple[Callable[[ET.Element], None], str]] = [
    (send_lands_elsewhere, "dstbuf/dstoff"),
    (send_lands_in_another_buffer, "dstbuf/dstoff"),
    (receive_names_wrong_source, "srcbuf/srcoff"),
    (receive_names_wrong_buffer, "srcbuf/srcoff"),
    (receive_count_differs, "cnt"),
    (zero_count_copy, "cnt"),
    (count_at_the_limit, "cnt"),
    (wait_on_unsignalled_step, "depid/deps"),
]


@pytest.mark.parametrize(("mutate", "field"), CANONICAL, ids=lambda m: getattr(m, "__name__", ""))
@pytest.mark.parametrize("name", ["layered", "bruck"])
def test_canonical_departure_refused(name: str, mutate: Callable[[ET.Element], None], field: str) -> None:
    text, unit = _xml(name)
    root = ET.fromstring(text)
    mutate(root)
    with pytest.raises(CheckError) as info:
        check_xml(ET.tostring(root, encoding="unicode"), "dir/f.xml", TOPO.gens, 0, unit)  # type: ignore[arg-type]
    message = str(info.value)
    assert message.startswith("dir/f.xml: ") and f": {field}: " in message and "\n" not in message, message


def test_reduce_receive_naming_wrong_source_refused() -> None:
    text, unit = _xml("rs-ag")
    root = ET.fromstring(text)
    _, _, st = _steps(root, "rrc")[0]
    st.set("srcoff", str(int(st.get("srcoff", "")) + 1))
    with pytest.raises(CheckError, match=r"^f\.xml: gpu \d+ tb \d+ step \d+ \(rrc\): srcbuf/srcoff: "):
        check_xml(ET.tostring(root, encoding="unicode"), "f.xml", TOPO.gens, 0, unit)  # type: ignore[arg-type]


def test_trailing_nop_refused() -> None:
    text, unit = _xml("layered")
    root = ET.fromstring(text)
    tb = root.findall("gpu")[0].findall("tb")[0]
    k = len(tb.findall("step"))
    ET.SubElement(tb, "step", {"s": str(k), "type": "nop", "srcbuf": "i", "srcoff": "-1", "dstbuf": "o",
                               "dstoff": "-1", "cnt": "0", "depid": "1", "deps": "0", "hasdep": "0"})
    with pytest.raises(CheckError, match=r"^f\.xml: gpu 0 tb 0 step \d+ \(nop\): type: a nop ends"):
        check_xml(ET.tostring(root, encoding="unicode"), "f.xml", TOPO.gens, 0, unit)  # type: ignore[arg-type]


@pytest.mark.parametrize(("old", "new", "field"), [
    ('nchannels="2"', 'nchannels="1"', "chan: 1, the file declares nchannels=1"),
    ('nchannels="2"', 'nchannels="33"', "nchannels: 33"),
    ('chan="1"', 'chan="0"', "repeats tb"),  # every message on channel 0: two threadblocks per peer
])
def test_channels_are_checked(old: str, new: str, field: str) -> None:

    program = SCHEDULES["layered"].build(TOPO, PAYLOAD)
    text = program_xml(program, "ag2", channels=2)
    check_xml(text, "ag2", TOPO.gens, 0, Fraction(program.unit) / 2)
    with pytest.raises(CheckError, match=field) as info:
        check_xml(text.replace(old, new), "ag2", TOPO.gens, 0, Fraction(program.unit) / 2)
    assert "\n" not in str(info.value)


def test_two_channels_measured_as_p_circuits() -> None:
    """A two-channel file checked with the chunk bytes of one channel piece: v is p times the busiest
    circuit's bytes, equal to the one-channel file's v (the closed form does not depend on p)."""

    program = SCHEDULES["layered"].build(TOPO, PAYLOAD)
    one = check_xml(program_xml(program, "ag"), "ag", TOPO.gens, 0, Fraction(program.unit))
    two = check_xml(program_xml(program, "ag2", channels=2), "ag2", TOPO.gens, 0, Fraction(program.unit) / 2)
    assert one == two


def _cells(outputs: Sequence[Mapping[int, frozenset[tuple[int, int]]]], o_chunks: int) -> list[dict[
        str, list[tuple[tuple[int, int], int] | None]]]:
    """Ranks' output cells holding the atom sets (rank, chunk) given, as the checker's bits (atom k * n + rank:
    lo the first atom's row, a bit per atom above it)."""
    n = len(outputs)
    cells: list[dict[str, list[tuple[tuple[int, int], int] | None]]] = []
    for held in outputs:
        out: list[tuple[tuple[int, int], int] | None] = [None] * o_chunks
        for k, atoms in held.items():
            lo = min(c * n + r for r, c in atoms) // n * n
            out[k] = ((lo, sum(1 << (c * n + r - lo) for r, c in atoms)), 1)
        cells.append({"o": out})
    return cells


def test_outputs_accept_every_rank_s_equal_chunk_and_catch_a_wrong_one_on_any_rank() -> None:
    """The output check works out chunk k's expected bits once and compares every rank's with them; a
    wrong set on the last rank alone is still named, as (rank, chunk) atoms (by hand: 4 ranks, 2 chunks,
    chunk k of an all-reduce is {(r, k) for r in 0..3})."""
    from ocsplan.deploy.check import _outputs

    whole = [frozenset((r, k) for r in range(4)) for k in range(2)]
    equal = frozenset((r, 1) for r in range(4))
    good = [{0: whole[0], 1: whole[1]}] * 3 + [{0: whole[0], 1: equal}]
    _outputs("allreduce", _cells(good, 2), 2, 2, "f.xml")
    bad = [*good[:3], {0: whole[0], 1: frozenset((r, 1) for r in range(3)) | {(3, 0)}}]
    with pytest.raises(CheckError, match=re.escape("f.xml: gpu 3 output chunk 1 holds [(0, 1), (1, 1), (2, 1), "
                                                   "(3, 0)], expected [(0, 1), (1, 1), (2, 1), (3, 1)]")):
        _outputs("allreduce", _cells(bad, 2), 2, 2, "f.xml")
    missing = [*good[:3], {0: whole[0]}]
    with pytest.raises(CheckError, match=r"^f\.xml: gpu 3 output chunk 1 holds nothing"):
        _outputs("allreduce", _cells(missing, 2), 2, 2, "f.xml")
    with pytest.raises(CheckError, match="collective 'broadcast' not checked"):
        _outputs("broadcast", _cells([{}] * 4, 0), 0, 0, "f.xml")


_STEP = ('<step s="{s}" type="cpy" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" '
         'hasdep="0"{extra}/>')


def _one_rank(second: str) -> str:
    return ('<algo name="x" proto="Simple" nchannels="1" nchunksperloop="1" ngpus="1" coll="allreduce" '
            'inplace="0" outofplace="1" minBytes="1" maxBytes="1">\n<gpu id="0" i_chunks="1" o_chunks="1" '
            f's_chunks="0">\n<tb id="0" send="-1" recv="-1" chan="0">\n{_STEP.format(s=0, extra="")}\n{second}\n'
            '</tb>\n</gpu>\n</algo>\n')


@pytest.mark.parametrize(("second", "error"), [
    (_STEP.format(s=0, extra=""), "gpu 0 tb 0 step 1: s=0"),
    (_STEP.format(s=" " * 2000 + "1", extra=""), "step attribute s: 2001 characters, the limit is 1024"),
    (_STEP.format(s=1, extra=' x="' + "y" * 2000 + '"'), "step attribute x: 2000 characters, the limit is 1024"),
    (_STEP.format(s=1, extra="").replace(' deps="-1"', ' depz="-1"'), "gpu 0 tb 0 step 1: attribute deps missing"),
])
def test_a_step_repeating_a_parsed_one_is_still_held_to_every_bound(second: str, error: str) -> None:
    """The reader converts each distinct step once and takes a repeat from what it kept: a repeat whose
    index, length or attributes differ is read (and refused) in full."""
    assert check_xml(_one_rank(_STEP.format(s=1, extra="")), "x", frozenset(), 0, Fraction(1)).h == 0
    with pytest.raises((CheckError, UnsafeXmlError), match=error) as info:
        check_xml(_one_rank(second), "x", frozenset(), 0, Fraction(1))
    assert "\n" not in str(info.value)
