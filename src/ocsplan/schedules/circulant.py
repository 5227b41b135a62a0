"""One-shot all-reduce schedules on circulant axes (Z_N, paper App. A.6).

A circulant is no cube, so only the one-shot schedules run on it. They are the
catalogue's ``one-shot`` and ``one-shot-dvo`` carried over from XOR to addition
mod N: the same executable programs (now with ``Program.modulus`` = N), the
same closed forms, proved by :func:`ocsplan.schedules.verify.verify` and
conformance-checked in the tests like every schedule. The catalogue has no
one-shot all-gather or all-to-all, so a circulant axis runs all-reduce only.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Protocol

from .allreduce import _rebalance
from .base import ClosedForm, GroupGraph, Item, Program, Transfer

__all__ = [
    "CIRCULANT_SCHEDULES",
    "CirculantGraph",
    "circulant_cost",
    "circulant_parents",
    "circulant_program",
]

CIRCULANT_SCHEDULES = ("one-shot", "one-shot-dvo")


class CirculantGraph(GroupGraph, Protocol):
    """A connected Cayley graph of Z_N (``ocsplan.planning.circulant.Circulant``)."""

    @property
    def offsets(self) -> tuple[int, ...]: ...

    @property
    def degree(self) -> int: ...

    @property
    def distances(self) -> tuple[int, ...]: ...

    @property
    def diameter(self) -> int: ...

    @property
    def ball_sizes(self) -> tuple[int, ...]: ...


def _translate(x: int, offsets: list[int], size: int) -> int:
    """Bitset of the labels x + e (mod size) for e in offsets."""
    mask = 0
    for e in offsets:
        mask |= 1 << ((x + e) % size)
    return mask


def _program(name: str, graph: CirculantGraph, payload: int, phases: list[list[Transfer]]) -> Program:
    return Program(
        schedule=name,
        collective="all-reduce",
        bits=0,
        payload=payload,
        segments=1,
        unit=Fraction(payload),
        phases=tuple(tuple(p) for p in phases if p),
        modulus=graph.size,
    )


def _depth(graph: CirculantGraph) -> int:
    return graph.diameter if graph.size > 1 else 0


# -- one-shot --------------------------------------------------------------------------


def _oneshot_cost(graph: CirculantGraph) -> ClosedForm:
    if graph.size == 1:
        return ClosedForm(0, Fraction(0), 0)
    return ClosedForm(graph.diameter, Fraction(sum(graph.ball_sizes[:-1])), graph.degree)


def _oneshot_build(graph: CirculantGraph, payload: int) -> Program:
    size, dist = graph.size, graph.distances
    phases = []
    for k in range(1, _depth(graph) + 1):
        # after k - 1 phases node x holds the inputs of x + d for every |d| <= k - 1
        inside = [d for d in range(size) if dist[d] <= k - 1]
        nbytes = Fraction(payload * len(inside))
        phase: list[Transfer] = []
        for x in range(size):
            item = Item("raw", 1, _translate(x, inside, size))
            phase.extend(Transfer(x, (x + g) % size, g, nbytes, (item,)) for g in graph.offsets)
        phases.append(phase)
    return _program("one-shot", graph, payload, phases)


# -- one-shot, data-volume optimised -----------------------------------------------------


@lru_cache(maxsize=1024)
def _parents_cached(size: int, offsets: tuple[int, ...], distances: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    parent: dict[int, int] = {}
    depth = max(distances) if size > 1 else 0
    for k in range(1, depth + 1):
        layer = [d for d in range(size) if distances[d] == k]
        options = {d: [g for g in offsets if distances[(d - g) % size] == k - 1] for d in layer}
        load = dict.fromkeys(offsets, 0)
        owned: dict[int, list[int]] = {g: [] for g in offsets}
        for d in layer:
            g = min(options[d], key=lambda x: (load[x], x))
            parent[d] = g
            load[g] += 1
            owned[g].append(d)
        while _rebalance(parent, options, load, owned):
            pass
    return tuple(sorted(parent.items()))


def circulant_parents(graph: CirculantGraph) -> dict[int, int]:
    """Translation-invariant shortest-path tree: offset d -> generator g of its last
    edge (d - g lies one step closer to 0), balanced per distance as in the cube
    version (:func:`ocsplan.schedules.allreduce.balanced_parents`)."""
    return dict(_parents_cached(graph.size, tuple(graph.offsets), tuple(graph.distances)))


def _dvo_counts(graph: CirculantGraph) -> list[dict[int, int]]:
    dist = graph.distances
    counts: list[dict[int, int]] = [{} for _ in range(_depth(graph) + 1)]
    for d, g in circulant_parents(graph).items():
        counts[dist[d]][g] = counts[dist[d]].get(g, 0) + 1
    return counts


def _dvo_cost(graph: CirculantGraph) -> ClosedForm:
    if graph.size == 1:
        return ClosedForm(0, Fraction(0), 0)
    counts = _dvo_counts(graph)[1:]
    return ClosedForm(
        graph.diameter,
        Fraction(sum(max(c.values()) for c in counts)),
        max(len(c) for c in counts),
    )


def _dvo_build(graph: CirculantGraph, payload: int) -> Program:
    size, dist = graph.size, graph.distances
    parent = circulant_parents(graph)
    phases = []
    for k in range(1, _depth(graph) + 1):
        by_gen: dict[int, list[int]] = {}
        for d, g in parent.items():
            if dist[d] == k:
                by_gen.setdefault(g, []).append(d)
        phase: list[Transfer] = []
        for x in range(size):
            for g in sorted(by_gen):
                # the input of s reaches s + d over the edge s + (d - g) -> s + d, so x
                # forwards the inputs of s = x + g - d to x + g
                offsets = [g - d for d in by_gen[g]]
                item = Item("raw", 1, _translate(x, offsets, size))
                phase.append(Transfer(x, (x + g) % size, g, Fraction(payload * len(offsets)), (item,)))
        phases.append(phase)
    return _program("one-shot-dvo", graph, payload, phases)


_COSTS = {"one-shot": _oneshot_cost, "one-shot-dvo": _dvo_cost}
_BUILDS = {"one-shot": _oneshot_build, "one-shot-dvo": _dvo_build}


def _known(name: str) -> None:
    if name not in _COSTS:
        raise ValueError(f"{name!r} does not run on a circulant (use {', '.join(CIRCULANT_SCHEDULES)})")


def circulant_cost(name: str, graph: CirculantGraph) -> ClosedForm:
    """Closed form (h, v as a multiple of the payload, u) of a one-shot schedule on ``graph``."""
    _known(name)
    return _COSTS[name](graph)


def circulant_program(name: str, graph: CirculantGraph, payload: int) -> Program:
    """The executable program of a one-shot schedule on ``graph`` (labels 0..N-1)."""
    _known(name)
    return _BUILDS[name](graph, payload)
