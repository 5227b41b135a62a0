"""Switched networks: EPS rails, two-level leaf/spine EPS, and the hybrid of EPS leaves joined by OCS circuits.

Port j of every accelerator goes to switch j (or to leaf j of its rack);
messages are sprayed over all L ports and over equal uplinks (paper App. C.7).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

from ..realization.fabrics import FabricSpec
from .circuitmap import RackRoutes
from .devices import Spray, Switch
from .engine import Engine, Message, Piece
from .network import Deliver, Network, Resource
from .ports import DrainPort, Port, split_flits
from .timing import Stages
from .traffic import Send, Workload

__all__ = ["SwitchedNetwork"]

def _no_route(dst: int) -> list[Port]:
    raise RuntimeError("a closed network routed a message")


class SwitchedNetwork(Network):
    """EPS rails: port j of every accelerator goes to switch j (or to leaf j of its rack).

    Two levels: leaves have ``up`` uplinks; on an EPS spine, uplink u of a
    leaf goes to spine u mod S of its rail; in a hybrid, uplink u is an OCS
    circuit to the leaf of rack r XOR masks[u] (:class:`RackRoutes`).
    """

    def __init__(self, eng: Engine, stages: Stages, rate: float, deliver: Deliver, spec: FabricSpec,
                 ports: int, buffer_flits: int | None, switch_flits: int | None,
                 rsp_credits: int | None, routes: RackRoutes | None = None,
                 spray: Spray = ("message", 0)) -> None:
        super().__init__(eng, stages, rate, deliver, rsp_credits)
        self.spec = spec
        self.spray = spray  # granularity over equal links (:class:`Switch`)
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
        self._hops: dict[tuple[int, int], tuple[tuple[int, int], ...]] = {}  # rack pair -> OCS hops
        self._latency: dict[tuple[int, int], float] = {}  # rack pair -> ``latency``
        self._between: dict[tuple[int, int], tuple[Resource, ...]] = {}  # rack pair -> its ``resources``
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
                        lambda dst: self._leaf_route(rack, rail, dst, dst // self.rack_size), self.spray, rail)
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
                        lambda dst: self._spine_route(rail, index, dst // self.rack_size), self.spray, rail)
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
        if not self.open_loop:
            self._send_pieces(src, sends, t, phase, base)
            return
        if eng.flit_mode:
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

    def _send_pieces(self, src: int, sends: Sequence[Send], t: float, phase: int, base: int) -> None:
        """``send_all`` outside an open loop: ``send``'s pieces into the source ports (FIFO ports,
        which only queue and arm: nothing runs before the next send), its look-ups once a phase."""
        if not sends:
            return  # ``send`` makes the source ports at the first message
        ports = self._src.get(src) or self._sources(src)
        ready = t + self.stages.send
        splits, L = self._splits, self.L
        offset = self.pointer.get(src, 0)
        for i, s in enumerate(sends):
            flits = s.flits
            msg = Message(src, s.dst, s.gen, phase, s.nbytes, flits, base + i)
            parts = splits.get((flits, offset))
            if parts is None:
                parts = splits[(flits, offset)] = self._split(flits, offset)
            offset = (offset + flits) % L
            for j, count, index in parts:
                ports[j].enqueue(Piece(ready, count, msg, index))
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

    def _mask_hops(self, src_rack: int, dst_rack: int) -> tuple[tuple[int, int], ...]:
        """(rack, mask) of each OCS hop from ``src_rack`` to ``dst_rack`` (remembered per rack pair:
        ``latency`` and ``resources`` ask once per message)."""
        found = self._hops.get((src_rack, dst_rack))
        if found is not None:
            return found
        assert self.routes is not None
        hops = []
        rack = src_rack
        while rack != dst_rack:
            m = self.routes.next_hop[rack ^ dst_rack]
            hops.append((rack, m))
            rack ^= m
        found = self._hops[(src_rack, dst_rack)] = tuple(hops)
        return found

    def latency(self, src: int, dst: int, gen: int) -> float:
        r1, r2 = src // self.rack_size, dst // self.rack_size
        if not self.two or r1 == r2:
            r1 = r2 = 0  # one leaf: the same hop whatever the rack
        found = self._latency.get((r1, r2))
        if found is None:
            found = self._latency[(r1, r2)] = self._rack_latency(r1, r2)
        return found

    def _rack_latency(self, r1: int, r2: int) -> float:
        """``latency`` between racks ``r1`` and ``r2`` (equal: within a leaf)."""
        s = self.stages
        base = s.send + s.rx + s.land + 2 * self.wire1
        if r1 == r2:
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
            between = self._between.get((r1, r2))
            if between is None:
                between = self._between[(r1, r2)] = self._rack_resources(r1, r2)
            out += between
        return out

    def _rack_resources(self, r1: int, r2: int) -> tuple[Resource, ...]:
        """The resources of ``resources`` between two racks: uplinks and downlinks, or each OCS hop's circuits."""
        node = self.L * self.rate
        if self.routes is None:
            return (("up", r1), node * self.up), (("down", r2), node * self.up)
        return tuple((("l2", rack, m), node * self.routes.masks.count(m)) for rack, m in self._mask_hops(r1, r2))

    def phase_cost(self, workload: Workload, k: int) -> float | None:
        """One level: every transfer has ``latency`` ``_hop1`` and loads its source's and its
        destination's L ports (``resources``); the loads summed per node in the order
        ``analytical`` sums them (node by node, message by message), as plain lists."""
        if self.two:
            return self._two_phase_cost(workload, k)
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

    def _two_phase_cost(self, workload: Workload, k: int) -> float:
        """``phase_cost`` on two levels: ``analytical``'s loop with ``latency`` and ``resources``
        unrolled (a node's ports as lists, the resources between racks as looked up), each
        load summed in the same order, so the same floats."""
        if not workload.nodes:
            return 0.0
        node = self.L * self.rate
        size = max(workload.nodes) + 1
        out = [0.0] * size
        into = [0.0] * size
        between: dict[Hashable, float] = {}
        rack_size, latency_of, cache = self.rack_size, self.latency, self._between
        latency = 0.0
        any_sent = False
        for src in workload.nodes:
            sends = workload.sends[src][k]
            if not sends:
                continue
            any_sent = True
            r1 = src // rack_size
            for s in sends:
                dst = s.dst
                lat = latency_of(src, dst, s.gen)
                if lat > latency:
                    latency = lat
                share = s.size / node
                out[src] += share
                into[dst] += share
                r2 = dst // rack_size
                if r1 != r2:
                    found = cache.get((r1, r2))
                    if found is None:
                        found = cache[(r1, r2)] = self._rack_resources(r1, r2)
                    for key, capacity in found:
                        between[key] = between.get(key, 0.0) + s.size / capacity
        if not any_sent:
            return 0.0  # no term (adding 0.0 changes no sum)
        return latency + max(max(out), max(into), max(between.values(), default=0.0))

    def response_port(self, msg: Message) -> Hashable:
        j = self._rsp_pointer.get(msg.dst, 0)
        self._rsp_pointer[msg.dst] = (j + 1) % self.L
        return (msg.dst, j)
