"""When the last flit of a hybrid phase lands: every OCS uplink a first-come queue (issue 44).

A leaf's output port serves pieces in the order their first flit arrives
(:class:`~ocsplan.simlette.ports.QueuePort`), whole pieces back to back in
message mode. Every (segment, source) pair of a phase enters the uplink of
its first hop when its source port has sent the flits before it, and the
uplink of its next hop one flit and one OCS hop (cable and switch core) after
it started leaving the previous one. With the arrivals known, a queue's
departures are a max-plus scan: the i-th piece leaves at
S_i + max_{g <= i} (a_g - S_{g-1}), S the flits queued up to it. Arrivals at
a second hop depend on departures at the first, so the scan is repeated once
per hop and once more. A pair lands ``latency[h]`` plus its flits, the flits sent before
it and its waits after the phase starts: the busiest link's flits no longer
sit after the whole path's latency, each queue's wait is charged where it
occurs (on the paper's 512-rank hybrid this is Simlette's time to the flit).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

__all__ = ["fifo_departures", "pair_completion"]

Ints = NDArray[np.int64]
Floats = NDArray[np.float64]


def fifo_departures(slot: Ints, arrival: Floats, count: Floats) -> Floats:
    """When each piece's last flit has left its queue (flit times): queue ``slot``, first flit
    there at ``arrival``, ``count`` flits; served by arrival, ties in index order."""
    if not len(slot):
        return np.zeros(0)
    order = np.lexsort((arrival, slot))
    s, a, c = slot[order], arrival[order], count[order]
    total = np.cumsum(c)
    new = np.r_[True, s[1:] != s[:-1]]
    head = np.maximum.accumulate(np.where(new, np.arange(len(s)), 0))
    queued = total - np.r_[0.0, total][head]  # flits of this queue up to and with each piece
    rank = np.cumsum(new).astype(np.float64)
    big = float(np.abs(a).max() + queued.max() + 1.0)  # keeps the running max inside each queue
    lead = np.maximum.accumulate(a - (queued - c) + rank * big) - rank * big
    out = np.empty(len(s))
    out[order] = queued + lead
    return out


def pair_completion(slots: Sequence[Ints], hops: Ints, count: Floats, before: Floats,
                    hop_flits: float) -> Floats:
    """Per pair: its last hop's departure less the OCS hops before it (flit times), i.e. the flits its
    source sent before it, its own and its waits: it lands ``latency[h] + (h + 1 + this)`` flit times in.

    ``slots[k]``: the uplink of each pair's k-th hop (-1: none); ``hops``: uplinks crossed;
    ``before``: flits its source port sent before it; ``hop_flits``: an OCS hop in flit times.
    """
    depth = len(slots)
    arrival = [before + k * (1 + hop_flits) for k in range(depth)]  # unloaded, then as departures say
    every = np.concatenate(slots)
    live = every >= 0
    flits = np.tile(count, depth)
    n = len(before)
    departed = np.zeros(len(every))
    for _ in range(depth + 1):  # the k-th hop's arrivals settle after k passes, its departures one later
        departed[live] = fifo_departures(every[live], np.concatenate(arrival)[live], flits[live])
        for k in range(1, depth):
            arrival[k] = departed[(k - 1) * n:k * n] - count + 1 + hop_flits
    last = np.zeros(n)
    for k in range(depth):
        last = np.where(hops == k + 1, departed[k * n:(k + 1) * n], last)
    return last - (hops - 1) * (1 + hop_flits)
