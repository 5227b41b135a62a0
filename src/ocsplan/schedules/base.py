"""Schedule data: transfers, phases, programs, closed forms, and the registry.

A schedule is a triple kept consistent by the tests (DESIGN §3): an executable
program (phases of transfers on logical edges), a validity predicate on the
axis topology, and a closed form (h, v, u) from the topology alone.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache, wraps
from threading import Lock
from typing import Protocol

from ..cayley import Topology
from ..gcpause import paused_gc

__all__ = [
    "AUTO_EXCLUDED",
    "COLLECTIVES",
    "SCHEDULES",
    "ClosedForm",
    "GroupGraph",
    "Item",
    "Program",
    "ProgramCache",
    "Schedule",
    "Transfer",
    "closed_form",
    "link_pattern",
    "make_program",
    "program",
    "register",
    "register_unlayered",
    "schedules_for",
]

COLLECTIVES = ("all-reduce", "all-gather", "all-to-all")


@dataclass(frozen=True)
class Item:
    """What a transfer carries, in the collective's symbolic data model.

    ``op`` is one of ``reduce`` (a partial sum over ``sources`` of the segments
    ``segs``, added into the receiver's accumulator), ``store`` (a finished sum
    that overwrites), ``raw`` (the unsummed inputs of every rank in ``sources``),
    ``gather`` (all-gather blocks ``segs``) or ``route`` (all-to-all blocks from
    every origin in ``sources`` to every destination in ``dests``, chunks ``segs``).
    """

    op: str
    segs: int
    sources: int = 0
    dests: int = 0

    def units(self) -> int:
        """How many of the program's byte units the item occupies."""
        n = self.segs.bit_count()
        if self.op == "raw":
            return n * self.sources.bit_count()
        if self.op == "route":
            return n * self.sources.bit_count() * self.dests.bit_count()
        return n


@dataclass(frozen=True)
class Transfer:
    """One message on the logical edge src -> dst = src XOR gen within a phase
    (dst = src + gen mod N in a program on the circulant group Z_N)."""

    src: int
    dst: int
    gen: int
    nbytes: Fraction
    items: tuple[Item, ...] = ()


class GroupGraph(Protocol):
    """What the verifier needs of an axis graph: its name, size and generators."""

    @property
    def name(self) -> str: ...

    @property
    def size(self) -> int: ...

    @property
    def gens(self) -> frozenset[int]: ...


@dataclass(frozen=True)
class Program:
    """An executable schedule on one collective group (local labels 0..M-1).

    ``modulus`` 0 (the default): labels are masks of (Z2)^bits and a transfer
    crosses src -> src XOR gen. ``modulus`` N > 0: labels are residues of Z_N
    (a circulant axis, ``bits`` 0) and a transfer crosses src -> src + gen mod N.
    """

    schedule: str
    collective: str
    bits: int
    payload: int
    segments: int  # the buffer is cut into this many segments (chunks for all-to-all)
    unit: Fraction  # bytes of one item unit (see Item.units)
    phases: tuple[tuple[Transfer, ...], ...]
    modulus: int = 0

    @property
    def size(self) -> int:
        return self.modulus or 1 << self.bits

    def target(self, src: int, gen: int) -> int:
        """The label a transfer from ``src`` over ``gen`` reaches."""
        return (src + gen) % self.modulus if self.modulus else src ^ gen


def make_program(
    schedule: str,
    collective: str,
    bits: int,
    payload: int,
    segments: int,
    phases: Sequence[Sequence[Transfer]],
    *,
    unit: Fraction | None = None,
    modulus: int = 0,
) -> Program:
    """A Program from phase lists (empty phases dropped); the item unit defaults to payload / segments."""
    return Program(
        schedule=schedule,
        collective=collective,
        bits=bits,
        payload=payload,
        segments=segments,
        unit=Fraction(payload, segments) if unit is None else unit,
        phases=tuple(tuple(p) for p in phases if p),
        modulus=modulus,
    )


@dataclass(frozen=True)
class ClosedForm:
    """Serialized phases h, bottleneck volume as a multiple of the payload, ports driven."""

    h: int
    v_factor: Fraction
    u: int

    def volume(self, payload: float) -> float:
        return float(self.v_factor * Fraction(payload)) if payload else 0.0


@dataclass(frozen=True)
class Schedule:
    """A named collective implementation (one row of the catalogue)."""

    name: str
    collective: str
    description: str
    valid: Callable[[Topology], bool]
    cost: Callable[[Topology], ClosedForm]
    build: Callable[[Topology, int], Program]
    uses: Callable[[Topology], frozenset[int]] = lambda t: t.gens  # every generator of the axis
    layers: Callable[[Topology], tuple[tuple[int, ...], ...] | None] = lambda t: None  # not layered
    cube_only: bool = False  # runs on the unit masks whatever the folds
    # per phase, the generators every rank x sends on (to x ^ s), in the program's order: the link
    # pattern without building the program (None: build it); tests hold it to the program
    masks: Callable[[Topology], tuple[tuple[int, ...], ...]] | None = None


