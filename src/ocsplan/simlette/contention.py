"""Flit loads of every link of a switched (EPS) network, counted from its routing (issue 28).

The symmetric Eq. 1 of :func:`ocsplan.decode.pricing.symmetric_analytical` charges
bytes over aggregate capacities: it misses that a message smaller than a DL flit
still fills one, and that the deterministic spraying of
:class:`~ocsplan.simlette.switched.SwitchedNetwork` puts unequal numbers of flows on
the up- and down-links of a leaf and a spine (incast). Here every message of a phase,
of every concurrent group, is routed with the network's own rules and its flits
counted on each link it crosses:

- source port: round-robin over the L ports from a per-node pointer that carries
  over messages and phases (``split_flits``: contiguous pieces, the first ``extra``
  one flit longer);
- leaf uplinks and spine down-links: a message's flits are cut into as many
  contiguous blocks as there are equal links, block b of a message from rank s
  takes link (s + b) mod n (:class:`~ocsplan.simlette.devices.Switch`);
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
from functools import lru_cache
from itertools import pairwise

import numpy as np
from numpy.typing import NDArray

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


_KINDS = ("out", "in", "up", "down")
_CHUNK = 1 << 20  # (segment, source) pairs per numpy pass: bounds the memory at large worlds


@lru_cache(maxsize=4096)
def _segment_table(flits: int, ports: int, up: int, spines: int) -> NDArray[np.int64]:
    """:func:`_segments` as a read-only (segments x 4) array, memoised by message length."""
    table = np.array(_segments(flits, ports, up, spines), dtype=np.int64).reshape(-1, 4)
    table.setflags(write=False)
    return table


def phase_loads(sends: Sends, bits: Sequence[int], world: int, shape: SwitchedShape) -> list[dict[str, int]]:
    """Per phase: the flits of the busiest link of each kind ("out", "in", "up", "down").

    Memoised by (sends, bits, world, shape): the splits of a decode step and the
    cells of a sweep share most demands."""
    return [dict(zip(_KINDS, loads, strict=True)) for loads in _phase_loads(sends, tuple(bits), world, shape)]


@lru_cache(maxsize=4096)
def _phase_loads(sends: Sends, bits: tuple[int, ...], world: int,
                 shape: SwitchedShape) -> tuple[tuple[int, int, int, int], ...]:
    """Per phase (out, in, up, down): every message's segments at once, in numpy.

    Every node starts a message at the same port pointer (all pointers start at 0
    and advance by the same flits), so a segment's rail is one number and a port's
    load depends on the rail only; XOR with a generator permutes the ranks, so every
    input port of a rail receives what every output port sends."""
    L, R = shape.ports, shape.rack_size
    two = shape.up > 0 and world > R
    up, spines = (shape.up, shape.spines) if two else (0, 0)
    ways2 = shape.up // shape.spines if two else 1
    links = (world // R + 1) * L * max(1, shape.up)
    pointer = 0
    result: list[tuple[int, int, int, int]] = []
    for phase in sends:
        gens: list[int] = []
        tables: list[NDArray[np.int64]] = []
        rails: list[NDArray[np.int64]] = []
        for local, nbytes in phase:
            f = dl_flits(nbytes)
            if f <= 0:
                continue
            table = _segment_table(f, L, up, spines)
            gens.append(expand(local, bits))
            tables.append(table)
            rails.append((pointer + table[:, 0]) % L)
            pointer = (pointer + f) % L
        if not tables:
            result.append((0, 0, 0, 0))
            continue
        seg = np.concatenate(tables)
        rail = np.concatenate(rails)
        gen = np.repeat(np.array(gens, dtype=np.int64), [len(t) for t in tables])
        count = seg[:, 3]
        per_rail = np.bincount(rail, weights=count, minlength=L)
        out = int(per_rail.max())
        _check_peers(gens, world)
        upl = np.zeros(links, dtype=np.int64)
        down = np.zeros(links, dtype=np.int64)
        if two:
            _cross_loads(gen, rail, seg[:, 1], seg[:, 2], count, world, shape, ways2, upl, down)
        result.append((out, out, int(upl.max()), int(down.max())))
    return tuple(result)


def _check_peers(gens: list[int], world: int) -> None:
    """ValueError unless every rank's peer over every generator is a rank (XOR then permutes the ranks)."""
    if world & (world - 1) == 0:
        ok = max(gens) < world
    else:
        ok = int((np.arange(world, dtype=np.int64)[None, :] ^ np.unique(gens)[:, None]).max()) < world
    if not ok:
        raise ValueError(f"a peer lies outside the {world} ranks")


