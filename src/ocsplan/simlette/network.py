"""Runtime networks: where a message leaves its node, which ports it crosses,
and what the analytical model charges for it. This module holds what every
technology shares (:class:`Network`); each technology has its own module.

Every network offers the same three calls to the simulator:
``send(msg, t)`` hands a message issued at time t to its first ports;
``latency(src, dst, gen)`` is the unloaded hop latency (Table 9 budget);
``resources(src, dst, gen)`` lists the bandwidth resources (key, bytes/s) the
transfer loads, from which :func:`ocsplan.simlette.report.analytical` forms
Eq. 1 on the fabric's own paths.

- :class:`~ocsplan.simlette.ideal.IdealNetwork`: the closed form's world. Each logical edge (x, g) is
  one link of p_g * R with fixed latency lambda, no flits, no credits.
- :class:`~ocsplan.simlette.circuits_net.CircuitNetwork`: OCS circuits
  (:class:`~ocsplan.simlette.circuitmap.CircuitMap`); a message is spread over the p_g circuits of its edge.
- :class:`~ocsplan.simlette.switched.SwitchedNetwork`: EPS rails (one switch per port index, or one leaf
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
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Sequence

from .devices import Sink, Switch
from .engine import Engine, Message
from .ports import DirectFlitPort, DirectPort, DrainPort, FifoPort, Port, QueuePort
from .timing import Stages
from .traffic import Send, Workload

__all__ = ["Deliver", "Network", "Resource"]

Deliver = Callable[[Message], None]
Resource = tuple[Hashable, float]


def _closed(msg: Message) -> None:
    raise RuntimeError("a closed network delivered a message")



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
        # True when ports decide as pieces arrive (no events; see ports.DirectPort)
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
        if self.rsp_credits is None:  # no response credits: the unloaded hop back
            arrive = t + self.latency(msg.dst, msg.src, msg.gen)
            if arrive > self.acked:
                self.acked = arrive
            return
        key = self.response_port(msg)
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
            # a one-level queue into an accelerator, open loop: entries, no pieces (ports.DrainPort)
            port = DrainPort(self.eng, name, wire, ret, far, self.lookahead)
        elif direct:
            # one source and no credits anywhere: it decides as pieces arrive (ports.DirectPort)
            kind = DirectFlitPort if self.eng.flit_mode else DirectPort
            port = kind(self.eng, name, wire, ret, far)
        elif single:
            port = FifoPort(self.eng, name, wire, ret, far, credits)
        else:
            port = QueuePort(self.eng, name, wire, ret, far, credits, self.lookahead)
        self.ports[key] = port
        return port
