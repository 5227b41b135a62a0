"""Model building, apart from solving: variable and row counts, domains, hints."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import pytest

from ocsplan.instance import load_instance
from ocsplan.plan import assemble
from ocsplan.planning.check import check_plan
from ocsplan.planning.exact import build_formulation, enumerate_candidates
from ocsplan.planning.heuristic import plan_heuristic
from ocsplan.planning.space import RING

from .tiny import TINY, tiny

ROOT = Path(__file__).resolve().parents[1]
NAMED = sorted(p.name for p in (ROOT / "instances").glob("*.toml"))


def _prefixes(names: list[str]) -> Counter[str]:
    return Counter(name.rsplit("_", 1)[0].split("_")[0] for name in names)


def test_counts_of_a_hand_sized_model() -> None:
    # n = 4, L = 8: 4 spare ports. Shapes of the axis of 16 with at most 4 folds:
    # (1,1,1,1), (2,1,1) 1 fold, (2,2) 2, (3,1) 4 ((4) would need 11). All three
    # folded shapes give a 1 KiB all-reduce fewer phases than the cube (3, 2, 2 < 4).
    # Layers: bit sets of 2 or 3 of the 4 bits: C(4,2) + C(4,3) = 10; folds: the
    # masks of weight 2 or 3: 6 + 4 = 10. Multiplicity bounds (cpsat.md 4b):
    # cube 1 + (8-4)//4 = 2; (2,1,1): 1 + (8-4-1)//5 = 1; (2,2): 1 + 2//6 = 1;
    # (3,1): 1 + 0//8 = 1. So only the unit masks get a level 2.
    # Block folds only (the paper's space): tests/test_planning_irregular.py counts the extended model.
    inst = tiny("hand", 4, 8, [((16,), [[("all-reduce", 1024, 1.0, "auto")]])])
    cand = enumerate_candidates(inst, irregular=False)
    (axis,) = cand.axes
    assert axis.shapes == ((1, 1, 1, 1), (3, 1), (2, 2), (2, 1, 1))
    assert len(axis.layers) == 10 and len(axis.folds) == 10
    (demand,) = cand.demands
    assert {c.p for c in demand.choices if c.shape is None} == {1, 2}
    assert {c.p for c in demand.choices if c.shape is not None} == {1}
    form = build_formulation(cand)
    mdl = form.model
    var_kinds = Counter(name.split("_")[0] for name in mdl.names)
    assert var_kinds == {
        "part": 1,
        "shape": 4,
        "layer": 10,
        "in": 10,
        "pick": len(demand.choices),
        "ulev": 1,
        "fold": 10,
        "mult": 4,
        "need": 1,
    }
    row_kinds = Counter(
        row.name.split("_")[0] + "_" + row.name.split("_")[1] if "_" in row.name else row.name for row in mdl.rows
    )
    assert row_kinds == {
        "one_partition": 1,
        "one_shape": 1,
        "layers_disjoint": 4,
        "shape_count": 2,
        "inside_0": 10,
        "installed_0": 10,
        "one_choice": 1,
        "needs_shape": 3,
        "unit_level": 1,
        "unit_mult": 4,
        "ports": 1,
        "need_0": 1,
        "mesh_folds": 1,
        "mesh_level": 1,
        # symmetry (one class, bits 3 2 1 0): layers that are no run of consecutive
        # bits, {3,1} {3,0} {2,0} {3,2,0} {3,1,0}, and one order row per adjacent pair
        "sym_run": 5,
        "sym_order": 3,
    }


@pytest.mark.parametrize("name", NAMED)
def test_domains(name: str) -> None:
    form = build_formulation(enumerate_candidates(load_instance(ROOT / "instances" / name)))
    mdl = form.model
    for var, lo, hi in zip(mdl.names, mdl.lower, mdl.upper, strict=True):
        if var.startswith("need_"):
            assert lo == 0 and hi >= 1
        else:
            assert (lo, hi) == (0, 1), var
    assert all(c == int(c) for row in mdl.rows for _, c in row.terms)
    assert set(mdl.objective) == {v for picks in form.pick for v in picks}
    (ports,) = [row for row in mdl.rows if row.name == "ports"]
    # the heuristic's plan, priced and counted by plan.assemble (not by the model): the
    # model must accept it, price it the same, and count its ports beyond the base cube
    inst = load_instance(ROOT / "instances" / name)
    plan = plan_heuristic(inst)
    hint = form.hint_from_plan(plan)
    assert hint is not None and mdl.violations(hint) == []
    assert math.isclose(mdl.value(hint), plan.objective_s, rel_tol=1e-9)
    assert ports.rhs == plan.ports - plan.n
    assert sum(c * hint.get(v, 0) for v, c in ports.terms) <= plan.ports_used - plan.n


@pytest.mark.parametrize(
    ("name", "count"),
    [
        # Type tables (cpsat.md 5): (4,64) has classes of 2 and 6 bits, (16,16) of 4 and 4;
        # the bits shared by the K4 axis and the first axis of 16 can number 0, 1 or 2.
        ("paper-multimesh-n256.toml", 3),
        # megatron: (4,128) classes 2/7, (8,64) classes 3/6: overlap 0, 1 or 2.
        ("megatron-5t-n512-b1.toml", 3),
        # one multi-axis mesh (2,32) (+ an idle mesh): its partition is fixed.
        ("paper-table7-rsag-multi.toml", 1),
    ],
)
def test_partitions_are_one_per_symmetry_class(name: str, count: int) -> None:
    cand = enumerate_candidates(load_instance(ROOT / "instances" / name))
    assert len(cand.partitions) == count


@pytest.mark.parametrize(
    ("name", "ring"),
    [
        ("paper-table7-ring-single.toml", True),
        ("paper-table7-ring-multi.toml", False),
        ("paper-table7-rsag-single.toml", False),
    ],
)
def test_ring_shape_only_for_single_mesh_ring_axes(name: str, ring: bool) -> None:
    cand = enumerate_candidates(load_instance(ROOT / "instances" / name))
    assert any(RING in ax.shapes for ax in cand.axes) is ring


@pytest.mark.parametrize("name", NAMED)
@pytest.mark.parametrize("bounded", [True, False], ids=["bounded", "unbounded"])
def test_heuristic_plan_is_a_feasible_assignment(name: str, bounded: bool) -> None:
    inst = load_instance(ROOT / "instances" / name)
    heuristic = plan_heuristic(inst)
    cand = enumerate_candidates(inst, heuristic.objective_s if bounded else None)
    form = build_formulation(cand)
    hint = form.hint_from_plan(heuristic)
    assert hint is not None
    assert form.model.violations(hint) == []
    value = form.model.value(hint)
    assert value <= heuristic.objective_s * (1 + 1e-12)
    decision, _ = form.decode(hint)
    plan = assemble(inst, decision, method="cpsat", status="feasible")
    assert check_plan(plan, inst) == []
    assert plan.objective_s <= value * (1 + 1e-12)
    assert math.isclose(plan.objective_s, heuristic.objective_s, rel_tol=1e-9)


@pytest.mark.parametrize("inst", [i for i in TINY if i.name != "size-one-axis"], ids=lambda i: i.name)
def test_decode_of_the_hint_reproduces_its_objective(inst: object) -> None:
    heuristic = plan_heuristic(inst)  # type: ignore[arg-type]
    form = build_formulation(enumerate_candidates(inst))  # type: ignore[arg-type]
    hint = form.hint_from_plan(heuristic)
    assert hint is not None
    decision, picked = form.decode(hint)
    plan = assemble(inst, decision, method="milp", status="feasible")  # type: ignore[arg-type]
    assert math.isclose(plan.objective_s, sum(c.cost for c in picked), rel_tol=1e-9)
    assert math.isclose(plan.objective_s, form.model.value(hint), rel_tol=1e-9)


def test_violations_reports_broken_rows() -> None:
    form = build_formulation(enumerate_candidates(TINY[0]))
    empty = dict.fromkeys(range(len(form.model.names)), 0)
    broken = form.model.violations(empty)
    assert any(b.startswith("one_partition") for b in broken)
    assert any(b.startswith("one_choice") for b in broken)
