"""Runtime networks: where a message leaves its node, which ports it crosses,
and what the analytical model charges for it.

Every network offers the same three calls to the simulator:
``send(msg, t)`` hands a message issued at time t to its first ports;
``latency(src, dst, gen)`` is the unloaded hop latency (Table 9 budget);
``resources(src, dst, gen)`` lists the bandwidth resources (key, bytes/s) the
transfer loads, from which :func:`ocsplan.simlette.report.analytical` forms
Eq. 1 on the fabric's own paths.

- :class:`IdealNetwork`: the closed form's world. Each logical edge (x, g) is
  one link of p_g * R with fixed latency lambda, no flits, no credits.
- :class:`CircuitNetwork`: OCS circuits (:class:`~ocsplan.simlette.fabric.CircuitMap`);
  a message is spread over the p_g circuits of its edge.
- :class:`SwitchedNetwork`: EPS rails (one switch per port index, or one leaf
  per rack and port index under spines), or a hybrid whose leaves are joined
  by level-2 OCS circuits; messages are sprayed over all L ports and over
  equal uplinks (paper App. C.7).

Responses: each landed message sends one write response (a 64 B TL flit on
the response channel) back to its originator. It needs a response credit of
the completer's port and is charged the unloaded hop latency but no link
bandwidth (it rides in DL-flit slots); it does not gate the collective
(persistent kernels: done when the last data lands, paper App. C.4).
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Sequence
from fractions import Fraction

from ..realization.fabrics import FabricSpec
from .circuitmap import CircuitMap, Link, RackRoutes
from .engine import (
    DirectFlitPort,
    DirectPort,
    DrainPort,
    Engine,
    FifoPort,
    Message,
    Piece,
    Port,
    QueuePort,
    Sink,
    Switch,
    split_flits,
)
from .timing import Stages
from .traffic import Send, Workload

__all__ = ["CircuitNetwork", "CircuitWiring", "IdealNetwork", "Network", "SwitchedNetwork"]

Deliver = Callable[[Message], None]
Resource = tuple[Hashable, float]


def _closed(msg: Message) -> None:
    raise RuntimeError("a closed network delivered a message")


def _no_route(dst: int) -> list[Port]:
    raise RuntimeError("a closed network routed a message")


class Network:
    """Shared parts: the sink, the port table, responses and their credits."""

    def __init__(self, eng: Engine, stages: Stages, rate: float, deliver: Deliver,
                 rsp_credits: int | None) -> None:
        self.eng = eng
        self.stages = stages
        self.rate = rate
        self._deliver = deliver
        self.sink = Sink(eng, stages.rx, stages.land, self._landed)
        self.ports: dict[Hashable, Port] = {}
        self.rsp_credits = rsp_credits
        self._rsp: dict[Hashable, list[float]] = {}
        self._rsp_free: dict[Hashable, int] = {}
        self.acked = 0.0
        # True when ports decide as pieces arrive (no events; see engine.DirectPort)
        self.direct = False
        # True when ``latency`` and ``resources`` depend on (src, gen) alone
        self.by_edge = False
        # least time from a decision anywhere to an arrival in a switch output queue
        self.lookahead = (eng.flit_time + stages.wire(1) + stages.switch_in) * (1 - 1e-9)

    # subclasses
    def send(self, msg: Message, t: float) -> None:
        raise NotImplementedError

    def start(self, workload: Workload) -> None:
        """The run is about to start ``workload`` (the runner says so)."""

    def final(self) -> None:
        """Every message has been handed to the network (the runner says so)."""

    def send_all(self, src: int, sends: Sequence[Send], t: float, phase: int, base: int) -> None:
        """``send`` each of ``src``'s ``sends`` of ``phase`` in order, all at ``t``, as
        messages with ids ``base``, ``base + 1``, ..."""
        send = self.send
        for i, s in enumerate(sends):
            send(Message(src, s.dst, s.gen, phase, s.nbytes, s.flits, base + i), t)

    def land(self, src: int, s: Send, t: float) -> float:
        """Direct networks: send ``s`` from ``src`` at ``t`` and return when it lands
        (what ``send`` and the landing do, without a message object)."""
        raise NotImplementedError

    def land_all(self, src: int, sends: Sequence[Send], t: float, phase: int,
                 inbox: deque[tuple[int, int, float]]) -> None:
        """:meth:`land` for each of ``src``'s ``sends`` of ``phase`` in order, all sent at
        ``t``: ``(dst, phase, landed)`` of each into ``inbox``."""
        land, put = self.land, inbox.append
        for s in sends:
            put((s.dst, phase, land(src, s, t)))

    def latency(self, src: int, dst: int, gen: int) -> float:
        raise NotImplementedError

    def resources(self, src: int, dst: int, gen: int) -> list[Resource]:
        raise NotImplementedError

    def response_port(self, msg: Message) -> Hashable:
        return (msg.dst, msg.gen)

    def phase_cost(self, workload: Workload, k: int) -> float | None:
        """Phase ``k``'s term of :func:`~ocsplan.simlette.report.analytical` computed more
        cheaply with the same float operations, or None to let it iterate ``latency`` and
        ``resources``."""
        return None

    def close(self) -> None:
        """The run is over and its figures read: drop the callbacks that close cycles
        (sink -> network, network -> runner), so the run's ports and messages are
        freed by reference counting now rather than by a pass of the cyclic collector."""
        self.sink.deliver = _closed
        self._deliver = _closed

    # shared
    def port_list(self) -> Iterable[Port]:
        return self.ports.values()

    def _landed(self, msg: Message) -> None:
        self._respond(msg)
        self._deliver(msg)

    def _respond(self, msg: Message) -> None:
        """The completer answers on the response channel of its port (credits, no bandwidth)."""
        t = msg.landed
        key = self.response_port(msg) if self.rsp_credits is not None else None
        if key is not None:
            free = self._rsp_free.setdefault(key, self.rsp_credits or 0)
            heap = self._rsp.setdefault(key, [])
            if free:
                self._rsp_free[key] = free - 1
            else:
                t = max(t, heapq.heappop(heap))
        hop = self.latency(msg.dst, msg.src, msg.gen)
        arrive = t + hop
        if key is not None:  # the originator's port takes it; the credit crosses back
            heapq.heappush(self._rsp[key], arrive + hop - self.stages.send - self.stages.land)
        if arrive > self.acked:
            self.acked = arrive

    def _new_port(
        self, key: Hashable, name: str, wire: float, far: Switch | Sink, credits: int | None,
        single: bool = False, direct: bool = False, drain: bool = False,
    ) -> Port:
        ret = self.stages.credit_return(wire)
        port: Port
        if drain and isinstance(far, Sink):
            # a one-level queue into an accelerator, open loop: entries, no pieces (engine.DrainPort)
            port = DrainPort(self.eng, name, wire, ret, far, self.lookahead)
        elif direct:
            # one source and no credits anywhere: it decides as pieces arrive (engine.DirectPort)
            kind = DirectFlitPort if self.eng.flit_mode else DirectPort
            port = kind(self.eng, name, wire, ret, far)
        elif single:
            port = FifoPort(self.eng, name, wire, ret, far, credits)
        else:
            port = QueuePort(self.eng, name, wire, ret, far, credits, self.lookahead)
        self.ports[key] = port
        return port


class IdealNetwork(Network):
    """Logical edges of p_g * R, latency lambda, one event per message: the closed form."""

    def __init__(self, eng: Engine, latency: float, rate: float, multiplicity: dict[int, int],
                 deliver: Deliver) -> None:
        super().__init__(eng, Stages(0, 0, 0, 0, 0, 0, 0), rate, deliver, None)
        self.lam = latency
        self.multiplicity = multiplicity
        self.free: dict[tuple[int, int], float] = {}
        # bytes per edge, as counts of each message size (summed exactly in ``load``)
        self._sizes: dict[tuple[int, int], dict[tuple[int, int], int]] = {}
        self._rates: dict[int, float] = {}  # p_g * R per generator
        # a node's edge serves its messages in the node's order, whatever the order of events
        # elsewhere: every landing is known at the send, so no events are needed
        self.direct = True
        self.by_edge = True

    @property
    def load(self) -> dict[tuple[int, int], Fraction]:
        """Bytes each logical edge (src, gen) carried."""
        return {key: sum((Fraction(*n) * c for n, c in sizes.items()), Fraction(0))
                for key, sizes in self._sizes.items()}

    def _edge(self, src: int, gen: int, nbytes: Fraction, size: float, t: float) -> float:
        """``size`` is float(nbytes)."""
        key = (src, gen)
        start = max(t, self.free.get(key, 0.0))
        rate = self._rates.get(gen)
        if rate is None:
            rate = self._rates[gen] = self.multiplicity[gen] * self.rate
        done = start + size / rate
        self.free[key] = done
        sizes = self._sizes.get(key)
        if sizes is None:
            sizes = self._sizes[key] = {}
        exact = (nbytes.numerator, nbytes.denominator)  # hashing a Fraction is slow
        sizes[exact] = sizes.get(exact, 0) + 1
        return done + self.lam

    def send(self, msg: Message, t: float) -> None:
        msg.landed = self._edge(msg.src, msg.gen, msg.nbytes, float(msg.nbytes), t)
        msg.left = 0
        self._deliver(msg)  # direct: the runner's inbox takes it

    def land(self, src: int, s: Send, t: float) -> float:
        return self._edge(src, s.gen, s.nbytes, s.size, t)

    def latency(self, src: int, dst: int, gen: int) -> float:
        return self.lam

    def resources(self, src: int, dst: int, gen: int) -> list[Resource]:
        return [(("edge", src, gen), self.multiplicity[gen] * self.rate)]


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


class SwitchedNetwork(Network):
    """EPS rails: port j of every accelerator goes to switch j (or to leaf j of its rack).

    Two levels: leaves have ``up`` uplinks; on an EPS spine, uplink u of a
    leaf goes to spine u mod S of its rail; in a hybrid, uplink u is an OCS
    circuit to the leaf of rack r XOR masks[u] (:class:`RackRoutes`).
    """

    def __init__(self, eng: Engine, stages: Stages, rate: float, deliver: Deliver, spec: FabricSpec,
                 ports: int, buffer_flits: int | None, switch_flits: int | None,
                 rsp_credits: int | None, routes: RackRoutes | None = None) -> None:
        super().__init__(eng, stages, rate, deliver, rsp_credits)
        self.spec = spec
        self.L = ports
        self.buffer_flits = buffer_flits
        self.switch_flits = switch_flits
        self.routes = routes
        self.two = spec.two_level
        self.hybrid = routes is not None
        self.rack_size = spec.rack_size if self.two else max(spec.accelerators, 1)
        self.up = spec.levels[0].up if self.two else 0
        if self.two and not self.hybrid:
            spines = math.ceil(spec.racks * self.up / spec.levels[1].radix)
            self.spines = max(1, min(self.up, spines))
        else:
            self.spines = 0
        self.pointer: dict[int, int] = {}
        self._splits: dict[tuple[int, int], tuple[tuple[int, int, int], ...]] = {}
        self.switches: dict[Hashable, Switch] = {}
        self._src: dict[int, list[Port]] = {}
        self._routed: dict[tuple[object, ...], list[Port]] = {}  # switch routes by target rack
        self._drains: dict[int, list[DrainPort | None]] = {}  # open loop: dst -> output queue per rail
        self._rsp_pointer: dict[int, int] = {}
        self.wire1 = stages.wire(1)
        self.wire_ocs = stages.wire(2, 1)
        # One level, no credits: accelerator ports decide as pieces arrive (DirectPort; on two
        # levels they keep deciding in events, which keeps the order switch ports are made in,
        # hence the busiest link named among equally busy ones, as it was) and
        # output queues feed only accelerators, so after a queue's decision the next arrival
        # in any queue needs a landing, a send and a hop: the flit, the link, RX and the
        # endpoint to land, the endpoint to send, the flit and link again, the switch.
        self.open_loop = (not self.two and buffer_flits is None and switch_flits is None and rsp_credits is None
                          and eng.horizon > 0)
        self.rails = self.L  # rails simulated (1: all in lockstep, see ``start``)
        if not self.two:  # ``latency`` of one level, the same sum
            self._hop1 = stages.send + stages.rx + stages.land + 2 * self.wire1 + stages.switch_in
        if self.open_loop:
            self.sink.deliver = self._landed_open
            tf = eng.flit_time
            self.lookahead = (tf + self.wire1 + stages.rx + stages.land + stages.send + tf + self.wire1
                              + stages.switch_in) * (1 - 1e-9)

    # -- devices (created on first use) ------------------------------------------------

    def _leaf(self, rack: int, rail: int) -> Switch:
        key = ("leaf", rack, rail)
        sw = self.switches.get(key)
        if sw is None:
            name = f"eps {rail}" if not self.two else f"leaf {rack}/{rail}"
            sw = Switch(self.eng, name, self.stages.switch_in,
                        lambda dst: self._leaf_route(rack, rail, dst, dst // self.rack_size))
            self.switches[key] = sw
        return sw

    def _leaf_route(self, rack: int, rail: int, dst: int, target: int) -> list[Port]:
        if target == rack:
            key: tuple[object, ...] = ("down", rail, dst)
            name = f"leaf {rack}/{rail} -> acc {dst}" if self.two else f"eps {rail} -> acc {dst}"
            found = self.ports.get(key)
            return [found or self._new_port(key, name, self.wire1, self.sink, self.buffer_flits,
                                            drain=self.open_loop)]
        # towards another rack the ports depend on the target rack alone: one list for all its
        # destinations (made, with its ports, at the first of them, as before)
        memo = ("leaf", rack, rail, target)
        known = self._routed.get(memo)
        if known is not None:
            return known
        self._routed[memo] = out = self._leaf_up(rack, rail, target)
        return out

    def _leaf_up(self, rack: int, rail: int, target: int) -> list[Port]:
        key: tuple[object, ...]
        if self.routes is not None:
            mask = self.routes.next_hop[rack ^ target]
            out = []
            for u, m in enumerate(self.routes.masks):
                if m == mask:
                    key = ("l2", rack, rail, u)
                    port = self.ports.get(key) or self._new_port(
                        key, f"leaf {rack}/{rail} up {u} -ocs-> leaf {rack ^ m}/{rail}",
                        self.wire_ocs, self._leaf(rack ^ m, rail), self.switch_flits)
                    out.append(port)
            return out
        out = []
        for u in range(self.up):
            key = ("up", rack, rail, u)
            port = self.ports.get(key) or self._new_port(
                key, f"leaf {rack}/{rail} up {u} -> spine {rail}/{u % self.spines}", self.wire1,
                self._spine(rail, u % self.spines), self.switch_flits)
            out.append(port)
        return out

    def _spine(self, rail: int, index: int) -> Switch:
        key = ("spine", rail, index)
        sw = self.switches.get(key)
        if sw is None:
            sw = Switch(self.eng, f"spine {rail}/{index}", self.stages.switch_in,
                        lambda dst: self._spine_route(rail, index, dst // self.rack_size))
            self.switches[key] = sw
        return sw

    def _spine_route(self, rail: int, index: int, target: int) -> list[Port]:
        memo = ("spine", rail, index, target)
        known = self._routed.get(memo)
        if known is not None:
            return known
        self._routed[memo] = out = []
        for u in range(index, self.up, self.spines):
            key = ("spdown", rail, index, target, u)
            port = self.ports.get(key) or self._new_port(
                key, f"spine {rail}/{index} -> leaf {target}/{rail} ({u})", self.wire1,
                self._leaf(target, rail), self.switch_flits)
            out.append(port)
        return out

    def _sources(self, src: int) -> list[Port]:
        ports = self._src.get(src)
        if ports is None:
            rack = src // self.rack_size
            switch = f"leaf {rack}/" if self.two else "eps "
            ports = [
                self._new_port(("src", src, j), f"acc {src} port {j} -> {switch}{j}", self.wire1,
                               self._leaf(rack if self.two else 0, j), self.switch_flits, True, self.open_loop)
                for j in range(self.rails)
            ]
            self._src[src] = ports
        return ports

    # -- the network interface -------------------------------------------------------------

    def start(self, workload: Workload) -> None:
        """Rails in lockstep: on one level without credits, rail j is a copy of rail 0 (its
        own ports, switch and output queues) fed by every message's j-th piece. When every
        message has a multiple of L flits, every port gets flits / L of each message at the
        same times, so every rail carries the same flits at the same times as rail 0; only
        rail 0 is simulated and each message completes when its rail-0 piece lands. (Queue
        ties between pieces of one message never arise: a message puts one piece in a queue.)
        """
        L = self.L
        if self.open_loop and L > 1 and all(
                s.flits % L == 0 for x in workload.nodes for sends in workload.sends[x] for s in sends):
            self.rails = 1

    def close(self) -> None:
        super().close()
        for sw in self.switches.values():  # switch -> output port -> switch
            sw.table.clear()
            sw.route = _no_route
        self._routed.clear()

    def final(self) -> None:
        # nothing more will be sent and no queue feeds another: every queue holds all it
        # will ever hold, so each decides in order of arrival at once
        if self.open_loop:
            self.eng.unbounded = True

    def send_all(self, src: int, sends: Sequence[Send], t: float, phase: int, base: int) -> None:
        """``Network.send_all``; in an open loop with every message in message mode, ``send``
        and its part loop fused over the phase (the same arithmetic in the same order)."""
        eng = self.eng
        if not self.open_loop or eng.flit_mode:
            super().send_all(src, sends, t, phase, base)
            return
        ports = self._src.get(src) or self._sources(src)
        ready = t + self.stages.send
        tf = eng.flit_time
        assert not eng.unbounded
        wire, delay = self.wire1, self.stages.switch_in
        drains, splits, L = self._drains, self._splits, self.L
        busy = [port.busy for port in ports]  # the source ports' figures, in locals
        sent = [port.flits for port in ports]
        lockstep = self.rails == 1 and L > 1
        offset = self.pointer.get(src, 0)
        parts: tuple[tuple[int, int, int], ...]
        for i, s in enumerate(sends):
            dst, flits, mid = s.dst, s.flits, base + i
            msg = Message(src, dst, s.gen, phase, s.nbytes, flits, mid)
            if lockstep:  # the rail-0 piece stands for all (see ``start``)
                count = flits // L
                msg.left = count
                parts = ((0, count, 0),)
            else:
                found = splits.get((flits, offset))
                if found is None:
                    found = splits[(flits, offset)] = self._split(flits, offset)
                parts = found
                offset = (offset + flits) % L
            row = drains.get(dst) or self._drain_row(dst)
            for j, count, index in parts:
                out = row[j] or self._drain(row, j, dst)
                b = busy[j]
                start = ready if ready > b else b
                busy[j] = start + count * tf
                sent[j] += count
                first = start + tf + wire + delay
                out.pending.append((first, mid, index, count, msg))
                # QueuePort.enqueue's wake-up (``eng.unbounded`` is only set after the last send)
                obusy = out.busy
                time = (first if first > obusy else obusy) - out.ahead
                if out.wake_ev < 0 or time < out.wake_at:
                    out.arm(time)
        for port, b, n in zip(ports, busy, sent, strict=True):
            port.busy = b
            port.flits = n
        if not lockstep:
            self.pointer[src] = offset

    def send(self, msg: Message, t: float) -> None:
        ports = self._src.get(msg.src) or self._sources(msg.src)
        ready = t + self.stages.send
        parts: tuple[tuple[int, int, int], ...]
        if self.rails == 1 and self.L > 1:  # rails in lockstep: the rail-0 piece stands for all
            count = msg.flits // self.L
            msg.left = count
            parts = ((0, count, 0),)
        else:
            offset = self.pointer.get(msg.src, 0)
            key = (msg.flits, offset)
            found = self._splits.get(key)
            if found is None:
                found = self._splits[key] = self._split(msg.flits, offset)
            parts = found
            self.pointer[msg.src] = (offset + msg.flits) % self.L
        if not self.open_loop:
            for j, count, index in parts:
                ports[j].enqueue(Piece(ready, count, msg, index))
            return
        # DirectPort / DirectFlitPort.enqueue, Switch.accept (one level: one output per
        # destination) and QueuePort.enqueue inlined, entries instead of pieces (DrainPort)
        eng = self.eng
        tf = eng.flit_time
        flit_mode = eng.flit_mode
        unbounded = eng.unbounded
        dst, mid = msg.dst, msg.mid
        # every source port has a one-cable wire into its rail's switch (switch_in delay)
        wire, delay = self.wire1, self.stages.switch_in
        row = self._drains.get(dst) or self._drain_row(dst)
        for j, count, index in parts:
            port = ports[j]
            out = row[j] or self._drain(row, j, dst)
            busy = port.busy
            port.flits += count
            if flit_mode:
                # one entry per flit, each leaving at max(its readiness, link free)
                put = out.pending.append
                r = ready
                start = r if r > busy else busy
                first = start + tf + wire + delay
                for k in range(index, index + count - 1):
                    busy = start + tf  # 1 * tf is tf exactly
                    put((start + tf + wire + delay, mid, k, 1, msg))
                    r += tf
                    start = r if r > busy else busy
                port.busy = start + tf
                put((start + tf + wire + delay, mid, index + count - 1, 1, msg))
            else:
                start = ready if ready > busy else busy
                port.busy = start + count * tf
                first = start + tf + wire + delay
                out.pending.append((first, mid, index, count, msg))
            # QueuePort.enqueue's wake-up for the first entry (the later ones of a part are no
            # earlier, so they never move it)
            if out.wake_ev >= 0 and unbounded:
                continue
            obusy = out.busy
            time = (first if first > obusy else obusy) - out.ahead
            if out.wake_ev < 0 or time < out.wake_at:
                out.arm(time)

    def _landed_open(self, msg: Message) -> None:
        """``Network._landed`` in an open loop (no response credits: ``_respond`` is the
        hop back, one level's ``latency``)."""
        arrive = msg.landed + self._hop1
        if arrive > self.acked:
            self.acked = arrive
        self._deliver(msg)

    def _drain_row(self, dst: int) -> list[DrainPort | None]:
        row: list[DrainPort | None] = [None] * self.rails
        self._drains[dst] = row
        return row

    def _drain(self, row: list[DrainPort | None], rail: int, dst: int) -> DrainPort:
        """Rail ``rail``'s output queue into ``dst`` (made on first use, as the switch routes)."""
        sw = self._leaf(0, rail)
        outs = sw.table.get(dst)
        if outs is None:
            outs = sw.table[dst] = sw.route(dst)
        out = outs[0]
        assert isinstance(out, DrainPort)
        row[rail] = out
        return out

    def _split(self, flits: int, offset: int) -> tuple[tuple[int, int, int], ...]:
        """(port, flits, index of the first) of a message's pieces from port ``offset`` on."""
        out = []
        index = 0
        for j, count in split_flits(flits, self.L, offset):
            out.append((j, count, index))
            index += count
        return tuple(out)

    def _mask_hops(self, src_rack: int, dst_rack: int) -> list[tuple[int, int]]:
        assert self.routes is not None
        hops = []
        rack = src_rack
        while rack != dst_rack:
            m = self.routes.next_hop[rack ^ dst_rack]
            hops.append((rack, m))
            rack ^= m
        return hops

    def latency(self, src: int, dst: int, gen: int) -> float:
        s = self.stages
        base = s.send + s.rx + s.land + 2 * self.wire1
        r1, r2 = src // self.rack_size, dst // self.rack_size
        if not self.two or r1 == r2:
            return base + s.switch_in
        if self.routes is None:
            return base + 2 * self.wire1 + 3 * s.switch_in
        hops = len(self._mask_hops(r1, r2))
        return base + hops * self.wire_ocs + (hops + 1) * s.switch_in

    def resources(self, src: int, dst: int, gen: int) -> list[Resource]:
        node = self.L * self.rate
        out: list[Resource] = [(("out", src), node), (("in", dst), node)]
        r1, r2 = src // self.rack_size, dst // self.rack_size
        if self.two and r1 != r2:
            if self.routes is None:
                out += [(("up", r1), node * self.up), (("down", r2), node * self.up)]
            else:
                for rack, m in self._mask_hops(r1, r2):
                    out.append((("l2", rack, m), node * self.routes.masks.count(m)))
        return out

    def phase_cost(self, workload: Workload, k: int) -> float | None:
        """One level: every transfer has ``latency`` ``_hop1`` and loads its source's and its
        destination's L ports (``resources``); the loads summed per node in the order
        ``analytical`` sums them (node by node, message by message), as plain lists."""
        if self.two:
            return None
        if not workload.nodes:
            return 0.0
        node = self.L * self.rate
        size = max(workload.nodes) + 1  # destinations are nodes too
        out = [0.0] * size
        into = [0.0] * size
        any_sent = False
        for src in workload.nodes:
            sends = workload.sends[src][k]
            if not sends:
                continue
            any_sent = True
            for s in sends:
                share = s.size / node
                out[src] += share
                into[s.dst] += share
        if not any_sent:
            return 0.0  # no term (adding 0.0 changes no sum)
        return self._hop1 + max(max(out), max(into))

    def response_port(self, msg: Message) -> Hashable:
        j = self._rsp_pointer.get(msg.dst, 0)
        self._rsp_pointer[msg.dst] = (j + 1) % self.L
        return (msg.dst, j)
