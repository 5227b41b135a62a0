"""Flit loads of every link of a switched (EPS) network, counted from its routing (issue 28).

The symmetric Eq. 1 of :func:`ocsplan.decode.pricing.symmetric_analytical` charges
bytes over aggregate capacities: it misses that a message smaller than a DL flit
still fills one, and that the deterministic spraying of
:class:`~ocsplan.simlette.network.SwitchedNetwork` puts unequal numbers of flows on
the up- and down-links of a leaf and a spine (incast). Here every message of a phase,
of every concurrent group, is routed with the network's own rules and its flits
counted on each link it crosses:

- source port: round-robin over the L ports from a per-node pointer that carries
  over messages and phases (``split_flits``: contiguous pieces, the first ``extra``
  one flit longer);
- leaf uplinks and spine down-links: a message's flits are cut into as many
  contiguous blocks as there are equal links, block b of a message from rank s
  takes link (s + b) mod n (:class:`~ocsplan.simlette.engine.Switch`);
- uplink u of a leaf goes to spine u mod S; a spine reaches a leaf over the
  uplinks u = index, index + S, ...; the last hop is the destination's port of the
  same rail.

A phase then costs its largest unloaded hop latency, the busiest link's flits and
one flit time per further link of the longest path (cut-through: each link adds
one flit before the next can start). Numpy over messages x segments; no events.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from ..cayley import expand
from .timing import dl_flits

__all__ = ["SwitchedShape", "phase_loads", "switched_time"]

Sends = tuple[tuple[tuple[int, float], ...], ...]  # per phase: (local generator, bytes) one node sends


@dataclass(frozen=True)
class SwitchedShape:
    """What the routing of an EPS fabric depends on (one or two levels, no OCS uplinks)."""

    ports: int  # L: rails, one per accelerator port
    rack_size: int  # accelerators under one leaf (the world on one level)
    up: int  # uplinks per leaf (0: one level)
    spines: int  # spines per rail (0: one level)


def _segments(flits: int, ports: int, up: int, spines: int) -> list[tuple[int, int, int, int]]:
    """(piece, uplink block, spine block, flits) of a message of ``flits``: the same for every message."""
    pieces = min(ports, flits)
    base, extra = divmod(flits, ports)
    cuts = {0, flits}
    start = 0
    for i in range(pieces):
        start += base + (1 if i < extra else 0)
        cuts.add(start)
    b1 = -(-flits // up) if up else flits
    ways2 = up // spines if spines else 1
    b2 = -(-flits // ways2) if ways2 else flits
    cuts.update(range(0, flits, b1))
    cuts.update(range(0, flits, b2))
    edges = sorted(cuts)
    starts = [i * base + min(i, extra) for i in range(pieces)] + [flits]
    out = []
    piece = 0
    for a, b in pairwise(edges):
        while starts[piece + 1] <= a:
            piece += 1
        out.append((piece, a // b1, a // b2, b - a))
    return out


def phase_loads(sends: Sends, bits: Sequence[int], world: int, shape: SwitchedShape) -> list[dict[str, int]]:
    """Per phase: the flits of the busiest link of each kind ("out", "in", "up", "down")."""
    L, R = shape.ports, shape.rack_size
    two = shape.up > 0 and world > R
    ways2 = shape.up // shape.spines if two else 1
    src = np.arange(world, dtype=np.int64)
    rack_src = src // R
    pointer = np.zeros(world, dtype=np.int64)
    result: list[dict[str, int]] = []
    for phase in sends:
        out = np.zeros(world * L, dtype=np.int64)
        into = np.zeros(world * L, dtype=np.int64)
        racks = world // R + 1
        upl = np.zeros(racks * L * max(1, shape.up), dtype=np.int64)
        down = np.zeros(racks * L * max(1, shape.up), dtype=np.int64)
        for local, nbytes in phase:
            f = dl_flits(nbytes)
            if f <= 0:
                continue
            g = expand(local, bits)
            dst = src ^ g
            cross = (dst // R != rack_src) if two else None
            for piece, blk1, blk2, count in _segments(f, L, shape.up if two else 0, shape.spines if two else 0):
                rail = (pointer + piece) % L
                np.add.at(out, src * L + rail, count)
                np.add.at(into, dst * L + rail, count)
                if cross is not None and cross.any():
                    s, r, d = src[cross], rail[cross], dst[cross]
                    u = (s + blk1) % shape.up
                    np.add.at(upl, (rack_src[cross] * L + r) * shape.up + u, count)
                    u2 = u % shape.spines + ((s + blk2) % ways2) * shape.spines
                    np.add.at(down, ((d // R) * L + r) * shape.up + u2, count)
            pointer = (pointer + f) % L
        result.append({"out": int(out.max()), "in": int(into.max()), "up": int(upl.max()), "down": int(down.max())})
    return result


def switched_time(sends: Sends, bits: Sequence[int], world: int, shape: SwitchedShape, latency: float,
                  cross_latency: float, flit_time: float) -> float:
    """Sum over phases of Eq. 1 with the busiest link in flits (see the module docstring).

    ``latency``: the unloaded hop through one switch; ``cross_latency``: through leaf,
    spine and leaf (ignored on one level). A rack's up- and down-links see no flit
    before a node has put its earlier, in-rack messages on its ports: their busy time
    starts that many flits (over L ports) late."""
    R, L = shape.rack_size, shape.ports
    two = shape.up > 0 and world > R
    total = 0.0
    for phase, loads in zip(sends, phase_loads(sends, bits, world, shape), strict=True):
        if not any(loads.values()):
            continue
        local = max(loads["out"], loads["in"])
        before, first_cross = 0, -1
        for gen, nbytes in phase:
            f = dl_flits(nbytes)
            if f and two and _crosses(expand(gen, bits), R, world):
                first_cross = before
                break
            before += f
        if first_cross < 0:
            total += latency + (local + 1) * flit_time
            continue
        spine = first_cross // L + max(loads["up"], loads["down"])
        total += cross_latency + (max(local, spine) + 3) * flit_time
    return total


def _crosses(gen: int, rack: int, world: int) -> bool:
    """Whether some rank and its peer over ``gen`` sit in different racks."""
    if rack & (rack - 1) == 0:
        return gen >= rack
    return any((x ^ gen) // rack != x // rack for x in range(0, world, max(1, rack)))
