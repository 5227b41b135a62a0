"""Heuristic planner: the staged Cayley search of the paper (Figure 12), in order.

1. Options: per demand, its candidate schedules on every shape of its axis, priced
   by the closed forms (:class:`~ocsplan.planning.context.Context`).
2. Partition classes: the meshes' bit partitions up to the symmetry of bit
   positions (one when only the base cube fits); beyond a few dozen, a shortlist
   ranked by two cheap proxies (:mod:`~ocsplan.planning.shortlist`).
3. Screening: one descent pass per class over the axes' block folds, and a second
   one with irregular folds too (the extended space, ours).
4. Finalists: the best few and those within 1 % continue as a beam descent
   (irregular folds on the best two, also from irregular starts).
5. Joint moves: several meshes re-cut their folds together (:mod:`~ocsplan.planning.joint`).
6. Moves across classes: with several meshes, the best state trades bits between
   axes and re-cuts meshes (:mod:`~ocsplan.planning.repartition`).
7. Polish: the best states get the multiplicity local search; the best becomes a
   :class:`~ocsplan.plan.Decision`.

The search state all stages share is :mod:`ocsplan.planning.search` (one partition
class) over :mod:`ocsplan.planning.context` (one search's static data).
Deterministic without a deadline: no randomness, every tie broken by a fixed order.
"""

from __future__ import annotations

import time
from itertools import islice

from ..cayley import Topology, sub_masks
from ..cost import demand_cost
from ..errors import InfeasibleError
from ..instance import Instance
from ..plan import Decision, DemandDecision, Plan, assemble
from ..schedules import SCHEDULES
from .context import Context, Eval, better
from .joint import joint
from .repartition import lookahead, repartition
from .search import BEAM, MAX_PASSES, Search
from .shortlist import SHORTLIST_FINALISTS, shortlist_partitions
from .space import RING, irregular_fold, is_irregular, iter_partitions, shape_options

__all__ = ["cube_only", "cube_only_bound", "plan_heuristic"]

FINALISTS = 4  # partitions that get descents to convergence after one screening pass,
FINALIST_WINDOW = 0.01  # plus those whose first pass is within 1 % of the best,
MAX_FINALISTS = 32  # up to this many
SCREEN_EFFORT = 0  # allocation effort while screening partitions (see allocate)
FINAL_EFFORT = 1  # and while descending on the finalists (each beam state is polished at the end)
POLISHED = 16  # final states whose multiplicities get the local search
LATENCY_BOUND = 0.05  # below this bandwidth share the allocation effort drops by one level
IRREGULAR_FINALISTS = 2  # finalists that also beam over irregular folds (and from the irregular starts)
JOINT_PARTITIONS = 2  # the best final states of this many partitions try joint moves (joint.joint)


def _decision(ctx: Context, search: Search, result: Eval) -> Decision:
    """The chosen state as the plan's decision: per demand its schedule, groups and multiplicity."""
    instance = ctx.instance
    choices: list[list[list[DemandDecision]]] = [
        [[] for _ in mesh.axes] for mesh in instance.meshes
    ]
    rings = set()
    flat = 0
    picks = result.choices(ctx)
    for j, ax in enumerate(ctx.axes):
        shape = result.effective_shapes[j]
        block = search.blocks[j]
        if shape == RING:
            rings.add((ax.mesh, ax.index))
        for d in ax.demands:
            k = picks[flat]
            flat += 1
            if shape == RING:
                choices[ax.mesh][ax.index].append(
                    DemandDecision("ring", tuple((b,) for b in block), result.levels[("ring", j)])
                )
                continue
            opt = shape_options(d.collective, d.schedule, shape)[k]
            groups = result.effective[j] if opt.on_profile else tuple((b,) for b in block)
            members: list[object] = [m for g in groups for m in sub_masks(g)]
            if not opt.on_profile or SCHEDULES[opt.schedule].cube_only:
                members = [1 << b for b in block]
                groups = tuple((b,) for b in block)
            fold: tuple[int, ...] = ()
            if opt.on_profile and is_irregular(shape):
                fold = irregular_fold(shape, block)
                members += [("irregular", j, g) for g in fold]
            p = min((result.levels[m] for m in members), default=1)
            choices[ax.mesh][ax.index].append(DemandDecision(opt.schedule, groups, p, fold))
    return Decision(
        partitions=search.partition,
        choices=tuple(tuple(tuple(c) for c in mesh) for mesh in choices),
        rings=frozenset(rings),
    )


def cube_only(instance: Instance) -> bool:
    """Whether the base cube is the only installable host (L = n and no ring can free ports).

    Then every axis is a hypercube at multiplicity 1 whatever bits it gets, so every
    partition is equivalent and each demand simply takes its best schedule on Q_a."""
    if instance.budget.ports > instance.n:
        return False
    single = len(instance.meshes) == 1
    return not (single and any(axis.bits >= 3 for mesh in instance.meshes for axis in mesh.axes))


def cube_only_bound(instance: Instance) -> float:
    """With :func:`cube_only`: the optimum, every demand at its best valid schedule on Q_a."""
    total = 0.0
    for mesh in instance.meshes:
        for axis in mesh.axes:
            topo = Topology.cube(axis.bits)
            for d in axis.demands:
                names = [d.schedule] if d.schedule != "auto" else [
                    s.name for s in SCHEDULES.values() if s.collective == d.collective and s.valid(topo)]
                total += d.weight * min(demand_cost(name, topo, d.payload, 1, instance.budget)[2] for name in names)
    return total


