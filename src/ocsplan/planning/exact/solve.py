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
from ..heuristic import plan_heuristic
from .backend import Backend, Outcome
from .candidates import enumerate_candidates
from .model import Formulation, build_formulation

__all__ = ["ExactRun", "plan_exact"]

# relative difference below which a proven optimum and the heuristic's plan tie
# (CP-SAT optimises costs rounded to 1e-9 of the reference objective)
_TIE = 1e-7


class ExactRun:
    """One exact solve: the seed plan, the candidates and the model (built eagerly)."""

    def __init__(self, instance: Instance, use_heuristic: bool = True) -> None:
        self.instance = instance
        self.seed: Plan | None = None
        self.seed_failure = ""
        if use_heuristic:
            try:
                self.seed = plan_heuristic(instance)
            except InfeasibleError:
                self.seed = None
            except Exception as exc:  # a heuristic bug must not stop the exact run
                self.seed_failure = f"heuristic seed failed ({type(exc).__name__}: {exc})"
        bound = self.seed.objective_s if self.seed is not None else None
        self.candidates = enumerate_candidates(instance, upper_bound=bound)
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
) -> Plan:
    """Plan ``instance`` exactly with ``backend``; optionally write the model first."""
    start = time.perf_counter()
    run = ExactRun(instance)
    if export is not None:
        from .export import export_model

        export_model(run.formulation, export)
    return run.solve(backend, method, start)
