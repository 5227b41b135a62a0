"""Collective pricing: the fast evaluators against Simlette's analytical model on full workloads."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from ocsplan.cayley import Topology
from ocsplan.decode.pricing import (
    EdgeMemo,
    PlanNetwork,
    _plan_key,
    group_analytical,
    native_routes,
    native_sends,
    plan_network,
    price_planned,
    symmetric_analytical,
)
from ocsplan.plan import Plan, demand_topology
from ocsplan.planning.registry import solve
from ocsplan.realization.fabrics import FabricSpec, load_fabric
from ocsplan.schedules import SCHEDULES, Program
from ocsplan.schedules.compiled import compile_program
from ocsplan.simlette import SimOptions, analytical, network_factory
from ocsplan.simlette.circuitmap import circuits_from_plan, hybrid_uplinks, plan_generators
from ocsplan.simlette.engine import Engine
from ocsplan.simlette.network import Network
from ocsplan.simlette.timing import DL_FLIT
from ocsplan.simlette.traffic import demand_workload, program_workload
from ocsplan.workload import Split, instance_for, load_model

from .conftest import ROOT

FABRICS = ROOT / "simulate" / "fabrics"
WORLD = 64
MEGATRON = load_model("megatron-5t")


def _net(fabric: str, routes: bool = False):  # type: ignore[no-untyped-def]
    spec = load_fabric(FABRICS / f"{fabric}.toml")
    hybrid = None
    if routes:
        inst = instance_for(MEGATRON, WORLD, Split(4, 16, 8, 8), 1, ports=36, latency=0.52e-6, link=50e9)
        hybrid = hybrid_uplinks(native_routes(inst, spec), spec)
    factory = network_factory(spec, SimOptions(), ports=spec.ports, routes=hybrid)
    return spec, factory(Engine(1e-8, False), lambda _m: None)


CASES = [
    ("one-shot", "flat"), ("rs-ag", "flat"), ("rs-ag", "cube"), ("layered", "flat"), ("bruck", "flat"),
]
BITS = [(2, 1, 0), (5, 4, 3), (5, 1, 0), (5, 4, 3, 2, 1, 0), (4, 3, 2, 1)]


@pytest.mark.parametrize("fabric", ["nvl576-all-eps", "nvl576-hybrid", "eps-single"])
@pytest.mark.parametrize(("schedule", "layout"), CASES)
@pytest.mark.parametrize("bits", BITS)
def test_symmetric_equals_full_analytical(fabric: str, schedule: str, layout: str, bits: tuple[int, ...]) -> None:
    spec, net = _net(fabric, routes=fabric == "nvl576-hybrid")
    a = len(bits)
    payload = 12288
    topo = Topology.from_profile([a]) if layout == "flat" else Topology.cube(a)
    full = analytical(program_workload(SCHEDULES[schedule].build(topo, payload), bits, WORLD), net)
    rack = spec.rack_size if spec.two_level else spec.accelerators
    fast = symmetric_analytical(native_sends(schedule, layout, 1 << a, payload), bits, net, rack)
    assert fast == pytest.approx(full, rel=1e-12)


def test_group_equals_full_analytical_on_a_plan() -> None:
    spec = load_fabric(FABRICS / "nvl576-all-ocs.toml")
    inst = instance_for(MEGATRON, WORLD, Split(4, 16, 8, 8), 4, ports=36, latency=0.52e-6, link=50e9)
    plan = solve(inst)
    factory = network_factory(spec, SimOptions(), ports=plan.ports, circuits=circuits_from_plan(plan, spec))
    net = factory(Engine(1e-8, False), lambda _m: None)
    checked = 0
    for m, mesh in enumerate(plan.meshes):
        for i, axis in enumerate(mesh.axes):
            for k, d in enumerate(axis.demands):
                program = compile_program(SCHEDULES[d.schedule].build(demand_topology(d.groups, axis.bits),
                                                                      d.payload_bytes))
                full = analytical(demand_workload(plan, m, i, k), net)
                assert group_analytical(program, axis.bits, net) == pytest.approx(full, rel=1e-12)
                assert group_analytical(program, axis.bits, net, spec.rack_size) == pytest.approx(full, rel=1e-12)
                checked += 1
    assert checked == 5


def test_eps_models_by_name() -> None:
    from ocsplan.decode.pricing import DEFAULT_EPS_MODEL, EPS_MODELS, NETWORKS, analytical_model

    assert set(EPS_MODELS) == {"contention", "symmetric"} and DEFAULT_EPS_MODEL == "contention"
    assert NETWORKS == ("analytical", "analytical-contention", "analytical-symmetric", "simlette")
    assert [analytical_model(n) for n in NETWORKS[:3]] == ["contention", "contention", "symmetric"]


def test_contention_never_undercuts_the_symmetric_model() -> None:
    """Counting whole DL flits on the links the spraying picks can only add to bytes over aggregate capacity."""
    from ocsplan.decode.pricing import price_native
    from ocsplan.workload import COMM, demand_rows

    spec = load_fabric(FABRICS / "nvl576-all-eps.toml")
    split = Split(4, 16, 8, 8)
    inst = instance_for(MEGATRON, WORLD, split, 1, ports=36, latency=0.52e-6, link=50e9)
    rows = demand_rows(MEGATRON, WORLD, split, 1, COMM["fp4"])
    old = price_native(inst, rows, spec, "analytical-symmetric").times
    new = price_native(inst, rows, spec, "analytical").times
    assert old.keys() == new.keys()
    same = [key for key in old if old[key][0] == new[key][0]]
    assert same and all(new[key][1] >= old[key][1] * (1 - 1e-12) for key in same)
    assert any(new[key][1] > 1.01 * old[key][1] for key in same)


# -- the array forms of compile_program and group_analytical (issue 37) against the loops they replace --------


OldCompiled = tuple[int, tuple[tuple[tuple[int, int, int, float], ...], ...]]


def reference_compile(program: Program) -> OldCompiled:
    """The pre-issue-37 compile_program: every transfer a tuple, bytes converted one by one."""
    return program.size, tuple(tuple((t.src, t.dst, t.gen, float(t.nbytes)) for t in phase if t.nbytes > 0)
                               for phase in program.phases)


def reference_group_analytical(program: OldCompiled, bits: Sequence[int], net: Network, rack_size: int = 0) -> float:
    """The pre-issue-37 group_analytical: a loop over the tuples of :func:`reference_compile`."""
    from ocsplan.cayley import expand

    size, phases = program
    glob = [expand(x, bits) for x in range(size)]
    shift = rack_size.bit_length() - 1 if rack_size > 0 and rack_size & (rack_size - 1) == 0 else -1
    memo: dict[tuple[int, int], tuple[float, float]] = {}
    total = 0.0
    for phase in phases:
        latency = 0.0
        load: dict[tuple[int, int], float] = {}
        for s_local, d_local, g_local, nbytes in phase:
            src, gen = glob[s_local], glob[g_local]
            where = (src >> shift if shift >= 0 else src, gen)
            found = memo.get(where)
            if found is None:
                resources = net.resources(src, glob[d_local], gen)
                assert len(resources) == 1
                found = (net.latency(src, glob[d_local], gen), resources[0][1])
                memo[where] = found
            if found[0] > latency:
                latency = found[0]
            key = (src, gen)
            load[key] = load.get(key, 0.0) + nbytes / found[1]
        if load:
            total += latency + max(load.values())
    return total


PAPER_DEPLOYMENTS = [("gpt-oss-5.3-like", Split(32, 16, 16, 32)), ("gpt-oss-5.3-like", Split(32, 16, 4, 128)),
                     ("megatron-5t", Split(4, 128, 16, 32)), ("megatron-5t", Split(4, 128, 8, 64))]


@pytest.mark.parametrize(("model", "split"), PAPER_DEPLOYMENTS)
def test_group_analytical_equals_the_loop_on_every_paper_demand(model: str, split: Split) -> None:
    """Every demand of a paper deployment's all-OCS plan (batch 1, world 512): the same compiled
    transfers and exactly the loop's time, with racks of the fabric's size, of 64 and without."""
    from ocsplan.decode.step import plan_for

    spec = load_fabric(FABRICS / "nvl576-all-ocs.toml")
    plan = plan_for(load_model(model), spec, 512, split, 1)
    factory = network_factory(spec, SimOptions(mode="message"), ports=plan.ports,
                              circuits=circuits_from_plan(plan, spec))
    net = factory(Engine(1e-8, False), lambda _m: None)
    checked = 0
    for mesh in plan.meshes:
        for axis in mesh.axes:
            for d in axis.demands:
                built = SCHEDULES[d.schedule].build(demand_topology(d.groups, axis.bits, d.fold), d.payload_bytes)
                old, new = reference_compile(built), compile_program(built)
                assert new[0] == old[0] and len(new[1]) == len(old[1])
                for (edges, nbytes), phase in zip(new[1], old[1], strict=True):
                    assert [(*map(int, e), float(b)) for e, b in zip(edges, nbytes, strict=True)] == list(phase)
                for rack in (0, spec.rack_size, 64):
                    assert group_analytical(new, axis.bits, net, rack) == \
                        reference_group_analytical(old, axis.bits, net, rack), (d.schedule, rack)
                checked += 1
    assert checked >= 4


# -- one build per (schedule, topology) for every payload (issue 37, h-pareto3) -------------------------------


# -- plans that share generators share one circuits network (issue 37, h-pareto) ----------------------------


def _fresh_times(plan: Plan, spec: FabricSpec) -> dict[tuple[str, str], tuple[str, float]]:
    """Every demand of ``plan`` priced on its own network: circuits, network, program and edges afresh."""
    factory = network_factory(spec, SimOptions(mode="message"), ports=plan.ports,
                              circuits=circuits_from_plan(plan, spec))
    net = factory(Engine(DL_FLIT / spec.link, False), lambda _m: None)
    rack = spec.rack_size if spec.two_level else spec.accelerators
    out: dict[tuple[str, str], tuple[str, float]] = {}
    for mesh in plan.meshes:
        for i, axis in enumerate(mesh.axes):
            for j, d in enumerate(axis.demands):
                built = SCHEDULES[d.schedule].build(demand_topology(d.groups, axis.bits, d.fold), d.payload_bytes)
                out[_plan_key(mesh.name, i, j, d.collective)] = (
                    d.schedule, group_analytical(compile_program(built), axis.bits, net, rack))
    return out


@pytest.mark.parametrize("model", ["megatron-5t", "gpt-oss-5.3-like"])
def test_shared_plan_network_equals_a_fresh_one(model: str) -> None:
    """Batches 1, 2 and 4 of two splits, priced in turn: plans with the same generators get the same
    network (its circuits, edges and demand times remembered), and every demand's time is the one a
    network of its own gives; a second pricing (every demand a memo hit) gives them again."""
    from ocsplan.decode.step import plan_for

    spec = load_fabric(FABRICS / "nvl576-all-ocs.toml")
    splits = [s for s, m in ((Split(4, 128, 16, 32), "megatron-5t"), (Split(4, 128, 8, 64), "megatron-5t"),
                             (Split(32, 16, 16, 32), "gpt-oss-5.3-like"), (Split(32, 16, 4, 128), "gpt-oss-5.3-like"))
              if m == model]
    plans = [plan_for(load_model(model), spec, 512, split, batch) for split in splits for batch in (1, 2, 4)]
    plan_network.cache_clear()
    price_planned.cache_clear()
    networks: dict[tuple[tuple[int, int, int], ...], PlanNetwork] = {}
    fresh = [_fresh_times(plan, spec) for plan in plans]  # each plan's own network, once: both rounds compare to it
    for plan, times in zip(plans, fresh, strict=True):
        priced = price_planned(plan, spec)
        assert priced.times == times
        shared = plan_network(plan_generators(plan), plan.world, plan.ports, spec)
        assert networks.setdefault(plan_generators(plan), shared) is shared
        assert shared.times and shared.edges.found
    assert len(networks) < len(plans)  # the batches of a split share their generators
    hits = plan_network.cache_info().hits
    for plan, times in zip(plans, fresh, strict=True):
        assert price_planned.__wrapped__(plan, spec).times == times
    assert plan_network.cache_info().hits == hits + len(plans)


def test_group_analytical_shared_memo_needs_its_span() -> None:
    program = compile_program(SCHEDULES["one-shot"].build(Topology.from_profile([3]), 64))
    _spec, net = _net("nvl576-all-eps")
    with pytest.raises(ValueError, match="span"):
        group_analytical(program, (5, 4, 3), net, 0, EdgeMemo(8, {}))
