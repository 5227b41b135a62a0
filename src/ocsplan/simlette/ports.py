"""Ports: the transmitters of directed links, serializing DL flits under credit-based flow control.

A :class:`Port` is the transmitter of one directed link. Data waits in its
queue as *pieces*: trains of DL flits of one message whose first flit is
available at ``ready`` and the others one flit time apart. A port decides at
the time it can next transmit (one event): it takes the next piece (an
accelerator's :class:`FifoPort` in the order its node issued them, a switch's
:class:`QueuePort` by arrival of the first flit), takes one credit per flit of
the buffer at the far end and hands the flits to the far :class:`Switch` or
:class:`Sink` at once, stamped with the time they arrive there. This is the
paper's deferred accounting (App. C.5): latency rides on the piece, simulated
time only advances where a port decides. ``message`` mode sends a whole piece
per decision, ``flit`` mode one flit.

Look-ahead: a FIFO port cannot be overtaken, and nothing reaches a switch
output sooner than one flit time, a link and the switch's RX and core after
any decision, so ports take the decisions up to that far ahead in one event.
The departures are the same as with one decision per event (tests check it);
only the event count drops.

Without credits (unlimited buffers) more is decided early, with the same
departures: accelerator ports of a one-level switched fabric decide as pieces
arrive (:class:`DirectPort`, :class:`DirectFlitPort`); once every node has sent
its last phase, nothing can reach a switch output queue that is not queued yet,
so queues take everything in one wake-up (``Engine.unbounded``).

Credits (paper §5.2): a port holds one credit per DL flit of the far buffer.
A credit comes back once the far device has processed the flit (an accelerator
after its port's RX, a switch when the flit leaves for its output) and has
crossed the link back. Release times are known as soon as that departure is
decided, so a pool is a heap of release times. A port with an empty pool
stalls until a release is pushed; a port behind a switch also waits while a
credit still out could come back earlier than the earliest known one.
Unlimited buffers skip the pool.
"""

from __future__ import annotations

import heapq
from collections import deque

from .devices import Device, Sink, Switch
from .engine import Engine, Message, Piece

__all__ = ["DirectFlitPort", "DirectPort", "DrainPort", "FifoPort", "Port", "QueuePort", "split_flits"]

# Decisions treat a piece as ready when it is ready within this tolerance (s).
_TOL = 1e-15
_INF = float("inf")
_push = heapq.heappush
_pop = heapq.heappop


