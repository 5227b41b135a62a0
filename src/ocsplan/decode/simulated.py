"""Simlette's times of native schedules on packet-switched fabrics (all-EPS, hybrid).

One memo, keyed by the traffic a run sends rather than by the schedule's name: on a
single layer the layered all-gather sends what one-shot sends, so a decode step's
splits (megatron-5t on all-EPS: 75 simulated demands) need 10 distinct runs, not 14.
The key is a digest of the program (every transfer's edge and exact byte count, in
program order), the axis bits, the world, the
fabric, the hybrid's routes and the spray: everything :func:`simulate_native` reads.

A simulation is deterministic, so the distinct runs several steps need can be made in
worker processes first (:func:`prefetch`) and the steps then priced from the memo: the
same floats, in a fraction of the time on a machine with cores to spare.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..cayley import Topology
from ..executor import Executor, Failure
from ..realization.fabrics import FabricSpec
from ..schedules import program as build
from ..schedules.compiled import shape
from ..simlette import SimOptions, network_factory, simulate_workload
from ..simlette.circuitmap import RackRoutes
from ..simlette.traffic import program_workload

__all__ = ["PARALLEL_MESSAGES", "NativeRun", "native_topology", "planned_runs", "prefetch", "simulate_native",
           "simulated", "workers"]

# below this many messages in all (about a second of simulation) the runs stay in this process:
# starting a worker costs about as much
PARALLEL_MESSAGES = 100_000

_SIMULATED: dict[tuple[object, ...], float] = {}
_SIMULATED_MAX = 4096
_PLANNED: list[list[NativeRun]] = []  # the innermost planned_runs() collects here


def native_topology(layout: str, bits: int) -> Topology:
    """The axis graph a native schedule runs on: K_M (``flat``) or the cube's unit masks (``cube``)."""
    return Topology.from_profile([bits]) if layout == "flat" else Topology.cube(bits)


@lru_cache(maxsize=4096)
def _traffic(schedule: str, layout: str, bits: int, payload: int) -> tuple[str, int]:
    """The digest of what ``schedule`` sends on the axis for ``payload`` (every transfer's edge
    and exact byte count, in program order) and its non-empty transfers per group (the work a
    run is). The program shape is payload-free; its shares times the payload are the bytes."""
    size, phases = shape(schedule, native_topology(layout, bits))
    digest = hashlib.sha256(f"{size} {len(phases)}".encode())
    transfers = 0
    for edges, index, shares in phases:
        scaled = [payload * c for c in shares]
        distinct = sorted(set(scaled))  # the shares' order follows object ids: name them by value
        rank = np.array([distinct.index(v) for v in scaled], dtype=np.int64)[index]
        keep = np.array([v > 0 for v in scaled], dtype=bool)[index]  # empty transfers send nothing
        transfers += int(keep.sum())
        digest.update(repr(distinct).encode())
        digest.update(np.ascontiguousarray(edges[keep]).tobytes())
        digest.update(np.ascontiguousarray(rank[keep]).tobytes())
        digest.update(b"|")
    return digest.hexdigest(), transfers


def _routes_key(routes: RackRoutes | None) -> object:
    if routes is None:
        return None
    return routes.masks, tuple(sorted(routes.next_hop.items())), tuple(sorted(routes.hops.items()))


@dataclass(frozen=True)
class NativeRun:
    """One Simlette run of a native schedule: ``schedule`` on ``layout`` over the axis of global
    bit positions ``bits``, every group of the ``world`` at once, on ``spec``."""

    schedule: str
    layout: str
    bits: tuple[int, ...]
    payload: int
    world: int
    spec: FabricSpec
    routes: RackRoutes | None
    spray: str

    def key(self) -> tuple[object, ...]:
        digest, _ = _traffic(self.schedule, self.layout, len(self.bits), self.payload)
        return (digest, self.bits, self.world, self.spec, _routes_key(self.routes), self.spray)

    @property
    def messages(self) -> int:
        """How many messages the run sends (every group's non-empty transfers)."""
        return _traffic(self.schedule, self.layout, len(self.bits), self.payload)[1] * (self.world >> len(self.bits))


def simulate_native(run: NativeRun) -> float:
    """Simlette's time of ``run`` in message mode (no memo)."""
    factory = network_factory(run.spec, SimOptions(mode="message", spray=run.spray).check(), ports=run.spec.ports,
                              routes=run.routes)
    program = build(run.schedule, native_topology(run.layout, len(run.bits)), run.payload)
    workload = program_workload(program, run.bits, run.world)
    return simulate_workload(workload, factory, mode="message", rate=run.spec.link).simulated_s


def _store(key: tuple[object, ...], seconds: float) -> None:
    if len(_SIMULATED) >= _SIMULATED_MAX:
        _SIMULATED.clear()
    _SIMULATED[key] = seconds


def simulated(run: NativeRun) -> float:
    """The simulated time of ``run``, from the memo when the same traffic ran before. Inside
    :func:`planned_runs` a run not in the memo is recorded, not made, and priced 0."""
    key = run.key()
    found = _SIMULATED.get(key)
    if found is not None:
        return found
    if _PLANNED:
        _PLANNED[-1].append(run)
        return 0.0
    found = simulate_native(run)
    _store(key, found)
    return found


@contextmanager
def planned_runs() -> Iterator[list[NativeRun]]:
    """Collect the runs the code inside would make (pricing them 0, so what it returns is
    to be thrown away): the list to :func:`prefetch` before pricing for real."""
    runs: list[NativeRun] = []
    _PLANNED.append(runs)
    try:
        yield runs
    finally:
        _PLANNED.pop()


def workers(jobs: int | None) -> int:
    """Worker processes for ``jobs`` (None: the cores this process may use)."""
    if jobs is not None:
        return jobs
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def prefetch(runs: Sequence[NativeRun], jobs: int | None = 1) -> int:
    """Make the distinct runs of ``runs`` not in the memo, in up to ``jobs`` worker processes
    (None: one per core) when there are several and enough work, largest first; returns how
    many were made. The memo then holds the same floats the runs give in this process."""
    todo: dict[tuple[object, ...], NativeRun] = {}
    for run in runs:
        key = run.key()
        if key not in _SIMULATED:
            todo.setdefault(key, run)
    order = sorted(todo.items(), key=lambda item: -item[1].messages)
    count = min(workers(jobs), len(order))
    if count < 2 or sum(run.messages for _, run in order) < PARALLEL_MESSAGES:
        for key, run in order:
            _store(key, simulate_native(run))
        return len(order)
    times: dict[int, float] = {}

    def done(index: int, result: float | Failure) -> None:
        if not isinstance(result, Failure):
            times[index] = result

    Executor(jobs=count).run(simulate_native, [run for _, run in order], done)
    for index, (key, run) in enumerate(order):
        # a run that failed twice in a worker is made here, where its error is raised as such
        _store(key, times[index] if index in times else simulate_native(run))
    return len(order)
