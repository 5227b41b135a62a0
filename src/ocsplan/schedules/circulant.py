"""One-shot schedules on circulant axes (Z_N, paper App. A.6).

A circulant is no cube, so only the one-shot schedules run on it. All-reduce:
the catalogue's ``one-shot`` and ``one-shot-dvo`` carried over from XOR to
addition mod N, with the same closed forms. All-gather (ours; each rank owns a
block of sigma / M): ``one-shot`` floods every block held to every neighbour,
``one-shot-dvo`` sends each block once along the balanced shortest-path tree.
All-to-all (ours): ``one-shot`` routes each block (sigma / M from every rank to
every other) along its shortest path in that tree. Every program has
``Program.modulus`` = N, is proved by :func:`ocsplan.schedules.verify.verify`
and conformance-checked against its closed form in the tests.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache
from typing import Protocol

from .base import ClosedForm, GroupGraph, Item, Program, Transfer, make_program
from .trees import balance

__all__ = [
    "CIRCULANT_CATALOGUE",
    "CIRCULANT_SCHEDULES",
    "CirculantGraph",
    "circulant_cost",
    "circulant_parents",
    "circulant_program",
]

CIRCULANT_SCHEDULES = ("one-shot", "one-shot-dvo")
# per collective, in the order "auto" tries them
CIRCULANT_CATALOGUE: dict[str, tuple[str, ...]] = {
    "all-reduce": ("one-shot", "one-shot-dvo"),
    "all-gather": ("one-shot", "one-shot-dvo"),
    "all-to-all": ("one-shot",),
}


class CirculantGraph(GroupGraph, Protocol):
    """A connected Cayley graph of Z_N (``ocsplan.circulant.Circulant``)."""

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


def _program(
    name: str, graph: CirculantGraph, payload: int, phases: list[list[Transfer]], collective: str = "all-reduce"
) -> Program:
    blocks = collective == "all-gather"
    return make_program(
        name,
        collective,
        0,
        payload,
        graph.size if blocks else 1,
        phases,
        unit=Fraction(payload, graph.size) if collective != "all-reduce" else Fraction(payload),
        modulus=graph.size,
    )


def _depth(graph: CirculantGraph) -> int:
    return graph.diameter if graph.size > 1 else 0


# -- one-shot --------------------------------------------------------------------------


def _oneshot_cost(graph: CirculantGraph) -> ClosedForm:
    if graph.size == 1:
        return ClosedForm(0, Fraction(0), 0)
    return ClosedForm(graph.diameter, Fraction(sum(graph.ball_sizes[:-1])), graph.degree)


def _carried(collective: str, labels: int) -> Item:
    """What a one-shot transfer carries of ``labels``: their inputs (all-reduce) or blocks (all-gather)."""
    return Item("gather", labels) if collective == "all-gather" else Item("raw", 1, labels)


def _label_bytes(collective: str, payload: int, size: int) -> Fraction:
    """Bytes per label carried: an input is the payload, a block the payload over the group."""
    return Fraction(payload, size) if collective == "all-gather" else Fraction(payload)


def _flood_build(graph: CirculantGraph, payload: int, collective: str = "all-reduce") -> Program:
    """one-shot: after k - 1 phases node x holds the data of x + d for every |d| <= k - 1 and floods it."""
    size, dist = graph.size, graph.distances
    unit = _label_bytes(collective, payload, size)
    phases = []
    for k in range(1, _depth(graph) + 1):
        inside = [d for d in range(size) if dist[d] <= k - 1]
        nbytes = unit * len(inside)
        phase: list[Transfer] = []
        for x in range(size):
            item = _carried(collective, _translate(x, inside, size))
            phase.extend(Transfer(x, (x + g) % size, g, nbytes, (item,)) for g in graph.offsets)
        phases.append(phase)
    return _program("one-shot", graph, payload, phases, collective)


# -- one-shot, data-volume optimised -----------------------------------------------------


@lru_cache(maxsize=1024)
def _parents_cached(size: int, offsets: tuple[int, ...], distances: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    parent: dict[int, int] = {}
    depth = max(distances) if size > 1 else 0
    for k in range(1, depth + 1):
        layer = [d for d in range(size) if distances[d] == k]
        options = {d: [g for g in offsets if distances[(d - g) % size] == k - 1] for d in layer}
        balance(parent, layer, options, offsets)
    return tuple(sorted(parent.items()))


def circulant_parents(graph: CirculantGraph) -> dict[int, int]:
    """Translation-invariant shortest-path tree: offset d -> generator g of its last
    edge (d - g lies one step closer to 0), balanced per distance as in the cube
    version (:func:`ocsplan.schedules.trees.balanced_parents`)."""
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


def _tree_build(graph: CirculantGraph, payload: int, collective: str = "all-reduce") -> Program:
    """one-shot-dvo: the data of s reaches s + d over the edge s + (d - g) -> s + d, so in phase
    |d| node x forwards the data of s = x + g - d to x + g, each input or block once."""
    size, dist = graph.size, graph.distances
    parent = circulant_parents(graph)
    unit = _label_bytes(collective, payload, size)
    phases = []
    for k in range(1, _depth(graph) + 1):
        by_gen: dict[int, list[int]] = {}
        for d, g in parent.items():
            if dist[d] == k:
                by_gen.setdefault(g, []).append(d)
        phase: list[Transfer] = []
        for x in range(size):
            for g in sorted(by_gen):
                offsets = [g - d for d in by_gen[g]]
                item = _carried(collective, _translate(x, offsets, size))
                phase.append(Transfer(x, (x + g) % size, g, unit * len(offsets), (item,)))
        phases.append(phase)
    return _program("one-shot-dvo", graph, payload, phases, collective)


# -- all-gather and all-to-all -------------------------------------------------------------


def _per_block(form: ClosedForm, size: int) -> ClosedForm:
    return ClosedForm(form.h, form.v_factor / size, form.u)


def _paths(graph: CirculantGraph) -> dict[int, tuple[int, ...]]:
    """Offset d -> the generators of its tree path from 0 (last one: its parent edge)."""
    parent = circulant_parents(graph)
    dist = graph.distances
    out: dict[int, tuple[int, ...]] = {0: ()}
    for d in sorted(parent, key=lambda x: dist[x]):
        out[d] = (*out[(d - parent[d]) % graph.size], parent[d])
    return out


def _route_counts(graph: CirculantGraph) -> list[dict[int, int]]:
    """Per phase j, how many offsets take their j-th step over each generator."""
    counts: list[dict[int, int]] = [{} for _ in range(_depth(graph))]
    for path in _paths(graph).values():
        for j, g in enumerate(path):
            counts[j][g] = counts[j].get(g, 0) + 1
    return counts


def _route_cost(graph: CirculantGraph) -> ClosedForm:
    if graph.size == 1:
        return ClosedForm(0, Fraction(0), 0)
    counts = _route_counts(graph)
    return ClosedForm(
        graph.diameter,
        Fraction(sum(max(c.values()) for c in counts), graph.size),
        max(len(c) for c in counts),
    )


def _route_build(graph: CirculantGraph, payload: int) -> Program:
    size = graph.size
    paths = _paths(graph)
    unit = Fraction(payload, size)
    phases: list[list[Transfer]] = []
    for j in range(_depth(graph)):
        steps: dict[int, list[tuple[int, int]]] = {}  # generator -> (offset done so far, full offset)
        for d, path in paths.items():
            if len(path) > j:
                steps.setdefault(path[j], []).append((sum(path[:j]) % size, d))
        phase: list[Transfer] = []
        for x in range(size):
            for g in sorted(steps):
                # x holds the block of origin o = x - done for destination o + d
                items = tuple(Item("route", 1, 1 << ((x - done) % size), 1 << ((x - done + d) % size))
                              for done, d in steps[g])
                phase.append(Transfer(x, (x + g) % size, g, unit * len(items), items))
        phases.append(phase)
    return _program("one-shot", graph, payload, phases, "all-to-all")


_COSTS: dict[tuple[str, str], Callable[[CirculantGraph], ClosedForm]] = {
    ("all-reduce", "one-shot"): _oneshot_cost,
    ("all-reduce", "one-shot-dvo"): _dvo_cost,
    ("all-gather", "one-shot"): lambda g: _per_block(_oneshot_cost(g), g.size),
    ("all-gather", "one-shot-dvo"): lambda g: _per_block(_dvo_cost(g), g.size),
    ("all-to-all", "one-shot"): _route_cost,
}
_BUILDS: dict[tuple[str, str], Callable[[CirculantGraph, int], Program]] = {
    ("all-reduce", "one-shot"): _flood_build,
    ("all-reduce", "one-shot-dvo"): _tree_build,
    ("all-gather", "one-shot"): lambda g, p: _flood_build(g, p, "all-gather"),
    ("all-gather", "one-shot-dvo"): lambda g, p: _tree_build(g, p, "all-gather"),
    ("all-to-all", "one-shot"): _route_build,
}


def _known(name: str, collective: str) -> tuple[str, str]:
    if (collective, name) not in _COSTS:
        known = ", ".join(CIRCULANT_CATALOGUE.get(collective, ()))
        raise ValueError(f"{name!r} does not run {collective} on a circulant (use {known})")
    return collective, name


def circulant_cost(name: str, graph: CirculantGraph, collective: str = "all-reduce") -> ClosedForm:
    """Closed form (h, v as a multiple of the payload, u) of a one-shot schedule on ``graph``."""
    return _COSTS[_known(name, collective)](graph)


def circulant_program(name: str, graph: CirculantGraph, payload: int, collective: str = "all-reduce") -> Program:
    """The executable program of a one-shot schedule on ``graph`` (labels 0..N-1)."""
    return _BUILDS[_known(name, collective)](graph, payload)
