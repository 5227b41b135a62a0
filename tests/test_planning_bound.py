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
    """N = 2, L = 5, an all-reduce of weight 3: one hop at least (lambda), and each rank must
    receive a value per element from the other, at least S / 2 bytes from the busiest sender
    spread over the 5 circuits it has: 3 (lambda + S / (10 R)). The planner's one-shot sends
    all of S (3 (lambda + S / (5 R))): above the bound."""
    inst = tiny("pair", 1, 5, [((2,), [[(AR, payload, 3.0, "auto")]])])
    lam, rate = inst.budget.latency, inst.budget.link
    assert objective_bound(inst) == pytest.approx(3.0 * (lam + payload / (10 * rate)), rel=1e-12)
    assert solve(inst).objective_s == pytest.approx(3.0 * (lam + payload / (5 * rate)), rel=1e-12)


def test_two_axes_share_the_ports_by_hand() -> None:
    """N = 4 as one 2 x 2 mesh, L = 6, an all-reduce of two ranks on each axis (weight 1, S = 64 KiB):
    each axis's one generator (its unit) needs a port, and the two share the six:
    2 lambda + (S / 2) / p1 + (S / 2) / p2 over R with p1 + p2 = 6 is least at 3 + 3, so the
    bound is 2 lambda + S / (3 R)."""
    inst = tiny("square", 2, 6, [((2, 2), [[(AR, 64 * KiB, 1.0, "auto")], [(AR, 64 * KiB, 1.0, "auto")]])])
    lam, rate = inst.budget.latency, inst.budget.link
    assert objective_bound(inst) == pytest.approx(2 * lam + 64 * KiB / (3 * rate), rel=1e-12)
    assert objective_bound(inst) <= solve(inst).objective_s


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
