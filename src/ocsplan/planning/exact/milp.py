"""MILP backend: the shared linear model through PuLP, solved by HiGHS (CBC as fallback).

The objective is scaled so that the reference objective becomes 1000 units;
HiGHS runs with a relative gap of 1e-9, so "optimal" means optimal to that
tolerance. The heuristic's plan is passed as a MIP start (HiGHS ``setSolution``,
CBC ``warmStart``).
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pulp

from ...errors import OcsplanError, SolverUnavailable
from ...files import write_atomic_with
from .backend import Outcome, objective_scale
from .linear import Assignment
from .model import Formulation

__all__ = ["MilpBackend", "cbc_status", "export_lp", "highs_status", "to_pulp"]

_UNITS = 1e3
_REL_GAP = 1e-9


def to_pulp(form: Formulation) -> tuple[pulp.LpProblem, list[pulp.LpVariable], float]:
    """The PuLP problem of a formulation, its variables (by model index) and the scale."""
    mdl = form.model
    prob = pulp.LpProblem(form.cand.instance.name.replace(" ", "_") or "ocsplan", pulp.LpMinimize)
    # PuLP >= 3 attaches variables to the problem; older versions build them free-standing
    make = getattr(prob, "add_variable", None) or pulp.LpVariable
    xs = [
        make(name, lo, hi, cat=pulp.LpBinary if (lo, hi) == (0, 1) else pulp.LpInteger)
        for name, lo, hi in zip(mdl.names, mdl.lower, mdl.upper, strict=True)
    ]
    scale = objective_scale(form, _UNITS)
    prob += pulp.lpSum(c * scale * xs[v] for v, c in sorted(mdl.objective.items())), "time"
    for row in mdl.rows:
        expr = pulp.lpSum(c * xs[v] for v, c in row.terms)
        if row.sense == "<=":
            prob += expr <= row.rhs, row.name
        elif row.sense == ">=":
            prob += expr >= row.rhs, row.name
        else:
            prob += expr == row.rhs, row.name
    return prob, xs, scale


@contextlib.contextmanager
def _quiet_stdout() -> Iterator[None]:
    """HiGHS prints its banner on C-level stdout when first constructed: divert it."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no real stdout (e.g. captured): nothing to protect
        yield
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


def highs_status(code: Any, has_solution: bool, name: str = "") -> str:
    """The status of a HiGHS answer (``code``: a ``highspy.HighsModelStatus``).

    Every variable of the model is bounded, so "unbounded or infeasible" means
    infeasible and "unbounded" means a modelling error. A limit (time, nodes,
    solutions, memory, interrupt) is ``feasible`` with an incumbent, else ``unknown``.
    """
    import highspy

    codes = highspy.HighsModelStatus
    label = name or str(code)
    if code in (
        codes.kNotset,
        codes.kLoadError,
        codes.kModelError,
        codes.kPresolveError,
        codes.kSolveError,
        codes.kPostsolveError,
    ):
        raise OcsplanError(f"HiGHS failed: {label}")
    if code == codes.kUnbounded:
        raise OcsplanError(f"HiGHS reports the bounded model unbounded (modelling error): {label}")
    if code == codes.kOptimal:
        return "optimal"
    if code in (codes.kInfeasible, codes.kUnboundedOrInfeasible):
        return "infeasible"
    return "feasible" if has_solution else "unknown"


def cbc_status(status: int, sol_status: int) -> str:
    """The status of a CBC answer from PuLP's ``prob.status`` and ``prob.sol_status``.

    PuLP reports a run stopped with an incumbent as status Optimal and solution
    status IntegerFeasible: only an optimal *solution* status proves optimality.
    """
    if status == pulp.LpStatusUnbounded or sol_status == pulp.LpSolutionUnbounded:
        raise OcsplanError("CBC reports the bounded model unbounded (modelling error)")
    if sol_status == pulp.LpSolutionOptimal:
        return "optimal" if status == pulp.LpStatusOptimal else "feasible"
    if sol_status == pulp.LpSolutionIntegerFeasible:
        return "feasible"
    if status == pulp.LpStatusInfeasible or sol_status == pulp.LpSolutionInfeasible:
        return "infeasible"
    return "unknown"


