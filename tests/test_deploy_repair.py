"""Repair onto spares: the independent validator accepts it, only the failed ranks' circuits move,
and the chosen assignment is as cheap as a brute force over every assignment of spares."""

from __future__ import annotations

import itertools
import tomllib
from functools import cache

import pytest

from ocsplan.deploy.repair import diff_to_dict, parse_failed, repair, spares
from ocsplan.errors import InstanceError, RealizationError
from ocsplan.instance import loads_instance
from ocsplan.plan import Plan
from ocsplan.planning.heuristic import plan_heuristic
from ocsplan.realization.circuits import Circuits, dumps_circuits, loads_circuits
from ocsplan.realization.fabric_check import fabric_faults
from ocsplan.realization.fabrics import FabricSpec, parse_fabric
from ocsplan.realization.realize import realize
from ocsplan.realization.validate import validate

from .realize_cases import SMALL_FABRIC, small_plan
from .test_deploy_faults import N16, single_level


@cache
def case(name: str) -> tuple[Plan, FabricSpec, Circuits]:
    """single: 16 ranks on a 32-accelerator single-level fabric (16 spares); two-level: 64 ranks in
    8 racks of 8 of a 12-rack fabric (32 spares in racks 8..11)."""
    if name == "repaired-twice":  # accelerator 17 repaired; now its spare fails: spares in the same rack
        plan, spec, c = case("two-level")
        return plan, spec, repair(c, spec, (17,)).circuits
    if name == "single":
        plan = plan_heuristic(loads_instance(N16, "n16.toml"))
        spec = parse_fabric(tomllib.loads(single_level(32, 8)), "f32.toml")
    else:
        plan, spec = small_plan(), parse_fabric(tomllib.loads(SMALL_FABRIC), "small-two-level.toml")
    return plan, spec, realize(plan, spec)


def cross_connects(c: Circuits) -> set[tuple[str, int, int]]:
    return {(d.id, a, b) for d in c.devices for a, b in d.cross_connects}