class Port:
    """Transmitter of one directed link: DL-flit serialization and credits.

    Subclasses decide which piece goes next: :class:`FifoPort` in the order
    its single source handed them over, :class:`QueuePort` (switch outputs)
    by the time their first flit is there.
    """

    __slots__ = (
        "ahead", "busy", "credits", "eng", "far", "flits", "heap", "known", "limited", "name",
        "out", "ret", "retry", "stall", "stalled", "wake_at", "wake_ev", "wire",
    )

    def __init__(
        self, eng: Engine, name: str, wire: float, ret: float, far: Device, credits: int | None
    ) -> None:
        self.eng = eng
        self.name = name
        self.wire = wire  # serialization end -> arrival in the far buffer
        self.ret = ret  # credit release at the far device -> usable here
        self.far = far
        self.limited = credits is not None
        self.credits = credits or 0  # credits free since the start
        self.heap: list[float] = []  # release times of returned credits
        self.out = 0  # credits taken whose release time is not known yet
        # A sink releases at once (while this port sends); a switch only when it
        # forwards, at least ``ret`` after the moment it decides.
        self.known = not isinstance(far, Switch)
        self.retry = -1.0
        self.stalled = False
        self.busy = 0.0  # the link is free from this time
        self.wake_ev = -1  # id of the pending wake-up event, -1 if none
        self.wake_at = 0.0
        self.flits = 0
        self.stall = 0.0  # time flits waited for credits beyond when they could go
        self.ahead = 0.0  # how early the port may decide (set by the subclass)

    def enqueue(self, piece: Piece) -> None:
        raise NotImplementedError

    def wake(self, ev: int) -> None:
        raise NotImplementedError

    def _arm(self, time: float) -> None:
        if self.wake_ev >= 0 and self.wake_at <= time:
            return
        self.wake_at = time
        self.wake_ev = self.eng.wake(time, self)

    def release(self, time: float) -> None:
        """A credit of the far buffer becomes usable here at ``time``."""
        heapq.heappush(self.heap, time)
        self.out -= 1
        if self.stalled:
            self.stalled = False
            self._arm(self.eng.env.now)

    def _take(self) -> float | None:
        """Release time of the next credit, or None to wait (``retry`` says until when)."""
        self.retry = -1.0
        if self.credits:
            self.credits -= 1
            self.out += 1
            return 0.0
        heap = self.heap
        if not heap:
            return None
        if not self.known and self.out and heap[0] > self.eng.env.now + self.ret + _TOL:
            # a credit still out may come back earlier than the earliest known one
            self.retry = heap[0] - self.ret
            return None
        self.out += 1
        return heapq.heappop(heap)

    def _send(self, piece: Piece, count: int, start: float) -> bool:
        """Send up to ``count`` flits of ``piece`` from ``start``; True if it is used up.

        Stops early and sets ``stalled`` when the credits run out.
        """
        if self.limited:
            return self._send_limited(piece, count, start)
        tf = self.eng.flit_time
        self.busy = start + count * tf
        self.flits += count
        up = piece.up
        if up is not None:
            ret = up.ret
            for k in range(count):
                up.release(start + k * tf + ret)
        if count == piece.flits:  # ``_flush`` of the whole piece, one call less (hot path)
            piece.ready = start + tf + self.wire
            piece.up = None
            self.far.accept(piece, self)
            return True
        return self._flush(piece, start, count)

    def _send_limited(self, piece: Piece, count: int, start: float) -> bool:
        tf = self.eng.flit_time
        up = piece.up
        sent = seg = 0
        t = seg_start = start
        consumed = False
        credit: float | None
        while sent < count:
            if self.credits:  # ``_take``'s first case inline (``retry`` is read only after a None)
                self.credits -= 1
                self.out += 1
                credit = 0.0
            else:
                credit = self._take()
            if credit is None and seg:
                # hand over what left: a sink returns credits at once
                consumed = self._flush(piece, seg_start, seg)
                seg = 0
                credit = self._take()
            if credit is None:
                self.stalled = True
                if self.retry >= 0:
                    self._arm(self.retry)
                break
            if credit > t:
                if seg:
                    consumed = self._flush(piece, seg_start, seg)
                    seg = 0
                self.stall += credit - t
                t = credit
            if not seg:
                seg_start = t
            if up is not None:
                up.release(t + up.ret)
            t += tf
            seg += 1
            sent += 1
        if seg:
            consumed = self._flush(piece, seg_start, seg)
        if sent:
            self.busy = t
            self.flits += sent
        return consumed

    def _flush(self, piece: Piece, start: float, count: int) -> bool:
        """Hand ``count`` flits departing back to back from ``start`` to the far device.

        Returns True when that was the whole rest of ``piece`` (the object
        itself travels on), False when flits remain in it.
        """
        tf = self.eng.flit_time
        arrive = start + tf + self.wire
        if count == piece.flits:
            piece.ready = arrive
            piece.up = None
            self.far.accept(piece, self)
            return True
        out = Piece(arrive, count, piece.msg, piece.index)
        piece.ready += count * tf
        piece.flits -= count
        piece.index += count
        self.far.accept(out, self)
        return False


