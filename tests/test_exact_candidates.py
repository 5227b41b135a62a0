"""The shared candidate enumeration: partitions, shapes, layers, choices, reductions."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import pytest

from ocsplan.cayley import profile_degree, profile_folds
from ocsplan.errors import InfeasibleError
from ocsplan.instance import load_instance
from ocsplan.planning.exact import enumerate_candidates
from ocsplan.planning.exact.candidates import RING
from ocsplan.planning.space import candidate_partitions

from .exact_bruteforce import brute_force
from .tiny import TINY, tiny

ROOT = Path(__file__).resolve().parents[1]
INSTANCES = [*TINY, *(load_instance(p) for p in sorted((ROOT / "instances").glob("*.toml")))]


@pytest.mark.parametrize("inst", INSTANCES, ids=lambda i: i.name)
def test_partitions_are_the_heuristics_without_repeats(inst: object) -> None:
    cand = enumerate_candidates(inst)  # type: ignore[arg-type]
    assert list(cand.partitions) == list(dict.fromkeys(candidate_partitions(inst)))  # type: ignore[arg-type]
    assert len(set(cand.partitions)) == len(cand.partitions)


@pytest.mark.parametrize("inst", INSTANCES, ids=lambda i: i.name)
def test_layers_lie_in_some_block_and_fit_a_shape(inst: object) -> None:
    cand = enumerate_candidates(inst)  # type: ignore[arg-type]
    spare = cand.ports - cand.n
    for ax in cand.axes:
        assert ax.shapes[0] == ax.cube
        largest = max((max(s) for s in ax.shapes if s != RING and s), default=1)
        for shape in ax.shapes:
            if shape != RING:
                assert sum(shape) == ax.bits and profile_folds(shape) <= spare
        for layer in ax.layers:
            assert 2 <= len(layer) <= largest
            assert any(set(layer) <= set(block) for block in ax.blocks)
        # every subset of a block up to the largest part is a candidate layer
        for block in set(ax.blocks):
            for size in range(2, largest + 1):
                assert all(c in set(ax.layers) for c in combinations(sorted(block), size))


@pytest.mark.parametrize("inst", INSTANCES, ids=lambda i: i.name)
def test_multiplicities_respect_the_budget(inst: object) -> None:
    cand = enumerate_candidates(inst)  # type: ignore[arg-type]
    L, n = cand.ports, cand.n
    for dc in cand.demands:
        ax = cand.axes[dc.axis]
        for c in dc.choices:
            assert c.p >= 1
            if c.ring:
                assert (n - ax.bits) + 2 * c.p <= L
            elif c.shape is None:
                # rings can save (bits - 2) base ports each; the axis's units carry p
                base = n - sum(a.bits - 2 for a in cand.axes if RING in a.shapes)
                assert base + ax.bits * (c.p - 1) <= L
            else:
                # n unit masks, the shape's folds, and deg(shape) generators at p
                assert n + profile_folds(c.shape) + profile_degree(c.shape) * (c.p - 1) <= L


@pytest.mark.parametrize("inst", INSTANCES, ids=lambda i: i.name)
def test_no_kept_choice_is_dominated(inst: object) -> None:
    cand = enumerate_candidates(inst)  # type: ignore[arg-type]
    for dc in cand.demands:
        for a in dc.choices:
            for b in dc.choices:
                if a is b or a.p != b.p:
                    continue
                # b drives a subset of a's generators: the same profile, or the unit masks
                subset = b.shape == a.shape or (b.shape is None and a.on_profile)
                strictly = (b.h, b.v_factor) != (a.h, a.v_factor)
                assert not (subset and b.h <= a.h and b.v_factor <= a.v_factor and strictly)


@pytest.mark.parametrize(
    "inst",
    [i for i in TINY if i.name in ("two-axes", "shared-folds", "two-demands")],
    ids=lambda i: i.name,
)
def test_upper_bound_keeps_choices_within_reach(inst: object) -> None:
    best = brute_force(inst)  # type: ignore[arg-type]
    full = enumerate_candidates(inst)  # type: ignore[arg-type]
    cut = enumerate_candidates(inst, upper_bound=best)  # type: ignore[arg-type]
    cheapest = [min(c.cost for c in dc.choices) for dc in full.demands]
    for d, dc in enumerate(cut.demands):
        assert dc.choices, "every demand keeps a choice"
        assert set(dc.choices) <= set(full.demands[d].choices)
        for c in dc.choices:
            assert c.cost + sum(cheapest) - cheapest[d] <= best * (1 + 1e-9)
    assert sum(len(dc.choices) for dc in cut.demands) < sum(len(dc.choices) for dc in full.demands)


def test_too_few_ports_is_infeasible() -> None:
    inst = tiny("too-few", 3, 2, [((8,), [[("all-gather", 4096, 1.0, "auto")]])])
    with pytest.raises(InfeasibleError, match="needs 3 ports, the fabric has 2"):
        enumerate_candidates(inst)
