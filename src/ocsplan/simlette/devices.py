"""Devices at the far end of a port: the EPS :class:`Switch` and the receiving accelerator's :class:`Sink`.

A port hands its flits to a device (:class:`Device`) stamped with the time they
arrive there: a switch adds its RX and core latency and queues them on its output
ports, a sink releases the credits and lands the message in memory.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Protocol

from .engine import Engine, Message, Piece, PortLike

__all__ = ["MAX_SPRAY_FLITS", "SPRAYS", "Device", "Sink", "Spray", "Switch", "parse_spray"]

SPRAYS = ("packet", "message", "flit-K")
MAX_SPRAY_FLITS = 1 << 30  # flit-K: K at most this

Spray = tuple[str, int]  # ("message", 0), ("packet", 0) or ("flit", K)


def parse_spray(text: str) -> Spray | None:
    """``packet``, ``message`` or ``flit-K`` (K >= 1 DL flits) as a :data:`Spray`; None if it is none of them."""
    if text in ("packet", "message"):
        return text, 0
    found = re.fullmatch(r"flit-([0-9]{1,10})", text)
    if found is None or not 1 <= int(found[1]) <= MAX_SPRAY_FLITS:
        return None
    return "flit", int(found[1])


class Device(Protocol):
    """What a port feeds: it accepts the pieces the port hands over."""

    def accept(self, piece: Piece, port: PortLike) -> None: ...


class Switch:
    """An EPS switch: RX and core latency, then per-output-port queues.

    Equal output links to a destination (uplinks, spine down-links) share a
    message (``spray``, the granularity): by default (``message``) its flits
    are cut into as many contiguous blocks and block b of a message from rank
    s takes link (s + b) mod n, which spreads a rack's senders evenly; with
    ``flit-K`` the blocks are K flits each, block b still on (s + b) mod n;
    with ``packet`` the flits a message carries on rail j (one port's piece)
    stay together on link (s + j) mod n. The choice depends on the flit alone,
    never on arrival order, so message and flit mode spray alike.
    """

    __slots__ = ("block", "delay", "eng", "name", "packet", "rail", "route", "spray", "table")

    def __init__(
        self, eng: Engine, name: str, delay: float, route: Callable[[int], Sequence[PortLike]],
        spray: Spray = ("message", 0), rail: int = 0,
    ) -> None:
        self.eng = eng
        self.name = name
        self.delay = delay
        self.route = route  # destination accelerator -> candidate output ports
        self.table: dict[int, Sequence[PortLike]] = {}
        self.spray = spray
        self.rail = rail
        self.packet = spray[0] == "packet"
        self.block = spray[1] if spray[0] == "flit" else 0  # 0: a message's flits over the ways

    def accept(self, piece: Piece, port: PortLike) -> None:
        piece.ready += self.delay
        piece.up = port if port.limited else None
        msg = piece.msg
        dst = msg.dst
        outs = self.table.get(dst)
        if outs is None:
            outs = self.table[dst] = self.route(dst)
        ways = len(outs)
        if ways == 1:
            outs[0].enqueue(piece)
            return
        if self.packet:
            outs[(msg.src + self.rail) % ways].enqueue(piece)
            return
        block = self.block or -(-msg.flits // ways)
        first, end = piece.index, piece.index + piece.flits
        if first // block == (end - 1) // block:  # inside one block: no split
            outs[(msg.src + first // block) % ways].enqueue(piece)
            return
        tf = self.eng.flit_time
        a = first
        while a < end:
            b = min(end, (a // block + 1) * block)
            outs[(msg.src + a // block) % ways].enqueue(
                Piece(piece.ready + (a - first) * tf, b - a, msg, a, piece.up))
            a = b


class Sink:
    """The receiving accelerator: port RX, credit release, landing in memory."""

    __slots__ = ("deliver", "eng", "land", "rx")

    def __init__(
        self, eng: Engine, rx: float, land: float, deliver: Callable[[Message], None]
    ) -> None:
        self.eng = eng
        self.rx = rx
        self.land = land
        self.deliver = deliver

    def accept(self, piece: Piece, port: PortLike) -> None:
        tf = self.eng.flit_time
        if port.limited:
            base = piece.ready + self.rx + port.ret
            for k in range(piece.flits):
                port.release(base + k * tf)
        landed = piece.ready + (piece.flits - 1) * tf + self.rx + self.land
        msg = piece.msg
        msg.left -= piece.flits
        if landed > msg.landed:
            msg.landed = landed
        if msg.left == 0:
            self.deliver(msg)
