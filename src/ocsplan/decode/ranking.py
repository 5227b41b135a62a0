"""Choosing the split: one ranking for ``decode --split auto``, ``deploy`` and the Pareto sweep.

The most interactive split wins (most tokens/s/user, then the earlier split). Splits are
timed in the order of a lower bound on their step time (compute, exact, plus the fabric
technology's bound on communication, :attr:`~ocsplan.decode.technology.Technology.comm_bound`:
on all-OCS :func:`ocsplan.planning.bound.objective_bound` of the step's instance), and a
split whose bound already exceeds the best step time timed so far is neither planned nor
timed: it cannot win. The winner is the one timing every split gives.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..errors import InfeasibleError
from ..realization.fabrics import FabricSpec
from ..realization.technologies import fabric_technology, technology
from ..workload.accelerator import Accelerator
from ..workload.demand import COMM, Precision
from ..workload.kernels import compute_time, memory_per_rank
from ..workload.model import Model
from ..workload.splits import Split, check_world, valid_splits
from ..workload.step import Step
from .cache import PlanCache
from .simulated import planned_runs, prefetch
from .step import check_spray, decode_step
from .technology import PRICERS, StepDemand

__all__ = ["BOUND_MARGIN", "Outcome", "Pruned", "SplitChoice", "best_of", "best_step", "resimulated",
           "time_splits"]

# a bound must exceed the incumbent by this share to rule a split out (float sums of the step time)
BOUND_MARGIN = 1e-9


@dataclass(frozen=True)
class Pruned:
    """A split that fits but cannot win: ``bound_s`` (its compute time plus a lower bound on
    its communication) already exceeds the step time of a split timed before it."""

    bound_s: float


Outcome = Step | Pruned | None  # per split and context: timed, ruled out by its bound, does not fit


def _key(step: Step) -> tuple[float, Split]:
    """The ranking: most tokens/s/user, then the earlier split."""
    return (-step.tokens_per_s_user, step.split)


def best_of(steps: Sequence[Step]) -> Step:
    """The best step by the ranking."""
    return min(steps, key=_key)


def resimulated(steps: Sequence[Step], model: Model, acc: Accelerator, spec: FabricSpec, world: int, batch: int,
                context: int, *, within: float, precision: Precision, cache: PlanCache, tokens_per_step: int,
                accept_rate: float, done: Callable[[int, int], None] | None = None, spray: str = "message",
                jobs: int | None = 1) -> Step:
    """App. B.6: every step within ``within`` of the best analytical one re-timed by Simlette (its
    ``spray``), and the best of those. ``done(k, finalists)`` after each re-timing. ``jobs``: worker
    processes for the finalists' distinct runs on EPS or hybrid, made first (None: one per core)."""
    bar = (1 - within) * best_of(steps).tokens_per_s_user
    finalists = [st for st in sorted(steps, key=_key) if st.tokens_per_s_user >= bar]
    if jobs != 1 and fabric_technology(spec).packet_switches:
        with planned_runs() as runs:  # what the finalists will simulate, made at once
            for st in finalists:
                decode_step(model, acc, spec, world, st.split, batch, context, network="simlette",
                            precision=precision, check_memory=False, cache=cache, tokens_per_step=tokens_per_step,
                            accept_rate=accept_rate, spray=spray)
        prefetch(runs, jobs)
    simulated: list[Step] = []
    for st in finalists:
        simulated.append(decode_step(model, acc, spec, world, st.split, batch, context, network="simlette",
                                     precision=precision, check_memory=False, cache=cache,
                                     tokens_per_step=tokens_per_step, accept_rate=accept_rate, spray=spray))
        if done is not None:
            done(len(simulated), len(finalists))
    return best_of(simulated)


