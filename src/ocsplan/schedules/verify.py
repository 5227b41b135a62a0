"""Semantic verifier and ideal timing of executable schedules.

:func:`verify` executes a program on symbolic data and proves the collective's
result; :func:`ideal_cost` measures (h, v, u) of the program under the
assumptions of the closed form (phases do not overlap, per-link accounting,
no competing traffic) from its per-phase :func:`link_loads`, which the faults
analysis re-prices when it relays a pair. Tests and the CLI reuse them.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from fractions import Fraction

from ..cayley import Topology, members
from ..errors import OcsplanError
from .base import GroupGraph, Program

__all__ = ["IdealCost", "LinkLoads", "ScheduleError", "ideal_cost", "ideal_time", "link_loads", "loads_cost", "verify"]


class ScheduleError(OcsplanError):
    """An executable schedule that does not compute its collective."""


@dataclass(frozen=True)
class IdealCost:
    h: int
    v: Fraction
    u: int


# per phase: bytes each directed logical edge (src, generator) carries, local labels
LinkLoads = tuple[dict[tuple[int, int], Fraction], ...]


def link_loads(program: Program) -> LinkLoads:
    """Per phase, the bytes each directed logical edge (src, gen) carries, in the program's order
    (an edge a zero-byte transfer drives is there with 0): the loads Eq. 1 prices."""
    out = []
    for phase in program.phases:
        load: dict[tuple[int, int], Fraction] = defaultdict(Fraction)
        for t in phase:
            load[(t.src, t.gen)] += t.nbytes
        out.append(dict(load))
    return tuple(out)


def loads_cost(loads: LinkLoads) -> IdealCost:
    """(h, v, u) of per-phase link loads: phases, the sum of per-phase maxima, the most
    generators one node drives in a phase."""
    volume = Fraction(0)
    ports = 0
    for load in loads:
        volume += max(load.values())
        driven = Counter(src for src, _ in load)
        ports = max(ports, max(driven.values()))
    return IdealCost(len(loads), volume, ports)


def ideal_cost(program: Program) -> IdealCost:
    """Phases, bottleneck volume (sum of per-phase maxima over directed logical
    edges) and the most ports one node drives in a phase."""
    return loads_cost(link_loads(program))


def ideal_time(program: Program, latency: float, rate: float, multiplicity: int = 1) -> float:
    """Completion time of the program when every phase costs latency + max bytes/(p R)."""
    cost = ideal_cost(program)
    return cost.h * latency + float(cost.v) / (multiplicity * rate)


def _check_edges(program: Program, topology: GroupGraph) -> None:
    size = program.size
    for k, phase in enumerate(program.phases):
        for t in phase:
            where = f"{program.schedule} phase {k}: {t.src}->{t.dst}"
            if not (0 <= t.src < size and 0 <= t.dst < size):
                raise ScheduleError(f"{where}: label outside the group of {size}")
            if t.gen not in topology.gens:
                raise ScheduleError(f"{where}: generator {t.gen:b} not in {topology.name}")
            if program.target(t.src, t.gen) != t.dst:
                raise ScheduleError(f"{where}: not an edge of generator {t.gen:b}")
            counted = program.unit * sum(item.units() for item in t.items)
            if counted != t.nbytes:
                raise ScheduleError(f"{where}: declares {t.nbytes} bytes, carries {counted}")


def _verify_all_reduce(program: Program) -> None:
    size, segs = program.size, program.segments
    everyone = (1 << size) - 1
    acc = [[1 << x] * segs for x in range(size)]
    raw = [[1 << x] * segs for x in range(size)]
    for k, phase in enumerate(program.phases):
        # per item, its segments checked in order (the first fault as segment by segment), then delivered
        deliveries: list[tuple[str, int, list[int], str, int]] = []
        for t in phase:
            for item in t.items:
                where = f"{program.schedule} phase {k}: {t.src}->{t.dst}"
                segments = _members(item.segs, segs, where)
                sources = item.sources
                if item.op in ("reduce", "store"):
                    held = acc[t.src]
                    for seg in segments:
                        if held[seg] != sources:
                            raise ScheduleError(
                                f"{where}: segment {seg}: sender holds the sum over "
                                f"{held[seg]:b}, sends {sources:b}"
                            )
                elif item.op == "raw":
                    held = raw[t.src]
                    for seg in segments:
                        if sources & ~held[seg]:
                            raise ScheduleError(f"{where}: segment {seg}: forwards inputs it lacks")
                elif segments:
                    raise ScheduleError(f"{where}: op {item.op!r} in an all-reduce")
                deliveries.append((where, t.dst, segments, item.op, sources))
        for where, dst, segments, op, sources in deliveries:
            held = acc[dst] if op != "raw" else raw[dst]
            if op == "reduce":
                for seg in segments:
                    if held[seg] & sources:
                        raise ScheduleError(
                            f"{where}: segment {seg}: inputs {held[seg] & sources:b} counted twice"
                        )
                    held[seg] |= sources
            elif op == "store":
                for seg in segments:
                    held[seg] = sources
            else:
                for seg in segments:
                    held[seg] |= sources
    for x in range(size):
        for seg in range(segs):
            if acc[x][seg] != everyone and raw[x][seg] != everyone:
                raise ScheduleError(
                    f"{program.schedule}: node {x} segment {seg} ends with inputs "
                    f"{max(acc[x][seg], raw[x][seg], key=int.bit_count):b}, not all {size}"
                )


def _verify_all_gather(program: Program) -> None:
    size, segs = program.size, program.segments
    chunks = segs // size
    held = [sum(1 << (c * size + x) for c in range(chunks)) for x in range(size)]
    everything = (1 << segs) - 1
    for k, phase in enumerate(program.phases):
        deliveries = []
        for t in phase:
            for item in t.items:
                where = f"{program.schedule} phase {k}: {t.src}->{t.dst}"
                if item.op != "gather":
                    raise ScheduleError(f"{where}: op {item.op!r} in an all-gather")
                if item.segs & ~held[t.src]:
                    raise ScheduleError(f"{where}: sends blocks {item.segs & ~held[t.src]:b} it lacks")
                deliveries.append((t.dst, item.segs))
        for dst, blocks in deliveries:
            held[dst] |= blocks
    for x in range(size):
        if held[x] != everything:
            raise ScheduleError(f"{program.schedule}: node {x} misses blocks {everything & ~held[x]:b}")


def _verify_all_to_all(program: Program) -> None:
    size, chunks = program.size, program.segments
    full = (1 << chunks) - 1
    held: list[dict[tuple[int, int], int]] = [
        {(x, d): full for d in range(size)} for x in range(size)
    ]
    for k, phase in enumerate(program.phases):
        deliveries = []
        for t in phase:
            for item in t.items:
                where = f"{program.schedule} phase {k}: {t.src}->{t.dst}"
                if item.op != "route":
                    raise ScheduleError(f"{where}: op {item.op!r} in an all-to-all")
                for o in _members(item.sources, size, where):
                    for d in _members(item.dests, size, where):
                        have = held[t.src].get((o, d), 0)
                        if item.segs & ~have:
                            raise ScheduleError(f"{where}: block {o}->{d} not held by the sender")
                        held[t.src][(o, d)] = have & ~item.segs
                        deliveries.append((t.dst, (o, d), item.segs))
        for dst, key, chunk in deliveries:
            held[dst][key] = held[dst].get(key, 0) | chunk
    for d in range(size):
        for o in range(size):
            if held[d].get((o, d), 0) != full:
                raise ScheduleError(f"{program.schedule}: block {o}->{d} never arrives")


def _members(mask: int, limit: int, where: str) -> list[int]:
    if mask >> limit:
        raise ScheduleError(f"{where}: index beyond {limit}")
    return members(mask)


_VERIFIERS = {
    "all-reduce": _verify_all_reduce,
    "all-gather": _verify_all_gather,
    "all-to-all": _verify_all_to_all,
}


def verify(program: Program, topology: Topology | GroupGraph) -> None:
    """Execute ``program`` on symbolic data; raise ScheduleError unless it is correct.

    ``topology`` is a (Z2)^a :class:`Topology` or a circulant on Z_N (any
    :class:`GroupGraph`; the program's ``modulus`` must then be N).
    """
    if isinstance(topology, Topology):
        if program.modulus or program.bits != topology.bits:
            raise ScheduleError(f"{program.schedule}: program for {program.bits} bits on {topology.name}")
    elif program.modulus != topology.size:
        raise ScheduleError(f"{program.schedule}: program on Z_{program.modulus} on {topology.name}")
    _check_edges(program, topology)
    _VERIFIERS[program.collective](program)
