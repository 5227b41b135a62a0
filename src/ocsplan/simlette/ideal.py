"""The ideal network: the closed form's world, for checking the simulator against Eq. 1.

Each logical edge (x, g) is one link of p_g * R with fixed latency lambda, no
flits, no credits; every landing is known at the send, so it needs no events.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from fractions import Fraction

from .engine import Engine, Message
from .network import Deliver, Network, Resource
from .timing import Stages
from .traffic import Send, Workload

__all__ = ["IdealNetwork"]

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
        return {key: _exact_sum(sizes) for key, sizes in self._sizes.items()}

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

    def land_all(self, src: int, sends: Sequence[Send], t: float, phase: int,
                 inbox: deque[tuple[int, int, float]]) -> None:
        """:meth:`land` of each send with ``_edge`` inlined (the hot path of ideal runs): the same
        arithmetic in the same order."""
        free, rates, all_sizes, put = self.free, self._rates, self._sizes, inbox.append
        lam = self.lam
        for s in sends:
            gen = s.gen
            key = (src, gen)
            before = free.get(key, 0.0)
            start = before if before > t else t  # max(t, before)
            rate = rates.get(gen)
            if rate is None:
                rate = rates[gen] = self.multiplicity[gen] * self.rate
            done = free[key] = start + s.size / rate
            sizes = all_sizes.get(key)
            if sizes is None:
                sizes = all_sizes[key] = {}
            nbytes = s.nbytes
            exact = (nbytes.numerator, nbytes.denominator)
            sizes[exact] = sizes.get(exact, 0) + 1
            put((s.dst, phase, done + lam))

    def latency(self, src: int, dst: int, gen: int) -> float:
        return self.lam

    def resources(self, src: int, dst: int, gen: int) -> list[Resource]:
        return [(("edge", src, gen), self.multiplicity[gen] * self.rate)]

    def phase_cost(self, workload: Workload, k: int) -> float:
        """``analytical``'s phase term without its dictionaries: latency lambda and each edge's
        load summed message by message in the node's order, as there (an edge is one node's)."""
        rate, multiplicity = self.rate, self.multiplicity
        most, sent = 0.0, False
        for src in workload.nodes:
            sends = workload.sends[src][k]
            if not sends:
                continue
            sent = True
            load: dict[int, float] = {}
            for s in sends:
                load[s.gen] = load.get(s.gen, 0.0) + s.size / (multiplicity[s.gen] * rate)
            top = max(load.values())
            if top > most:
                most = top
        if not sent:
            return 0.0  # no term (adding 0.0 changes no sum)
        return (self.lam if self.lam > 0.0 else 0.0) + most


def _exact_sum(sizes: dict[tuple[int, int], int]) -> Fraction:
    """The exact sum of ``count`` messages of ``numerator / denominator`` bytes each: integers summed per
    denominator, one Fraction per denominator (the same value as summing Fractions, far fewer of them)."""
    if len(sizes) == 1:  # one message size (the common case): no sum of Fractions
        ((numerator, denominator), count), = sizes.items()
        return Fraction(numerator * count, denominator)
    by_denominator: dict[int, int] = {}
    for (numerator, denominator), count in sizes.items():
        by_denominator[denominator] = by_denominator.get(denominator, 0) + numerator * count
    if len(by_denominator) == 1:
        ((denominator, numerator),) = by_denominator.items()
        return Fraction(numerator, denominator)
    total = Fraction(0)
    for denominator, numerator in by_denominator.items():
        total += Fraction(numerator, denominator)
    return total