class FifoPort(Port):
    """An accelerator's own port: pieces leave in the order its node issued them.

    Its single source hands pieces over in order of readiness, so nothing can
    overtake: the port may decide up to ``eng.horizon`` early (fewer events,
    the same departures) unless it waits for credits of a switch buffer,
    whose release times are only learned later.
    """

    __slots__ = ("queue",)

    def __init__(
        self, eng: Engine, name: str, wire: float, ret: float, far: Device, credits: int | None
    ) -> None:
        super().__init__(eng, name, wire, ret, far, credits)
        self.queue: deque[Piece] = deque()
        if not (credits is not None and isinstance(far, Switch)):
            self.ahead = eng.horizon

    def enqueue(self, piece: Piece) -> None:
        self.queue.append(piece)
        if not self.stalled and len(self.queue) == 1:
            busy = self.busy
            self._arm((piece.ready if piece.ready > busy else busy) - self.ahead)

    def wake(self, ev: int) -> None:
        if ev != self.wake_ev:
            return  # superseded by an earlier wake-up
        self.wake_ev = -1
        self.stalled = False
        eng = self.eng
        ahead = self.ahead
        limit = eng.env.now + ahead + _TOL
        queue = self.queue
        flit_mode = eng.flit_mode
        while queue:
            piece = queue[0]
            busy = self.busy
            start = piece.ready if piece.ready > busy else busy
            if start > limit:
                self._arm(start - 0.5 * ahead)  # when half the look-ahead has drained
                return
            if self._send(piece, 1 if flit_mode else piece.flits, start):
                queue.popleft()
            if self.stalled:
                return


class DirectPort(FifoPort):
    """A FIFO port whose far end returns no credits and forwards nothing (an OCS circuit
    into an unlimited receive buffer), in message mode: it decides at once.

    Its departures are max(ready, link free) in the order its node hands pieces
    over, which is the node's phase and program order whatever the order of
    events elsewhere; so the decision :class:`FifoPort` takes in an event is
    taken here when the piece arrives, with the same result and no event. The
    runner then drains deliveries from a work list (:class:`~ocsplan.simlette.runner.Runner`).
    """

    __slots__ = ()

    def __init__(
        self, eng: Engine, name: str, wire: float, ret: float, far: Device, credits: int | None = None
    ) -> None:
        # what Port.__init__ sets, without the queue and credit pool it never uses (runs make
        # tens of thousands): no credits, never stalled, no wake-ups
        self.eng = eng
        self.name = name
        self.wire = wire
        self.ret = ret
        self.far = far
        self.limited = False
        self.credits = 0
        self.out = 0
        self.known = True
        self.retry = -1.0
        self.stalled = False
        self.busy = 0.0
        self.wake_ev = -1
        self.wake_at = 0.0
        self.flits = 0
        self.stall = 0.0
        self.ahead = 0.0

    def enqueue(self, piece: Piece) -> None:
        # Port._send and Port._flush for a whole piece without credits, inlined (hot path)
        busy = self.busy
        ready = piece.ready
        start = ready if ready > busy else busy
        tf = self.eng.flit_time
        count = piece.flits
        self.busy = start + count * tf
        self.flits += count
        piece.ready = start + tf + self.wire
        piece.up = None
        self.far.accept(piece, self)


class DirectFlitPort(DirectPort):
    """:class:`DirectPort` in flit mode: the flits of a piece leave one by one, each
    at max(its readiness, link free), as :class:`FifoPort` sends them one decision
    at a time (the same arithmetic: the piece's readiness advances by one flit
    time per flit sent)."""

    __slots__ = ()

    def enqueue(self, piece: Piece) -> None:
        tf = self.eng.flit_time
        wire = self.wire
        far = self.far
        msg = piece.msg
        busy = self.busy
        self.flits += piece.flits
        while piece.flits > 1:
            ready = piece.ready
            start = ready if ready > busy else busy
            busy = start + 1 * tf
            out = Piece(start + tf + wire, 1, msg, piece.index)
            piece.ready += 1 * tf
            piece.flits -= 1
            piece.index += 1
            self.busy = busy
            far.accept(out, self)
        ready = piece.ready
        start = ready if ready > busy else busy
        self.busy = start + 1 * tf
        piece.ready = start + tf + wire
        piece.up = None
        far.accept(piece, self)


