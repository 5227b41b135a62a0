"""Every concept table covers every key: each layer's pieces registered against a concept's
keys (generator kinds, constructions, technologies) have one entry per key, and none the table lacks.

The checker (:func:`uncovered`) is tested on copies with an entry removed or added, so
a checker that finds nothing cannot pass.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any

import pytest

from ocsplan.cli import render
from ocsplan.decode.technology import PRICERS
from ocsplan.instance import load_instance
from ocsplan.plan import (
    CONSTRUCTIONS,
    DECODERS,
    ENCODERS,
    GENERATOR_KINDS,
    PLAN_KINDS,
    construction,
    generator_kind,
    host_kind,
    plan_to_dict,
)
from ocsplan.planning.check import CHECKERS
from ocsplan.planning.heuristic import plan_heuristic
from ocsplan.planning.stacked import plan_stacked
from ocsplan.realization import plan_check, realize
from ocsplan.realization.circuits import generator_label, parse_label
from ocsplan.realization.fabrics import fabric_names, load_fabric
from ocsplan.realization.technologies import TECHNOLOGIES, technology
from ocsplan.realization.validate import PEERS
from ocsplan.simlette.runs import MODES, SIM_MODES, SimOptions
from ocsplan.simlette.simulate import SIMULATORS
from ocsplan.simlette.sweep import SWEEPERS
from ocsplan.simlette.technology import NETWORK_PIECES

from .conftest import INSTANCES

# (name, the concept's keys, the layer's table registered against them)
Registry = tuple[str, Callable[[], Collection[str]], Callable[[], Mapping[str, Any]]]

REGISTRIES: list[Registry] = [
    ("realization.validate.PEERS", lambda: GENERATOR_KINDS, lambda: PEERS),
    ("plan.codec.ENCODERS", lambda: CONSTRUCTIONS, lambda: ENCODERS),
    ("plan.codec.DECODERS", lambda: CONSTRUCTIONS, lambda: DECODERS),
    ("planning.check.CHECKERS", lambda: CONSTRUCTIONS, lambda: CHECKERS),
    ("realization.realize.REALIZERS", lambda: CONSTRUCTIONS, lambda: realize.REALIZERS),
    ("realization.realize.PORT_ASSIGNERS", lambda: CONSTRUCTIONS, lambda: realize.PORT_ASSIGNERS),
    ("realization.plan_check.PLAN_GENERATORS", lambda: CONSTRUCTIONS, lambda: plan_check.PLAN_GENERATORS),
    ("realization.plan_check.AGAINST_PLAN", lambda: CONSTRUCTIONS, lambda: plan_check.AGAINST_PLAN),
    ("simlette.simulate.SIMULATORS", lambda: CONSTRUCTIONS, lambda: SIMULATORS),
    ("simlette.sweep.SWEEPERS", lambda: CONSTRUCTIONS, lambda: SWEEPERS),
    ("cli.render.AXIS_NAMES", lambda: CONSTRUCTIONS, lambda: render.AXIS_NAMES),
    ("cli.render.CAPTIONS", lambda: CONSTRUCTIONS, lambda: render.CAPTIONS),
    ("simlette.technology.NETWORK_PIECES", lambda: TECHNOLOGIES, lambda: NETWORK_PIECES),
    ("decode.technology.PRICERS", lambda: TECHNOLOGIES, lambda: PRICERS),
]


def uncovered(keys: Collection[str], table: Mapping[str, Any]) -> list[str]:
    """What keeps ``table`` from covering ``keys`` exactly: each key it lacks, each key it has extra."""
    return ([f"missing {k!r}" for k in keys if k not in table]
            + [f"extra {k!r}" for k in table if k not in keys])


@pytest.mark.parametrize("registry", REGISTRIES, ids=[r[0] for r in REGISTRIES])
def test_every_table_covers_every_key(registry: Registry) -> None:
    _, keys, table = registry
    assert uncovered(keys(), table()) == []


@pytest.mark.parametrize("registry", REGISTRIES, ids=[r[0] for r in REGISTRIES])
def test_a_removed_or_foreign_entry_is_flagged(registry: Registry) -> None:
    """Mutations of each table: without any one of its entries, or with a key the concept lacks."""
    _, keys, table = registry
    for key in table():
        copy = {k: v for k, v in table().items() if k != key}
        assert uncovered(keys(), copy) == [f"missing {key!r}"]
    assert uncovered(keys(), {**table(), "no-such-key": None}) == ["extra 'no-such-key'"]


def test_generator_kinds() -> None:
    """The kinds a plan lists are table entries, in their order; each names itself and round-trips its label."""
    assert PLAN_KINDS == ("cube", "fold", "ring")
    assert all(name == kind.name for name, kind in GENERATOR_KINDS.items())
    assert len({k.order for k in GENERATOR_KINDS.values()}) == len(GENERATOR_KINDS)
    for name in PLAN_KINDS:
        mask = 0b1 if name == "cube" else 0b11
        assert parse_label(generator_label(mask, name, 3)) == (mask, name)
        assert generator_kind(name).weight_ok(mask)
    assert host_kind(0b100) == "cube" and host_kind(0b101) == "fold"
    assert not generator_kind("cube").weight_ok(0b11) and not generator_kind("fold").weight_ok(0b1)
    assert generator_kind("ring").ports_per_circuit == 2 and not generator_kind("ring").host
    assert generator_kind("no-such-kind").host  # read as every stage read it: a one-port host generator


def test_constructions() -> None:
    """Each entry names itself, its plans are written in its schema and made of generator kinds the
    table has (a shared-host plan: its generators' kinds; a stacked plan: circulants)."""
    assert all(name == c.name for name, c in CONSTRUCTIONS.items())
    assert len({c.schema for c in CONSTRUCTIONS.values()}) == len(CONSTRUCTIONS)
    assert all(set(c.generator_kinds) <= set(GENERATOR_KINDS) for c in CONSTRUCTIONS.values())
    shared = plan_heuristic(load_instance(INSTANCES / "paper-table7-ring-single.toml"))
    stacked = plan_stacked(load_instance(INSTANCES / "stacked" / "fig15-n512-L16.toml"))
    for plan in (shared, stacked):
        entry = construction(plan)
        assert plan_to_dict(plan)["schema"] == entry.schema
        assert {g.kind for g in plan.generators} <= set(entry.generator_kinds)
    assert construction(shared).cayley and {g.kind for g in shared.generators} == {"cube", "ring"}
    assert not construction(stacked).cayley and not construction(stacked).msccl


def test_technologies() -> None:
    """Each entry names itself (as do the pieces registered against it); every catalogue fabric has
    one, and it has packet switches exactly when one of the fabric's levels is EPS."""
    for table in (TECHNOLOGIES, NETWORK_PIECES, PRICERS):
        assert all(name == entry.name for name, entry in table.items())
    seen = set()
    for name in fabric_names():
        spec = load_fabric(name)
        tech = technology(spec)
        seen.add(tech)
        assert TECHNOLOGIES[tech].packet_switches == any(level.technology == "eps" for level in spec.levels)
        assert TECHNOLOGIES[tech].circuits == all(level.technology == "ocs" for level in spec.levels)
    assert seen == set(TECHNOLOGIES)


def test_sim_modes() -> None:
    """The mode names ``--mode`` accepts are the table's; ideal alone runs off the fabric (the plan's lambda and R)."""
    assert MODES == tuple(SIM_MODES) == ("ideal", "message", "flit")
    assert all(name == mode.name for name, mode in SIM_MODES.items())
    assert [m for m in MODES if not SimOptions(mode=m).check().on_fabric] == ["ideal"]
