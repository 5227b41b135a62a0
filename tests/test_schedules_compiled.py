"""The array forms of schedules.compiled against the general program: the layered schedules' shapes
written from their layers against the shapes read off their builds, and the cached compiled form."""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest

from ocsplan.cayley import Topology
from ocsplan.plan import demand_topology
from ocsplan.realization.fabrics import load_fabric
from ocsplan.schedules import SCHEDULES
from ocsplan.schedules.compiled import (
    LAYERED,
    Compiled,
    ProgramShape,
    compile_program,
    compiled,
    layered_shape,
    program_shape,
    scale_program,
    shape,
)
from ocsplan.workload import Split, load_model

from .conftest import ROOT

PROFILES = [(1,), (2,), (1, 1), (3,), (2, 1), (1, 1, 1), (4,), (2, 2), (3, 1), (2, 1, 1), (1, 1, 1, 1), (5,),
            (3, 2), (2, 2, 1), (4, 1), (3, 1, 1), (6,), (3, 3), (2, 2, 2), (4, 2), (3, 2, 1), (2, 2, 1, 1), (4, 4),
            (3, 3, 2), (2, 2, 2, 2), (4, 3, 2)]


def _transfers(shape: ProgramShape) -> list[tuple[list[list[int]], list[Fraction]]]:
    """Per phase: the edges and each transfer's share (the slot numbering aside)."""
    return [(edges.tolist(), [shares[i] for i in index.tolist()]) for edges, index, shares in shape[1]]


def _random_topologies(count: int) -> list[Topology]:
    """Connected generator sets that are not block folds (seeded)."""
    rng = random.Random(37)
    out: list[Topology] = []
    while len(out) < count:
        bits = rng.randint(2, 6)
        gens = {1 << b for b in range(bits)} | {rng.randrange(1, 1 << bits) for _ in range(rng.randint(1, 6))}
        topo = Topology(bits, frozenset(gens))
        if topo.connected:
            out.append(topo)
    return out


TOPOLOGIES = [Topology.from_profile(list(p)) for p in PROFILES] + [Topology.cube(b) for b in range(1, 6)] \
    + _random_topologies(12)


def _same(name: str, topo: Topology) -> None:
    fast, built = layered_shape(name, topo), program_shape(SCHEDULES[name].build(topo, 1))
    assert fast[0] == built[0]
    assert _transfers(fast) == _transfers(built)
    for (e, i, _), (eb, ib, _) in zip(fast[1], built[1], strict=True):
        assert e.dtype == eb.dtype and i.dtype == ib.dtype and e.shape == eb.shape and i.shape == ib.shape
        assert not e.flags.writeable and not i.flags.writeable
    for payload in (0, 3, (1 << 40) + 7):
        a, b = scale_program(fast, payload), compile_program(SCHEDULES[name].build(topo, payload))
        assert a[0] == b[0] and len(a[1]) == len(b[1])
        for (ea, ba), (eb, bb) in zip(a[1], b[1], strict=True):
            assert np.array_equal(ea, eb) and ea.shape == eb.shape and ba.tobytes() == bb.tobytes()


@pytest.mark.parametrize("name", sorted(LAYERED))
def test_layered_shape_equals_the_build(name: str) -> None:
    """Every layered schedule on block folds, cubes and irregular generator sets (where valid): the
    same edges in the same order with the same shares, and scaled, the compiled build of each payload."""
    checked = 0
    for topo in TOPOLOGIES:
        if SCHEDULES[name].valid(topo):
            _same(name, topo)
            checked += 1
    assert checked >= 20


def _same_compiled(a: Compiled, b: Compiled) -> bool:
    if a[0] != b[0] or len(a[1]) != len(b[1]):
        return False
    for (ea, ba), (eb, bb) in zip(a[1], b[1], strict=True):
        if ea.dtype != eb.dtype or ba.dtype != bb.dtype or not np.array_equal(ea, eb):
            return False
        if ea.shape != eb.shape or ba.shape != bb.shape or ba.tobytes() != bb.tobytes():
            return False
    return True