SCHEDULES: dict[str, Schedule] = {}

# Planning-only schedules that "auto" never picks: the ring is not simulated.
AUTO_EXCLUDED = frozenset({"ring"})


def register(schedule: Schedule) -> Schedule:
    schedule = replace(schedule, build=_gc_paused(schedule.build))
    SCHEDULES[schedule.name] = schedule
    return schedule


def _gc_paused(build: Callable[[Topology, int], Program]) -> Callable[[Topology, int], Program]:
    """``build`` with the cyclic collector paused: a program is up to millions of acyclic transfers,
    items and tuples, and each collection during the build would rescan all made so far."""

    @wraps(build)
    def paused(topo: Topology, payload: int) -> Program:
        with paused_gc(keep=True):
            return build(topo, payload)

    return paused


def register_unlayered(collective: str, name: str, description: str, cost: Callable[[Topology], ClosedForm],
                       build: Callable[[Topology, int], Program]) -> Schedule:
    """Register a schedule without layers: valid on every connected topology (irregular folds
    too), owning every generator of the axis."""
    return register(Schedule(name, collective, description, valid=lambda topo: topo.connected, cost=cost,
                             build=build))


def link_pattern(schedule: Schedule, topo: Topology, payload: int) -> tuple[dict[int, tuple[int, ...]], ...]:
    """Per phase, each sending rank's peers in the order its program sends to them (the routing tables'
    order): from the schedule's ``masks`` when it declares them (no program built), else from the cached program."""
    if schedule.masks is not None:
        import numpy as np  # the command that realizes has it loaded; --help does not

        ranks = np.arange(topo.size, dtype=np.int64)[:, None]
        return tuple(dict(enumerate(map(tuple, (ranks ^ np.array(phase, dtype=np.int64)).tolist())))
                     for phase in schedule.masks(topo))
    out = []
    for phase in program(schedule.name, topo, payload).phases:
        by_src: dict[int, list[int]] = {}
        for t in phase:
            dsts = by_src.setdefault(t.src, [])
            if t.dst not in dsts:
                dsts.append(t.dst)
        out.append({src: tuple(d) for src, d in by_src.items()})
    return tuple(out)


def schedules_for(collective: str) -> list[Schedule]:
    """Catalogue entries of one collective, in registration order."""
    return [s for s in SCHEDULES.values() if s.collective == collective]


class ProgramCache:
    """Built programs by (schedule, topology, payload), least recently used out first, bounded
    by count and by the transfers held (a program of a 512-rank axis holds 260,000 of about
    300 bytes each): the newest program stays even when it alone is over the budget."""

    def __init__(self, maxsize: int, max_transfers: int) -> None:
        self.maxsize = maxsize
        self.max_transfers = max_transfers
        self._found: OrderedDict[tuple[str, Topology, int], tuple[Program, int]] = OrderedDict()
        self._held = 0
        self._lock = Lock()

    def __call__(self, name: str, topology: Topology, payload: int) -> Program:
        """The program of ``name`` on ``topology`` for ``payload``, built on a miss."""
        key = (name, topology, payload)
        with self._lock:
            found = self._found.get(key)
            if found is not None:
                self._found.move_to_end(key)
                return found[0]
        built = SCHEDULES[name].build(topology, payload)
        count = sum(len(phase) for phase in built.phases)
        with self._lock:
            if key not in self._found:
                self._found[key] = (built, count)
                self._held += count
            while len(self._found) > 1 and (len(self._found) > self.maxsize or self._held > self.max_transfers):
                _, (_, dropped) = self._found.popitem(last=False)
                self._held -= dropped
        return built

    @property
    def held(self) -> tuple[int, int]:
        """(programs, transfers) held."""
        return len(self._found), self._held

    def cache_clear(self) -> None:
        """Forget every program."""
        with self._lock:
            self._found.clear()
            self._held = 0


program = ProgramCache(maxsize=256, max_transfers=1 << 20)
"""The executable program of catalogue schedule ``name`` on ``topology`` for ``payload``: the one
cache of builds that Simlette's traffic, the decode pricing, the faults analysis and the MSCCL
export share (a Program is immutable)."""


@lru_cache(maxsize=65536)
def closed_form(name: str, topology: Topology) -> ClosedForm:
    """Cached closed form of schedule ``name`` on ``topology`` (must be valid)."""
    return SCHEDULES[name].cost(topology)
