"""A hybrid fabric's level-2 OCS circuits, chosen so the level-2 load is balanced (paper App. C.7).

Uplink u of every leaf is a circuit to the leaf of rack r XOR ``masks[u]``; a
rack offset without an uplink is reached over several, the first of them
``next_hop[offset]`` (the rest routed from the next rack). By symmetry every
leaf's uplink of mask m carries the same load: the ``need`` of every offset
whose route crosses m, divided by the uplinks of mask m.

- At most ``up`` offsets needed: each gets its own uplink and the spare ones go
  to the busiest offset per uplink (every route one hop).
- More offsets than uplinks: ``up`` distinct masks whose routes put the least
  load on the busiest uplink (then the fewest uplink crossings), mask sets
  tried highest offsets first; for each, the routes are chosen by branch and
  bound among the shortest ones (a bounded number of nodes per set). On 16 racks with 8 uplinks and every offset
  needed alike (a world collective), masks 8-15 with every offset 1-7 over two
  of them put 3 offsets' flows on every uplink but two, the bound: 8 offsets
  direct and 7 over two uplinks are 22 crossings on 8 uplinks.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping, Sequence
from functools import lru_cache
from itertools import combinations, islice

__all__ = ["MAX_SETS", "balanced_uplinks", "lower_bound", "uplink_loads"]

MAX_SETS = 20000  # mask sets tried (then the units plus the busiest offsets as well)
_MAX_NODES = 2000  # branch-and-bound nodes per mask set
_TOTAL_NODES = 200000  # and over all sets: then the best found so far

Routes = tuple[tuple[int, ...], dict[int, int], dict[int, int]]


def uplink_loads(masks: Sequence[int], next_hop: Mapping[int, int], need: Mapping[int, int]) -> dict[int, float]:
    """Load per uplink mask: ``need`` of every offset whose route crosses it, over its uplinks."""
    load: dict[int, float] = dict.fromkeys(masks, 0.0)
    for delta, weight in need.items():
        rest = delta
        while rest:
            m = next_hop[rest]
            load[m] += weight
            rest ^= m
    return {m: v / masks.count(m) for m, v in load.items()}


def balanced_uplinks(need: Mapping[int, int], up: int, racks: int) -> Routes | None:
    """(masks, next_hop, hops) over ``racks`` racks and ``up`` uplinks per leaf for the flows ``need``
    per rack offset; None if no ``up`` uplinks reach every needed offset."""
    items = tuple(sorted((m, w) for m, w in need.items() if w > 0))
    return _balanced(items, up, racks)


@lru_cache(maxsize=64)
def _balanced(items: tuple[tuple[int, int], ...], up: int, racks: int) -> Routes | None:
    need = dict(items)
    if not need:
        return (), {}, {}
    if len(need) <= up:
        counts = dict.fromkeys(need, 1)
        for _ in range(up - len(need)):  # spare uplinks to the busiest offset per uplink
            busiest = max(need, key=lambda m: (need[m] / counts[m], -m))
            counts[busiest] += 1
        found = _routes(sorted(counts), need, racks, None)
        assert found is not None  # every needed offset has its own uplink
        return tuple(m for m in sorted(counts) for _ in range(counts[m])), found[1], found[2]
    bound = lower_bound(need, up)
    best: tuple[tuple[float, float], Routes] | None = None
    spent = [0]
    for masks in _candidates(need, up, racks):
        if best is not None and spent[0] > _TOTAL_NODES:
            break
        found = _routes(masks, need, racks, best[0] if best else None, spent)
        if found is not None:
            best = (found[0], (masks, found[1], found[2]))
            if best[0] <= bound:
                break
    return None if best is None else best[1]


def lower_bound(need: Mapping[int, int], up: int) -> tuple[float, float]:
    """(busiest uplink's load, uplink crossings) no ``up`` uplinks beat when more offsets are needed:
    at best the ``up`` heaviest offsets direct and every other over two uplinks, spread evenly; loads
    are sums of needs, so the busiest is rounded up to their common divisor."""
    weights = sorted(need.values(), reverse=True)
    total = sum(weights) + sum(weights[up:])
    unit = math.gcd(*weights)
    return math.ceil(total / up / unit) * unit, total


def _candidates(need: Mapping[int, int], up: int, racks: int) -> list[tuple[int, ...]]:
    """Mask sets of ``up`` distinct offsets, highest first, then the units and the busiest offsets."""
    offsets = range(racks - 1, 0, -1)
    out = [tuple(sorted(c)) for c in islice(combinations(offsets, up), MAX_SETS)]
    units = [1 << b for b in range(racks.bit_length() - 1)]
    busiest = sorted(need, key=lambda m: (-need[m], m))
    fallback = tuple(sorted((units + [m for m in busiest if m not in units])[:up]))
    return out if fallback in out else [*out, fallback]


def _routes(masks: Sequence[int], need: Mapping[int, int], racks: int, beat: tuple[float, float] | None,
            spent: list[int] | None = None) -> tuple[tuple[float, float], dict[int, int], dict[int, int]] | None:
    """The shortest routes over ``masks`` (distinct) with the least busiest-uplink load: ((that load,
    uplink crossings), next_hop, hops), or None when a needed offset is unreachable or ``beat``
    (a score found before) is not beaten; ``spent[0]`` counts the search nodes."""
    hops = {0: 0}
    frontier = deque([0])
    while frontier:
        cur = frontier.popleft()
        for m in masks:
            nxt = cur ^ m
            if nxt not in hops and nxt < racks:
                hops[nxt] = hops[cur] + 1
                frontier.append(nxt)
    if any(m not in hops for m in need):
        return None
    crossings = sum(w * hops[d] for d, w in need.items())
    unit = math.gcd(*need.values())
    floor = math.ceil(crossings / len(masks) / unit) * unit  # the busiest carries the mean at least
    if beat is not None and (floor, crossings) >= beat:
        return None
    # a routing must carry less on its busiest uplink than ``limit`` (or as much, with fewer crossings)
    limit, strict = (math.inf, False) if beat is None else (beat[0], crossings >= beat[1])
    order = sorted((d for d in hops if d), key=lambda d: (hops[d], -need.get(d, 0), d))
    options = {d: [a for a in masks if hops.get(d ^ a, -1) == hops[d] - 1] for d in order}
    path: dict[int, tuple[int, ...]] = {0: ()}
    load = dict.fromkeys(masks, 0)
    found: dict[int, int] = {}
    nodes = 0

    def search(i: int, top: int) -> bool:
        """Extend the routes from ``order[i]`` on; True once the busiest uplink is at ``floor``."""
        nonlocal nodes, limit, strict
        nodes += 1
        if top > limit or (strict and top >= limit) or nodes > _MAX_NODES:
            return False
        if i == len(order):
            found.clear()
            found.update((d, p[0]) for d, p in path.items() if d)
            limit, strict = top, True
            return top <= floor
        d = order[i]
        weight = need.get(d, 0)
        choices = options[d] if weight else options[d][:1]
        for a in sorted(choices, key=lambda a: (max(load[m] for m in (a, *path[d ^ a])), a)):
            route = (a, *path[d ^ a])
            for m in route:
                load[m] += weight
            path[d] = route
            done = search(i + 1, max(top, *(load[m] for m in route)))
            for m in route:
                load[m] -= weight
            del path[d]
            if done:
                return True
        return False

    search(0, 0)
    if spent is not None:
        spent[0] += nodes
    if not found:
        return None
    hops.pop(0)
    return (limit, crossings), found, hops
