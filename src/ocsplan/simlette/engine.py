"""Discrete-event core: the engine that schedules the ports' decisions, and what travels.

:class:`Engine` holds one run's SimPy environment, flit time, mode and event
count; :class:`Message` is one transfer of the schedule and :class:`Piece` a
train of its DL flits as ports and devices hand them on. The ports
(:mod:`~ocsplan.simlette.ports`) and the switch and sink they feed
(:mod:`~ocsplan.simlette.devices`) have their own modules, as SimPy keeps its
environment apart from its resources: the ports import this module, never the
reverse (:class:`PortLike` is all it needs of them).
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from functools import partial
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import simpy


__all__ = ["Engine", "Message", "Piece", "PortLike"]


def _run(jobs: list[tuple[Callable[[int], None], int]], _event: object) -> None:
    """A SimPy timeout's callback: each of its jobs, ``callback(event id)``, in order."""
    for callback, eid in jobs:
        callback(eid)


class Message:
    """One transfer of the schedule between two accelerators, as it travels."""

    __slots__ = ("dst", "flits", "gen", "landed", "left", "mid", "nbytes", "phase", "src")

    def __init__(
        self, src: int, dst: int, gen: int, phase: int, nbytes: Fraction, flits: int, mid: int = 0
    ) -> None:
        self.mid = mid  # fixed by the workload: ties between pieces never depend on event order
        self.src = src
        self.dst = dst
        self.gen = gen
        self.phase = phase
        self.nbytes = nbytes
        self.flits = flits
        self.left = flits
        self.landed = 0.0


class Piece:
    """Consecutive DL flits of one message: flit k is available at ready + k * flit time.

    ``index`` is the position of its first flit in the message.
    """

    __slots__ = ("flits", "index", "msg", "ready", "up")

    def __init__(
        self, ready: float, flits: int, msg: Message, index: int = 0, up: PortLike | None = None
    ) -> None:
        self.ready = ready
        self.flits = flits
        self.msg = msg
        self.index = index
        self.up = up  # the port whose far buffer (a switch input) holds these flits


class PortLike(Protocol):
    """What the engine, a piece and the devices use of a port
    (:class:`~ocsplan.simlette.ports.Port`), so this module needs no import of the ports."""

    @property
    def limited(self) -> bool: ...
    @property
    def ret(self) -> float: ...
    @property
    def wake_ev(self) -> int: ...
    def wake(self, ev: int) -> None: ...
    def release(self, time: float) -> None: ...
    def enqueue(self, piece: Piece) -> None: ...


class Engine:
    """Shared state of one run: the SimPy environment, flit time, mode, counters.

    ``horizon`` is how far ahead a FIFO port may decide (see :class:`~ocsplan.simlette.ports.FifoPort`).
    ``events=False`` leaves the environment (and SimPy's import) to :meth:`open`:
    the runner opens it unless the network is direct (:class:`~ocsplan.simlette.ports.DirectPort` only),
    which schedules no event.
    """

    env: simpy.Environment  # set by ``open``
    _timeout: type[simpy.Timeout]  # SimPy's ``env.timeout`` without the method call

    def __init__(self, flit_time: float, flit_mode: bool, horizon: float = 1e-6, events: bool = True) -> None:
        # horizon 0 turns every look-ahead off: one decision per event (tests compare)
        if events:
            self.open()
        self._eid = 0
        self.flit_time = flit_time
        self.flit_mode = flit_mode
        self.horizon = horizon
        self.events = 0
        # set when nothing can reach a switch output queue any more that is not queued
        # yet (no sends left, no switch-to-switch links): queues decide everything at once
        self.unbounded = False
        self.early: list[tuple[float, int, PortLike]] | None = None  # wake-ups held (see ``hold``)

    def open(self) -> None:
        """Make the SimPy environment, unless made already."""
        if "env" not in self.__dict__:
            import simpy

            self.env = simpy.Environment()
            self._timeout = simpy.Timeout
            # time -> the latest timeout made for it and the callbacks it runs, in order
            self._pending: dict[float, tuple[simpy.Timeout, list[tuple[Callable[[int], None], int]]]] = {}

    def hold(self) -> None:
        """Until :meth:`run`, keep the ports' wake-ups in a list instead of scheduling them.

        A port drops a wake-up superseded by an earlier one when it fires, so one
        superseded before the run starts would only pass through SimPy's queue: ``run``
        schedules the others, in the order they were made (SimPy's order among equal
        times), at the same times. The count of events is unchanged. (A one-shot
        schedule arms every queue ~25 times before the run; one wake-up each remains.)
        """
        self.early = []

    def run(self) -> None:
        """Run the events scheduled so far (none if the environment was never opened)."""
        if "env" in self.__dict__:
            early, self.early = self.early, None
            for time, eid, port in early or ():
                if port.wake_ev == eid:  # still the port's wake-up (ids only grow)
                    self._schedule(time, eid, port.wake)
            self.env.run()

    def at(self, time: float, callback: Callable[[int], None]) -> int:
        """Schedule ``callback(event id)`` at absolute ``time`` (not before now); returns the id."""
        eid = self._eid
        self._eid = eid + 1
        self.events += 1
        self._schedule(time, eid, callback)
        return eid

    def wake(self, time: float, port: PortLike) -> int:
        """``at(time, port.wake)``, kept back while :meth:`hold` holds; returns the id."""
        eid = self._eid
        self._eid = eid + 1
        self.events += 1
        early = self.early
        if early is None:
            self._schedule(time, eid, port.wake)
        else:
            early.append((time, eid, port))
        return eid

    def _schedule(self, time: float, eid: int, callback: Callable[[int], None]) -> None:
        """SimPy's public timeout, a triggered event at NORMAL priority after ``delay``; the
        callback gets this engine's event id (ports use it to drop superseded wake-ups).

        SimPy runs events by (time, priority, insertion): a callback due when the latest
        timeout made for that time is due, that timeout still pending, would run right
        after that timeout's callbacks (no event can come between them), so it joins them:
        the same order with one SimPy event less (lockstep runs share a few hundred
        times among hundreds of thousands of wake-ups). Forgetting a time only costs a
        timeout, so the table is cleared when it grows.
        """
        env = self.env
        now = env.now
        delay = time - now
        if not delay > 0.0:
            delay = 0.0
        at = now + delay  # the time SimPy keys it by
        pending = self._pending
        found = pending.get(at)
        if found is not None and found[0].callbacks is not None:  # not fired yet
            found[1].append((callback, eid))
            return
        if len(pending) > 4096:
            pending.clear()
        jobs = [(callback, eid)]
        timeout = self._timeout(env, delay)
        timeout.callbacks.append(partial(_run, jobs))
        pending[at] = (timeout, jobs)