def plan_heuristic(instance: Instance, deadline: float | None = None, irregular: bool = True) -> Plan:
    """Plan ``instance`` with the staged heuristic search. Deterministic without a deadline.

    ``deadline`` (a :func:`time.perf_counter` value): the search stops between
    partitions once it passes and returns the best plan found so far, with a note.
    ``irregular=False`` keeps to the paper's space (block folds only)."""
    start = time.perf_counter()
    ctx = Context(instance, irregular)
    ctx.deadline = deadline
    notes: list[str] = []

    def late() -> bool:
        return deadline is not None and time.perf_counter() > deadline

    # one descent pass on every partition, then the most promising ones to convergence
    # where bandwidth hardly matters, cheaper multiplicity pricing ranks as well
    latency_bound = ctx.bandwidth_share() < LATENCY_BOUND
    screen_effort = SCREEN_EFFORT - latency_bound
    final_effort = FINAL_EFFORT - latency_bound
    screened: list[tuple[float, int, int, Search, Eval]] = []
    partitions = iter_partitions(instance)
    only_cube = cube_only(instance)
    if only_cube:  # every partition is equivalent: one suffices
        partitions = islice(partitions, 1)
        notes.append("only the base cube fits (L = n): every partition is equivalent")
    shortlist = shortlist_partitions(ctx, partitions, screen_effort, late, notes)
    extended = any(ax.irregular for ax in ctx.axes)
    for k, (idx, partition) in enumerate(shortlist.pairs):
        if screened and late():
            notes.append(f"time limit: stopped after screening {k} partitions; best plan so far")
            break
        search = Search(ctx, partition)
        result, _ = search.descend(1, effort=screen_effort)
        if result is not None:
            screened.append((result.objective, result.ports, idx, search, result))
        if extended:  # irregular folds too: a second screening of the class, its own search
            second = Search(ctx, partition)
            result, _ = second.descend(1, effort=screen_effort, extended=True)
            if result is not None:
                screened.append((result.objective, result.ports, idx, second, result))
    if not screened:
        raise InfeasibleError(f"{instance.source or instance.name}: no plan fits {instance.budget.ports} ports")
    screened.sort(key=lambda item: item[:3])
    # finalists: the best few, plus every partition whose first pass came close
    cutoff = screened[0][0] * (1 + FINALIST_WINDOW)
    finalists = [item for k, item in enumerate(screened) if k < FINALISTS or item[0] <= cutoff]
    finalists = finalists[: SHORTLIST_FINALISTS if shortlist.shortlisted else MAX_FINALISTS]
    finals: list[tuple[float, int, int, Search, Eval]] = []
    for k, (_, _, idx, search, result) in enumerate(finalists):
        if late():
            notes.append(f"time limit: {k} finalist partition(s) descended; best plan so far")
            break
        # re-price the screened state with both greedy allocations, then a beam descent
        result = search.evaluate(result.profiles, result.shapes, final_effort) or result
        states = search.beam(result, BEAM, MAX_PASSES, final_effort)
        # irregular folds (beyond the paper) on the best few: a beam over all shapes, one state
        # wide from the block-fold beam's best and from a start with the axes on irregular
        # folds; the block-fold states stay in the running (screened both ways above)
        if k < IRREGULAR_FINALISTS and extended:
            states += search.beam(result, BEAM, MAX_PASSES, final_effort, extended=True)
            states += search.beam(states[0], 1, MAX_PASSES, final_effort, extended=True)
            for start_state in search.irregular_starts(final_effort):
                states += search.beam(start_state, 1, MAX_PASSES, final_effort, extended=True)
        finals.extend((st.objective, st.ports, idx, search, st) for st in states)
    if not finals:
        finals = [screened[0]]
    finals.sort(key=lambda item: item[:3])
    # joint moves (several meshes re-cut their folds together) on the best partitions' best states
    tried: set[int] = set()
    for _, _, idx, search, state in list(finals):
        if len(tried) == JOINT_PARTITIONS or late():
            break
        if idx in tried:
            continue
        tried.add(idx)
        for _ in range(MAX_PASSES):
            moved = joint(search, state, final_effort)
            if not moved.objective < state.objective * (1 - 1e-12):
                break
            state = search.beam(moved, BEAM, MAX_PASSES, final_effort, extended=extended)[0]
            finals.append((state.objective, state.ports, idx, search, state))
    finals.sort(key=lambda item: item[:3])
    extras: list[tuple[float, int, int, Search, Eval]] = []
    if len(instance.meshes) > 1 and not only_cube and not late():  # the best state moves across classes
        _, _, idx, search, state = finals[0]
        search, state = repartition(search, state, screen_effort, final_effort, late)
        finals.insert(0, (state.objective, state.ports, idx, search, state))
        # two re-cuts through a neutral one: they may win only under the local search below
        extras = [(st.objective, st.ports, idx, other, st)
                  for other, st in lookahead(search, state, screen_effort, late)]
    # the few best states get the multiplicity local search
    best: tuple[float, int, int] | None = None
    best_state: tuple[Search, Eval] | None = None
    for _, _, idx, search, state in finals[:POLISHED] + extras:
        polished = state if late() else search.evaluate(state.profiles, state.shapes, effort=2) or state
        if polished.objective > state.objective:
            polished = state
        key = (polished.objective, polished.ports, idx)
        if better(key, best):
            best, best_state = key, (search, polished)
    assert best_state is not None
    if ctx.stopped and not any(note.startswith("time limit") for note in notes):
        notes.append("time limit: stopped inside a partition's search; best plan so far")
    decision = _decision(ctx, *best_state)
    elapsed = time.perf_counter() - start
    return assemble(instance, decision, method="heuristic", status="heuristic", solve_seconds=elapsed,
                    notes=notes)