PAYLOADS = (0, 1, 3, 66, 4096, 12289, 589824, (1 << 40) + 7)
PAPER_DEPLOYMENTS = [("gpt-oss-5.3-like", Split(32, 16, 16, 32)), ("gpt-oss-5.3-like", Split(32, 16, 4, 128)),
                     ("megatron-5t", Split(4, 128, 16, 32)), ("megatron-5t", Split(4, 128, 8, 64))]


@pytest.mark.parametrize(("model", "split"), PAPER_DEPLOYMENTS)
def test_shape_and_scaling_equal_the_build_on_paper_demands(model: str, split: Split) -> None:
    """Every demand of a paper deployment's all-OCS plan (world 512): shape is the build's shape, and
    scaled it is exactly the compiled program built for the payload: the demand's own and others
    (0, odd, beyond 2**40)."""
    from ocsplan.decode.step import plan_for

    spec = load_fabric(ROOT / "simulate" / "fabrics" / "nvl576-all-ocs.toml")
    plan = plan_for(load_model(model), spec, 512, split, 1)
    layered = checked = 0
    for mesh in plan.meshes:
        for axis in mesh.axes:
            for d in axis.demands:
                topo = demand_topology(d.groups, axis.bits, d.fold)
                built = program_shape(SCHEDULES[d.schedule].build(topo, 1))
                assert _transfers(shape(d.schedule, topo)) == _transfers(built), d.schedule
                for payload in (d.payload_bytes, *PAYLOADS):
                    full = compile_program(SCHEDULES[d.schedule].build(topo, payload))
                    assert _same_compiled(scale_program(built, payload), full), (d.schedule, payload)
                layered += d.schedule in LAYERED
                checked += 1
    assert layered >= 1 and checked >= 4


@pytest.mark.parametrize("name", sorted(SCHEDULES))
@pytest.mark.parametrize("profile", [(1, 1, 1), (2, 1), (3,), (2, 2), (3, 1, 1), (4, 2)])
def test_scaled_shape_equals_the_built_program_on_every_schedule(name: str, profile: tuple[int, ...]) -> None:
    """Every catalogue schedule valid on a few profiles: its byte counts are linear in the payload."""
    topo = Topology.from_profile(list(profile))
    if not SCHEDULES[name].valid(topo):
        pytest.skip("not valid on this profile")
    built = program_shape(SCHEDULES[name].build(topo, 1))
    for payload in PAYLOADS:
        assert _same_compiled(scale_program(built, payload), compile_program(SCHEDULES[name].build(topo, payload)))


@pytest.mark.parametrize("name", sorted(LAYERED))
def test_shape_on_a_zero_bit_axis_is_the_build(name: str) -> None:
    """No layers: shape builds (two parallel builds divide by their zero chunks; so does it)."""
    topo = Topology.cube(0)
    try:
        built = program_shape(SCHEDULES[name].build(topo, 1))
    except ZeroDivisionError:
        with pytest.raises(ZeroDivisionError):
            shape(name, topo)
        return
    assert _transfers(shape(name, topo)) == _transfers(built) and shape(name, topo)[0] == built[0]


def test_layered_shape_needs_layers() -> None:
    with pytest.raises(KeyError):
        layered_shape("one-shot-dvo", Topology.cube(2))


@pytest.mark.parametrize("name", sorted(n for n in SCHEDULES if n != "ring"))
def test_compiled_is_the_cached_program_compiled(name: str) -> None:
    """The fast path is a specialisation of the one cached program: compiled(name, topology, payload)
    is compile_program(program(name, topology, payload)) to the bit, for every catalogue schedule."""
    from ocsplan.schedules import program

    checked = 0
    for topo in TOPOLOGIES[::3]:
        if not SCHEDULES[name].valid(topo):
            continue
        for payload in (0, 5, 4096, (1 << 33) + 3):
            fast, general = compiled(name, topo, payload), compile_program(program(name, topo, payload))
            assert _same_compiled(fast, general), (name, topo.name, payload)
            assert all(not e.flags.writeable and not b.flags.writeable for e, b in fast[1])
        checked += 1
    assert checked >= 1