def time_splits(model: Model, acc: Accelerator, spec: FabricSpec, world: int, splits: Sequence[Split], batch: int,
                contexts: Sequence[int], *, network: str = "analytical", precision: Precision = COMM["fp4"],
                cache: PlanCache | None = None, tokens_per_step: int = 1, accept_rate: float = 1.0,
                slack: float = 1.0, tick: Callable[[int], None] | None = None) -> list[list[Outcome]]:
    """Per split, per context: its step, :class:`Pruned`, or None where it does not fit in HBM.

    One plan serves every context, so a split is timed in each context its bound does
    not rule out. ``slack`` > 1 keeps every split within ``slack`` x the best step time
    (1 / (1 - within): the finalists Simlette re-times). ``tick(1)`` after each split."""
    plans = cache if cache is not None else PlanCache()
    k = tokens_per_step
    tech = PRICERS[technology(spec)]
    fits = [[memory_per_rank(model, acc, world, split, batch, context, precision).fits for context in contexts]
            for split in splits]
    bounds: list[list[float]] = []
    for split, fit in zip(splits, fits, strict=True):
        comm = tech.comm_bound(StepDemand(model, world, split, batch * k, precision), spec) if any(fit) else 0.0
        bounds.append([compute_time(model, acc, world, split, batch, context, precision, k).total_s + comm
                       if f else math.inf for context, f in zip(contexts, fit, strict=True)])
    best = [math.inf] * len(contexts)  # per context: the least step time timed so far
    out: list[list[Outcome]] = [[None] * len(contexts) for _ in splits]
    for i in sorted(range(len(splits)), key=lambda i: (min(bounds[i]), i)):
        for c, context in enumerate(contexts):
            if not fits[i][c]:
                continue
            if bounds[i][c] > best[c] * slack * (1 + BOUND_MARGIN):
                out[i][c] = Pruned(bounds[i][c])
                continue
            step = decode_step(model, acc, spec, world, splits[i], batch, context, network=network,
                               precision=precision, check_memory=False, cache=plans, tokens_per_step=k,
                               accept_rate=accept_rate)
            out[i][c] = step
            best[c] = min(best[c], step.step_s)
        if tick is not None:
            tick(1)
    return out


@dataclass(frozen=True)
class SplitChoice:
    """The chosen split's step, the steps timed (ranked, best first), and how many splits fit."""

    best: Step
    ranked: tuple[Step, ...]
    fitting: int


def best_step(model: Model, acc: Accelerator, spec: FabricSpec, world: int, batch: int, context: int, *,
              network: str = "analytical", precision: Precision = COMM["fp4"], within: float = 0.07,
              progress: Callable[[int, int], None] | None = None,
              cache: PlanCache | None = None, tokens_per_step: int = 1,
              accept_rate: float = 1.0, spray: str = "message", jobs: int | None = 1) -> SplitChoice:
    """The split with the most tokens/s/user among those that fit (:func:`time_splits`).

    With ``network="simlette"`` every split whose analytical interactivity is within
    ``within`` of the best is re-simulated (with ``spray``) and the best simulated one wins (App. B.6).
    InfeasibleError when no split fits in HBM. ``progress(done, total)`` after each split
    ranked (the total grows by the finalists once known). ``jobs``: worker processes for the
    finalists' Simlette runs on EPS or hybrid (:func:`resimulated`)."""
    check_world(world)
    check_spray(spray, network, spec)
    plans = cache if cache is not None else PlanCache()
    simlette = network == "simlette"
    ranking = "analytical" if simlette else network  # simlette re-times the finalists
    splits = valid_splits(model, world)
    fitting = [s for s in splits if memory_per_rank(model, acc, world, s, batch, context, precision).fits]
    if not fitting:
        if not splits:
            raise InfeasibleError(f"{model.name}: no valid Helix split on {world} accelerators")
        least = min(memory_per_rank(model, acc, world, s, batch, context, precision).total for s in splits)
        raise InfeasibleError(f"batch {batch} does not fit in HBM with any split: it needs at least "
                              f"{least / 1e9:.4g} GB per rank, {acc.name} holds {acc.hbm_capacity / 1e9:.4g} GB")
    done = [0]

    def tick(count: int) -> None:
        done[0] += count
        if progress is not None:
            progress(done[0], len(fitting))

    outcomes = time_splits(model, acc, spec, world, fitting, batch, (context,), network=ranking,
                           precision=precision, cache=plans, tokens_per_step=tokens_per_step,
                           accept_rate=accept_rate, slack=1 / (1 - within) if simlette else 1.0, tick=tick)
    steps = [o for row in outcomes for o in row if isinstance(o, Step)]
    ranked = sorted(steps, key=_key)
    best = ranked[0]
    if simlette:
        def retimed(k: int, finalists: int) -> None:
            if progress is not None:
                progress(len(fitting) + k, len(fitting) + finalists)

        best = resimulated(ranked, model, acc, spec, world, batch, context, within=within, precision=precision,
                           cache=plans, tokens_per_step=tokens_per_step, accept_rate=accept_rate, done=retimed,
                           spray=spray, jobs=jobs)
    return SplitChoice(best, tuple(ranked), len(fitting))
