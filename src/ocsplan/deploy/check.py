"""An independent check of MSCCL XML: execute it on symbolic chunks.

Reads the XML with :mod:`xml.etree` and its own decoder of step lines (:mod:`.check_read`, none of the
writer's structures), runs every rank's threadblocks in order with their dependencies, one FIFO per
(sender, receiver, channel), and proves: no deadlock, nothing left in a FIFO, every
peer a neighbour of the axis graph, the collective's result, and the message depth
h and bytes per link v (sum over depths of the busiest directed link) the cost model
priced. Steps run as soon as their stated dependencies allow, so a missing
dependency shows as a stale read or an overwrite.

Before executing, the file is held to the canonical form msccl-tools writes: sends
and receives pair in FIFO order per (sender, receiver, channel) and agree on cnt,
on where the chunks land (the send's dstbuf/dstoff) and where they came from (the
receive's srcbuf/srcoff); every data step moves 1..MSCCL_MAX_COUNT - 1 chunks; a
wait names a signalled (``hasdep="1"``) data step; a ``nop`` precedes a data step.
Hostile text is refused before or while parsing (see :func:`_read`).
"""

from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass
from fractions import Fraction
from operator import itemgetter

from ..gcpause import paused_gc
from .check_read import (
    BUFFERS,
    INT16,
    MAX_CHANNELS,
    MAX_XML_ATTR_CHARS,
    MAX_XML_DEPTH,
    MSCCL_MAX_COUNT,
    CheckError,
    UnsafeXmlError,
    _int,
    _limits,
    _parse,
    _Step,
    _Tb,
)

__all__ = ["MAX_XML_ATTR_CHARS", "MAX_XML_DEPTH", "CheckError", "UnsafeXmlError", "XmlCost", "check_xml"]

Atom = tuple[int, ...]
Value = tuple[tuple[int, int], int]  # (atoms summed/held as bits (see _atoms), depth at which it became available)


@dataclass(frozen=True)
class XmlCost:
    h: int
    v: Fraction


def _offsets(gpus: list[list[_Tb]], declared: dict[str, int], source: str) -> None:
    """Every data step's ``srcbuf``/``dstbuf`` one of :data:`BUFFERS`, its chunks (offset .. offset +
    cnt - 1) inside the ones that buffer declares (``declared``: i/o/s chunks)."""
    for x, tbs in enumerate(gpus):
        for b, tb in enumerate(tbs):
            for k, st in enumerate(tb.steps):
                kind, cnt = st[0], st[5]
                if kind == "nop":
                    continue
                for side, buf, off in (("src", st[1], st[2]), ("dst", st[3], st[4])):
                    if buf not in declared:
                        raise CheckError(f"{source}: gpu {x} tb {b} step {k} ({kind}): {side}buf: {buf[:40]!r}, "
                                         f"expected one of {', '.join(BUFFERS)}")
                    if off < 0 or off + max(cnt, 1) > declared[buf]:
                        raise CheckError(f"{source}: gpu {x} tb {b} step {k} ({kind}): {side}off: chunks "
                                         f"{off}..{off + max(cnt, 1) - 1} of {buf}, which declares "
                                         f"{declared[buf]} ({buf}_chunks)")


_SENDS = frozenset(("s",))
_RECEIVES = frozenset(("r", "rrc"))
_KINDS = frozenset(("nop", "cpy", "re")) | _SENDS | _RECEIVES


_PAIRED = itemgetter(1, 2, 3, 4, 5)  # srcbuf srcoff dstbuf dstoff cnt: a send's and its receive's agree


