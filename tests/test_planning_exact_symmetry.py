"""Twin axes (identical axes of one mesh, or of identical meshes) ordered by shape
(formulations/cpsat.md 5c): the optimum is the independent brute force's with and
without the ordering rows, and the rows do cut (an out-of-order solution exists
without them, none with them)."""

from __future__ import annotations

import math
from functools import cache

import pytest

from ocsplan.instance import Instance
from ocsplan.plan import assemble
from ocsplan.planning.check import check_plan
from ocsplan.planning.exact import ExactRun
from ocsplan.planning.exact.cpsat import CpSatBackend
from ocsplan.planning.exact.milp import MilpBackend
from ocsplan.planning.exact.model import Formulation, Row

from .exact_bruteforce import brute_force
from .tiny import AG, AR, TINY, KiB, tiny

_MESH = ((2, 4), [[(AR, 2 * KiB, 1.0, "auto")], [(AG, 32 * KiB, 2.0, "auto")]])
_CUBE = ((16,), [[(AR, 64 * KiB, 1.0, "auto")]])
TWINS = [
    tiny("twin-meshes", 3, 7, [_MESH, _MESH]),  # two identical meshes of two axes
    tiny("twin-cubes", 4, 9, [_CUBE, _CUBE]),  # two identical one-axis meshes
    next(i for i in TINY if i.name == "shared-folds"),  # two identical axes of one mesh
]


@cache
def optimum(name: str) -> float:
    return brute_force(next(i for i in TWINS if i.name == name))


def _without_twin_rows(form: Formulation) -> None:
    form.model.rows[:] = [r for r in form.model.rows if not r.name.startswith("twins_")]


@pytest.mark.parametrize("method", ["cpsat", "milp"])
@pytest.mark.parametrize("ordered", [True, False], ids=["ordered", "unordered"])
@pytest.mark.parametrize("inst", TWINS, ids=lambda i: i.name)
def test_twin_rows_keep_the_optimum(inst: Instance, ordered: bool, method: str) -> None:
    run = ExactRun(inst, use_heuristic=ordered)
    form = run.formulation
    assert form.twins  # the instance has twins
    if run.seed is not None:  # the heuristic's plan, twins swapped into order, is a valid hint
        hint = form.hint_from_plan(run.seed)
        assert hint is not None and form.model.violations(hint) == []
    if not ordered:
        _without_twin_rows(form)
    plan = run.solve(CpSatBackend(workers=1) if method == "cpsat" else MilpBackend(), method)
    assert plan.status == "optimal"
    assert math.isclose(plan.objective_s, optimum(inst.name), rel_tol=1e-9)


@pytest.mark.parametrize("inst", TWINS, ids=lambda i: i.name)
def test_twin_rows_cut_out_of_order_solutions(inst: Instance) -> None:
    for ordered in (False, True):
        form = ExactRun(inst, use_heuristic=False).formulation
        j1, j2 = form.twins[0]
        if not ordered:
            _without_twin_rows(form)
        # ask for the first twin's shape index above the second's
        terms = tuple((v, i) for i, v in enumerate(form.shape[j1].values()))
        terms += tuple((v, -i) for i, v in enumerate(form.shape[j2].values()))
        form.model.rows.append(Row("out_of_order", terms, ">=", 1))
        outcome = CpSatBackend(workers=1).solve(form, None)
        assert outcome.status == ("infeasible" if ordered else "optimal")


@pytest.mark.parametrize("inst", TWINS, ids=lambda i: i.name)
def test_an_out_of_order_plan_becomes_a_valid_hint(inst: Instance) -> None:
    # a plan with its twins out of order (solved without the twin rows, asked for it)
    form = ExactRun(inst, use_heuristic=False).formulation
    j1, j2 = form.twins[0]
    _without_twin_rows(form)
    terms = tuple((v, i) for i, v in enumerate(form.shape[j1].values()))
    terms += tuple((v, -i) for i, v in enumerate(form.shape[j2].values()))
    form.model.rows.append(Row("out_of_order", terms, ">=", 1))
    outcome = CpSatBackend(workers=1).solve(form, None)
    assert outcome.values is not None
    decision, _ = form.decode(outcome.values)
    plan = assemble(inst, decision, method="cpsat", status="feasible")
    assert check_plan(plan, inst) == []
    # the model with the twin rows takes it as a hint after swapping the twins
    fresh = ExactRun(inst, use_heuristic=False).formulation
    hint = fresh.hint_from_plan(plan)
    assert hint is not None and fresh.model.violations(hint) == []
    assert fresh.model.value(hint) <= plan.objective_s * (1 + 1e-9)
    ranks = [sum(i * hint[v] for i, v in enumerate(fresh.shape[j].values())) for j in (j1, j2)]
    assert ranks[0] <= ranks[1]
