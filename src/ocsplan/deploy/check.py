"""An independent check of MSCCL XML: execute it on symbolic chunks.

Reads the XML with :mod:`xml.etree` only (none of the writer's structures), runs
every rank's threadblocks in order with their dependencies, one FIFO per
(sender, receiver, channel), and proves: no deadlock, nothing left in a FIFO, every
peer a neighbour of the axis graph, the collective's result, and the message depth
h and bytes per link v (sum over depths of the busiest directed link) the cost model
priced. Steps run as soon as their stated dependencies allow, so a missing
dependency shows as a stale read or an overwrite.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict, deque
from dataclasses import dataclass
from fractions import Fraction

from ..errors import OcsplanError

__all__ = ["CheckError", "XmlCost", "check_xml"]

Atom = tuple[int, ...]
Value = tuple[frozenset[Atom], int]  # (atoms summed/held, message depth at which it became available)


class CheckError(OcsplanError):
    """MSCCL XML that does not compute its collective on the axis graph."""


@dataclass(frozen=True)
class XmlCost:
    h: int
    v: Fraction


@dataclass
class _Step:
    kind: str
    srcbuf: str
    srcoff: int
    dstbuf: str
    dstoff: int
    cnt: int
    depid: int
    deps: int


@dataclass
class _Tb:
    send: int
    recv: int
    chan: int
    steps: list[_Step]


def _int(node: ET.Element, key: str, where: str) -> int:
    text = node.get(key)
    if text is None:
        raise CheckError(f"{where}: attribute {key} missing")
    try:
        return int(text)
    except ValueError:
        raise CheckError(f"{where}: attribute {key}={text!r} is not an integer") from None


def _parse(text: str, source: str) -> tuple[ET.Element, list[list[_Tb]]]:
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise CheckError(f"{source}: not XML ({exc})") from None
    if root.tag != "algo":
        raise CheckError(f"{source}: root element {root.tag!r}, expected algo")
    gpus: list[list[_Tb]] = []
    for g, gpu in enumerate(root.findall("gpu")):
        if _int(gpu, "id", source) != g:
            raise CheckError(f"{source}: gpu {g} has id {gpu.get('id')}")
        tbs = []
        for b, tb in enumerate(gpu.findall("tb")):
            where = f"{source}: gpu {g} tb {b}"
            steps = []
            for k, st in enumerate(tb.findall("step")):
                w = f"{where} step {k}"
                if _int(st, "s", w) != k:
                    raise CheckError(f"{w}: s={st.get('s')}")
                steps.append(_Step(
                    st.get("type", ""), st.get("srcbuf", ""), _int(st, "srcoff", w), st.get("dstbuf", ""),
                    _int(st, "dstoff", w), _int(st, "cnt", w), _int(st, "depid", w), _int(st, "deps", w),
                ))
            tbs.append(_Tb(_int(tb, "send", where), _int(tb, "recv", where), _int(tb, "chan", where), steps))
        gpus.append(tbs)
    if len(gpus) != _int(root, "ngpus", source):
        raise CheckError(f"{source}: ngpus={root.get('ngpus')} but {len(gpus)} gpu elements")
    return root, gpus


def _initial(coll: str, n: int, x: int, i_chunks: int) -> dict[tuple[str, int], Value]:
    cells: dict[tuple[str, int], Value] = {}
    for k in range(i_chunks):
        if coll == "alltoall":
            c = i_chunks // n
            cells[("i", k)] = (frozenset({(x, k // c, k % c)}), 0)
        else:
            cells[("i", k)] = (frozenset({(x, k)}), 0)
    return cells


def _expected(coll: str, n: int, x: int, o_chunks: int) -> dict[int, frozenset[Atom]]:
    if coll == "allreduce":
        return {k: frozenset((r, k) for r in range(n)) for k in range(o_chunks)}
    c = o_chunks // n
    if coll == "allgather":
        return {k: frozenset({(k // c, k % c)}) for k in range(o_chunks)}
    if coll == "alltoall":
        return {k: frozenset({(k // c, x, k % c)}) for k in range(o_chunks)}
    raise CheckError(f"collective {coll!r} not checked")


def check_xml(text: str, source: str, gens: frozenset[int], modulus: int, chunk_bytes: Fraction) -> XmlCost:
    """Execute the XML; raise CheckError unless correct on the graph of ``gens``.

    ``modulus`` 0: ranks are masks and neighbours differ by a generator (XOR);
    N > 0: residues of Z_N, neighbours at +gen mod N. Returns the measured (h, v).
    The threadblocks are run greedily twice, in id order and in reverse, so a step
    whose stated dependencies are too weak meets its hazard in one of the two.
    """
    root, gpus = _parse(text, source)
    costs = {_execute(root, gpus, source, gens, modulus, chunk_bytes, order) for order in (1, -1)}
    if len(costs) != 1:
        raise CheckError(f"{source}: the result depends on the threadblock order (a dependency is missing)")
    return costs.pop()


def _execute(root: ET.Element, gpus: list[list[_Tb]], source: str, gens: frozenset[int], modulus: int,
             chunk_bytes: Fraction, order: int) -> XmlCost:
    n = len(gpus)
    coll = root.get("coll", "")
    first = root.find("gpu")
    if first is None:
        raise CheckError(f"{source}: no gpu element")
    i_chunks = _int(first, "i_chunks", source)
    o_chunks = _int(first, "o_chunks", source)
    out_to = [{((x + g) % modulus if modulus else x ^ g) for g in gens} for x in range(n)]
    in_from = [{((x - g) % modulus if modulus else x ^ g) for g in gens} for x in range(n)]
    for x, tbs in enumerate(gpus):
        for b, tb in enumerate(tbs):
            for peer, allowed in ((tb.send, out_to[x]), (tb.recv, in_from[x])):
                if peer != -1 and peer not in allowed:
                    raise CheckError(f"{source}: gpu {x} tb {b}: peer {peer} is not a neighbour in the axis graph")
    cells = [_initial(coll, n, x, i_chunks) for x in range(n)]
    fifo: dict[tuple[int, int, int], deque[list[Value]]] = defaultdict(deque)
    pc = [[0] * len(tbs) for tbs in gpus]
    times = [[[0] * len(tb.steps) for tb in tbs] for tbs in gpus]  # message depth each step ran at
    load: dict[int, dict[tuple[int, int], int]] = defaultdict(lambda: defaultdict(int))

    def read(x: int, buf: str, off: int, cnt: int, where: str) -> list[Value]:
        out = []
        for k in range(off, off + cnt):
            if (buf, k) not in cells[x]:
                raise CheckError(f"{where}: reads {buf}[{k}] before anything is written there")
            out.append(cells[x][(buf, k)])
        return out

    def write(x: int, buf: str, off: int, vals: list[Value]) -> None:
        for k, v in enumerate(vals):
            cells[x][(buf, off + k)] = v

    def reduce(a: list[Value], b: list[Value], where: str) -> list[Value]:
        out = []
        for (sa, da), (sb, db) in zip(a, b, strict=True):
            if sa & sb:
                raise CheckError(f"{where}: inputs {sorted(sa & sb)} summed twice")
            out.append((sa | sb, max(da, db)))
        return out

    def run(x: int, b: int) -> bool:
        tb = gpus[x][b]
        st = tb.steps[pc[x][b]]
        where = f"{source}: gpu {x} tb {b} step {pc[x][b]} ({st.kind})"
        if st.depid != -1:
            if not 0 <= st.depid < len(gpus[x]):
                raise CheckError(f"{where}: depid {st.depid} names no threadblock")
            if pc[x][st.depid] <= st.deps:
                return False
        before = times[x][b][pc[x][b] - 1] if pc[x][b] else 0
        if st.depid != -1:
            before = max(before, times[x][st.depid][st.deps])
        receives = st.kind in ("r", "rrc", "rcs", "rrs", "rrcs")
        if receives:
            q = fifo[(tb.recv, x, tb.chan)]
            if tb.recv == -1 or not q:
                if tb.recv == -1:
                    raise CheckError(f"{where}: receives on a threadblock without a recv peer")
                return False
            msg = q.popleft()
            if len(msg) != st.cnt:
                raise CheckError(f"{where}: receives {st.cnt} chunks, the message has {len(msg)}")
        now = before
        if st.kind == "nop":
            pass
        elif st.kind == "cpy":
            write(x, st.dstbuf, st.dstoff, read(x, st.srcbuf, st.srcoff, st.cnt, where))
        elif st.kind == "s":
            now = send(x, tb, read(x, st.srcbuf, st.srcoff, st.cnt, where), before, where) - 1
        elif st.kind == "re":
            vals = reduce(read(x, st.srcbuf, st.srcoff, st.cnt, where), read(x, st.dstbuf, st.dstoff, st.cnt, where),
                          where)
            write(x, st.dstbuf, st.dstoff, vals)
            now = max(before, *(d for _, d in vals))
        elif st.kind == "r":
            write(x, st.dstbuf, st.dstoff, msg)
            now = max(before, msg[0][1])
        elif st.kind == "rrc":
            write(x, st.dstbuf, st.dstoff, reduce(read(x, st.srcbuf, st.srcoff, st.cnt, where), msg, where))
            now = max(before, msg[0][1])
        else:
            raise CheckError(f"{where}: step type {st.kind!r} not checked")
        times[x][b][pc[x][b]] = now
        pc[x][b] += 1
        return True

    def send(x: int, tb: _Tb, vals: list[Value], before: int, where: str) -> int:
        if tb.send == -1:
            raise CheckError(f"{where}: sends on a threadblock without a send peer")
        depth = 1 + max(before, *(d for _, d in vals))
        fifo[(x, tb.send, tb.chan)].append([(s, depth) for s, _ in vals])
        load[depth][(x, tb.send)] += len(vals)
        return depth

    progress = True
    while progress:
        progress = False
        for x, tbs in enumerate(gpus):
            for b in range(len(tbs))[::order]:
                while pc[x][b] < len(tbs[b].steps) and run(x, b):
                    progress = True
    for x, tbs in enumerate(gpus):
        for b, tb in enumerate(tbs):
            if pc[x][b] < len(tb.steps):
                raise CheckError(f"{source}: deadlock: gpu {x} tb {b} stuck at step {pc[x][b]}")
    left = [k for k, q in fifo.items() if q]
    if left:
        raise CheckError(f"{source}: messages never received on {left[0][0]}->{left[0][1]} channel {left[0][2]}")
    for x in range(n):
        for k, want in _expected(coll, n, x, o_chunks).items():
            got = cells[x].get(("o", k))
            if got is None or got[0] != want:
                raise CheckError(f"{source}: gpu {x} output chunk {k} holds {sorted(got[0]) if got else 'nothing'}, "
                                 f"expected {sorted(want)}")
    h = max(load, default=0)
    v = sum((Fraction(max(links.values())) * chunk_bytes for links in load.values()), Fraction(0))
    return XmlCost(h, v)
