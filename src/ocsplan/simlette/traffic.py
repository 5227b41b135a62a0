"""Traffic: a demand's executable schedule on every collective group of its axis, as a Workload.

A collective group of an axis is a coset (DESIGN §1): global rank =
base | expand(local, axis bits) for every base with zeros on the axis bits.
All groups of the axis run at once, so on a packet fabric they meet in the
switches. The simulator runs each node data-driven: it starts phase k once
every message addressed to it in phases before k has landed (the closed
form's phases, but per node instead of a global barrier).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import NamedTuple

from ..cayley import expand, mask_of
from ..errors import PlanError
from ..plan import DemandPlan, Plan, demand_topology
from ..schedules import Program
from ..schedules import program as build
from .timing import dl_flits

__all__ = ["ORDERS", "Send", "Workload", "collect", "demand_workload", "program_workload"]

# "program": each node sends in the schedule's own order (generators ascending,
# so all nodes of a phase address a permutation at every step);
# "rank": each node sends to its peers by ascending rank, so all of them hit the
# same destination at the same time (the paper's two-shot, App. C.4, Figure 21).
ORDERS = ("program", "rank")


class Send(NamedTuple):
    """One message a node sends in a phase: to ``dst`` over generator ``gen``.

    A named tuple rather than a frozen dataclass: workloads hold one per
    message (hundreds of thousands at N = 4096) and tuples build ~4x faster.
    """

    dst: int
    gen: int
    nbytes: Fraction
    flits: int
    size: float  # nbytes as a float (the analytical model's arithmetic)


@dataclass(frozen=True)
class Workload:
    """Per node and phase what it sends and how many messages it waits for."""

    name: str
    schedule: str
    phases: int
    nodes: tuple[int, ...]
    sends: dict[int, tuple[tuple[Send, ...], ...]]
    expect: dict[int, tuple[int, ...]]
    groups: int
    group_size: int

    def transfers(self, phase: int) -> list[tuple[int, Send]]:
        """(src, send) of every message of ``phase``."""
        return [(x, s) for x in self.nodes for s in self.sends[x][phase]]

    @property
    def messages(self) -> int:
        return sum(len(p) for x in self.nodes for p in self.sends[x])

    @property
    def flits(self) -> int:
        return sum(s.flits for x in self.nodes for p in self.sends[x] for s in p)


def program_workload(
    program: Program, bits: Sequence[int], world: int, order: str = "program", name: str = ""
) -> Workload:
    """Run ``program`` on every coset of the axis with global bit positions ``bits``."""
    if order not in ORDERS:
        raise ValueError(f"unknown order {order!r} (use {', '.join(ORDERS)})")
    if len(bits) != program.bits:
        raise PlanError(
            f"{program.schedule}: program of {program.bits} bits on an axis of {len(bits)}")
    block = mask_of(bits)
    local = [expand(x, bits) for x in range(program.size)]
    bases = [b for b in range(world) if not b & block]
    h = len(program.phases)
    sends: dict[int, list[list[Send]]] = {}
    expect: dict[int, list[int]] = {}
    for base in bases:
        for x in range(program.size):
            sends[base | local[x]] = [[] for _ in range(h)]
            expect[base | local[x]] = [0] * h
    # few distinct sizes and generators, many transfers: convert each once
    sizes: dict[tuple[int, int], tuple[int, float]] = {}
    gens: dict[int, int] = {}
    new = tuple.__new__
    last: Fraction | None = None  # transfers mostly share one size object: convert on change
    flits, size, empty = 0, 0.0, True
    for k, phase in enumerate(program.phases):
        for t in phase:
            nbytes = t.nbytes
            if nbytes is not last:
                last = nbytes
                key = (nbytes.numerator, nbytes.denominator)
                empty = key[0] <= 0
                if not empty:
                    found = sizes.get(key)
                    if found is None:
                        found = sizes[key] = (dl_flits(nbytes), float(nbytes))
                    flits, size = found
            if empty:
                continue
            gen = gens.get(t.gen)
            if gen is None:
                gen = gens[t.gen] = expand(t.gen, bits)
            lsrc, ldst = local[t.src], local[t.dst]
            nb = t.nbytes
            for base in bases:
                dst = base | ldst
                # Send(...) without its Python-level __new__ (hundreds of thousands of calls)
                sends[base | lsrc][k].append(new(Send, (dst, gen, nb, flits, size)))
                expect[dst][k] += 1
    return collect(name or program.schedule, program, sends, expect, order, len(bases))


def collect(name: str, program: Program, sends: dict[int, list[list[Send]]], expect: dict[int, list[int]],
            order: str, groups: int) -> Workload:
    """The workload of ``groups`` groups running ``program``, from each node's sends and expected
    arrivals per phase: in ``rank`` order a node's sends of a phase go by destination."""
    if order == "rank":
        for lists in sends.values():
            for msgs in lists:
                msgs.sort(key=lambda s: s.dst)
    nodes = tuple(sorted(sends))
    return Workload(
        name=name,
        schedule=program.schedule,
        phases=len(program.phases),
        nodes=nodes,
        sends={x: tuple(tuple(p) for p in sends[x]) for x in nodes},
        expect={x: tuple(expect[x]) for x in nodes},
        groups=groups,
        group_size=program.size,
    )


def demand_workload(
    plan: Plan, mesh: int, axis: int, demand: int, order: str = "program",
    payload: int | None = None, schedule: str | None = None,
) -> Workload:
    """The workload of one demand of a plan (optionally another payload or schedule)."""
    ax = plan.meshes[mesh].axes[axis]
    d: DemandPlan = ax.demands[demand]
    name = d.schedule if schedule is None else schedule
    if ax.ring or name == "ring":
        where = f"mesh {plan.meshes[mesh].name} axis {axis}"
        raise PlanError(f"{where}: the ring schedule is planning only, not simulated")
    topology = demand_topology(d.groups, ax.bits, d.fold)
    program = build(name, topology, d.payload_bytes if payload is None else payload)
    label = f"{plan.meshes[mesh].name}[{axis}].{demand} {d.collective}"
    return program_workload(program, ax.bits, plan.world, order, label)
