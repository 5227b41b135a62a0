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

Hybrid fabrics (EPS leaves joined by OCS circuits, issue 44): the same ports, and
instead of spines the level-2 circuits of :class:`~ocsplan.simlette.circuitmap.RackRoutes`:
a message crosses the uplinks of its rack offset's path hop by hop, at each hop
sprayed over that offset's uplinks by the same block rule (:func:`hybrid_time`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

import numpy as np
from numpy.typing import NDArray

from ..cayley import expand
from .switched import SwitchedNetwork
from .timing import dl_flits
from .uplink_fifo import pair_completion

__all__ = ["QUEUE_PAIRS", "HybridShape", "SwitchedShape", "hybrid_loads", "hybrid_shape", "hybrid_time", "phase_loads",
           "switched_time"]

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
QUEUE_PAIRS = 1 << 23  # (segment, source, hop) entries the uplink queues of one phase are solved for


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


# -- hybrid: EPS leaves joined by OCS uplinks (issue 44) -----------------------------------------


@dataclass(frozen=True)
class HybridShape:
    """What the routing of a hybrid fabric depends on (:class:`~ocsplan.simlette.circuitmap.RackRoutes`):
    uplink u of every leaf is an OCS circuit to the leaf of rack r XOR ``masks[u]`` (same rail);
    a message to the rack ``delta`` away crosses the uplinks of ``paths[delta]``'s masks in turn."""

    ports: int  # L: rails
    rack_size: int  # accelerators under one leaf, a power of two
    masks: tuple[int, ...]  # per uplink: its rack offset
    paths: tuple[tuple[int, ...], ...]  # per rack offset: the offsets of its hops (() unreachable or 0)


def hybrid_shape(net: SwitchedNetwork) -> tuple[HybridShape, tuple[float, ...]]:
    """A hybrid network's :class:`HybridShape` (its routes walked per rack offset) and its latency
    per number of uplinks crossed (``SwitchedNetwork.latency``)."""
    routes, R = net.routes, net.rack_size
    assert routes is not None
    racks = max(net.spec.serving_racks, max(routes.next_hop, default=0) + 1)
    paths: list[tuple[int, ...]] = [()]
    for delta in range(1, racks):
        path: list[int] = []
        rest = delta
        while rest and rest in routes.next_hop and len(path) < racks:
            path.append(routes.next_hop[rest])
            rest ^= path[-1]
        paths.append(tuple(path) if not rest else ())
    latencies = [net.latency(0, 1 % R, 1 % R)]
    for h in range(1, max(map(len, paths)) + 1):
        delta = next((d for d, p in enumerate(paths) if len(p) == h), 0)
        latencies.append(net.latency(0, delta * R, delta * R))
    return HybridShape(net.L, R, routes.masks, tuple(paths)), tuple(latencies)