class QueuePort(Port):
    """A switch output port: the piece whose first flit arrives first goes next.

    ``lookahead`` is the least time between any upstream decision and the
    arrival it causes here (one flit time, a link, the switch's RX and core):
    every piece that will ever be ready before now + lookahead is already
    queued, so decisions up to then are safe to take now. Ties go by message
    id and flit index, never by the order of events.
    """

    __slots__ = ("queue",)

    def __init__(
        self, eng: Engine, name: str, wire: float, ret: float, far: Device, credits: int | None,
        lookahead: float = 0.0,
    ) -> None:
        super().__init__(eng, name, wire, ret, far, credits)
        self.queue: list[tuple[float, int, int, Piece]] = []
        if eng.horizon > 0 and not (credits is not None and isinstance(far, Switch)):
            self.ahead = lookahead

    def enqueue(self, piece: Piece) -> None:
        ready = piece.ready
        _push(self.queue, (ready, piece.msg.mid, piece.index, piece))
        if self.stalled:
            return
        pending = self.wake_ev >= 0
        if pending and self.eng.unbounded:
            return  # the wake-up pending takes every piece, whenever it comes
        busy = self.busy
        time = (ready if ready > busy else busy) - self.ahead
        if not pending or time < self.wake_at:
            # ``_arm``, whose test this repeats
            self.wake_at = time
            self.wake_ev = self.eng.wake(time, self)

    def wake(self, ev: int) -> None:
        if ev != self.wake_ev:
            return  # superseded by an earlier wake-up
        self.wake_ev = -1
        self.stalled = False
        eng = self.eng
        ahead = self.ahead
        limit = _INF if eng.unbounded else eng.env.now + ahead + _TOL
        queue = self.queue
        flit_mode = eng.flit_mode
        if not (flit_mode or self.limited):
            self._whole(limit)
            return
        while queue:
            ready, mid, _, piece = queue[0]
            busy = self.busy
            start = ready if ready > busy else busy
            if start > limit:
                self._arm(start - 0.5 * ahead)
                return
            _pop(queue)
            if not self._send(piece, 1 if flit_mode else piece.flits, start):
                _push(queue, (piece.ready, mid, piece.index, piece))
            if self.stalled:
                return


    def _whole(self, limit: float) -> None:
        """``wake``'s loop without credits in message mode: ``_send`` and ``_flush`` of
        whole pieces inlined, and into an accelerator ``Sink.accept`` too (the port counts
        no credits); the same arithmetic, the hot path of switched runs."""
        queue = self.queue
        tf = self.eng.flit_time
        wire = self.wire
        far = self.far
        accept = far.accept
        sink = far if isinstance(far, Sink) else None
        rx, land, deliver = (sink.rx, sink.land, sink.deliver) if sink is not None else (0.0, 0.0, None)
        pop = _pop
        while queue:
            ready, _, _, piece = queue[0]
            busy = self.busy
            start = ready if ready > busy else busy
            if start > limit:
                self._arm(start - 0.5 * self.ahead)
                return
            pop(queue)
            count = piece.flits
            self.busy = start + count * tf
            self.flits += count
            up = piece.up
            if up is not None:
                ret = up.ret
                for k in range(count):
                    up.release(start + k * tf + ret)
                piece.up = None
            arrive = piece.ready = start + tf + wire
            if deliver is None:
                accept(piece, self)
                continue
            landed = arrive + (count - 1) * tf + rx + land
            msg = piece.msg
            msg.left -= count
            if landed > msg.landed:
                msg.landed = landed
            if msg.left == 0:
                deliver(msg)


