"""Flit sizes and the split of a per-hop latency budget along the data path.

UALink (paper §5.2): 64-byte transaction-layer (TL) flits are packed into
640-byte data-link (DL) flits; switching and credits work on DL flits, and a
message smaller than one DL flit still occupies a whole DL flit on the wire.

The Table 9 budget (:class:`ocsplan.fabrics.LatencyBudget`) is split where the
simulator needs the parts: the sender's endpoint share before its port, port
TX and RX, cables, the EPS switch (RX + core before its output queue, TX after)
and the OCS pass-through. Unloaded, every split adds back up to
``budget.hop(...)``: 520 ns through one OCS, 810 ns through one EPS (nominal).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from ..realization.fabrics import LatencyBudget

__all__ = ["DL_FLIT", "TL_FLIT", "Stages", "dl_flits"]

DL_FLIT = 640  # bytes on the wire per data-link flit
TL_FLIT = 64  # bytes per transaction-layer flit

# Table 9 fixed terms: port TX 30 ns and RX 70 ns of the 100 ns protocol share.
_TX_SHARE = 0.3


def dl_flits(nbytes: int | Fraction | float) -> int:
    """DL flits a message of ``nbytes`` occupies (TL flits rounded up, then DL flits)."""
    if nbytes <= 0:
        return 0
    tl = math.ceil(Fraction(nbytes) / TL_FLIT)
    return -(-tl // (DL_FLIT // TL_FLIT))


@dataclass(frozen=True)
class Stages:
    """Latency of each stage of a hop, in seconds.

    ``send`` is the sender's endpoint share (SM -> L2, MMU) before its port;
    ``land`` the receiver's (L2, back to the SM) after its port's RX. A link
    costs ``tx + cables * cable + pass-throughs`` after serialization; an EPS
    switch costs ``switch_in`` (its RX and core) before its output queue and
    ``tx`` after it.
    """

    send: float
    land: float
    tx: float
    rx: float
    cable: float
    switch_in: float
    ocs: float

    @classmethod
    def from_budget(cls, budget: LatencyBudget) -> Stages:
        tx = budget.protocol * _TX_SHARE
        return cls(
            send=budget.endpoint / 2,
            land=budget.endpoint / 2,
            tx=tx,
            rx=budget.protocol - tx,
            cable=budget.cable,
            switch_in=max(0.0, budget.eps_switch - tx),
            ocs=budget.ocs_switch,
        )

    def wire(self, cables: int, ocs: int = 0) -> float:
        """Latency after a port's serializer to the far device's buffer."""
        return self.tx + cables * self.cable + ocs * self.ocs

    def credit_return(self, wire: float) -> float:
        """A credit goes back over the same link and through the sender's RX."""
        return wire + self.rx