def _cross_loads(gen: NDArray[np.int64], rail: NDArray[np.int64], blk1: NDArray[np.int64],
                 blk2: NDArray[np.int64], count: NDArray[np.int64], world: int, shape: SwitchedShape,
                 ways2: int, upl: NDArray[np.int64], down: NDArray[np.int64]) -> None:
    """Add the flits of every (segment, source) pair that leaves its rack to the leaf up- and spine down-links:
    in closed form per rail when the racks are aligned (:func:`_aligned_cross_loads`), else pair by pair."""
    if not _aligned_cross_loads(gen, rail, blk1, blk2, count, world, shape, ways2, upl, down):
        _pair_cross_loads(gen, rail, blk1, blk2, count, world, shape, ways2, upl, down)


def _aligned_cross_loads(gen: NDArray[np.int64], rail: NDArray[np.int64], blk1: NDArray[np.int64],
                         blk2: NDArray[np.int64], count: NDArray[np.int64], world: int, shape: SwitchedShape,
                         ways2: int, upl: NDArray[np.int64], down: NDArray[np.int64]) -> bool:
    """:func:`_pair_cross_loads` without the pairs, when the world and the rack size are powers of
    two and the uplinks n divide the rack and ways2 the uplinks (nvl576: 32, 8, 1); False otherwise.

    Then a segment on generator g leaves the rack from every source (g >= R) or from none, the
    source's rack a and residue m = s mod n range over all (a, m), each R / n times, and the
    peer's rack is a XOR g / R: every rack's uplinks u = (m + block) mod n of the segment's rail
    get R / n x its flits each, every rack's down-links u2 (from m, the blocks and ways2) the
    same histogram over m. Integer loads: the sums of the pairs, exactly."""
    L, R, n_up, S = shape.ports, shape.rack_size, shape.up, shape.spines
    if (R & (R - 1) or world & (world - 1) or world <= R or n_up <= 0 or R % n_up
            or ways2 <= 0 or n_up % ways2):
        return False
    racks, per = world // R, R // n_up
    rows = np.flatnonzero(gen >= R)
    if not len(rows):
        return True
    r, weight = rail[rows], count[rows]
    # uplinks: (rack, rail, u) -> per x the flits of the rail's crossing segments, for every rack and u
    by_rail = np.bincount(r, weights=weight, minlength=L).astype(np.int64) * per
    upl[:racks * L * n_up] += np.tile(np.repeat(by_rail, n_up), racks)
    # down-links: per segment the residues m of its sources, each on u2 = u mod S + ((m + blk2) mod ways2) S
    m = np.arange(n_up, dtype=np.int64)[None, :]
    u = (m + blk1[rows][:, None]) % n_up
    u2 = u % S + ((m + blk2[rows][:, None]) % ways2) * S
    slots = (r[:, None] * n_up + u2).reshape(-1)
    by_link = np.bincount(slots, weights=np.repeat(weight, n_up), minlength=L * n_up).astype(np.int64) * per
    down[:racks * L * n_up] += np.tile(by_link, racks)
    return True


def _pair_cross_loads(gen: NDArray[np.int64], rail: NDArray[np.int64], blk1: NDArray[np.int64],
                      blk2: NDArray[np.int64], count: NDArray[np.int64], world: int, shape: SwitchedShape,
                      ways2: int, upl: NDArray[np.int64], down: NDArray[np.int64]) -> None:
    """Add the flits of every (segment, source) pair that leaves its rack to the leaf up- and spine down-links."""
    L, R, n_up, S = shape.ports, shape.rack_size, shape.up, shape.spines
    src = np.arange(world, dtype=np.int64)
    rack_src = src // R
    step = max(1, _CHUNK // world)
    for a in range(0, len(gen), step):
        dst = src[None, :] ^ gen[a:a + step, None]
        rows, s = np.nonzero(dst // R != rack_src[None, :])
        if not len(s):
            continue
        d = dst[rows, s]
        rows = rows + a
        r, weight = rail[rows], count[rows]
        u = (s + blk1[rows]) % n_up
        upl += np.bincount((rack_src[s] * L + r) * n_up + u, weights=weight, minlength=len(upl)).astype(np.int64)
        u2 = u % S + ((s + blk2[rows]) % ways2) * S
        down += np.bincount(((d // R) * L + r) * n_up + u2, weights=weight, minlength=len(down)).astype(np.int64)


def switched_time(sends: Sends, bits: Sequence[int], world: int, shape: SwitchedShape, latency: float,
                  cross_latency: float, flit_time: float) -> float:
    """Sum over phases of Eq. 1 with the busiest link in flits (see the module docstring).

    ``latency``: the unloaded hop through one switch; ``cross_latency``: through leaf,
    spine and leaf (ignored on one level). A rack's up- and down-links see no flit
    before a node has put its earlier, in-rack messages on its ports: their busy time
    starts that many flits (over L ports) late. Memoised like :func:`phase_loads`."""
    return _switched_time(sends, tuple(bits), world, shape, latency, cross_latency, flit_time)


@lru_cache(maxsize=4096)
def _switched_time(sends: Sends, bits: tuple[int, ...], world: int, shape: SwitchedShape, latency: float,
                   cross_latency: float, flit_time: float) -> float:
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
