"""MSCCL-IR XML for an executable schedule (the format msccl-executor-nccl parses).

A :class:`~ocsplan.schedules.Program` is translated phase by phase: every segment a
transfer carries becomes a send step on the sender's threadblock towards that peer
and a matching receive step on the receiver's threadblock from that peer, in the
same order, so each (sender, receiver, channel) connection is one FIFO. A step
waits on the last write of the cells it reads and, for a receive, on the reads of
the cells it overwrites within the same phase (extra waits become ``nop`` steps,
since a step names one dependency). Buffers: all-gather and all-reduce work in the
output buffer after a local copy of the input; all-to-all forwards through scratch.

Canonical form (as msccl-tools' ``ir_to_xml`` writes it): a send's src is the local
cells it reads and its dst the cells its receive writes at the peer; a receive's src
is the cells its send read at the peer and its dst the local cells it writes. Every
data step moves 1..MAX_COUNT - 1 chunks; a pure wait is a ``nop`` (``srcbuf="i"
srcoff="-1" dstbuf="o" dstoff="-1" cnt="0"``) before the step it delays.
minBytes = maxBytes = the demand's payload (the executor's nBytes for this call).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from xml.sax.saxutils import quoteattr

from ..cayley import members
from ..errors import OcsplanError
from ..gcpause import paused_gc
from ..schedules import Program

__all__ = [
    "MAX_CHANNELS",
    "MAX_STEPS",
    "MAX_TBS_PER_CHANNEL",
    "MscclError",
    "program_xml",
]

MAX_CHANNELS = 32  # MAXCHANNELS in msccl-executor-nccl src/include/device.h
MAX_TBS_PER_CHANNEL = 32  # MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL (msccl_struct.h)
# MSCCL_MAX_NUM_STEPS is a build-time make variable of msccl-executor-nccl (makefiles/common.mk, default 64;
# `make MSCCL_MAX_NUM_STEPS=N`); its hard ceiling is int16 dependentStep (32767). The export's default assumes
# an executor built with 128: the megatron plan's layered-parallel all-gather needs 87 steps per threadblock.
MAX_STEPS = 128
MAX_COUNT = 72  # MSCCL_MAX_COUNT: a step's cnt must stay below it

_COLL = {"all-gather": "allgather", "all-reduce": "allreduce", "all-to-all": "alltoall"}
PROTOCOLS = ("Simple", "LL", "LL128")


class MscclError(OcsplanError):
    """A schedule the MSCCL format (or its executor's limits) cannot express."""


Cell = tuple[str, int]  # (buffer, chunk offset)
StepRef = tuple[int, int]  # (threadblock id, step index)
_NOWHERE_SRC: Cell = ("i", -1)  # a nop's buffers, as msccl-tools writes them
_NOWHERE_DST: Cell = ("o", -1)
_StepRow = tuple[str, str, int, str, int, int, int, int]  # type srcbuf srcoff dstbuf dstoff cnt depid deps
_NOP = ("nop", *_NOWHERE_SRC, *_NOWHERE_DST, 0)  # a pure wait's row, less its (depid, deps)


@dataclass
class _Tb:
    send: int
    recv: int
    chan: int
    steps: list[_StepRow] = field(default_factory=list)


@dataclass
class _Rank:
    tbs: list[_Tb] = field(default_factory=list)
    by_key: dict[tuple[int, int, int], int] = field(default_factory=dict)
    writer: dict[Cell, StepRef] = field(default_factory=dict)
    readers: dict[Cell, list[StepRef]] = field(default_factory=lambda: defaultdict(list))
    join: StepRef | None = None  # the last phase join (see barrier)
    pending_join: bool = False  # the next step is a phase join
    covered: dict[int, int] = field(default_factory=dict)  # per tb, the last step the join waited for
    joined: set[int] = field(default_factory=set)  # tbs whose steps already follow the join

    def tb(self, send: int, recv: int, chan: int) -> int:
        key = (send, recv, chan)
        if key not in self.by_key:
            self.by_key[key] = len(self.tbs)
            self.tbs.append(_Tb(send, recv, chan))
        return self.by_key[key]

    def add(self, tb: int, kind: str, src: Cell, dst: Cell, cnt: int, deps: list[StepRef]) -> StepRef:
        steps = self.tbs[tb].steps
        if len(deps) < 2 and not self.pending_join and (self.join is None or tb in self.joined):
            # the common case, inline: at most one wait and no phase join (what the general path does then)
            if deps:
                b, j = deps[0]
                if b != tb and j > self.covered.get(b, -1):
                    steps.append((kind, src[0], src[1], dst[0], dst[1], cnt, b, j))
                    return (tb, len(steps) - 1)
            steps.append((kind, src[0], src[1], dst[0], dst[1], cnt, -1, -1))
            return (tb, len(steps) - 1)
        latest: dict[int, int] = {}  # a wait on (b, j) covers b's earlier steps: keep the last per tb
        if deps:
            covered = self.covered
            for b, j in deps:
                if b != tb and j > covered.get(b, -1) and latest.get(b, -1) < j:  # same-tb order is implicit
                    latest[b] = j
        if self.pending_join:
            # this step is the phase join: it waits for the last step of every other threadblock
            self.pending_join = False
            for b, t in enumerate(self.tbs):
                if b != tb and t.steps and len(t.steps) - 1 > self.covered.get(b, -1):
                    latest[b] = len(t.steps) - 1
            self.covered = {b: len(t.steps) - 1 for b, t in enumerate(self.tbs)}
            self.join = (tb, len(steps) + max(len(latest) - 1, 0))
            self.joined = {tb}
        elif self.join is not None and tb not in self.joined:
            self.joined.add(tb)
            latest[self.join[0]] = max(latest.get(self.join[0], -1), self.join[1])
        if not latest:
            steps.append((kind, src[0], src[1], dst[0], dst[1], cnt, -1, -1))
        else:
            wait = sorted(latest.items()) if len(latest) > 1 else list(latest.items())
            for b, j in wait[:-1]:
                steps.append((*_NOP, b, j))
            b, j = wait[-1]
            steps.append((kind, src[0], src[1], dst[0], dst[1], cnt, b, j))
        return (tb, len(steps) - 1)

    def barrier(self) -> None:
        """A phase boundary: the rank's next step (its first send of the phase, as sends are written
        first) is the join: ``nop`` steps, then that step, wait for the last step of every other
        threadblock; every threadblock's first later step waits for the join, so the next phase
        starts after this one ends. The join is a data step because the executor signals only
        those (a wait on a nop is met only by a later signalled step, and trailing nops' waits are
        dropped). Waits the join covers are not restated."""
        if any(len(t.steps) - 1 > self.covered.get(b, -1) for b, t in enumerate(self.tbs)):
            self.pending_join = True

    def read(self, cells: list[Cell]) -> list[StepRef]:
        get = self.writer.get
        return [r for c in cells if (r := get(c)) is not None]

    def overwrite(self, cells: list[Cell], reads: list[Cell]) -> list[StepRef]:
        deps = self.read(reads) + self.read(cells)
        for c in cells:
            deps.extend(self.readers.get(c, []))
        return deps

    def wrote(self, cells: list[Cell], ref: StepRef) -> None:
        self.writer.update(dict.fromkeys(cells, ref))
        if self.readers:
            pop = self.readers.pop
            for c in cells:
                pop(c, None)

    def was_read(self, cells: list[Cell], ref: StepRef) -> None:
        for c in cells:
            self.readers[c].append(ref)


_SAME = ("gather", "reduce", "store")  # the ops whose moves are (cell, same cell)


def _runs_same(cells: list[Cell]) -> list[tuple[Cell, Cell, int]]:
    """_runs of the moves (c, c) for c in ``cells`` (distinct), without building them."""
    out: list[tuple[Cell, Cell, int]] = []
    start: Cell = ("", 0)
    n = 0
    end = -1
    for c in sorted(cells):
        if n and c[1] == end and c[0] == start[0] and n < MAX_COUNT - 1:
            n += 1
        else:
            if n:
                out.append((start, start, n))
            start, n = c, 1
        end = c[1] + 1
    if n:
        out.append((start, start, n))
    return out


class _Spans:
    """Runs of cells as lists of shared tuples (one per cell), sliced instead of built."""

    def __init__(self) -> None:
        self.cells: dict[str, list[Cell]] = {}

    def span(self, start: Cell, n: int) -> list[Cell]:
        buf, off = start
        cells = self.cells.get(buf)
        if cells is None or len(cells) < off + n:
            cells = self.cells[buf] = [(buf, k) for k in range(2 * (off + n))]
        return cells[off:off + n]


def _runs(moves: list[tuple[Cell, Cell]]) -> list[tuple[Cell, Cell, int]]:
    """(send cell, receive cell) pairs grouped into runs contiguous in both buffers: (src, dst, count)."""
    out: list[tuple[Cell, Cell, int]] = []
    for a, b in sorted(moves):
        if out:
            (sa, oa), (sb, ob), n = out[-1]
            if (sa, sb) == (a[0], b[0]) and oa + n == a[1] and ob + n == b[1] and n < MAX_COUNT - 1:
                out[-1] = ((sa, oa), (sb, ob), n + 1)
                continue
        out.append((a, b, 1))
    return out


@dataclass(frozen=True)
class _Layout:
    """Where each collective keeps its chunks (buffer name, offset) on a rank.

    ``staged`` (an all-gather of several chunks per rank whose messages carry, per chunk, the
    blocks of a coset of a growing subgroup of origins): chunk c of origin y is kept at scratch
    ``c * size + pos[c][y]``, where pos[c] lists y's coordinates in a basis adapted to chunk c's
    chain of subgroups, so that every message is one contiguous run on both ends; the output
    (rank-major, chunks of one origin interleaved across the rotations) is filled by local
    copies at the end."""

    collective: str
    size: int
    segments: int
    raw: bool = False  # an all-reduce forwarding unsummed inputs: one scratch slot per (source, segment)
    staged: tuple[tuple[int, ...], ...] | None = None
    table: tuple[Cell, ...] = ()  # all-gather: gather_cell of every segment, computed once
    channels: int = 1  # every chunk is cut into this many pieces, piece ch carried on channel ch

    @classmethod
    def make(cls, collective: str, size: int, segments: int, raw: bool,
             staged: tuple[tuple[int, ...], ...] | None, channels: int = 1) -> _Layout:
        plain = cls(collective, size, segments, raw, staged)
        table = tuple(plain.gather_cell(b) for b in range(segments)) if collective == "all-gather" else ()
        return cls(collective, size, segments, raw, staged, table, channels)

    def sub(self, cell: Cell, ch: int) -> Cell:
        """Piece ``ch`` of a one-channel cell. The input and output keep their meaning (block q of C
        chunks -- an origin's, a destination's, the whole buffer -- becomes C * p chunks, channel ch
        owning the C at ch * C), so each channel's pieces of a block stay contiguous; scratch is
        channel-major."""
        p = self.channels
        if p == 1:
            return cell
        buf, off = cell
        if buf == "s":
            return (buf, ch * self.counts()[2] + off)
        c = self.chunks
        return (buf, (off // c) * c * p + ch * c + off % c)

    @property
    def chunks(self) -> int:
        return self.segments // self.size if self.collective == "all-gather" else self.segments

    def counts(self) -> tuple[int, int, int]:
        n, c = self.size, self.chunks
        if self.collective == "all-gather":
            return c, n * c, n * c if self.staged else 0
        if self.collective == "all-reduce":
            return c, c, n * c if self.raw else 0
        return n * c, n * c, n * n * c

    def gather_off(self, seg: int) -> int:
        return (seg % self.size) * self.chunks + seg // self.size

    def gather_cell(self, seg: int) -> Cell:
        if self.table:
            return self.table[seg]
        if self.staged is None:
            return ("o", self.gather_off(seg))
        c, y = divmod(seg, self.size)
        return ("s", c * self.size + self.staged[c][y])

    def route_cell(self, rank: int, origin: int, dest: int, chunk: int) -> Cell:
        c = self.chunks
        if rank == origin:
            return ("i", dest * c + chunk)
        if rank == dest:
            return ("o", origin * c + chunk)
        return ("s", (origin * self.size + dest) * c + chunk)


def _staging(program: Program) -> tuple[tuple[int, ...], ...] | None:
    """Per chunk, the scratch position of every origin (see _Layout), or None for an all-gather of one
    chunk per rank (its output is already in message order when its layers are low bits). The basis is
    grown from rank 0's message origins phase by phase; when those are subgroups S_1 < S_2 < ..., the
    coset y ^ S_t is an aligned run of positions. Any other program still gets a bijection (correct,
    only less contiguous)."""
    size = program.size
    chunks = program.segments // size
    if program.collective != "all-gather" or chunks < 2 or program.modulus or program.segments % size:
        return None
    chains: list[list[set[int]]] = [[] for _ in range(chunks)]
    for phase in program.phases:
        held: list[set[int]] = [set() for _ in range(chunks)]
        for tr in phase:
            if tr.src == 0:
                for item in tr.items:
                    if item.op != "gather":
                        return None
                    for b in members(item.segs):
                        held[b // size].add(b % size)
        for c in range(chunks):
            if held[c]:
                chains[c].append(held[c])
    out: list[tuple[int, ...]] = []
    for chain in chains:
        basis: list[int] = []
        span = {0}
        for group in [*chain, set(range(size))]:
            for y in sorted(group):
                if y not in span:
                    basis.append(y)
                    span |= {z ^ y for z in span}
        pos = [0] * size
        for m in range(size):
            v = 0
            for i, b in enumerate(basis):
                if m >> i & 1:
                    v ^= b
            pos[v] = m
        if sorted(pos) != list(range(size)):
            return None
        out.append(tuple(pos))
    return tuple(out)


def _moves(program: Program, layout: _Layout, src: int, dst: int, op: str, item_segs: int,
           sources: int, dests: int) -> list[tuple[Cell, Cell]]:
    if op == "gather":
        table = layout.table
        return [(table[b], table[b]) for b in members(item_segs)]
    if op in ("reduce", "store"):
        return [(("o", b), ("o", b)) for b in members(item_segs)]
    if op == "route":
        return [
            (layout.route_cell(src, o, d, c), layout.route_cell(dst, o, d, c))
            for o in members(sources) for d in members(dests) for c in members(item_segs)
        ]
    if op == "raw":
        def cell(x: int, r: int, b: int) -> Cell:
            return ("i", b) if x == r else ("s", r * layout.segments + b)

        return [(cell(src, r, b), cell(dst, r, b)) for r in members(sources) for b in members(item_segs)]
    raise MscclError(f"{program.schedule}: MSCCL export does not cover {op!r} items")


def program_xml(program: Program, name: str, *, protocol: str = "Simple", channels: int = 1,
                max_steps: int = MAX_STEPS, threadblocks: list[list[tuple[int, int, int]]] | None = None) -> str:
    """The MSCCL XML of ``program`` (one communicator of ``program.size`` ranks); ``max_steps`` is the
    executor's build-time MSCCL_MAX_NUM_STEPS. ``threadblocks``, if given, receives per rank its
    threadblocks' (send, recv, chan) in id order."""
    with paused_gc():  # millions of acyclic tuples, lists and sets: the collector's passes cost a fifth
        return _program_xml(program, name, protocol, channels, max_steps, threadblocks)


def _program_xml(program: Program, name: str, protocol: str, channels: int, max_steps: int,
                 threadblocks: list[list[tuple[int, int, int]]] | None) -> str:
    if program.collective not in _COLL:
        raise MscclError(f"{program.schedule}: collective {program.collective!r} has no MSCCL name")
    if protocol not in PROTOCOLS:
        raise MscclError(f"protocol {protocol!r}: expected one of {', '.join(PROTOCOLS)}")
    if not 1 <= channels <= MAX_CHANNELS:
        raise MscclError(f"{program.schedule}: {channels} channels, the executor allows 1..{MAX_CHANNELS}")
    size = program.size
    ops = {item.op for phase in program.phases for t in phase for item in t.items}
    if "raw" in ops and ops != {"raw"}:
        raise MscclError(f"{program.schedule}: mixes forwarded inputs and partial sums, not exported")
    layout = _Layout.make(program.collective, size, program.segments, "raw" in ops, _staging(program), channels)
    ranks = [_Rank() for _ in range(size)]
    span = _Spans().span
    _local_copies(program, layout, ranks)
    for t, phase in enumerate(program.phases):
        if t:
            for rank in ranks:
                rank.barrier()
        pending: list[tuple[int, int, int, list[tuple[Cell, Cell, int]], bool]] = []
        for tr in phase:
            for item in tr.items:
                if item.op in _SAME:  # a cell is sent to the same cell at the peer: runs of cells
                    same = [layout.table[b] for b in members(item.segs)] if item.op == "gather" else \
                        [("o", b) for b in members(item.segs)]
                    for ch in range(channels):
                        mine = same if channels == 1 else [layout.sub(c, ch) for c in same]
                        pending.append((tr.src, tr.dst, ch, _runs_same(mine), item.op == "reduce"))
                    continue
                moves = _moves(program, layout, tr.src, tr.dst, item.op, item.segs, item.sources, item.dests)
                for ch in range(channels):
                    pairs = moves if channels == 1 else [(layout.sub(a, ch), layout.sub(b, ch)) for a, b in moves]
                    pending.append((tr.src, tr.dst, ch, _runs(pairs), item.op == "reduce"))
        for src, dst, chan, runs, _ in pending:
            # sends read the state at the start of the phase, after the previous phase's receives
            sender = ranks[src]
            tb = sender.tb(dst, -1, chan)
            get = sender.writer.get
            readers = sender.readers
            add = sender.add
            for a, b, n in runs:
                if n == 1:  # one cell, inline
                    readers[a].append(add(tb, "s", a, b, 1, [] if (r := get(a)) is None else [r]))
                    continue
                cells = span(a, n)
                # canonical form: a send names where its chunks land, a receive where they came from;
                # a run's cells were mostly written by one step: its waits are deduplicated (add keeps
                # the last per threadblock, in any order)
                waits = set(map(get, cells))
                waits.discard(None)
                ref = add(tb, "s", a, b, n, list(waits))  # type: ignore[arg-type]
                for c in cells:
                    readers[c].append(ref)
        for src, dst, chan, runs, reduce in pending:
            if not runs:
                continue
            recv = ranks[dst]
            tb = recv.tb(-1, src, chan)
            writer, add, kind = recv.writer, recv.add, "rrc" if reduce else "r"
            for a, b, n in runs:
                if reduce and a != b:  # the executor reads an rrc's local operand at srcbuf/srcoff
                    raise MscclError(f"{program.schedule}: a reduction from {a} into {b} has no canonical rrc")
                # a receive waits for the cells' last write and their reads (a reduction also reads them)
                if n == 1:  # one cell, inline
                    deps = [] if (r := writer.get(b)) is None else [r]
                    if (rs := recv.readers.get(b)) is not None:
                        deps.extend(rs)
                    writer[b] = add(tb, kind, a, b, 1, deps)
                    if recv.readers:
                        recv.readers.pop(b, None)
                    continue
                cells = span(b, n)
                waits = set(map(writer.get, cells))  # deduplicated, as for a send
                waits.discard(None)
                rget = recv.readers.get
                for c in cells:
                    if (rs := rget(c)) is not None:
                        waits.update(rs)
                recv.wrote(cells, add(tb, kind, a, b, n, list(waits)))  # type: ignore[arg-type]
    if layout.raw:
        _final_sums(layout, ranks)
    if layout.staged:
        _unstage(layout, ranks)
    for rank in ranks:  # only the steps are rendered: free the cell maps first
        rank.writer.clear()
        rank.readers.clear()
    if threadblocks is not None:
        threadblocks.extend([(tb.send, tb.recv, tb.chan) for tb in rank.tbs] for rank in ranks)
    return _render(program, name, protocol, channels, layout, ranks, max_steps)


def _final_sums(layout: _Layout, ranks: list[_Rank]) -> None:
    """One-shot all-reduce: every rank adds the inputs it received into its output (``re`` steps)."""
    segs = layout.segments
    for x, rank in enumerate(ranks):
        for b in range(segs):
            for r in range(layout.size):
                if r == x:
                    continue
                for ch in range(layout.channels):
                    cell, out = layout.sub(("s", r * segs + b), ch), layout.sub(("o", b), ch)
                    if cell not in rank.writer:
                        raise MscclError(f"rank {x} never receives the input of rank {r} segment {b}")
                    ref = rank.add(0, "re", cell, out, 1, rank.read([cell, out]))
                    rank.wrote([out], ref)


def _unstage(layout: _Layout, ranks: list[_Rank]) -> None:
    """Staged all-gather: every received chunk copied from scratch to its place in the output, on
    the threadblock that received it (after it, in its own order: no wait)."""
    size = layout.size
    copies = [(seg, layout.sub(layout.gather_cell(seg), ch), layout.sub(("o", layout.gather_off(seg)), ch))
              for seg in range(layout.segments) for ch in range(layout.channels)]  # the same on every rank
    for x, rank in enumerate(ranks):
        get = rank.writer.get
        for seg, cell, out in copies:
            if seg % size == x:
                continue
            ref = get(cell)
            if ref is None:
                raise MscclError(f"rank {x} never receives chunk {seg // size} of rank {seg % size}")
            rank.add(ref[0], "cpy", cell, out, 1, [ref])  # the output cell is written once and never read


def _local_copies(program: Program, layout: _Layout, ranks: list[_Rank]) -> None:
    """Out-of-place start: own inputs copied where the schedule reads or the result lives."""
    n, c = layout.size, layout.chunks
    last: list[tuple[Cell, Cell]] = []
    moves: list[tuple[Cell, Cell]] = []
    rows: list[_StepRow] = []
    written: dict[Cell, StepRef] = {}
    for x, rank in enumerate(ranks):
        if program.collective == "all-to-all":
            pairs = [(("i", x * c + k), ("o", x * c + k)) for k in range(c)]
        elif program.collective == "all-gather":
            pairs = [(("i", k), ("o", layout.gather_off(k * n + x))) for k in range(c)]
            if layout.staged:  # the messages read the own chunk from scratch
                pairs += [(("i", k), layout.gather_cell(k * n + x)) for k in range(c)]
        else:
            pairs = [(("i", k), ("o", k)) for k in range(c)]
        if pairs != last:  # an all-reduce's copies are the same on every rank: built once
            last = pairs
            moves = [(layout.sub(src, ch), layout.sub(dst, ch)) for ch in range(layout.channels) for src, dst in pairs]
            rows = [("cpy", *src, *dst, 1, -1, -1) for src, dst in moves]
            written = {dst: (0, k) for k, (_, dst) in enumerate(moves)}
        # what rank.add and rank.wrote do on a rank with no steps yet: no waits, nothing read
        tb = rank.tb(-1, -1, 0)  # threadblock 0, empty
        rank.tbs[tb].steps.extend(rows)
        rank.writer.update(written)


# a step is rendered as f'<step s="{k}" {_ROW % row}{hasdep}"/>'
_ROW = 'type="%s" srcbuf="%s" srcoff="%d" dstbuf="%s" dstoff="%d" cnt="%d" depid="%d" deps="%d" hasdep="'
_SIGNALLED, _UNSIGNALLED = '1"/>', '0"/>'
INT16 = 32767  # srcOffset, dstOffset and dependentStep are int16_t in the executor (msccl_struct.h)
INT8 = 127  # dependentBid is int8_t: a threadblock waited for needs an id below 128


def _render(program: Program, name: str, protocol: str, channels: int, layout: _Layout,
            ranks: list[_Rank], max_steps: int) -> str:
    i_chunks, o_chunks, s_chunks = (k * channels for k in layout.counts())
    if max(i_chunks, o_chunks, s_chunks) > INT16 + 1:
        raise MscclError(f"{program.schedule}: {max(i_chunks, o_chunks, s_chunks)} chunks in a buffer, the "
                         f"executor's int16 offsets allow {INT16 + 1}")
    coll = _COLL[program.collective]
    lines = [
        f"<algo name={quoteattr(name)} proto={quoteattr(protocol)} nchannels=\"{channels}\" "
        f"nchunksperloop=\"{o_chunks}\" ngpus=\"{layout.size}\" "
        f"coll=\"{coll}\" inplace=\"0\" outofplace=\"1\" minBytes=\"{program.payload}\" "
        f"maxBytes=\"{program.payload}\">"
    ]
    texts: dict[_StepRow, str] = {}  # a step's attributes from type to deps (few distinct across ranks)
    heads: list[str] = []  # a step's line up to its attributes, by index
    for g, rank in enumerate(ranks):
        peers = Counter((role, tb.chan) for tb in rank.tbs for role, peer in (("send", tb.send),
                                                                              ("receive", tb.recv)) if peer != -1)
        for (role, chan), count in sorted(peers.items()):
            if count > MAX_TBS_PER_CHANNEL:
                raise MscclError(f"{program.schedule}: rank {g} has {count} {role} peers on channel {chan}, "
                                 f"the executor allows {MAX_TBS_PER_CHANNEL}")
        marked = _dependences(program.schedule, g, rank)
        gpu = [f"<gpu id=\"{g}\" i_chunks=\"{i_chunks}\" o_chunks=\"{o_chunks}\" s_chunks=\"{s_chunks}\">"]
        for b, tb in enumerate(rank.tbs):
            steps = tb.steps
            m = len(steps)
            if m > max_steps:
                raise MscclError(f"{program.schedule}: rank {g} threadblock {b} needs {m} steps, "
                                 f"the executor allows {max_steps} (MSCCL_MAX_NUM_STEPS; see --max-steps)")
            # the threadblock's tag, then per step k: heads[k], its attributes, its hasdep: one join
            while len(heads) < m:
                heads.append(f'\n<step s="{len(heads)}" ')
            try:
                rows = [*map(texts.__getitem__, steps)]
            except KeyError:  # attributes not rendered yet
                for st in steps:
                    if st not in texts:
                        texts[st] = _ROW % st
                rows = [*map(texts.__getitem__, steps)]
            tails = [_UNSIGNALLED] * m
            for k in marked.get(b, ()):
                if 0 <= k < m:
                    tails[k] = _SIGNALLED
            pieces = [""] * (3 * m + 1)
            pieces[0] = f"<tb id=\"{b}\" send=\"{tb.send}\" recv=\"{tb.recv}\" chan=\"{tb.chan}\">"
            pieces[1::3] = heads[:m]
            pieces[2::3] = rows
            pieces[3::3] = tails
            gpu.append("".join(pieces))
            gpu.append("</tb>")
            tb.steps = []  # rendered: freed as the text grows
        gpu.append("</gpu>")
        lines.append("\n".join(gpu))
    lines.append("</algo>\n")
    return "\n".join(lines)


def _dependences(schedule: str, g: int, rank: _Rank) -> dict[int, set[int]]:
    """Per threadblock the steps another step waits for (hasdep=1: the executor signals only those)."""
    marked: dict[int, set[int]] = defaultdict(set)
    for b, tb in enumerate(rank.tbs):
        for st in tb.steps:
            if st[6] != -1:
                if st[6] > INT8:
                    raise MscclError(f"{schedule}: rank {g} threadblock {b} waits for threadblock {st[6]}, "
                                     f"the executor's int8 dependentBid allows ids up to {INT8}")
                marked[st[6]].add(st[7])
    return marked