def _clean(gpus: list[list[_Tb]], declared: dict[str, int]) -> bool:
    """True if :func:`_canonical` and :func:`_offsets` would find nothing; False sends the file to them
    (they name the first fault). Builds no message, and looks at each step object's own fields once
    (ranks share them: see _Reader.parsed)."""
    sends: dict[tuple[int, int, int], list[_Step]] = {}
    recvs: dict[tuple[int, int, int], list[_Step]] = {}
    distinct: dict[int, _Step] = {}
    for x, tbs in enumerate(gpus):
        ends: set[tuple[int, int, int]] = set()
        ntb = len(tbs)
        for b, tb in enumerate(tbs):
            for side, peer in ((0, tb.send), (1, tb.recv)):
                if peer != -1:
                    if (side, peer, tb.chan) in ends:
                        return False
                    ends.add((side, peer, tb.chan))
            steps = tb.steps
            if steps and steps[-1][0] == "nop":
                return False
            distinct.update(zip(map(id, steps), steps, strict=True))
            out = [st for st in steps if st[0] == "s"]
            if out:
                sends[(x, tb.send, tb.chan)] = out
            into = [st for st in steps if st[0] == "r" or st[0] == "rrc"]
            if into:
                recvs[(tb.recv, x, tb.chan)] = into
            for st in [st for st in steps if st[6] != -1]:
                depid, deps = st[6], st[7]
                if not 0 <= depid < ntb or depid == b:
                    return False
                on = tbs[depid]
                if not 0 <= deps < len(on.steps) or on.steps[deps][0] == "nop" or not on.signals[deps]:
                    return False
    for kind, srcbuf, srcoff, dstbuf, dstoff, cnt, _, _ in distinct.values():
        if kind != "nop":
            if kind not in _KINDS or not 0 < cnt < MSCCL_MAX_COUNT:
                return False
            src, dst = declared.get(srcbuf), declared.get(dstbuf)
            if src is None or dst is None or srcoff < 0 or srcoff + cnt > src or dstoff < 0 or dstoff + cnt > dst:
                return False
    if sends.keys() != recvs.keys():
        return False
    for link, out in sends.items():
        into = recvs[link]
        if len(out) != len(into) or list(map(_PAIRED, out)) != list(map(_PAIRED, into)):
            return False
    return True


def _canonical(gpus: list[list[_Tb]], source: str) -> None:
    """The rules msccl-tools' writer keeps and tools that pair sends with receives check."""
    links: dict[tuple[int, int, int], list[list[tuple[int, int, _Step]]]] = defaultdict(lambda: [[], []])
    for x, tbs in enumerate(gpus):
        ends: dict[tuple[int, int, int], int] = {}
        for b, tb in enumerate(tbs):
            for side, peer in ((0, tb.send), (1, tb.recv)):
                if peer == -1:
                    continue
                if (side, peer, tb.chan) in ends:
                    raise CheckError(f"{source}: gpu {x} tb {b}: {('send', 'recv')[side]}={peer} chan={tb.chan} "
                                     f"repeats tb {ends[(side, peer, tb.chan)]}'s connection")
                ends[(side, peer, tb.chan)] = b
            for k, st in enumerate(tb.steps):
                kind, cnt, depid, deps = st[0], st[5], st[6], st[7]
                where = f"{source}: gpu {x} tb {b} step {k} ({kind})"
                if kind not in _KINDS:
                    raise CheckError(f"{where}: type: {kind!r} is not checked (expected one of {sorted(_KINDS)})")
                if kind == "nop":
                    if k == len(tb.steps) - 1:
                        raise CheckError(f"{where}: type: a nop ends the threadblock; the executor drops its wait")
                elif not 1 <= cnt < MSCCL_MAX_COUNT:
                    raise CheckError(f"{where}: cnt: {cnt} chunks, a data step moves 1..{MSCCL_MAX_COUNT - 1}")
                if depid != -1:
                    if not 0 <= depid < len(tbs) or depid == b or not 0 <= deps < len(tbs[depid].steps):
                        raise CheckError(f"{where}: depid/deps: ({depid}, {deps}) names no step of another "
                                         "threadblock")
                    if tbs[depid].steps[deps][0] == "nop" or not tbs[depid].signals[deps]:
                        raise CheckError(f"{where}: depid/deps: waits for tb {depid} step {deps}, which the "
                                         "executor never signals (a nop or hasdep=0)")
                if kind in _SENDS:
                    links[(x, tb.send, tb.chan)][0].append((b, k, st))
                if kind in _RECEIVES:
                    links[(tb.recv, x, tb.chan)][1].append((b, k, st))
    for (x, y, c), (sends, recvs) in sorted(links.items()):
        if len(sends) != len(recvs):
            raise CheckError(f"{source}: gpu {x} -> gpu {y} chan {c}: {len(sends)} sends but {len(recvs)} "
                             "receives")
        for (b, k, s), (rb, rk, r) in zip(sends, recvs, strict=True):
            send = f"{source}: gpu {x} tb {b} step {k} ({s[0]})"
            recv = f"{source}: gpu {y} tb {rb} step {rk} ({r[0]})"
            if s[5] != r[5]:
                raise CheckError(f"{recv}: cnt: {r[5]}, its send ({send.split(': ', 1)[1]}) has cnt={s[5]}")
            if (s[3], s[4]) != (r[3], r[4]):
                raise CheckError(f"{send}: dstbuf/dstoff: {s[3]}[{s[4]}], its receive (gpu {y} tb {rb} step {rk}) "
                                 f"writes {r[3]}[{r[4]}]")
            if (r[1], r[2]) != (s[1], s[2]):
                raise CheckError(f"{recv}: srcbuf/srcoff: {r[1]}[{r[2]}], its send (gpu {x} tb {b} step {k}) "
                                 f"reads {s[1]}[{s[2]}]")


