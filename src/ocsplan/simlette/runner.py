"""Data-driven execution of a workload: the node state machines.

Node x starts phase k at the moment every message addressed to it in phases
before k has landed (``landed`` carries the deferred arrival time), and hands
all of phase k's messages to the network at once; its ports serialize them.
With ``barrier`` every node instead starts phase k when the last message of
phase k - 1 anywhere has landed (a kernel boundary between phases).
The run ends when the event queue is empty; a node still waiting then means a
deadlock, which is reported rather than hidden.

A *direct* network (:attr:`~ocsplan.simlette.network.Network.direct`) knows a
message's landing when it is sent (``Network.land``): such a run needs no events
and no message objects; landings wait in a work list, in the order of the sends.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from ..errors import OcsplanError
from ..gcpause import paused_gc
from .engine import Engine, Message
from .network import Network
from .traffic import Workload

__all__ = ["Runner", "SimulationError", "paused_gc"]


class SimulationError(OcsplanError):
    """The simulation could not complete (a deadlock or an inconsistent workload)."""


class Runner:
    """One workload on one network; ``run()`` returns the completion time in seconds."""

    def __init__(
        self, workload: Workload, eng: Engine,
        network: Callable[[Engine, Callable[[Message], None]], Network],
        barrier: bool = False,
    ) -> None:
        self.w = workload
        self.barrier = barrier
        nodes = workload.nodes
        self.total = [sum(workload.expect[x][k] for x in nodes) for k in range(workload.phases)]
        self.count = [0] * workload.phases
        self.last = 0.0  # latest landing so far (barrier mode)
        self.eng = eng
        self.inbox: deque[tuple[int, int, float]] = deque()  # direct: (dst, phase, landed)
        self.net = network(eng, self._receive)
        self.net.start(workload)
        # direct networks decide without events: deliveries wait in the inbox (no recursion)
        self.direct = self.net.direct
        if not self.direct:
            eng.open()
        self.phase = dict.fromkeys(workload.nodes, 0)
        self.got = {x: [0] * workload.phases for x in workload.nodes}
        self.ready = dict.fromkeys(workload.nodes, 0.0)
        # latest landing per node and phase: a message of a later phase may be
        # decided (look-ahead) before the node has all of its earlier phase
        self.arrived = {x: [0.0] * workload.phases for x in workload.nodes}
        self.finish: dict[int, float] = {}
        self.index = {x: i for i, x in enumerate(workload.nodes)}
        widest = max((len(p) for x in workload.nodes for p in workload.sends[x]), default=0)
        self.stride = 1 + widest  # message ids: (node, phase, position) in one integer
        self.open = len(workload.nodes)  # nodes yet to begin their last phase

    def _begin(self, x: int) -> None:
        k = self.phase[x]
        t = self.ready[x]
        if self.direct:
            self.net.land_all(x, self.w.sends[x][k], t, k, self.inbox)
        else:
            self.net.send_all(x, self.w.sends[x][k], t, k, (self.index[x] * self.w.phases + k) * self.stride)
        if k == self.w.phases - 1:
            self.open -= 1
            if not self.open:
                self.net.final()  # every node has sent its last phase

    def _advance(self, x: int) -> None:
        h = self.w.phases
        expect = self.w.expect[x]
        got = self.got[x]
        arrived = self.arrived[x]
        while self.phase[x] < h and got[self.phase[x]] == expect[self.phase[x]]:
            if arrived[self.phase[x]] > self.ready[x]:
                self.ready[x] = arrived[self.phase[x]]
            self.phase[x] += 1
            if self.phase[x] < h:
                self._begin(x)
        if self.phase[x] == h and x not in self.finish:
            self.finish[x] = self.ready[x]

    def _receive(self, msg: Message) -> None:
        if self.direct:
            self.inbox.append((msg.dst, msg.phase, msg.landed))
        else:
            self.arrive(msg.dst, msg.phase, msg.landed)  # ``deliver``, one call less (hot path)

    def deliver(self, msg: Message) -> None:
        self.arrive(msg.dst, msg.phase, msg.landed)

    def arrive(self, x: int, phase: int, landed: float) -> None:
        """A message of ``phase`` for node ``x`` has landed at ``landed``."""
        got = self.got[x]
        got[phase] += 1
        arrived = self.arrived[x]
        if landed > arrived[phase]:
            arrived[phase] = landed
        if got[phase] > self.w.expect[x][phase]:
            raise SimulationError(
                f"node {x} got more phase-{phase} messages than the schedule sends")
        if not self.barrier:
            # only the current phase's last message moves the node on
            if phase == self.phase[x] and got[phase] == self.w.expect[x][phase]:
                self._advance(x)
            return
        self.last = max(self.last, landed)
        self.count[phase] += 1
        if self.count[phase] == self.total[phase]:
            self._release(phase + 1)

    def _release(self, k: int) -> None:
        """Barrier mode: every node starts phase k when phase k - 1 has landed everywhere."""
        while True:
            for x in self.w.nodes:
                self.phase[x] = k
                self.ready[x] = self.last
                if k == self.w.phases:
                    self.finish[x] = self.last
                else:
                    self._begin(x)
            if k == self.w.phases or self.total[k]:
                return
            k += 1

    def _drain(self) -> None:
        """Direct networks: take the landings in the order they were sent."""
        inbox, arrive, pop = self.inbox, self.arrive, self.inbox.popleft
        if self.barrier:
            while inbox:
                arrive(*pop())
            return
        # ``arrive`` without barrier, inlined: count, keep the latest, move the node on
        got, arrived, phase, expect = self.got, self.arrived, self.phase, self.w.expect
        advance = self._advance
        while inbox:
            x, k, landed = pop()
            row = got[x]
            row[k] += 1
            if landed > arrived[x][k]:
                arrived[x][k] = landed
            if row[k] >= expect[x][k]:
                if row[k] > expect[x][k]:
                    raise SimulationError(f"node {x} got more phase-{k} messages than the schedule sends")
                if k == phase[x]:
                    advance(x)

    def run(self) -> float:
        if self.w.phases == 0:
            return 0.0
        # Pieces and messages are freed by reference counting; the cyclic
        # collector would only rescan the (large, long-lived) workload again
        # and again, so it pauses for the run.
        with paused_gc():
            if not self.direct:
                self.eng.hold()  # wake-ups superseded before the run never reach SimPy
            if self.barrier:
                self._release(0)
            else:
                for x in self.w.nodes:
                    self._begin(x)
                for x in self.w.nodes:
                    self._advance(x)
            self._drain()
            self.eng.run()
        waiting = [x for x in self.w.nodes if x not in self.finish]
        if waiting:
            x = waiting[0]
            k = self.phase[x]
            raise SimulationError(
                f"{self.w.name}: {len(waiting)} nodes never finished (deadlock?); "
                f"node {x} waits in phase {k} with {self.got[x][k]} of "
                f"{self.w.expect[x][k]} messages")
        return max(self.finish.values())
