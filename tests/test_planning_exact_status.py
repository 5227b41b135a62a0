"""Solver outcomes -> optimal / feasible / infeasible / unknown, for every status code of
both backends (a table written from the solvers' documentation, not from the code), and
real time-limited runs that cannot finish.

CP-SAT: ``CpSolverStatus`` (cp_model.proto). HiGHS: ``HighsModelStatus`` (HConst.h).
CBC through PuLP: ``prob.status`` x ``prob.sol_status`` (pulp/constants.py; PuLP reports
a run stopped with an incumbent as status Optimal, solution status IntegerFeasible).
"""

from __future__ import annotations

from pathlib import Path

import highspy
import pulp
import pytest
from ortools.sat import cp_model_pb2
from typer.testing import CliRunner

from ocsplan import cli
from ocsplan.errors import OcsplanError
from ocsplan.instance import load_instance
from ocsplan.planning.check import check_plan
from ocsplan.planning.exact import ExactRun
from ocsplan.planning.exact import cpsat as cpsat_module
from ocsplan.planning.exact.cpsat import CpSatBackend, cpsat_status
from ocsplan.planning.exact.milp import MilpBackend, cbc_status, highs_status

ROOT = Path(__file__).resolve().parents[1]
ERROR = "error"

CPSAT = {
    "OPTIMAL": "optimal",
    "FEASIBLE": "feasible",  # a solution, optimality not proven
    "INFEASIBLE": "infeasible",
    "UNKNOWN": "unknown",  # a limit reached before any solution or proof
    "MODEL_INVALID": ERROR,  # the model ocsplan built is wrong: never a silent "unknown"
}


def test_the_cpsat_table_covers_every_code() -> None:
    assert set(CPSAT) == set(cp_model_pb2.CpSolverStatus.keys())


@pytest.mark.parametrize(("name", "expected"), sorted(CPSAT.items()))
def test_cpsat_status(name: str, expected: str) -> None:
    code = cp_model_pb2.CpSolverStatus.Value(name)
    if expected == ERROR:
        with pytest.raises(OcsplanError, match=r"\(MODEL_INVALID\): var #3 has no domain$"):
            cpsat_status(code, "var #3 has no domain\nsecond line")
    else:
        assert cpsat_status(code) == expected


def test_an_unknown_cpsat_code_is_an_error() -> None:
    with pytest.raises(OcsplanError, match="status code 99"):
        cpsat_status(99)


# (status without an incumbent, status with one)
HIGHS = {
    "kNotset": (ERROR, ERROR),
    "kLoadError": (ERROR, ERROR),
    "kModelError": (ERROR, ERROR),
    "kPresolveError": (ERROR, ERROR),
    "kSolveError": (ERROR, ERROR),
    "kPostsolveError": (ERROR, ERROR),
    "kModelEmpty": ("unknown", "feasible"),
    "kOptimal": ("optimal", "optimal"),
    "kInfeasible": ("infeasible", "infeasible"),
    # every variable is bounded: "unbounded or infeasible" can only be infeasible
    "kUnboundedOrInfeasible": ("infeasible", "infeasible"),
    "kUnbounded": (ERROR, ERROR),
    "kObjectiveBound": ("unknown", "feasible"),
    "kObjectiveTarget": ("unknown", "feasible"),
    "kTimeLimit": ("unknown", "feasible"),
    "kIterationLimit": ("unknown", "feasible"),
    "kUnknown": ("unknown", "feasible"),
    "kSolutionLimit": ("unknown", "feasible"),
    "kInterrupt": ("unknown", "feasible"),
    "kMemoryLimit": ("unknown", "feasible"),
    "kHighsInterrupt": ("unknown", "feasible"),
}


def test_the_highs_table_covers_every_code() -> None:
    assert set(highspy.HighsModelStatus.__members__) <= set(HIGHS)


@pytest.mark.parametrize("has_solution", [False, True], ids=["no-incumbent", "incumbent"])
@pytest.mark.parametrize("name", sorted(highspy.HighsModelStatus.__members__))
def test_highs_status(name: str, has_solution: bool) -> None:
    expected = HIGHS[name][has_solution]
    code = highspy.HighsModelStatus.__members__[name]
    if expected == ERROR:
        with pytest.raises(OcsplanError, match="HiGHS"):
            highs_status(code, has_solution)
    else:
        assert highs_status(code, has_solution) == expected


# rows: prob.status; columns: prob.sol_status 0 (none found), 1 (optimal), 2 (integer
# feasible), -1 (infeasible), -2 (unbounded)
SOL = (0, 1, 2, -1, -2)
CBC = {
    0: ("unknown", "feasible", "feasible", "infeasible", ERROR),  # not solved / stopped
    1: ("unknown", "optimal", "feasible", "infeasible", ERROR),  # "optimal" (or stopped with a solution)
    -1: ("infeasible", "feasible", "feasible", "infeasible", ERROR),
    -2: (ERROR, ERROR, ERROR, ERROR, ERROR),  # unbounded: impossible for a bounded model
    -3: ("unknown", "feasible", "feasible", "infeasible", ERROR),  # undefined
}


def test_the_cbc_table_covers_every_code() -> None:
    assert set(CBC) == set(pulp.LpStatus) and set(SOL) == set(pulp.LpSolution)


@pytest.mark.parametrize("sol_status", SOL)
@pytest.mark.parametrize("status", sorted(CBC))
def test_cbc_status(status: int, sol_status: int) -> None:
    expected = CBC[status][SOL.index(sol_status)]
    if expected == ERROR:
        with pytest.raises(OcsplanError, match="unbounded"):
            cbc_status(status, sol_status)
    else:
        assert cbc_status(status, sol_status) == expected


def test_cbc_stopped_on_time_with_a_solution_is_not_optimal() -> None:
    # what PuLP's CBC reader returns for "Stopped on time - objective value ..."
    assert cbc_status(pulp.LpStatusOptimal, pulp.LpSolutionIntegerFeasible) == "feasible"


# -- real runs that cannot finish ---------------------------------------------------


@pytest.fixture(scope="module")
def megatron() -> ExactRun:
    # CP-SAT needs ~0.6 s (one worker) and HiGHS ~2.5 s to prove this optimum; the
    # limits below are 10-50x shorter, so neither can return "optimal".
    return ExactRun(load_instance(ROOT / "instances/megatron-5t-n512-b1.toml"))


@pytest.mark.parametrize(
    "backend", [CpSatBackend(0.02, workers=1), MilpBackend(0.02, solver="highs")], ids=["cpsat", "highs"]
)
def test_time_limited_run_is_not_optimal(megatron: ExactRun, backend: CpSatBackend | MilpBackend) -> None:
    plan = megatron.solve(backend, backend.name)
    assert plan.status in ("feasible", "unknown")
    assert plan.bound_s is not None and plan.bound_s < plan.objective_s
    assert check_plan(plan, megatron.instance) == []


def test_cpsat_model_invalid_is_exit_1_on_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    translate = cpsat_module._translate

    def broken(form: object) -> object:
        model, xs, scale = translate(form)  # type: ignore[arg-type]
        model.new_int_var(5, 1, "empty")  # an empty domain: CP-SAT answers MODEL_INVALID
        return model, xs, scale

    monkeypatch.setattr(cpsat_module, "_translate", broken)
    ring = str(ROOT / "instances/paper-table7-ring-single.toml")
    result = CliRunner().invoke(cli.app, ["solve", ring, "--method", "cpsat"])
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: CP-SAT rejected the model (MODEL_INVALID): var #")
