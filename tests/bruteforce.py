"""An independent brute force over the planners' search space, for tiny instances.

It enumerates every bit partition of every mesh, every set partition of every
active axis's bits into sub-blocks (its block fold), every schedule of every
demand (on that fold or on the axis's unit masks) and every multiplicity, and
prices each with the schedules' closed forms directly (not through the
planners' option tables). Only for n <= 4 and a couple of demands.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations, product

from ocsplan.cayley import Topology, compress, sub_masks
from ocsplan.instance import Instance
from ocsplan.schedules import AUTO_EXCLUDED, SCHEDULES


def set_partitions(items: list[int]) -> list[list[tuple[int, ...]]]:
    if not items:
        return [[]]
    first, rest = items[0], items[1:]
    out = []
    for sub in set_partitions(rest):
        out.append([(first,), *sub])
        for i in range(len(sub)):
            out.append([*sub[:i], (first, *sub[i]), *sub[i + 1 :]])
    return out


def mesh_partitions(n: int, sizes: list[int]) -> list[list[tuple[int, ...]]]:
    if not sizes:
        return [[]]
    bits = sizes[0].bit_length() - 1
    out = []
    remaining = sizes[1:]
    universe = list(range(n))
    for chosen in combinations(universe, bits):
        rest = [b for b in universe if b not in chosen]
        for tail in _assign(rest, remaining):
            out.append([tuple(chosen), *tail])
    return out


def _assign(bits: list[int], sizes: list[int]) -> list[list[tuple[int, ...]]]:
    if not sizes:
        return [[]] if not bits else []
    k = sizes[0].bit_length() - 1
    out = []
    for chosen in combinations(bits, k):
        rest = [b for b in bits if b not in chosen]
        for tail in _assign(rest, sizes[1:]):
            out.append([tuple(chosen), *tail])
    return out


def brute_force(instance: Instance) -> float:
    """The optimal objective over the search space (inf if nothing fits)."""
    fab = instance.budget
    n = instance.n
    best = float("inf")
    per_mesh = [mesh_partitions(n, list(m.shape)) for m in instance.meshes]
    active = [(m, i) for m, mesh in enumerate(instance.meshes) for i, ax in enumerate(mesh.axes) if ax.demands]
    for parts in product(*per_mesh):
        blocks = {(m, i): parts[m][i] for m, i in active}
        for profiles in product(*(set_partitions(list(blocks[key])) for key in active)):
            folds = {g for prof in profiles for grp in prof for g in sub_masks(grp) if g & (g - 1)}
            base = n + len(folds)
            if base > fab.ports:
                continue
            options = []  # per demand: list of (lat, vol, gens)
            for key, prof in zip(active, profiles, strict=True):
                m, i = key
                block = blocks[key]
                prof_gens = frozenset(g for grp in prof for g in sub_masks(grp))
                unit_gens = frozenset(1 << b for b in block)
                layers = tuple(tuple(compress(g, block) for g in sub_masks(grp)) for grp in prof)
                fold_topo = Topology(len(block), frozenset(x for la in layers for x in la), layers)
                cube_topo = Topology.cube(len(block))
                for d in instance.meshes[m].axes[i].demands:
                    names = (
                        [d.schedule]
                        if d.schedule != "auto"
                        else [
                            s.name
                            for s in SCHEDULES.values()
                            if s.collective == d.collective and s.name not in AUTO_EXCLUDED
                        ]
                    )
                    opts = []
                    for name in names:
                        sched = SCHEDULES[name]
                        for topo, gens in ((fold_topo, prof_gens), (cube_topo, unit_gens)):
                            if sched.cube_only and topo is fold_topo:
                                continue
                            if not sched.valid(topo):
                                continue
                            form = sched.cost(topo)
                            opts.append(
                                (
                                    d.weight * form.h * fab.latency,
                                    d.weight * float(form.v_factor) * d.payload / fab.link,
                                    gens,
                                )
                            )
                    options.append(opts)
            best = min(best, _best_multiplicities(options, folds, n, fab.ports))
    return best


def _best_multiplicities(
    options: list[list[tuple[float, float, frozenset[int]]]], folds: set[int], n: int, ports: int
) -> float:
    """The cheapest choice of option and multiplicity per demand within ``ports``: every
    combination, except those past the budget (what :func:`_within` skips, the exhaustive
    product skipped as over budget too; the same values, the same minimum)."""
    start: dict[int, int] = {1 << b: 1 for b in range(n)}
    for f in folds:
        start[f] = 1
    best = float("inf")
    if sum(start.values()) > ports:  # every combination is over budget (with no demand, too)
        return best
    for choice in product(*options):
        for ps in _within([gens for _, _, gens in choice], start, ports):
            value = sum(lat + vol / p for (lat, vol, _), p in zip(choice, ps, strict=True))
            best = min(best, value)
    return best


def _within(gens: list[frozenset[int]], level: dict[int, int], ports: int) -> Iterator[tuple[int, ...]]:
    """Every multiplicity per demand (1 to ``ports``, demand k lifting the generators
    ``gens[k]``) whose port levels sum to at most ``ports``. A multiplicity only raises
    levels, so once a prefix is over budget, so is every larger multiplicity at its last
    position and every completion: the walk stops there."""
    if not gens:
        yield ()
        return
    for p in range(1, ports + 1):
        raised = dict(level)
        for g in gens[0]:
            raised[g] = max(raised[g], p)
        if sum(raised.values()) > ports:
            break
        for rest in _within(gens[1:], raised, ports):
            yield (p, *rest)