class _Highs(pulp.HiGHS):  # type: ignore[misc]
    """PuLP's HiGHS API with a MIP start and a silent construction."""

    def __init__(self, start: dict[str, float] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start = start

    def createAndConfigureSolver(self, lp: pulp.LpProblem) -> None:
        with _quiet_stdout():
            super().createAndConfigureSolver(lp)

    def callSolver(self, lp: pulp.LpProblem) -> None:
        if self.threads is not None:
            import highspy

            # HiGHS keeps one thread pool per process: a run asking for another
            # thread count fails unless the pool is rebuilt first
            highspy.Highs.resetGlobalScheduler(True)
        if self.start:
            import numpy as np

            index = [var.index for var in lp.variables() if var.name in self.start]
            value = [self.start[var.name] for var in lp.variables() if var.name in self.start]
            lp.solverModel.setSolution(
                len(index), np.array(index, dtype=np.int32), np.array(value, dtype=np.float64)
            )
        super().callSolver(lp)


class MilpBackend:
    """Solves a :class:`Formulation` as a MILP (``solver``: "highs", "cbc" or None = best)."""

    name = "milp"

    def __init__(
        self, time_limit: float | None = None, workers: int | None = None, solver: str | None = None
    ) -> None:
        self.time_limit = time_limit
        self.workers = workers
        self.solver = solver or ("highs" if pulp.HiGHS().available() else "cbc")
        if self.solver not in ("highs", "cbc"):
            raise SolverUnavailable(f"unknown MILP solver {solver!r} (highs, cbc)")

    def solve(self, form: Formulation, hint: Assignment | None) -> Outcome:
        prob, xs, scale = to_pulp(form)
        start = {xs[v].name: float(x) for v, x in hint.items()} if hint else None
        if self.solver == "highs":
            return self._highs(form, prob, xs, scale, start)
        return self._cbc(form, prob, xs, start)

    def _highs(
        self,
        form: Formulation,
        prob: pulp.LpProblem,
        xs: list[pulp.LpVariable],
        scale: float,
        start: dict[str, float] | None,
    ) -> Outcome:

        solver = _Highs(
            start=start,
            msg=False,
            timeLimit=self.time_limit,
            threads=self.workers,
            gapRel=_REL_GAP,
            gapAbs=1e-7,
        )
        prob.solve(solver)
        highs = prob.solverModel
        model_status = highs.getModelStatus()
        info = highs.getInfo()
        has_solution = info.primal_solution_status == 2  # kSolutionStatusFeasible
        status = highs_status(model_status, has_solution, highs.modelStatusToString(model_status))
        values = None
        objective = bound = None
        if status in ("optimal", "feasible"):
            values = {v: round(x.varValue or 0.0) for v, x in enumerate(xs)}
            objective = form.model.value(values)
        raw = info.mip_dual_bound
        if status != "infeasible" and raw == raw and abs(raw) != float("inf"):
            bound = max(0.0, raw / scale)
            if objective is not None:
                bound = min(bound, objective)
        return Outcome(status, values, objective, bound, f"highs {highs.version()}")

    def _cbc(
        self,
        form: Formulation,
        prob: pulp.LpProblem,
        xs: list[pulp.LpVariable],
        start: dict[str, float] | None,
    ) -> Outcome:
        if start:
            for x in xs:
                x.setInitialValue(start.get(x.name, 0.0))
        options = dict(
            msg=False,
            timeLimit=self.time_limit,
            threads=self.workers,
            gapRel=_REL_GAP,
            warmStart=bool(start),
        )
        solver = pulp.COIN_CMD(**options)
        if not solver.available():
            # the CBC binary bundled with PuLP (deprecated in PuLP 3, gone in 4)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                solver = pulp.PULP_CBC_CMD(**options)
        if not solver.available():
            raise SolverUnavailable("neither HiGHS (highspy) nor CBC is available to PuLP")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            prob.solve(solver)
        status = cbc_status(prob.status, prob.sol_status)
        values = None
        objective = bound = None
        if status in ("optimal", "feasible"):
            values = {v: round(x.varValue or 0.0) for v, x in enumerate(xs)}
            objective = form.model.value(values)
            if status == "optimal":
                bound = objective * (1 - _REL_GAP)
        return Outcome(status, values, objective, bound, "cbc")


def export_lp(form: Formulation, path: str | Path) -> None:
    """Write the model as MPS (``.mps``) or CPLEX LP (``.lp``), atomically."""
    suffix = Path(path).suffix.lower()
    if suffix not in (".mps", ".lp"):
        raise OcsplanError(f"{path}: unknown model format (use .mps or .lp)")
    prob, _, _ = to_pulp(form)
    write_atomic_with(path, lambda tmp: prob.writeMPS(str(tmp)) if suffix == ".mps" else prob.writeLP(str(tmp)))