class DrainPort(Port):
    """A one-level switch's output into an accelerator in an open loop (no credits
    anywhere, no switch behind a switch): :class:`QueuePort` without pieces.

    The network's ``send`` hands it entries ``(ready, message id, flit index, flits,
    message)`` straight into ``pending`` (and arms it as ``QueuePort.enqueue``
    would). A wake-up merges them into the queue: sorted at once when the queue is
    empty (a sorted list is a heap), so one sort replaces a push per piece; once
    ``eng.unbounded`` it takes all in order without popping. The departures, the
    order (ready, message id, flit index; unique keys) and the arithmetic are those
    of :class:`QueuePort` into a :class:`Sink` (its ``_whole``, and in flit
    mode its one-flit pieces), so the results are the same bit for bit.
    """

    __slots__ = ("pending", "queue", "sink")

    def __init__(self, eng: Engine, name: str, wire: float, ret: float, far: Sink, lookahead: float) -> None:
        super().__init__(eng, name, wire, ret, far, None)
        self.sink = far
        self.queue: list[tuple[float, int, int, int, Message]] = []
        self.pending: list[tuple[float, int, int, int, Message]] = []
        if eng.horizon > 0:
            self.ahead = lookahead

    def wake(self, ev: int) -> None:
        if ev != self.wake_ev:
            return  # superseded by an earlier wake-up
        self.wake_ev = -1
        eng = self.eng
        tf = eng.flit_time
        wire = self.wire
        sink = self.sink
        rx, land, deliver = sink.rx, sink.land, sink.deliver
        busy = self.busy
        flits = 0
        if eng.unbounded:
            # nothing can be sent any more (see Engine.unbounded): take all, in order
            entries = self.queue
            entries += self.pending
            entries.sort()
            self.queue = []
            self.pending = []
            for ready, _, _, count, msg in entries:
                start = ready if ready > busy else busy
                busy = start + count * tf
                flits += count
                landed = start + tf + wire + (count - 1) * tf + rx + land
                msg.left -= count
                if landed > msg.landed:
                    msg.landed = landed
                if msg.left == 0:
                    self.busy = busy  # deliveries may read the figures
                    deliver(msg)
            self.busy = busy
            self.flits += flits
            return
        self._merge()
        limit = eng.env.now + self.ahead + _TOL
        queue = self.queue
        pop = heapq.heappop
        while queue:
            ready, _, _, count, msg = queue[0]
            busy = self.busy
            start = ready if ready > busy else busy
            if start > limit:
                self._arm(start - 0.5 * self.ahead)
                return
            pop(queue)
            self.busy = start + count * tf
            self.flits += count
            landed = start + tf + wire + (count - 1) * tf + rx + land
            msg.left -= count
            if landed > msg.landed:
                msg.landed = landed
            if msg.left == 0:
                deliver(msg)  # may send: new entries join the queue before the next decision
                if self.pending:
                    self._merge()
                    queue = self.queue

    def arm(self, time: float) -> None:
        """Wake up at ``time`` unless a wake-up is pending no later (the network's ``send``)."""
        self._arm(time)

    def _merge(self) -> None:
        pending = self.pending
        if not pending:
            return
        queue = self.queue
        if queue:
            queue += pending
            heapq.heapify(queue)
            pending.clear()
        else:
            pending.sort()
            self.queue = pending
            self.pending = queue


def split_flits(flits: int, ways: int, offset: int) -> list[tuple[int, int]]:
    """Spread ``flits`` over ``ways`` targets round-robin from target ``offset``.

    Returns (target, count) for every target that gets at least one flit, in
    the order the first flits go: a message's per-port share (paper C.4).
    """
    if ways == 1:
        return [(0, flits)]
    base, extra = divmod(flits, ways)
    out = []
    for i in range(min(ways, flits)):
        target = (offset + i) % ways
        out.append((target, base + (1 if i < extra else 0)))
    return out

