"""The shared candidate enumeration: partitions, shapes, layers, choices, reductions."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from itertools import combinations
from pathlib import Path

import pytest

from ocsplan.cayley import profile_degree, profile_folds
from ocsplan.errors import InfeasibleError
from ocsplan.instance import Instance, load_instance
from ocsplan.planning.exact import enumerate_candidates
from ocsplan.planning.space import IRREGULAR, RING, candidate_partitions

from .exact_bruteforce import brute_force
from .tiny import TINY, tiny

ROOT = Path(__file__).resolve().parents[1]
INSTANCES = [*TINY, *(load_instance(p) for p in sorted((ROOT / "instances").glob("*.toml")))]


def _signature(inst: Instance, parts: tuple[tuple[tuple[int, ...], ...], ...]) -> tuple[object, ...]:
    """What survives renaming the bit positions: per bit, which axis owns it in each mesh
    (axes without demands are interchangeable, so they share one name), as a multiset."""
    owner = []
    for b in range(inst.n):
        key = []
        for mesh, axes in zip(inst.meshes, parts, strict=True):
            i = next(i for i, bits in enumerate(axes) if b in bits)
            key.append(i if mesh.axes[i].demands else -1)
        owner.append(tuple(key))
    return tuple(sorted(owner))


def _all_partitions(inst: Instance) -> Iterator[tuple[tuple[tuple[int, ...], ...], ...]]:
    """Every assignment of the n bit positions to the axes of every mesh (brute force)."""

    def splits(sizes: list[int], free: tuple[int, ...]) -> Iterator[tuple[tuple[int, ...], ...]]:
        if not sizes:
            yield ()
            return
        for first in itertools.combinations(free, sizes[0]):
            rest = tuple(b for b in free if b not in first)
            for tail in splits(sizes[1:], rest):
                yield (tuple(sorted(first, reverse=True)), *tail)

    per_mesh = [list(splits([ax.bits for ax in mesh.axes], tuple(range(inst.n)))) for mesh in inst.meshes]
    yield from itertools.product(*per_mesh)


@pytest.mark.parametrize("inst", INSTANCES, ids=lambda i: i.name)
def test_partitions_are_one_per_symmetry_class(inst: Instance) -> None:
    # independent of the enumeration under test: every assignment of bit positions to
    # axes, grouped by what a renaming of the bit positions cannot change
    cand = enumerate_candidates(inst)
    assert list(cand.partitions) == list(dict.fromkeys(candidate_partitions(inst)))  # the shared space
    count = math.prod(
        math.factorial(inst.n) // math.prod(math.factorial(ax.bits) for ax in mesh.axes) for mesh in inst.meshes
    )
    if count > 200_000:
        pytest.skip("too many assignments to enumerate")
    classes = {_signature(inst, parts) for parts in _all_partitions(inst)}
    got = [_signature(inst, parts) for parts in cand.partitions]
    for parts in cand.partitions:  # each a genuine assignment
        for mesh, axes in zip(inst.meshes, parts, strict=True):
            assert [len(a) for a in axes] == [ax.bits for ax in mesh.axes]
            assert sorted(b for a in axes for b in a) == list(range(inst.n))
    assert len(got) == len(set(got))  # no class twice
    assert set(got) == classes  # every class once


@pytest.mark.parametrize("inst", INSTANCES, ids=lambda i: i.name)
def test_layers_lie_in_some_block_and_fit_a_shape(inst: object) -> None:
    cand = enumerate_candidates(inst)  # type: ignore[arg-type]
    spare = cand.ports - cand.n
    for ax in cand.axes:
        assert ax.shapes[0] == ax.cube
        largest = max((max(s) for s in ax.shapes if s != RING and s and s[0] != IRREGULAR), default=1)
        for shape in ax.shapes:
            if shape and shape[0] == IRREGULAR:  # (tag, bits, degree): degree - bits folds
                assert shape[1] == ax.bits and shape[2] - shape[1] <= spare
            elif shape != RING:
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
                if c.shape[0] == IRREGULAR:  # (tag, bits, degree)
                    folds, degree = c.shape[2] - c.shape[1], c.shape[2]
                else:
                    folds, degree = profile_folds(c.shape), profile_degree(c.shape)
                assert n + folds + degree * (c.p - 1) <= L


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
