"""CP-SAT backend (OR-Tools): the shared linear model on Boolean and integer variables.

The objective is scaled to integers (the reference objective maps to 10^9
units) and rounded per choice; the reported bound subtracts the largest
rounding error (half a unit per demand), so it stays a proven bound in seconds.
"""

from __future__ import annotations

import select
import signal
import socket
import threading
from pathlib import Path
from typing import Any

from ortools.sat.python import cp_model

from ...errors import OcsplanError
from ...files import write_atomic_with
from .backend import Outcome, objective_scale
from .linear import Assignment
from .model import Formulation

__all__ = ["CpSatBackend", "cpsat_status", "export_cpsat"]

_UNITS = 1e9

_STATUS: dict[int, str] = {
    int(cp_model.OPTIMAL): "optimal",
    int(cp_model.FEASIBLE): "feasible",
    int(cp_model.INFEASIBLE): "infeasible",
    int(cp_model.UNKNOWN): "unknown",
}


def cpsat_status(code: int, detail: str = "") -> str:
    """The status of a CP-SAT answer; MODEL_INVALID (a bug in the model we built)
    and codes this version does not know are errors, never a silent ``unknown``."""
    if code == cp_model.MODEL_INVALID:
        reason = detail.strip().splitlines()[0] if detail.strip() else "no reason given"
        raise OcsplanError(f"CP-SAT rejected the model (MODEL_INVALID): {reason}")
    if code not in _STATUS:
        raise OcsplanError(f"CP-SAT returned status code {code}, which ocsplan does not know")
    return _STATUS[code]


def _translate(form: Formulation) -> tuple[cp_model.CpModel, list[cp_model.IntVar], float]:
    mdl = form.model
    model = cp_model.CpModel()
    xs: list[cp_model.IntVar] = []
    for name, lo, hi in zip(mdl.names, mdl.lower, mdl.upper, strict=True):
        xs.append(
            model.new_bool_var(name) if (lo, hi) == (0, 1) else model.new_int_var(lo, hi, name)
        )
    for row in mdl.rows:
        expr = cp_model.LinearExpr.weighted_sum(
            [xs[v] for v, _ in row.terms], [c for _, c in row.terms]
        )
        if row.sense == "<=":
            model.add(expr <= row.rhs).with_name(row.name)
        elif row.sense == ">=":
            model.add(expr >= row.rhs).with_name(row.name)
        else:
            model.add(expr == row.rhs).with_name(row.name)
    scale = objective_scale(form, _UNITS)
    items = sorted(mdl.objective.items())
    model.minimize(
        cp_model.LinearExpr.weighted_sum(
            [xs[v] for v, _ in items], [round(c * scale) for _, c in items]
        )
    )
    return model, xs, scale


class CpSatBackend:
    """Solves a :class:`Formulation` with CP-SAT; ``workers`` threads, ``time_limit`` s."""

    name = "cpsat"

    def __init__(
        self, time_limit: float | None = None, workers: int | None = None, log: bool = False
    ) -> None:
        self.time_limit = time_limit
        # One worker with the full LP is the default: on this model it proved optimality
        # faster than CP-SAT's portfolio at 2 or 8 workers (formulations/cpsat.md, 6).
        self.workers = workers if workers is not None else 1
        self.log = log

    def solve(self, form: Formulation, hint: Assignment | None) -> Outcome:
        model, xs, scale = _translate(form)
        if hint is not None:
            for v, x in enumerate(xs):
                model.add_hint(x, hint.get(v, 0))
        solver = cp_model.CpSolver()
        params = solver.parameters
        params.num_workers = self.workers
        params.linearization_level = 2  # every row in the LP relaxation, with cuts
        params.random_seed = 0
        params.log_search_progress = self.log
        if self.time_limit is not None:
            params.max_time_in_seconds = float(self.time_limit)
        code = _solve(solver, model)
        status = cpsat_status(int(code), model.validate() if code == cp_model.MODEL_INVALID else "")
        demands = len(form.cand.demands)
        values: Assignment | None = None
        objective = bound = None
        if status in ("optimal", "feasible"):
            values = {v: int(solver.value(x)) for v, x in enumerate(xs)}
            objective = form.model.value(values)
        if status in ("optimal", "feasible", "unknown") and demands:
            raw = solver.best_objective_bound
            if raw == raw and abs(raw) != float("inf"):
                bound = max(0.0, (raw - 0.5 * demands) / scale)
                if objective is not None:
                    bound = min(bound, objective)
        return Outcome(status, values, objective, bound, f"cp-sat {_version()}")


def _solve(solver: Any, model: Any) -> Any:
    """``solver.solve(model)`` with Ctrl-C left to Python.

    CP-SAT's own SIGINT handler would replace Python's and leave the default
    handler behind (a later Ctrl-C then killed a study without its summary). So
    CP-SAT is told not to catch SIGINT; Python's handler stays installed, and a
    watcher thread woken through :func:`signal.set_wakeup_fd` (written by the C
    handler at once, even while the solver runs) stops the search. When the
    solve returns, Python runs its own handler: KeyboardInterrupt as usual."""
    if threading.current_thread() is not threading.main_thread():
        return solver.solve(model)
    solver.parameters.catch_sigint_signal = False
    receive, send = socket.socketpair()
    send.setblocking(False)
    previous = signal.set_wakeup_fd(send.fileno(), warn_on_full_buffer=False)
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            ready, _, _ = select.select([receive], [], [], 0.05)
            if ready and signal.SIGINT in receive.recv(64):
                solver.stop_search()

    watcher = threading.Thread(target=watch, name="cp-sat-sigint", daemon=True)
    watcher.start()
    try:
        return solver.solve(model)
    finally:
        done.set()
        watcher.join()
        signal.set_wakeup_fd(previous)
        receive.close()
        send.close()


def _version() -> str:
    import ortools

    return str(getattr(ortools, "__version__", "?"))


def export_cpsat(form: Formulation, path: str | Path) -> None:
    """Write the CP-SAT model proto (``.pb.txt`` text, ``.pb`` binary), atomically."""
    model, _, _ = _translate(form)

    def write(tmp: Path) -> None:
        if not model.export_to_file(str(tmp)):
            raise OcsplanError(f"{path}: CP-SAT could not write the model")

    write_atomic_with(path, write)
