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


_Step = tuple[str, str, int, str, int, int, int, int]  # type srcbuf srcoff dstbuf dstoff cnt depid deps
_STEP_INTS = ("s", "srcoff", "dstoff", "cnt", "depid", "deps")


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
            steps: list[_Step] = []
            for k, st in enumerate(tb.iterfind("step")):
                a = st.attrib
                try:
                    step = (a.get("type", ""), a.get("srcbuf", ""), int(a["srcoff"]), a.get("dstbuf", ""),
                            int(a["dstoff"]), int(a["cnt"]), int(a["depid"]), int(a["deps"]))
                    if int(a["s"]) != k:
                        raise CheckError(f"{where} step {k}: s={a['s']}")
                except (KeyError, ValueError):
                    for key in _STEP_INTS:
                        _int(st, key, f"{where} step {k}")
                    raise
                steps.append(step)
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
    fifo: dict[tuple[int, int, int], deque[tuple[list[frozenset[Atom]], int]]] = defaultdict(deque)
    pc = [[0] * len(tbs) for tbs in gpus]
    times = [[[0] * len(tb.steps) for tb in tbs] for tbs in gpus]  # message depth each step ran at
    # a message: the chunks' atoms and the depth at which it arrives
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

    receiving = frozenset(("r", "rrc", "rcs", "rrs", "rrcs"))

    def run(x: int, b: int) -> bool:
        tb = gpus[x][b]
        k = pc[x][b]
        kind, srcbuf, srcoff, dstbuf, dstoff, cnt, depid, deps = tb.steps[k]
        tx = times[x]
        if depid != -1:
            if not 0 <= depid < len(tx):
                raise CheckError(f"{source}: gpu {x} tb {b} step {k} ({kind}): depid {depid} names no threadblock")
            if pc[x][depid] <= deps:
                return False
        before = tx[b][k - 1] if k else 0
        if depid != -1 and tx[depid][deps] > before:
            before = tx[depid][deps]
        if kind in receiving:
            if tb.recv == -1:
                raise CheckError(f"{source}: gpu {x} tb {b} step {k} ({kind}): receives on a threadblock "
                                 "without a recv peer")
            q = fifo[(tb.recv, x, tb.chan)]
            if not q:
                return False
            msg, depth = q.popleft()
            if len(msg) != cnt:
                raise CheckError(f"{source}: gpu {x} tb {b} step {k} ({kind}): receives {cnt} chunks, "
                                 f"the message has {len(msg)}")
        where = f"{source}: gpu {x} tb {b} step {k} ({kind})" if kind != "nop" else ""
        now = before
        if kind == "nop":
            pass
        elif kind == "cpy":
            write(x, dstbuf, dstoff, read(x, srcbuf, srcoff, cnt, where))
        elif kind == "s":
            if tb.send == -1:
                raise CheckError(f"{where}: sends on a threadblock without a send peer")
            vals = read(x, srcbuf, srcoff, cnt, where)
            depth = before
            for _, d in vals:
                if d > depth:
                    depth = d
            depth += 1
            fifo[(x, tb.send, tb.chan)].append(([a for a, _ in vals], depth))
            load[depth][(x, tb.send)] += cnt
            now = depth - 1
        elif kind == "re":
            vals = reduce(read(x, srcbuf, srcoff, cnt, where), read(x, dstbuf, dstoff, cnt, where), where)
            write(x, dstbuf, dstoff, vals)
            now = max(before, *(d for _, d in vals))
        elif kind == "r":
            write(x, dstbuf, dstoff, [(a, depth) for a in msg])
            now = max(before, depth)
        elif kind == "rrc":
            write(x, dstbuf, dstoff, reduce(read(x, srcbuf, srcoff, cnt, where), [(a, depth) for a in msg], where))
            now = max(before, depth)
        else:
            raise CheckError(f"{where}: step type {kind!r} not checked")
        tx[b][k] = now
        pc[x][b] = k + 1
        return True

    progress = True
    while progress:
        progress = False
        for x, tbs in enumerate(gpus):
            for b in range(len(tbs))[::order]:
                steps = len(tbs[b].steps)
                while pc[x][b] < steps and run(x, b):
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