def _expected(coll: str, n: int, x: int, o_chunks: int, k: int) -> frozenset[Atom]:
    """What rank ``x``'s output chunk ``k`` holds after the collective."""
    if coll == "allreduce":
        return frozenset((r, k) for r in range(n))
    c = o_chunks // n
    if coll == "allgather":
        return frozenset({(k // c, k % c)})
    if coll == "alltoall":
        return frozenset({(k // c, x, k % c)})
    raise CheckError(f"collective {coll!r} not checked")


# Atoms as bits. Input chunk k of rank x is atom number k * n + x: (x, k), or for all-to-all
# (x, k // c, k % c) with c = i_chunks // n (decoded only for an error). A set of atoms is a pair
# (lo, mask): atom lo + i for every bit i of mask, lo the first atom's row k * n, so a pair is one
# set's only form (== is set equality) and a row's atoms fit in n bits.
Bits = tuple[int, int]


def _atoms(bits: Bits, coll: str, n: int, i_chunks: int) -> list[Atom]:
    """The atoms ``bits`` holds, sorted (for an error message)."""
    lo, mask = bits
    out: list[Atom] = []
    i = 0
    while mask:
        if mask & 1:
            k, x = divmod(lo + i, n)
            if coll == "alltoall":
                c = i_chunks // n
                out.append((x, k // c, k % c))
            else:
                out.append((x, k))
        mask >>= 1
        i += 1
    return sorted(out)


def _union(a: Bits, b: Bits) -> tuple[Bits, Bits]:
    """(a | b, a & b) of two sets."""
    la, ma = a
    lb, mb = b
    if la != lb:
        lo = la if la < lb else lb
        ma <<= la - lo
        mb <<= lb - lo
        la = lo
    return (la, ma | mb), (la, ma & mb)


def _summed(a: list[Value], b: list[Value]) -> list[Value] | None:
    """The chunkwise sums of ``a`` and ``b`` when every pair is of one row and disjoint (the common case),
    else None (the caller's general path then sums or names the overlap)."""
    out: list[Value] = []
    for (sa, da), (sb, db) in zip(a, b, strict=True):
        if sa[0] != sb[0] or sa[1] & sb[1]:
            return None
        out.append(((sa[0], sa[1] | sb[1]), da if da > db else db))
    return out


def _expected_bits(coll: str, n: int, x: int, i_chunks: int, o_chunks: int, k: int) -> Bits | None:
    """:func:`_expected` as bits; None when it names an atom no input holds (no value can equal it)."""
    if coll == "allreduce":
        return (k * n, (1 << n) - 1) if k < i_chunks else None
    c = o_chunks // n
    if coll == "allgather":
        src, j = k // c, k % c
    else:  # alltoall: (k // c, x, k % c) is input chunk x * ci + k % c of rank k // c
        ci = i_chunks // n
        src, cc = k // c, k % c
        if not cc < ci:
            return None
        j = x * ci + cc
    return (j * n, 1 << src) if src < n and j < i_chunks else None


_BITS = itemgetter(0)  # a value's atoms


def _outputs(coll: str, cells: list[dict[str, list[Value | None]]], i_chunks: int, o_chunks: int,
             source: str) -> None:
    """Every rank's output chunks hold what the collective defines (all-reduce and all-gather give every
    rank the same chunk k: its expected bits are worked out once)."""
    if coll not in ("allreduce", "allgather", "alltoall"):
        raise CheckError(f"collective {coll!r} not checked")
    n = len(cells)
    same = coll in ("allreduce", "allgather")
    wanted: dict[int, Bits | None] = {}
    wants: list[Bits | None] | None = None
    for x in range(n):
        held = cells[x]["o"]
        if same and x:
            if wants is None:
                wants = [wanted[k] for k in range(o_chunks)]
            if None not in held and list(map(_BITS, held)) == wants:  # type: ignore[arg-type]
                continue
        for k in range(o_chunks):
            got = held[k]
            if same:
                if k not in wanted:
                    wanted[k] = _expected_bits(coll, n, x, i_chunks, o_chunks, k)
                want = wanted[k]
            else:
                want = _expected_bits(coll, n, x, i_chunks, o_chunks, k)
            if got is None or want is None or got[0] != want:
                expected = _expected(coll, n, x, o_chunks, k)
                raise CheckError(f"{source}: gpu {x} output chunk {k} holds "
                                 f"{_atoms(got[0], coll, n, i_chunks) if got else 'nothing'}, "
                                 f"expected {sorted(expected)}")


def check_xml(text: str, source: str, gens: frozenset[int], modulus: int, chunk_bytes: Fraction,
              protocol: str | None = None, max_steps: int = INT16) -> XmlCost:
    """Execute the XML; raise CheckError unless correct on the graph of ``gens``.

    ``modulus`` 0: ranks are masks and neighbours differ by a generator (XOR);
    N > 0: residues of Z_N, neighbours at +gen mod N. Returns the measured (h, v).
    The threadblocks are run greedily twice, in id order and in reverse, so a step
    whose stated dependencies are too weak meets its hazard in one of the two.
    ``protocol`` and ``max_steps`` are what the export declares (its index): the file must keep to them.
    """
    with paused_gc():  # millions of acyclic tuples, lists and sets: the collector's passes cost a third
        return _check(text, source, gens, modulus, chunk_bytes, protocol, max_steps)


def _check(text: str, source: str, gens: frozenset[int], modulus: int, chunk_bytes: Fraction,
           protocol: str | None, max_steps: int) -> XmlCost:
    algo, gpu_attrs, gpus = _parse(text, source)
    first = gpu_attrs[0]
    declared = _limits(algo, gpu_attrs, gpus, source, protocol, min(max_steps, INT16))
    if not _clean(gpus, declared):
        _canonical(gpus, source)
        _offsets(gpus, declared, source)
    inputs: dict[tuple[int, int], list[list[Value]]] = {}  # the two runs' input cells (immutable values)
    costs = {_execute(algo, first, gpus, source, gens, modulus, chunk_bytes, order, inputs) for order in (1, -1)}
    if len(costs) != 1:
        raise CheckError(f"{source}: the result depends on the threadblock order (a dependency is missing)")
    return costs.pop()


def _execute(algo: dict[str, str], first: dict[str, str], gpus: list[list[_Tb]], source: str,
             gens: frozenset[int], modulus: int, chunk_bytes: Fraction, order: int,
             inputs: dict[tuple[int, int], list[list[Value]]] | None = None) -> XmlCost:
    """One greedy run in threadblock ``order`` (1 or -1); ``inputs`` keeps the input cells for the other run."""
    n = len(gpus)
    coll = algo.get("coll", "")
    channels = _int(algo, "nchannels", source)
    if not 1 <= channels <= MAX_CHANNELS:
        raise CheckError(f"{source}: nchannels: {channels}, the executor allows 1..{MAX_CHANNELS}")
    i_chunks = _int(first, "i_chunks", source)
    o_chunks = _int(first, "o_chunks", source)
    out_to = [{((x + g) % modulus if modulus else x ^ g) for g in gens} for x in range(n)]
    in_from = [{((x - g) % modulus if modulus else x ^ g) for g in gens} for x in range(n)]
    for x, tbs in enumerate(gpus):
        for b, tb in enumerate(tbs):
            if not 0 <= tb.chan < channels:
                raise CheckError(f"{source}: gpu {x} tb {b}: chan: {tb.chan}, the file declares nchannels={channels}")
            for peer, allowed in ((tb.send, out_to[x]), (tb.recv, in_from[x])):
                if peer != -1 and peer not in allowed:
                    raise CheckError(f"{source}: gpu {x} tb {b}: peer {peer} is not a neighbour in the axis graph")
    s_chunks = _int(first, "s_chunks", source)
    if coll == "alltoall" and i_chunks:
        i_chunks // (i_chunks // n)  # no chunk per rank: ZeroDivisionError, as ever
    # a rank's cells, buffer name -> offset -> value (None: nothing written), holding its input;
    # _offsets proved every step's chunks inside its buffers
    own = None if inputs is None else inputs.get((n, i_chunks))
    if own is None:
        rows = [k * n for k in range(i_chunks)]
        own = [[((lo, bit), 0) for lo in rows] for bit in [1 << x for x in range(n)]]
        if inputs is not None:
            inputs[(n, i_chunks)] = own
    cells: list[dict[str, list[Value | None]]] = [
        {"i": list(own[x]), "o": [None] * o_chunks, "s": [None] * s_chunks} for x in range(n)]
    # a message: the chunks' atoms and the depth at which it arrives
    fifo: dict[tuple[int, int, int], deque[tuple[list[Bits], int]]] = defaultdict(deque)
    pc = [[0] * len(tbs) for tbs in gpus]
    times = [[[0] * len(tb.steps) for tb in tbs] for tbs in gpus]  # message depth each step ran at
    # per depth, chunks per (sender, receiver, channel): channel ch is its own circuit
    # (a link's number in ids: the same maxima, an int hashed per send instead of a tuple)
    load: dict[int, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    ids: dict[tuple[int, int, int], int] = {}
    links = [[(x, tb.send, tb.chan) for tb in tbs] for x, tbs in enumerate(gpus)]
    link_ids = [[ids.setdefault(link, len(ids)) for link in row] for row in links]

    def name(x: int, b: int, k: int, kind: str) -> str:
        return f"{source}: gpu {x} tb {b} step {k} ({kind})"

    def read(x: int, b: int, k: int, kind: str, buf: str, off: int, cnt: int) -> list[Value]:
        vals = cells[x][buf][off:off + cnt]
        for j, v in enumerate(vals, off):
            if v is None:
                raise CheckError(f"{name(x, b, k, kind)}: reads {buf}[{j}] before anything is written there")
        return vals  # type: ignore[return-value]

    def reduce(a: list[Value], b: list[Value], where: tuple[int, int, int, str]) -> list[Value]:
        out = []
        for (sa, da), (sb, db) in zip(a, b, strict=True):
            both, twice = _union(sa, sb)
            if twice[1]:
                raise CheckError(f"{name(*where)}: inputs {_atoms(twice, coll, n, i_chunks)} summed twice")
            out.append((both, da if da > db else db))
        return out

    receiving = frozenset(("r", "rrc", "rcs", "rrs", "rrcs"))
    # Visits that cannot run a step are skipped, which changes nothing else (the visit order, the FIFOs
    # created): a rank none of whose threadblocks ran and none of whose FIFOs was sent to since its last
    # visit (dirty), a threadblock that has ended or whose step waits for a step not run yet or for an
    # empty FIFO (the same test the run below starts with, the FIFO created as there).
    dirty = [True] * n
    progress = True
    while progress:
        progress = False
        for x, tbs in enumerate(gpus):
            if not dirty[x]:
                continue
            dirty[x] = False
            pcx, tx, held, linksx, idsx = pc[x], times[x], cells[x], links[x], link_ids[x]
            for b in range(len(tbs))[::order]:
                tb = tbs[b]
                steps = tb.steps
                k = start = pcx[b]
                nsteps = len(steps)
                if k == nsteps:
                    continue
                st = steps[k]
                if st[6] != -1 and 0 <= st[6] < len(tx) and pcx[st[6]] <= st[7]:
                    continue
                if st[0] in receiving and tb.recv != -1 and not fifo[(tb.recv, x, tb.chan)]:
                    continue
                # run threadblock b until it waits (a dependency not yet run, an empty FIFO) or ends
                mine = tx[b]
                prev = mine[k - 1] if k else 0
                rq: deque[tuple[list[Bits], int]] | None = None
                sq: deque[tuple[list[Bits], int]] | None = None
                link, lid = linksx[b], idsx[b]
                while k < nsteps:
                    kind, srcbuf, srcoff, dstbuf, dstoff, cnt, depid, deps = steps[k]
                    before = prev
                    if depid != -1:
                        if not 0 <= depid < len(tx):
                            raise CheckError(f"{name(x, b, k, kind)}: depid {depid} names no threadblock")
                        if pcx[depid] <= deps:
                            break
                        if tx[depid][deps] > before:
                            before = tx[depid][deps]
                    if kind in receiving:
                        if tb.recv == -1:
                            raise CheckError(f"{name(x, b, k, kind)}: receives on a threadblock without a recv "
                                             "peer")
                        if rq is None:
                            rq = fifo[(tb.recv, x, tb.chan)]
                        if not rq:
                            break
                        msg, depth = rq.popleft()
                        if len(msg) != cnt:
                            raise CheckError(f"{name(x, b, k, kind)}: receives {cnt} chunks, the message has "
                                             f"{len(msg)}")
                    now = before
                    if kind == "s":
                        if tb.send == -1:
                            raise CheckError(f"{name(x, b, k, kind)}: sends on a threadblock without a send peer")
                        if cnt == 1 and (v := held[srcbuf][srcoff]) is not None:  # the common case, inline
                            depth = (before if before > v[1] else v[1]) + 1
                            sent = [v[0]]
                        else:
                            vals = read(x, b, k, kind, srcbuf, srcoff, cnt)
                            depth = before
                            for _, d in vals:
                                if d > depth:
                                    depth = d
                            depth += 1
                            sent = [a for a, _ in vals]
                        if sq is None:
                            sq = fifo[link]
                        sq.append((sent, depth))
                        load[depth][lid] += cnt
                        now = depth - 1
                    elif kind == "cpy":
                        if cnt == 1 and (v := held[srcbuf][srcoff]) is not None:
                            held[dstbuf][dstoff] = v
                            if depid == -1:  # now == prev: the copies that follow alike, inline
                                mine[k] = prev
                                k += 1
                                while k < nsteps:
                                    st = steps[k]
                                    if st[0] != "cpy" or st[5] != 1 or st[6] != -1 or (v := held[st[1]][st[2]]) is None:
                                        break
                                    held[st[3]][st[4]] = v
                                    mine[k] = prev
                                    k += 1
                                continue
                        else:
                            held[dstbuf][dstoff:dstoff + cnt] = read(x, b, k, kind, srcbuf, srcoff, cnt)
                    elif kind == "re":
                        if (cnt == 1 and (v := held[srcbuf][srcoff]) is not None
                                and (w := held[dstbuf][dstoff]) is not None):
                            (la, ma), (lb, mb) = v[0], w[0]
                            if la == lb and not ma & mb:
                                d = v[1] if v[1] > w[1] else w[1]
                                held[dstbuf][dstoff] = ((la, ma | mb), d)
                                if d > now:
                                    now = d
                                mine[k] = prev = now
                                k += 1
                                continue
                        elif cnt > 1:  # all chunks present, each pair of one row and disjoint: inline
                            src = held[srcbuf][srcoff:srcoff + cnt]
                            dst = held[dstbuf][dstoff:dstoff + cnt]
                            if None not in src and None not in dst:
                                summed = _summed(src, dst)  # type: ignore[arg-type]
                                if summed is not None:
                                    held[dstbuf][dstoff:dstoff + cnt] = summed
                                    for _, d in summed:
                                        if d > now:
                                            now = d
                                    mine[k] = prev = now
                                    k += 1
                                    continue
                        vals = reduce(read(x, b, k, kind, srcbuf, srcoff, cnt),
                                      read(x, b, k, kind, dstbuf, dstoff, cnt), (x, b, k, kind))
                        held[dstbuf][dstoff:dstoff + cnt] = vals
                        now = max(before, *(d for _, d in vals))
                    elif kind == "r":
                        if cnt == 1:
                            held[dstbuf][dstoff] = (msg[0], depth)
                        else:
                            held[dstbuf][dstoff:dstoff + cnt] = [(a, depth) for a in msg]
                        if depth > now:
                            now = depth
                    elif kind == "rrc":
                        if cnt == 1 and (v := held[srcbuf][srcoff]) is not None:
                            (la, ma), (lb, mb) = v[0], msg[0]
                            if la == lb and not ma & mb:
                                held[dstbuf][dstoff] = ((la, ma | mb), v[1] if v[1] > depth else depth)
                                if depth > now:
                                    now = depth
                                mine[k] = prev = now
                                k += 1
                                continue
                        elif cnt > 1:
                            src = held[srcbuf][srcoff:srcoff + cnt]
                            if None not in src:
                                summed = _summed(src, [(a, depth) for a in msg])  # type: ignore[arg-type]
                                if summed is not None:
                                    held[dstbuf][dstoff:dstoff + cnt] = summed
                                    if depth > now:
                                        now = depth
                                    mine[k] = prev = now
                                    k += 1
                                    continue
                        held[dstbuf][dstoff:dstoff + cnt] = reduce(read(x, b, k, kind, srcbuf, srcoff, cnt),
                                                                   [(a, depth) for a in msg], (x, b, k, kind))
                        if depth > now:
                            now = depth
                    elif kind != "nop":
                        raise CheckError(f"{name(x, b, k, kind)}: step type {kind!r} not checked")
                    mine[k] = prev = now
                    k += 1
                if k != start:
                    pcx[b] = k
                    progress = dirty[x] = True
                if sq is not None and tb.send < n:
                    dirty[tb.send] = True
    for x, tbs in enumerate(gpus):
        for b, tb in enumerate(tbs):
            if pc[x][b] < len(tb.steps):
                raise CheckError(f"{source}: deadlock: gpu {x} tb {b} stuck at step {pc[x][b]}")
    left = [k for k, q in fifo.items() if q]
    if left:
        raise CheckError(f"{source}: messages never received on {left[0][0]}->{left[0][1]} channel {left[0][2]}")
    _outputs(coll, cells, i_chunks, o_chunks, source)
    h = max(load, default=0)
    # v as the cost model states it at multiplicity p = nchannels: T = h * latency + v / (p * R), so p
    # times the bytes of the busiest circuit (link and channel) summed over depths
    return XmlCost(h, sum((Fraction(max(links.values())) * chunk_bytes for links in load.values()),
                          Fraction(0)) * channels)
