"""The OCS circuit network: each logical edge owns its p_g dedicated circuits, no switching.

A message is spread over the p_g circuits of its edge
(:class:`~ocsplan.simlette.circuitmap.CircuitMap`); :class:`CircuitWiring` keeps
what one set-up derives per (rank, generator), shared by all its runs.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Sequence

from .circuitmap import CircuitMap, Link
from .engine import Engine, Message, Piece
from .network import Deliver, Network, Resource
from .ports import DirectPort, FifoPort, Port, split_flits
from .timing import Stages
from .traffic import Send

__all__ = ["CircuitNetwork", "CircuitWiring"]

class CircuitWiring:
    """What a circuit network derives per (rank, generator) from the circuits and the
    stage latencies: its ports (index, name, wire, credit return), hop latency and
    bandwidth resource. Every run of one set-up shares one (it is filled as used)."""

    __slots__ = ("latency", "ports", "resources")

    def __init__(self) -> None:
        self.ports: dict[tuple[int, int], list[tuple[int, str, float, float]]] = {}
        self.latency: dict[tuple[int, int], float] = {}
        self.resources: dict[tuple[int, int], list[Resource]] = {}


class CircuitNetwork(Network):
    """OCS circuits: each logical edge owns p_g dedicated links, no switching."""

    def __init__(self, eng: Engine, stages: Stages, rate: float, deliver: Deliver, cmap: CircuitMap,
                 buffer_flits: int | None, rsp_credits: int | None,
                 wiring: CircuitWiring | None = None) -> None:
        super().__init__(eng, stages, rate, deliver, rsp_credits)
        self.cmap = cmap
        # fixed by the circuits and stages: runs of one set-up share it (pass the same object)
        wiring = CircuitWiring() if wiring is None else wiring
        self.layout = wiring.ports
        self._latency = wiring.latency
        self._resources = wiring.resources
        # no credits anywhere and whole pieces: every port is a DirectPort
        self.direct = buffer_flits is None and rsp_credits is None and not eng.flit_mode
        self.by_edge = True
        self.buffer_flits = buffer_flits
        self.pointer: dict[tuple[int, int], int] = {}
        self._edge: dict[tuple[int, int], list[Port]] = {}
        self._hops: dict[tuple[int, int], float] = {}  # hop latency per (cables, OCS devices)

    def _ports(self, src: int, gen: int) -> list[Port]:
        ports = self._edge.get((src, gen))
        if ports is None:
            found = self.layout.get((src, gen))
            if found is None:
                found = self.layout[(src, gen)] = [
                    (link.port, f"acc {src} port {link.port} -> acc {src ^ gen if link.peer is None else link.peer}",
                     wire, self.stages.credit_return(wire))
                    for link in self.cmap.of(src, gen)
                    for wire in (self.stages.wire(link.cables, link.ocs),)
                ]
            ports = []
            eng, sink, credits, table = self.eng, self.sink, self.buffer_flits, self.ports
            kind = DirectPort if self.direct else FifoPort
            for index, name, wire, ret in found:
                port = table[(src, index)] = kind(eng, name, wire, ret, sink, credits)
                ports.append(port)
            self._edge[(src, gen)] = ports
        return ports

    def send(self, msg: Message, t: float) -> None:
        ports = self._edge.get((msg.src, msg.gen)) or self._ports(msg.src, msg.gen)
        ready = t + self.stages.send
        if len(ports) == 1:
            if self.direct:
                self._direct(ports[0], msg, ready)
            else:
                ports[0].enqueue(Piece(ready, msg.flits, msg))
            return
        key = (msg.src, msg.gen)
        offset = self.pointer.get(key, 0)
        index = 0
        for i, count in split_flits(msg.flits, len(ports), offset):
            ports[i].enqueue(Piece(ready, count, msg, index))
            index += count
        self.pointer[key] = (offset + msg.flits) % len(ports)

    def land(self, src: int, s: Send, t: float) -> float:
        """A whole message over DirectPorts into the sink and its response (no credits):
        ``send``, ``_direct`` or DirectPort.enqueue, Sink.accept and ``_respond`` with
        the same arithmetic in the same order."""
        gen = s.gen
        ports = self._edge.get((src, gen)) or self._ports(src, gen)
        ready = t + self.stages.send
        tf = self.eng.flit_time
        sink = self.sink
        rx, land = sink.rx, sink.land
        count = s.flits
        landed = 0.0
        if len(ports) == 1:
            port = ports[0]
            busy = port.busy
            start = ready if ready > busy else busy
            port.busy = start + count * tf
            port.flits += count
            landed = start + tf + port.wire + (count - 1) * tf + rx + land
        else:
            key = (src, gen)
            offset = self.pointer.get(key, 0)
            for i, part in split_flits(count, len(ports), offset):
                port = ports[i]
                busy = port.busy
                start = ready if ready > busy else busy
                port.busy = start + part * tf
                port.flits += part
                arrive = start + tf + port.wire
                piece = arrive + (part - 1) * tf + rx + land
                if piece > landed:
                    landed = piece
            self.pointer[key] = (offset + count) % len(ports)
        # _respond without response credits: the hop back, for ``acked``
        found = self._latency.get((s.dst, gen))
        arrive = landed + (found if found is not None else self.latency(s.dst, src, gen))
        if arrive > self.acked:
            self.acked = arrive
        return landed

    def land_all(self, src: int, sends: Sequence[Send], t: float, phase: int,
                 inbox: deque[tuple[int, int, float]]) -> None:
        """:meth:`land` over a node's phase in one call (the hot loop of a direct run):
        the same arithmetic in the same order, ``split_flits`` inlined."""
        edges, pointer, back = self._edge, self.pointer, self._latency
        ready = t + self.stages.send
        tf = self.eng.flit_time
        sink = self.sink
        rx, land = sink.rx, sink.land
        acked = self.acked
        put = inbox.append
        for s in sends:
            gen, dst, count = s.gen, s.dst, s.flits
            ports = edges.get((src, gen)) or self._ports(src, gen)
            ways = len(ports)
            if ways == 1:
                port = ports[0]
                busy = port.busy
                start = ready if ready > busy else busy
                port.busy = start + count * tf
                port.flits += count
                landed = start + tf + port.wire + (count - 1) * tf + rx + land
            else:
                landed = 0.0
                key = (src, gen)
                offset = pointer.get(key, 0)
                base, extra = divmod(count, ways)
                for i in range(min(ways, count)):  # split_flits(count, ways, offset)
                    port = ports[(offset + i) % ways]
                    part = base + 1 if i < extra else base
                    busy = port.busy
                    start = ready if ready > busy else busy
                    port.busy = start + part * tf
                    port.flits += part
                    piece = start + tf + port.wire + (part - 1) * tf + rx + land
                    if piece > landed:
                        landed = piece
                pointer[key] = (offset + count) % ways
            found = back.get((dst, gen))
            arrive = landed + (found if found is not None else self.latency(dst, src, gen))
            if arrive > acked:
                acked = arrive
            put((dst, phase, landed))
        self.acked = acked

    def _direct(self, port: Port, msg: Message, ready: float) -> None:
        """A whole message over one DirectPort into the sink: DirectPort.enqueue and
        Sink.accept without the piece (the same arithmetic, in the same order)."""
        busy = port.busy
        start = ready if ready > busy else busy
        tf = self.eng.flit_time
        count = msg.flits
        port.busy = start + count * tf
        port.flits += count
        sink = self.sink
        landed = start + tf + port.wire + (count - 1) * tf + sink.rx + sink.land
        msg.left -= count
        if landed > msg.landed:
            msg.landed = landed
        if msg.left == 0:
            self._landed(msg)

    def _hop(self, link: Link) -> float:
        s = self.stages
        return s.send + s.wire(link.cables, link.ocs) + s.rx + s.land

    def latency(self, src: int, dst: int, gen: int) -> float:
        key = (src, gen)
        found = self._latency.get(key)
        if found is None:
            hops = self._hops
            best = 0.0
            for link in self.cmap.of(src, gen):  # max over the links of _hop(link), each kind once
                kind = (link.cables, link.ocs)
                hop = hops.get(kind)
                if hop is None:
                    hop = hops[kind] = self._hop(link)
                if hop > best:
                    best = hop
            found = self._latency[key] = best
        return found

    def resources(self, src: int, dst: int, gen: int) -> list[Resource]:
        key = (src, gen)
        found = self._resources.get(key)
        if found is None:
            found = self._resources[key] = [(("edge", src, gen), len(self.cmap.of(src, gen)) * self.rate)]
        return found

    def response_port(self, msg: Message) -> Hashable:
        return (msg.dst, self.cmap.of(msg.dst, msg.gen)[0].port)

