"""The objective bound: a hand derivation, below the brute-force optimum, below every plan the planner makes."""

from __future__ import annotations

import pytest

from ocsplan.instance import loads_instance
from ocsplan.planning.bound import objective_bound
from ocsplan.planning.registry import solve

from .conftest import ROOT
from .exact_bruteforce import brute_force
from .tiny import AR, TINY, KiB, MiB, tiny


@pytest.mark.parametrize("payload", [4 * KiB, 8 * MiB])
def test_two_accelerators_by_hand(payload: int) -> None:
    """N = 2, L = 5: the one generator may take all 5 ports, and an all-reduce of two ranks
    needs one hop that carries the payload once (any schedule: both halves must cross,
    and one-shot sends S in one step), so T = w (lambda + S / (5 R)) exactly."""
    inst = tiny("pair", 1, 5, [((2,), [[(AR, payload, 3.0, "auto")]])])
    lam, rate = inst.budget.latency, inst.budget.link
    assert objective_bound(inst) == pytest.approx(3.0 * (lam + payload / (5 * rate)), rel=1e-12)
    assert solve(inst).objective_s == pytest.approx(objective_bound(inst), rel=1e-12)  # and it is attained


@pytest.mark.parametrize("inst", TINY, ids=lambda i: i.name)
def test_below_the_brute_force_optimum(inst: object) -> None:
    """Every tiny instance: the bound never exceeds the independent brute force over the
    whole exact space, irregular folds included (tests/exact_bruteforce.py)."""
    from ocsplan.instance import Instance

    assert isinstance(inst, Instance)
    optimum = brute_force(inst, irregular=True)
    assert objective_bound(inst) <= optimum * (1 + 1e-12)


@pytest.mark.parametrize("name", ["paper-multimesh-n256.toml", "megatron-5t-n512-b1.toml",
                                  "paper-table7-ring-single.toml", "paper-table7-rsag-multi.toml"])
def test_below_the_heuristic_plan(name: str) -> None:
    path = ROOT / "instances" / name
    inst = loads_instance(path.read_text(), str(path))
    bound = objective_bound(inst)
    assert 0 < bound <= solve(inst).objective_s * (1 + 1e-12)
