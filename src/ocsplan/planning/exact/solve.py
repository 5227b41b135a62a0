"""The exact planners: heuristic seed, shared candidates and model, a backend, one plan.

The heuristic runs first: its objective bounds the candidates (see
:mod:`.candidates`), its plan becomes the solution hint, and it is the fallback
that keeps an exact run from ever returning a worse plan: a run that finds
nothing better returns the heuristic's plan re-labelled with the exact
method's status and bound.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

from ...errors import InfeasibleError, OcsplanError
from ...instance import Instance
from ...plan import SEED_NOTE, Plan, assemble
from ..check import check_plan
from ..heuristic import cube_only, cube_only_bound, plan_heuristic
from .backend import Backend, Outcome
from .candidates import DeadlinePassed, enumerate_candidates
from .model import Formulation, build_formulation

__all__ = ["ExactRun", "plan_exact"]

# relative difference below which a proven optimum and the heuristic's plan tie
# (CP-SAT optimises costs rounded to 1e-9 of the reference objective)
_TIE = 1e-7


class ExactRun:
    """One exact solve: the seed plan, the candidates and the model (built eagerly)."""

    def __init__(
        self,
        instance: Instance,
        use_heuristic: bool = True,
        deadline: float | None = None,
        irregular: bool = True,
        compact: bool | None = None,
    ) -> None:
        self.instance = instance
        self.seed: Plan | None = None
        self.seed_failure = ""
        if use_heuristic:
            try:
                self.seed = plan_heuristic(instance, deadline, irregular)
            except InfeasibleError:
                self.seed = None
            except Exception as exc:  # a heuristic bug must not stop the exact run
                self.seed_failure = f"heuristic seed failed ({type(exc).__name__}: {exc})"
        bound = self.seed.objective_s if self.seed is not None else None
        try:
            self.candidates = enumerate_candidates(instance, bound, deadline, irregular, compact)
        except DeadlinePassed as exc:
            exc.seed = self.seed
            raise
        self.formulation: Formulation = build_formulation(self.candidates)

    def solve(self, backend: Backend, method: str, start: float | None = None) -> Plan:
        """Run ``backend``; the plan never is worse than the seed."""
        start = time.perf_counter() if start is None else start
        form = self.formulation
        hint = form.hint_from_plan(self.seed) if self.seed is not None else None
        outcome = backend.solve(form, hint)
        return self._plan(outcome, method, time.perf_counter() - start)

    def _plan(self, outcome: Outcome, method: str, seconds: float) -> Plan:
        instance, seed = self.instance, self.seed
        name = instance.source or instance.name
        mdl = self.formulation.model
        notes = [f"{outcome.solver}: {len(mdl.names)} variables, {len(mdl.rows)} rows"]
        if self.seed_failure:
            notes.append(self.seed_failure)
        if outcome.status == "infeasible":
            if seed is not None:
                raise OcsplanError(
                    f"{name}: {method} proved infeasible a model the heuristic's plan satisfies (modelling error)"
                )
            raise InfeasibleError(f"{name}: no plan fits {instance.budget.ports} ports")
        # every demand costs at least its cheapest choice: a bound even before the solver has one
        floor = sum(min(c.cost for c in dc.choices) for dc in self.candidates.demands)
        outcome = replace(outcome, bound=floor if outcome.bound is None else max(outcome.bound, floor))
        plan: Plan | None = None
        if outcome.values is not None:
            decision, _ = self.formulation.decode(outcome.values)
            plan = assemble(
                instance,
                decision,
                method=method,
                status=outcome.status,
                bound_s=outcome.bound,
                solve_seconds=seconds,
                notes=notes,
            )
            problems = check_plan(plan, instance)
            if problems:
                raise OcsplanError(f"{name}: {method} plan fails the checker: {problems[0]}")
        if (
            seed is not None
            and plan is not None
            and outcome.status == "optimal"
            and plan.objective_s > seed.objective_s * (1 + _TIE)
        ):
            raise OcsplanError(
                f"{name}: {method} proved {plan.objective_s:.9g} s optimal but the heuristic "
                f"found {seed.objective_s:.9g} s (modelling error)"
            )
        if seed is not None and (plan is None or plan.objective_s > seed.objective_s):
            bound = outcome.bound
            if bound is not None:
                bound = min(bound, seed.objective_s)
            plan = replace(
                seed,
                method=method,
                status=outcome.status,
                bound_s=bound,
                solve_seconds=seconds,
                notes=(*notes, SEED_NOTE),
            )
        if plan is None:
            raise OcsplanError(f"{name}: {method} found no plan ({outcome.status}); raise the time limit")
        if plan.bound_s is not None and plan.bound_s > plan.objective_s:
            plan = replace(plan, bound_s=plan.objective_s)
        return plan


def plan_exact(
    instance: Instance,
    backend: Backend,
    method: str,
    export: str | Path | None = None,
    time_limit: float | None = None,
    irregular: bool = True,
) -> Plan:
    """Plan ``instance`` exactly with ``backend``; optionally write the model first.

    ``time_limit`` bounds the whole call (wall clock): the heuristic seed stops at
    the deadline with its best plan so far and the backend gets the remaining time."""
    start = time.perf_counter()
    deadline = None if time_limit is None else start + time_limit
    if export is None and cube_only(instance):
        quick = _cube_only_plan(instance, method, start, irregular)
        if quick is not None:
            return quick
    try:
        run = ExactRun(instance, deadline=deadline, irregular=irregular)
    except DeadlinePassed as late:
        seed: Plan | None = late.seed
        if seed is None:
            raise OcsplanError(f"{instance.source or instance.name}: {method}: the time limit ran out "
                               "before a plan or a model was built; raise the time limit") from None
        return replace(
            seed, method=method, status="feasible", bound_s=None, solve_seconds=time.perf_counter() - start,
            notes=(*seed.notes, "time limit reached while building the model: the heuristic's plan, no proof"),
        )
    if export is not None:
        from .export import export_model

        export_model(run.formulation, export)
    if deadline is not None and hasattr(backend, "time_limit"):
        backend.time_limit = max(_MIN_SOLVE_S, deadline - time.perf_counter())
    return run.solve(backend, method, start)


# the least a backend is given when the seed and the model used up the time limit
_MIN_SOLVE_S = 0.1


def _cube_only_plan(instance: Instance, method: str, start: float, irregular: bool) -> Plan | None:
    """L = n: the heuristic's plan is optimal when it reaches the per-demand floor (answered at once)."""
    seed = plan_heuristic(instance, irregular=irregular)
    bound = cube_only_bound(instance)
    if seed.objective_s > bound * (1 + _TIE):
        return None  # not at the floor: let the solver decide
    return replace(
        seed, method=method, status="optimal", bound_s=min(bound, seed.objective_s),
        solve_seconds=time.perf_counter() - start,
        notes=(*seed.notes, "proven optimal without a solver: every demand at its best schedule on its cube"),
    )