def _hybrid_segments(flits: int, ports: int, ways: tuple[int, ...]) -> list[tuple[int, int, int]]:
    """(piece, first flit, flits) of a message of ``flits`` cut at its port pieces and at the blocks
    of every number of equal uplinks in ``ways``: each segment stays on one rail and one uplink per hop."""
    pieces = min(ports, flits)
    base, extra = divmod(flits, ports)
    starts = [i * base + min(i, extra) for i in range(pieces)] + [flits]
    cuts = set(starts)
    for w in ways:
        cuts.update(range(0, flits, -(-flits // w)))
    out = []
    piece = 0
    for a, b in pairwise(sorted(cuts)):
        while starts[piece + 1] <= a:
            piece += 1
        out.append((piece, a, b - a))
    return out


@lru_cache(maxsize=4096)
def _hybrid_table(flits: int, ports: int, ways: tuple[int, ...]) -> NDArray[np.int64]:
    table = np.array(_hybrid_segments(flits, ports, ways), dtype=np.int64).reshape(-1, 3)
    table.setflags(write=False)
    return table


Vector = NDArray[np.int64]


def hybrid_loads(sends: Sends, bits: Sequence[int], world: int, shape: HybridShape) -> list[dict[str, int]]:
    """Per phase: the flits of the busiest source port ("out"), destination port ("in") and OCS
    uplink ("l2"), every message of every rank routed as :class:`~ocsplan.simlette.switched.SwitchedNetwork`
    routes it on a hybrid fabric (memoised)."""
    return [{"out": int(ports.max()), "in": int(ports.max()), "l2": int(links.max())}
            for ports, links, _ in _hybrid_vectors(sends, tuple(bits), world, shape)]


def _phase_rows(sends: Sends, bits: tuple[int, ...], ports: int,
                distinct: tuple[int, ...]) -> Iterator[tuple[tuple[Vector, ...] | None, int]]:
    """Per phase, every segment a node sends in send order, as int64 columns (generator, rail, first
    flit, message flits, segment flits, flits the node sent before the message), None when it sends
    nothing; and the phase's flits. One rail pointer advances across the phases (the node's ports)."""
    pointer = 0
    for phase in sends:
        rows: list[Vector] = []
        sent = 0
        for local, nbytes in phase:
            f = dl_flits(nbytes)
            if f <= 0:
                continue
            table = _hybrid_table(f, ports, distinct)
            n = len(table)
            rows.append(np.stack([np.full(n, expand(local, bits), dtype=np.int64), (pointer + table[:, 0]) % ports,
                                  table[:, 1], np.full(n, f, dtype=np.int64), table[:, 2],
                                  np.full(n, sent, dtype=np.int64)], axis=1))
            sent += f
            pointer = (pointer + f) % ports
        yield (tuple(np.concatenate(rows).T) if rows else None), sent


@lru_cache(maxsize=4096)
def _hybrid_vectors(sends: Sends, bits: tuple[int, ...], world: int,
                    shape: HybridShape) -> tuple[tuple[Vector, Vector, Vector], ...]:
    """Per phase: the flits of every rank's port of each rail (the same for every rank: each port
    pointer advances alike and XOR permutes the ranks, so every input port of a rail receives what
    every output port sends), of every uplink, and when each uplink's first flit can come: the flits
    a node has put on each of its L ports before the first message that crosses it (read-only arrays;
    an idle uplink: the phase's flits)."""
    L, R = shape.ports, shape.rack_size
    ways = {m: shape.masks.count(m) for m in set(shape.masks)}
    distinct = tuple(sorted(set(ways.values())))
    links = len(shape.paths) * L * max(1, len(shape.masks))
    result: list[tuple[Vector, Vector, Vector]] = []
    for columns, flits in _phase_rows(sends, bits, L, distinct):
        load = np.zeros(links, dtype=np.int64)
        start = np.full(links, flits // L, dtype=np.int64)
        if columns is None:
            ports = np.zeros(L, dtype=np.int64)
        else:
            gen, rail, first, size, count, sent = columns
            ports = np.bincount(rail, weights=count, minlength=L).astype(np.int64)
            _check_peers(np.unique(gen).tolist(), world)
            if world > R:
                _uplink_loads(gen, rail, first, size, count, sent // L, world, shape, ways, load, start)
        for vector in (ports, load, start):
            vector.setflags(write=False)
        result.append((ports, load, start))
    return tuple(result)


def _uplink_loads(gen: Vector, rail: Vector, first: Vector, size: Vector, count: Vector, before: Vector,
                  world: int, shape: HybridShape, ways: dict[int, int], load: Vector, start: Vector) -> None:
    """Add every (segment, source) pair's flits to the uplinks it crosses, hop by hop along its rack
    path: at each hop over mask m with w uplinks, block c = first flit // ceil(flits / w) of a message
    from rank s takes the (s + c) mod w-th of them. ``start``: lowered to the ``before`` of the first
    segment on each uplink (the rows come in send order)."""
    L, R, U = shape.ports, shape.rack_size, len(shape.masks)
    if R & (R - 1):
        raise ValueError(f"a hybrid fabric needs a power-of-two rack size, got {R}")
    shift = R.bit_length() - 1
    delta = gen >> shift
    keep = np.flatnonzero(delta > 0)
    if not len(keep):
        return
    used = [int(d) for d in np.unique(delta[keep])]
    if used[-1] >= len(shape.paths) or any(not shape.paths[d] for d in used):
        raise ValueError("a rack offset the uplinks do not reach")
    hops = max(len(shape.paths[d]) for d in used)
    top = max(shape.masks) + 1
    way = np.ones(top, dtype=np.int64)  # per mask: its uplinks and the first of them
    base = np.zeros(top, dtype=np.int64)
    for m, w in ways.items():
        way[m] = w
        base[m] = shape.masks.index(m)  # a mask's uplinks are consecutive (sorted masks)
    path = np.zeros((len(shape.paths), max(map(len, shape.paths))), dtype=np.int64)
    for d, p in enumerate(shape.paths):
        path[d, :len(p)] = p
    gen, rail, first, size, count, before = gen[keep], rail[keep], first[keep], size[keep], count[keep], before[keep]
    masks = path[gen >> shift]  # rows x hops: the offset crossed (0: no more hops)
    src = np.arange(world, dtype=np.int64)
    step = max(1, _CHUNK // world)
    for a in range(0, len(gen), step):
        rows = slice(a, a + step)
        n = len(gen[rows])
        rack = np.broadcast_to(src >> shift, (n, world)).copy()
        for k in range(hops):
            m = masks[rows, k]
            w = way[m]
            block = first[rows] // -(-size[rows] // w)
            u = base[m][:, None] + (src[None, :] + block[:, None]) % w[:, None]
            slot = (rack * L + rail[rows][:, None]) * U + u
            weight = np.repeat(np.where(m > 0, count[rows], 0), world)
            flat = slot.reshape(-1)
            load += np.bincount(flat, weights=weight, minlength=len(load)).astype(np.int64)
            live = np.flatnonzero(weight)
            slots, index = np.unique(flat[live], return_index=True)  # the first pair on each uplink
            np.minimum.at(start, slots, before[rows][live[index] // world])
            rack ^= m[:, None]


def hybrid_time(sends: Sends, bits: Sequence[int], world: int, shape: HybridShape,
                latencies: tuple[float, ...], flit_time: float) -> float:
    """Eq. 1 on a hybrid fabric, every OCS uplink a first-come queue, summed over phases (memoised).

    ``latencies[h]``: the unloaded latency of a message crossing h uplinks (0: in its rack; an OCS
    hop is ``latencies[1] - latencies[0]``). A phase costs the later of its source ports' bound (the
    largest latency, one flit per link of the longest path, the busiest port's flits) and the landing
    of the last (segment, source) pair through the uplinks (:mod:`~ocsplan.simlette.uplink_fifo`:
    each pair enters its first uplink once its port sent the flits before it, waits its turn there
    and at every further hop). A phase of more pairs than ``QUEUE_PAIRS`` keeps the busiest-link
    bound: its latency, one flit per link and the busiest uplink's flits from when its first flit
    can come."""
    hop = (latencies[1] - latencies[0]) / flit_time if len(latencies) > 1 else 0.0
    return _hybrid_time(sends, tuple(bits), world, shape, latencies, flit_time, hop)


@lru_cache(maxsize=4096)
def _hybrid_time(sends: Sends, bits: tuple[int, ...], world: int, shape: HybridShape,
                 latencies: tuple[float, ...], flit_time: float, hop_flits: float) -> float:
    R = shape.rack_size
    shift = R.bit_length() - 1
    vectors = _hybrid_vectors(sends, bits, world, shape)
    queued = _hybrid_queues(sends, bits, world, shape, hop_flits)
    total = 0.0
    for k, phase in enumerate(sends):
        ports, links, start = vectors[k]
        local = int(ports.max())
        if not local:
            continue
        hops = max((len(shape.paths[expand(x, bits) >> shift]) for x, nbytes in phase if dl_flits(nbytes))
                   if world > R else (0,))
        bound = latencies[hops] + (hops + 1 + local) * flit_time
        last = queued[k]
        if last is None:  # too many pairs to queue: the busiest uplink's flits from its first
            busiest = int((start + links)[links > 0].max(initial=0))
            total += max(bound, latencies[hops] + (hops + 1 + busiest) * flit_time)
        else:
            total += max((bound, *(latencies[h] + (h + 1 + busy) * flit_time for h, busy in last)))
    return total


@lru_cache(maxsize=4096)
def _hybrid_queues(sends: Sends, bits: tuple[int, ...], world: int, shape: HybridShape,
                   hop_flits: float, fold: bool = True) -> tuple[tuple[tuple[int, float], ...] | None, ...]:
    """Per phase, per number h of uplinks crossed: the flit times after the phase starts when the last
    pair crossing h lands, less ``latencies[h] + h + 1`` (:func:`~ocsplan.simlette.uplink_fifo.pair_completion`);
    None for a phase of more than ``QUEUE_PAIRS`` (segment, source, hop) entries.

    ``fold``: solve one rack's queues only. XOR by a multiple of the rack size maps the traffic onto
    itself, rack r's uplinks onto rack r ^ t's (routes depend on the rack offset alone; block c of a
    source s takes uplink (s + c) mod w, the same for s ^ t when w divides the rack size), and keeps the
    order of equal arrivals (a queue's pairs of one segment come from one rack). So every rack's queues
    hold the same arrivals and depart alike: the pairs of rack 0's sources, each hop's uplink named
    by (rail, uplink) alone, give every pair's time at world / rack size less work. Without it (or
    when some mask's uplinks do not divide the rack size) every source is solved."""
    L, R = shape.ports, shape.rack_size
    shift = R.bit_length() - 1
    ways = {m: shape.masks.count(m) for m in set(shape.masks)}
    fold = fold and all(R % w == 0 for w in ways.values())
    sources = R if fold else world
    distinct = tuple(sorted(set(ways.values())))
    out: list[tuple[tuple[int, float], ...] | None] = []
    for columns, _ in _phase_rows(sends, bits, L, distinct):
        if columns is None or world <= R:
            out.append(())
            continue
        gen, rail, first, size, count, _sent = columns
        order = np.argsort(rail, kind="stable")  # flits each source port sent before a segment
        sent = np.cumsum(count[order])
        head = np.searchsorted(rail[order], rail[order], side="left")
        before = np.empty(len(gen), dtype=np.float64)
        before[order] = sent - count[order] - np.r_[0, sent][head]
        keep = np.flatnonzero(gen >> shift > 0)
        if not len(keep):
            out.append(())
            continue
        if len(keep) * world * max(map(len, shape.paths)) > QUEUE_PAIRS:
            out.append(None)
            continue
        slots, hops = _hybrid_slots(gen[keep], rail[keep], first[keep], size[keep], sources, shape, ways, fold)
        busy = pair_completion(slots, hops, np.repeat(count[keep], sources).astype(np.float64),
                               np.repeat(before[keep], sources), hop_flits)
        out.append(tuple((int(h), float(busy[hops == h].max())) for h in np.unique(hops)))
    return tuple(out)


def _hybrid_slots(gen: Vector, rail: Vector, first: Vector, size: Vector, sources: int, shape: HybridShape,
                  ways: dict[int, int], fold: bool) -> tuple[list[Vector], Vector]:
    """Per hop k: the uplink slot ((rack * L + rail) * U + u) of every (segment, source) pair of sources
    0 .. ``sources`` - 1, -1 past its last hop (the routing of :func:`_uplink_loads`); and each pair's
    uplinks crossed. ``fold``: every rack named 0 (one rack's queues, :func:`_hybrid_queues`)."""
    L, R, U = shape.ports, shape.rack_size, len(shape.masks)
    shift = R.bit_length() - 1
    top = max(shape.masks) + 1
    way = np.ones(top, dtype=np.int64)
    base = np.zeros(top, dtype=np.int64)
    for m, w in ways.items():
        way[m] = w
        base[m] = shape.masks.index(m)
    depth = max(map(len, shape.paths))
    path = np.zeros((len(shape.paths), depth), dtype=np.int64)
    for d, p in enumerate(shape.paths):
        path[d, :len(p)] = p
    lengths = np.array([len(p) for p in shape.paths], dtype=np.int64)
    delta = gen >> shift
    if delta.max() >= len(shape.paths) or not lengths[delta].all():
        raise ValueError("a rack offset the uplinks do not reach")
    src = np.arange(sources, dtype=np.int64)
    rack = np.broadcast_to(0 if fold else src >> shift, (len(gen), sources)).copy()
    slots = []
    for k in range(int(lengths[delta].max())):
        m = path[delta, k]
        w = way[m]
        block = first // -(-size // w)
        u = base[m][:, None] + (src[None, :] + block[:, None]) % w[:, None]
        slot = (rack * L + rail[:, None]) * U + u
        slots.append(np.where((m > 0)[:, None], slot, -1).reshape(-1))
        if not fold:
            rack ^= m[:, None]
    return slots, np.repeat(lengths[delta], sources)
