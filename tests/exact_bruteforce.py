"""An independent brute force over the exact search space, for tiny instances.

Written from the formulation's description (formulations/cpsat.md), not from
the model code: every assignment of bits to axes, every set partition of every
active axis's block into layers (and, in a single-mesh deployment, a ring for an
all-ring axis), every per-demand choice of generator set (the layers' masks or
the block's unit masks) and multiplicity p; for a fixed p and generator set a
demand takes its cheapest valid schedule, straight from the catalogue's closed forms.

With ``irregular=True`` an active axis of m bits may also take an irregular fold
(issue 10): for each diameter, the least-degree generator set of the shipped
covering table whose diameter (by breadth-first search here) is below the layer
count of every block fold of at most its degree. Its non-unit masks are the
axis's own (one port each, never shared); its demands run the schedules that need
no layers on it, or any schedule on the unit masks.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import combinations, product
from typing import Any

from ocsplan.cayley import Topology, compress, sub_masks
from ocsplan.instance import Instance
from ocsplan.schedules import AUTO_EXCLUDED, SCHEDULES, closed_form

__all__ = ["brute_force"]


def _set_partitions(items: Sequence[int]) -> Iterator[list[tuple[int, ...]]]:
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for part in _set_partitions(rest):
        yield [(first,), *part]
        for i, group in enumerate(part):
            yield [*part[:i], (first, *group), *part[i + 1 :]]


def _mesh_partitions(n: int, sizes: Sequence[int]) -> Iterator[tuple[tuple[int, ...], ...]]:
    def rec(left: tuple[int, ...], idx: int) -> Iterator[tuple[tuple[int, ...], ...]]:
        if idx == len(sizes):
            yield ()
            return
        for chosen in combinations(left, sizes[idx]):
            rest = tuple(b for b in left if b not in chosen)
            for tail in rec(rest, idx + 1):
                yield (chosen, *tail)

    yield from rec(tuple(range(n)), 0)


def _runs(collective: str, requested: str, topo: Topology, on_cube: bool) -> list[tuple[int, float]]:
    """(h, v/sigma) of every schedule that may run a demand on ``topo`` (a block fold,
    its layers fixed): under "auto", the schedules that need no layers only on a fold
    of one layer (formulations/cpsat.md: they are left out of folds of two or more)."""
    out = []
    layered = topo.layers is not None and len(topo.layers) >= 2
    for sched in SCHEDULES.values():
        if sched.collective != collective:
            continue
        if requested == "auto" and sched.name in AUTO_EXCLUDED:
            continue
        if requested == "auto" and layered and sched.layers(topo) is None:
            continue
        if requested != "auto" and sched.name != requested:
            continue
        if sched.cube_only and not on_cube:
            continue
        if not sched.valid(topo):
            continue
        form = closed_form(sched.name, topo)
        out.append((form.h, float(form.v_factor)))
    return out


def _diameter(gens: Sequence[int], bits: int) -> int:
    dist = {0: 0}
    frontier = [0]
    while frontier:
        nxt = []
        for x in frontier:
            for g in gens:
                if x ^ g not in dist:
                    dist[x ^ g] = dist[x] + 1
                    nxt.append(x ^ g)
        frontier = nxt
    return max(dist.values())


def _fewest_block_layers(bits: int, degree: int) -> int:
    best = bits
    stack = [(bits, bits, 0, 0)]  # bits left, largest part, parts, degree so far
    while stack:
        left, largest, parts, deg = stack.pop()
        if deg > degree:
            continue
        if left == 0:
            best = min(best, parts)
            continue
        stack.extend((left - k, k, parts + 1, deg + (1 << k) - 1) for k in range(1, min(left, largest) + 1))
    return best


def _irregular_sets(bits: int) -> list[tuple[int, ...]]:
    """Generator sets (local masks) an axis of ``bits`` bits may take as an irregular fold."""
    from ocsplan.planning.covering import covering_sets

    out: list[tuple[int, ...]] = []
    diameters: set[int] = set()
    for entry in covering_sets(bits):
        diam = _diameter(entry.generators, bits)
        if entry.degree > bits and diam not in diameters and diam < _fewest_block_layers(bits, entry.degree):
            diameters.add(diam)
            out.append(tuple(entry.generators))
    return out


def _layer_free_runs(collective: str, requested: str, topo: Topology) -> list[tuple[int, float]]:
    return [
        (closed_form(s.name, topo).h, float(closed_form(s.name, topo).v_factor))
        for s in SCHEDULES.values()
        if s.collective == collective and not s.cube_only and s.name not in AUTO_EXCLUDED
        and (requested in ("auto", s.name)) and s.valid(topo) and s.layers(topo) is None
    ]


def brute_force(instance: Instance, irregular: bool = False) -> float:
    """The least objective over the whole exact search space (inf if nothing fits)."""
    fab = instance.budget
    n, L = instance.n, fab.ports
    lam, rate = fab.latency, fab.link
    single = len(instance.meshes) == 1
    top_p = L - n + 1
    best = float("inf")
    for parts in product(*(_mesh_partitions(n, [ax.bits for ax in mesh.axes]) for mesh in instance.meshes)):
        active = [
            (blk, axis.demands)
            for mesh, part in zip(instance.meshes, parts, strict=True)
            for blk, axis in zip(part, mesh.axes, strict=True)
            if axis.demands
        ]
        profile_sets = []
        for blk, demands in active:
            options: list[Any] = list(_set_partitions(list(blk)))
            if single and len(blk) >= 2 and all(d.schedule == "ring" for d in demands):
                options.append(None)  # the axis becomes a degree-2 ring
            if irregular:
                options += [("irregular", gens) for gens in _irregular_sets(len(blk))]
            profile_sets.append(options)
        for profiles in product(*profile_sets):
            ring_bits = {b for (blk, _), prof in zip(active, profiles, strict=True) if prof is None for b in blk}
            weight: dict[object, int] = {1 << b: 1 for b in range(n) if b not in ring_bits}
            for j, prof in enumerate(profiles):
                if prof is None:
                    weight[("ring", j)] = 2
                elif isinstance(prof, tuple):  # an irregular fold: private masks
                    for g in prof[1]:
                        if g & (g - 1):
                            weight[("irregular", j, g)] = 1
                else:
                    for layer in prof:
                        for g in sub_masks(layer):
                            weight.setdefault(g, 1)
            base = sum(weight.values())
            if base > L:
                continue
            # per demand: list of (generator set, p, cost)
            menus: list[list[tuple[tuple[object, ...], int, float]]] = []
            for j, ((blk, demands), prof) in enumerate(zip(active, profiles, strict=True)):
                a = len(blk)
                cube = Topology.from_profile((1,) * a)  # the unit layers, fixed
                for d in demands:
                    menu: list[tuple[tuple[object, ...], int, float]] = []
                    if prof is None:
                        h, v = (
                            closed_form("ring", cube).h,
                            float(closed_form("ring", cube).v_factor),
                        )
                        gens: tuple[object, ...] = (("ring", j),)
                        runs = [(h, v)]
                        sets = [(gens, runs)]
                    elif isinstance(prof, tuple):
                        local = prof[1]
                        units = tuple(1 << b for b in blk)
                        own = tuple(("irregular", j, g) for g in local if g & (g - 1))
                        topo = Topology(a, frozenset(local))
                        sets = [
                            (units + own, _layer_free_runs(d.collective, d.schedule, topo)),
                            (units, _runs(d.collective, d.schedule, cube, on_cube=True)),
                        ]
                    else:
                        layers = tuple(tuple(compress(g, blk) for g in sub_masks(layer)) for layer in prof)
                        topo = Topology(a, frozenset(g for lay in layers for g in lay), layers)
                        units = tuple(1 << b for b in blk)
                        folded = tuple(g for layer in prof for g in sub_masks(layer))
                        sets = [
                            (
                                folded,
                                _runs(
                                    d.collective,
                                    d.schedule,
                                    topo,
                                    on_cube=all(len(x) == 1 for x in prof),
                                ),
                            ),
                            (units, _runs(d.collective, d.schedule, cube, on_cube=True)),
                        ]
                    for gens, runs in sets:
                        if not runs:
                            continue
                        for p in range(1, top_p + 1):
                            cost = min(d.weight * (h * lam + v * d.payload / (p * rate)) for h, v in runs)
                            menu.append((gens, p, cost))
                    menus.append(menu)
            if any(not m for m in menus):
                continue
            for pick in product(*menus):
                level = dict.fromkeys(weight, 1)
                for gens, p, _ in pick:
                    for gen in gens:
                        level[gen] = max(level[gen], p)
                ports = sum(weight[g] * level[g] for g in level)
                if ports <= L:
                    best = min(best, sum(c for _, _, c in pick))
    return best
