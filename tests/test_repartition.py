"""Moves across partition classes (planning/repartition.py)."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

from ocsplan.instance import load_instance
from ocsplan.planning import heuristic as H
from ocsplan.planning import repartition as R
from ocsplan.planning.space import iter_partitions, partition_table

HARD = Path(__file__).resolve().parent.parent / "instances" / "families" / "hard"
# optima proven by CP-SAT and HiGHS alike (instances/families/hard/README.md)
OPTIMA = {row["instance"]: float(row["optimum_s"]) for row in csv.DictReader((HARD / "optima.csv").open())}


def _beam_state(name: str, k: int) -> tuple[H._Search, H._Eval]:
    """Partition class k's best state after the screening pass and the block-fold beam."""
    inst = load_instance(HARD / f"{name}.toml")
    search = H._Search(H._Context(inst), list(iter_partitions(inst))[k])
    screened, _ = search.descend(1, effort=0)
    assert screened is not None
    start = search.evaluate(screened.profiles, screened.shapes, 1)
    assert start is not None
    return search, search.beam(start, H.BEAM, H.MAX_PASSES, 1)[0]


def test_swapped_trades_the_bits_and_keeps_the_rest() -> None:
    partition = (((6, 5, 4), (3, 2, 1, 0)), ((6, 5, 4, 3, 2, 1, 0),))
    # by hand: mesh 0 gives 5 and 4 to its second axis and takes 1 and 0
    assert R.swapped(partition, 0, 0, 1, (5, 4), (1, 0)) == (((6, 1, 0), (5, 4, 3, 2)), partition[1])


@pytest.mark.parametrize(("name", "k"), [("wide-s2026-0070", 34), ("random-s12-0019", 5)])
def test_repartition_reaches_the_proven_optimum_from_another_class(name: str, k: int) -> None:
    # class k is where the screening and the beam end (the best beam state of all
    # classes); the optimum lies in another class, two bit swaps away
    inst = load_instance(HARD / f"{name}.toml")
    search, state = _beam_state(name, k)
    assert state.objective > OPTIMA[name] * (1 + 1e-3)
    moved_search, moved = R.repartition(search, state, 0, 1, lambda: False)
    assert moved.objective == pytest.approx(OPTIMA[name], rel=1e-9)
    assert partition_table(inst, moved_search.partition) != partition_table(inst, search.partition)


def test_repartition_stops_at_a_passed_deadline() -> None:
    search, state = _beam_state("wide-s2026-0070", 34)
    assert R.repartition(search, state, 0, 1, lambda: True) == (search, state)


@pytest.mark.parametrize(("name", "k"), [("wide-s2026-0070", 34), ("random-s12-0019", 5)])
def test_exchanges_of_equal_types_are_equivalent(name: str, k: int) -> None:
    # the moves skipped as equivalent: every exchange, carried over without the
    # dedup, prices exactly like the one kept for its key (a relabelling of the bits)
    search, state = _beam_state(name, k)
    ctx = search.ctx
    index = {(ax.mesh, ax.index): j for j, ax in enumerate(ctx.axes)}
    kept = sum(1 for _ in R._moves(search, state))
    priced: dict[tuple[object, ...], float] = {}
    skipped = 0
    for m, parts in enumerate(search.partition):
        types = R._bit_types(search, state, m)
        for first in range(len(parts)):
            for second in range(first + 1, len(parts)):
                j1, j2 = index.get((m, first)), index.get((m, second))
                if j1 is None and j2 is None:
                    continue
                own = {b: (g, len(layer)) for j in (j1, j2) if j is not None
                       for g, layer in enumerate(state.profiles[j]) for b in layer}
                for out, into in R._exchanges(state, parts[first], parts[second]):
                    other = H._Search(ctx, R.swapped(search.partition, m, first, second, out, into))
                    profiles = list(state.profiles)
                    if j1 is not None:
                        profiles[j1] = R._relabel(profiles[j1], dict(zip(out, into, strict=True)))
                    if j2 is not None:
                        profiles[j2] = R._relabel(profiles[j2], dict(zip(into, out, strict=True)))
                    result = other.evaluate(profiles, list(state.shapes), 0)
                    value = math.inf if result is None else result.objective
                    key = (m, first, second, tuple(sorted((types[b], own.get(b)) for b in out)),
                           tuple(sorted((types[b], own.get(b)) for b in into)))
                    if key in priced:
                        skipped += 1
                        assert value == pytest.approx(priced[key], rel=1e-12)
                    else:
                        priced[key] = value
    assert skipped > 0 and len(priced) == kept