def price(old: Circuits, new: Circuits, failed: tuple[int, ...]) -> tuple[int, int, int]:
    """(cross-connects removed + added, OCS hops of the re-pathed circuits, spares outside the failed
    one's rack), from the two files alone."""
    ranks = {x for x, a in enumerate(old.placement.accelerator) if a in failed}
    hops = sum(len(x.path) for x in new.circuits if x.a in ranks or x.b in ranks)
    rack = old.fabric.rack_size
    other = sum(1 for x in ranks if new.placement.accelerator[x] // rack != old.placement.accelerator[x] // rack)
    return len(cross_connects(old) ^ cross_connects(new)), hops, other


FAILURES = [("single", (0,)), ("single", (5,)), ("single", (3, 12)), ("two-level", (17,)),
            ("two-level", (0, 63)), ("two-level", (8, 9)), ("repaired-twice", (64,))]


@pytest.mark.parametrize(("name", "failed"), FAILURES)
def test_repair_validates_and_moves_only_the_failed_ranks(name: str, failed: tuple[int, ...]) -> None:
    plan, spec, c = case(name)
    r = repair(c, spec, failed)
    new = loads_circuits(dumps_circuits(r.circuits), "repaired.json")  # what --out writes reads back
    assert validate(new, plan) == [] and fabric_faults(new, spec) == []
    ranks = {x for x, a in enumerate(c.placement.accelerator) if a in failed}
    pool = set(spares(c, failed))
    for x, (a, b) in enumerate(zip(c.placement.accelerator, new.placement.accelerator, strict=True)):
        assert (b in pool) if x in ranks else a == b
    assert not set(failed) & set(new.placement.accelerator)
    # a device kept by the repair keeps what the healthy file says of it (its level, rail, index and radix
    # are now read from its id, as realize does)
    before = {d.id: (d.level, d.rail, d.index, d.radix) for d in c.devices}
    assert all(before[d.id] == (d.level, d.rail, d.index, d.radix) for d in new.devices if d.id in before)
    # every circuit that does not end on a moved rank keeps its path; every cross-connect of them stays
    for old_x, new_x in zip(c.circuits, new.circuits, strict=True):
        if old_x.a not in ranks and old_x.b not in ranks:
            assert old_x == new_x
    kept = {(h.device, min(h.enter, h.leave), max(h.enter, h.leave)) for x in c.circuits
            if x.a not in ranks and x.b not in ranks for h in x.path}
    assert kept <= cross_connects(new)
    # the diff is the set difference of the two files, device by device
    d = diff_to_dict(r, c)
    removed = {(e["device"], *p) for e in d["devices"] for p in e["removed"]}
    added = {(e["device"], *p) for e in d["devices"] for p in e["added"]}
    assert removed == cross_connects(c) - cross_connects(new) and added == cross_connects(new) - cross_connects(c)
    assert d["changes"] == len(removed) + len(added) == r.changes


@pytest.mark.parametrize(("name", "failed"), FAILURES)
def test_assignment_is_as_cheap_as_the_brute_force(name: str, failed: tuple[int, ...]) -> None:
    _plan, spec, c = case(name)
    chosen = price(c, repair(c, spec, failed).circuits, failed)
    best = None
    for spare in itertools.permutations(spares(c, failed), len(failed)):
        try:
            trial = repair(c, spec, failed, dict(zip(failed, spare, strict=True))).circuits
        except (InstanceError, RealizationError):  # a spare the fabric cannot reach is no candidate
            continue
        cost = price(c, trial, failed)
        best = cost if best is None or cost < best else best
    assert best is not None and chosen == best


def test_single_level_circuit_changes_by_hand() -> None:
    # one OCS plane per port: each of the 8 circuits of the failed accelerator swaps one
    # cross-connect (peer, failed) for (peer, spare) on its plane: 8 removed, 8 added
    _plan, spec, c = case("single")
    r = repair(c, spec, (5,))
    assert r.changes == 16 and len(r.diff) == 8 and all(len(d.removed) == len(d.added) == 1 for d in r.diff)
    assert r.moves[0].hops_before == r.moves[0].hops_after == 8


def test_a_spare_in_the_same_rack_is_cheaper() -> None:
    # rank 17 runs on spare 64 (rack 8) after the first repair; when 64 fails too, a spare of rack 8
    # keeps every uplink cable: one cross-connect swapped per circuit on the level-1 device of rack 8
    _plan, spec, c = case("repaired-twice")
    assert c.placement.accelerator[17] == 64 and 17 not in spares(c, (64,))
    r = repair(c, spec, (64,))
    move = r.moves[0]
    assert move.spare // 8 == 8 and move.changes == 2 * move.circuits
    assert move.hops_before == move.hops_after == 3 * move.circuits


def test_a_failed_spare_only_leaves_the_pool() -> None:
    _plan, spec, c = case("single")
    r = repair(c, spec, (20,))
    assert r.moves == () and r.changes == 0 and 20 not in spares(c, (20,))


@pytest.mark.parametrize(("values", "needle"), [
    (["accelerator:32"], "0..31"), (["accelerator:x"], "expected accelerator:ID"), (["circuit:3"], "expected"),
    (["accelerator:1", "accelerator:1"], "twice"), ([], "at least one"),
])
def test_bad_failed_values(values: list[str], needle: str) -> None:
    with pytest.raises(InstanceError, match="--failed") as exc:
        parse_failed(values, case("single")[2])
    assert needle in str(exc.value)


def test_more_failures_than_spares() -> None:
    plan = plan_heuristic(loads_instance(N16, "n16.toml"))
    spec = parse_fabric(tomllib.loads(single_level(16, 8)), "f16.toml")
    with pytest.raises(InstanceError, match="only 0 spare"):
        repair(realize(plan, spec), spec, (3,))
