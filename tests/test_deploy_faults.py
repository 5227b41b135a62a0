"""The fault model against an independent recomputation, every single fault of two small fabrics.

The recomputation shares nothing with :mod:`ocsplan.deploy.faults` but the plan, the circuits
file and the schedule catalogue: a networkx multigraph of the surviving circuits, the
schedules' programs checked transfer by transfer against it in every coset, relays as
rewritten programs timed by ``ideal_cost``, and Eq. 1 (T = h lambda + v / (p R)) written out.
"""

from __future__ import annotations

import math
import statistics
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache

import networkx as nx
import pytest

from ocsplan.cayley import Topology, axis_generators, compress, expand, mask_of
from ocsplan.deploy.faults import (
    DemandOutcome,
    FaultReport,
    analyse_faults,
    check_match,
    failed_circuits,
    fault_ids,
    ranked,
    relay_cost,
    report_to_dict,
)
from ocsplan.errors import InstanceError, PlanError
from ocsplan.instance import loads_instance
from ocsplan.plan import Plan, demand_topology
from ocsplan.planning.heuristic import plan_heuristic
from ocsplan.realization.circuits import Circuits
from ocsplan.realization.fabrics import parse_fabric
from ocsplan.realization.realize import realize
from ocsplan.schedules import AUTO_EXCLUDED, SCHEDULES, ideal_cost, schedules_for
from ocsplan.schedules.base import Program, Transfer

# Two meshes on 16 accelerators: an axis of two (one generator: its fault can stop it),
# fold generators, a bandwidth-bound all-reduce (p = 2 on some generators).
N16 = """
name = "faults-n16"
[fabric]
world = 16
ports = 8
latency = "0.52us"
link = "400Gb/s"
[[mesh]]
name = "attention"
shape = [4, 4]
axes = [
  { collective = "all-reduce", payload = "4KiB" },
  { collective = "all-to-all", payload = "64KiB" },
]
[[mesh]]
name = "ffn"
shape = [2, 8]
axes = [
  { collective = "all-gather", payload = "2KiB" },
  { collective = "all-reduce", payload = "1MiB" },
]
"""

N64 = """
name = "faults-n64"
[fabric]
world = 64
ports = 16
latency = "0.52us"
link = "400Gb/s"
[[mesh]]
name = "attention"
shape = [8, 8]
axes = [
  { collective = "all-reduce", payload = "4KiB" },
  { collective = "all-to-all", payload = "256KiB" },
]
[[mesh]]
name = "ffn"
shape = [4, 16]
axes = [
  { collective = "all-to-all", payload = "1KiB" },
  { collective = "all-reduce", payload = "16MiB" },
]
"""


def single_level(accelerators: int, ports: int) -> str:
    """Like simulate/fabrics/ocs-single.toml: one OCS plane per port index, radix = accelerators."""
    return (f'name = "ocs-single-{accelerators}"\naccelerators = {accelerators}\nports = {ports}\n'
            f'link = "400Gb/s"\nlatency = "nominal"\n[[level]]\ntechnology = "ocs"\nradix = {accelerators}\n')


CASES = {"n16": (N16, single_level(16, 8)), "n64": (N64, single_level(64, 16))}


@cache
def case(name: str) -> tuple[Plan, Circuits]:
    text, fabric = CASES[name]
    plan = plan_heuristic(loads_instance(text, f"{name}.toml"))
    return plan, realize(plan, parse_fabric(tomllib.loads(fabric), f"{name}-fabric.toml"))


@cache
def report(name: str, kind: str) -> FaultReport:
    plan, c = case(name)
    return analyse_faults(c, plan, kind)


def all_faults() -> list[tuple[str, str, str]]:
    out = []
    for name in CASES:
        c = case(name)[1]
        for kind in ("circuit", "device", "accelerator"):
            out += [(name, kind, f) for f in fault_ids(c, kind)]
    return out


# -- the independent recomputation ------------------------------------------------------


def failed_by_hand(c: Circuits, fault: str) -> tuple[set[int], bool]:
    """(indices of the failed circuits, whether an accelerator left), from the circuits file alone."""
    kind, _, name = fault.partition(":")
    if kind == "circuit":
        return {int(name)}, False
    if kind == "device":
        return {i for i, x in enumerate(c.circuits) if name in {h.device for h in x.path}}, False
    ranks = {x for x, a in enumerate(c.placement.accelerator) if a == int(name)}
    return {i for i, x in enumerate(c.circuits) if x.a in ranks or x.b in ranks}, True


def surviving_graph(c: Circuits, failed: set[int]) -> nx.MultiGraph:
    g = nx.MultiGraph()
    g.add_nodes_from(range(c.plan.world))
    g.add_edges_from((x.a, x.b) for i, x in enumerate(c.circuits) if i not in failed)
    return g


def edges(g: nx.MultiGraph, x: int, y: int) -> int:
    return int(g.number_of_edges(x, y))


def eq1(h: int, v: float, p: int, plan: Plan) -> float:
    return h * plan.latency_s + v / (p * plan.link_Bps)


@dataclass(frozen=True)
class Expected:
    how: str
    T: float | None
    schedule: str | None


def cosets(block: Sequence[int], world: int) -> list[int]:
    inside = mask_of(block)
    return [b for b in range(world) if b & inside == 0]


def runs_on(program: Program, block: Sequence[int], world: int, g: nx.MultiGraph) -> bool:
    """Every transfer of the program, in every coset, rides a surviving circuit."""
    return all(edges(g, base | expand(t.src, block), base | expand(t.dst, block)) > 0
               for base in cosets(block, world) for phase in program.phases for t in phase)


def fewest(g: nx.MultiGraph, masks: Sequence[int], world: int) -> int:
    """Fewest surviving parallel circuits over every pair x, x XOR m of the given global masks."""
    return min(edges(g, x, x ^ m) for m in masks for x in range(world))


def relayed_program(program: Program, relays: dict[tuple[int, int], int]) -> Program:
    """The program with each transfer between x and y (local) sent x -> z, then z -> y in an added phase."""
    phases: list[tuple[Transfer, ...]] = []
    for phase in program.phases:
        first, second = [], []
        for t in phase:
            z = relays.get((min(t.src, t.dst), max(t.src, t.dst)))
            if z is None:
                first.append(t)
            else:
                first.append(Transfer(t.src, z, t.src ^ z, t.nbytes))
                second.append(Transfer(z, t.dst, z ^ t.dst, t.nbytes))
        phases += [tuple(first), tuple(second)] if second else [tuple(first)]
    return Program(program.schedule, program.collective, program.bits, program.payload, program.segments,
                   program.unit, tuple(p for p in phases if p))


def expected(plan: Plan, c: Circuits, mesh: int, axis: int, k: int, fault: str) -> Expected:
    m = plan.meshes[mesh]
    a = m.axes[axis]
    d = a.demands[k]
    failed, gone = failed_by_hand(c, fault)
    if gone:
        return Expected("stopped", None, None)
    world, block = plan.world, a.bits
    uses = set(d.uses)
    if not any((c.circuits[i].a ^ c.circuits[i].b) in uses for i in failed):
        return Expected("intact", d.time_s, d.schedule)
    g = surviving_graph(c, failed)  # only when the demand lost a circuit
    left = fewest(g, sorted(uses), world)
    if left > 0:
        return Expected("parallel", eq1(d.phases, d.volume_bytes, min(d.multiplicity, left), plan), d.schedule)
    options: list[tuple[float, str, str]] = []
    gens = axis_generators([x.mask for x in plan.generators], block)
    # relay: each dead pair through the axis neighbour z with the most surviving circuits
    # on both hops (ties: the lowest generator x -> z); one rewritten program per coset
    dead = sorted({(min(x, x ^ u), max(x, x ^ u)) for u in uses for x in range(world) if edges(g, x, x ^ u) == 0})
    program = SCHEDULES[d.schedule].build(demand_topology(d.groups, block, d.fold), d.payload_bytes)
    per_coset: dict[int, dict[tuple[int, int], int]] = {}
    p = min([d.multiplicity] + [edges(g, x, x ^ u) for u in uses for x in range(world) if edges(g, x, x ^ u)])
    feasible = True
    inside = mask_of(block)
    for x, y in dead:
        hops = [(min(edges(g, x, x ^ s), edges(g, x ^ s, y)), -s, s)
                for s in gens if s != x ^ y and (x ^ s ^ y) in gens]
        hops = [h for h in hops if h[0] > 0]
        if not hops:
            feasible = False
            break
        n, _, s = max(hops)
        p = min(p, n)
        local = (compress(x & inside, block), compress(y & inside, block))
        per_coset.setdefault(x & ~inside, {})[local] = compress((x ^ s) & inside, block)
    if feasible:
        healthy = ideal_cost(program)
        rewritten = {base: relayed_program(program, r) for base, r in per_coset.items()}
        assert all(runs_on_coset(prog, block, base, g) for base, prog in rewritten.items())
        costs = [ideal_cost(prog) for prog in rewritten.values()]
        worst = max(costs, key=lambda cost: (cost.v, cost.h))
        h, v = max(worst.h, healthy.h), float(max(worst.v, healthy.v))
        options.append((eq1(h, v, p, plan), "relay", d.schedule))
    # fallback: any catalogue schedule the planner may pick, valid on the generators with no dead pair,
    # whose program runs on the surviving circuits in every coset
    alive = [u for u in gens if fewest(g, [u], world) > 0]
    topo = Topology(len(block), frozenset(compress(u, block) for u in alive))
    if topo.connected:
        for sched in schedules_for(d.collective):
            if sched.name in AUTO_EXCLUDED or not sched.valid(topo):
                continue
            fallback = sched.build(topo, d.payload_bytes)
            assert runs_on(fallback, block, world, g), f"{sched.name} valid but not runnable"
            cost = ideal_cost(fallback)
            used = sorted({expand(t.gen, block) for phase in fallback.phases for t in phase})
            q = min(d.multiplicity, fewest(g, used, world))
            options.append((eq1(cost.h, float(cost.v), q, plan), "fallback", sched.name))
    if not options:
        return Expected("stopped", None, None)
    t, how, name = min(options, key=lambda o: (o[0], o[1], o[2]))
    return Expected(how, t, name)


def runs_on_coset(program: Program, block: Sequence[int], x_base: int, g: nx.MultiGraph) -> bool:
    return all(edges(g, x_base | expand(t.src, block), x_base | expand(t.dst, block)) > 0
               for phase in program.phases for t in phase)


# -- the tests -------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "kind", "fault"), all_faults())
def test_fault_agrees_with_the_independent_recomputation(name: str, kind: str, fault: str) -> None:
    plan, c = case(name)
    r = report(name, kind)
    outcome = next(f for f in r.faults if f.id == fault)
    rows = {(d.mesh, d.axis, d.demand): d for d in outcome.demands}
    total, stopped = 0.0, []
    for i, m in enumerate(plan.meshes):
        for j, a in enumerate(m.axes):
            for k, d in enumerate(a.demands):
                got: DemandOutcome = rows[(m.name, j, k)]
                want = expected(plan, c, i, j, k, fault)
                assert got.how == want.how, (fault, got)
                if want.T is None or got.T is None:
                    assert want.T is None and got.T is None
                    stopped.append(got.key)
                    continue
                assert pytest.approx(want.T, rel=1e-12) == got.T, (fault, got, want)
                assert pytest.approx(eq1(got.h or 0, got.v or 0.0, got.p or 1, plan), rel=1e-12) == got.T
                if want.how == "fallback":
                    assert got.schedule == want.schedule
                # a fault never makes a demand faster than the plan's choice
                assert d.time_s * (1 - 1e-12) <= got.T
                total += d.weight * got.T
    assert outcome.objective == pytest.approx(total, rel=1e-12)
    assert sorted(outcome.stopped) == sorted(stopped)


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("kind", ["circuit", "device", "accelerator"])
def test_summary_by_hand(name: str, kind: str) -> None:
    r = report(name, kind)
    plan, c = case(name)
    assert r.healthy == pytest.approx(sum(d.weight * d.time_s for m in plan.meshes for a in m.axes
                                          for d in a.demands))
    running = [f for f in r.faults if not f.stopped]
    stopping = [f for f in r.faults if f.stopped]
    s = r.summary
    assert s.count == len(fault_ids(c, kind)) == len(r.faults)
    assert s.stopped == len(stopping)
    if running:
        assert s.median == statistics.median(f.objective for f in running)
        assert s.worst_running is not None and s.worst_running.objective == max(f.objective for f in running)
        # a fault that stops nothing is never cheaper than the healthy plan
        assert min(f.objective for f in running) >= r.healthy * (1 - 1e-12)
    # a stopping fault is never ranked harmless: it is the worst, and first in the ranking
    assert s.worst is not None
    if stopping:
        assert s.worst.stopped and ranked(r)[0].stopped
        assert all(f.stopped for f in ranked(r)[:len(stopping)])
    if kind == "accelerator":
        assert len(stopping) == len(r.faults) and s.median is None


def test_the_cases_exercise_every_outcome() -> None:
    hows = {d.how for name in CASES for kind in ("circuit", "device") for f in report(name, kind).faults
            for d in f.demands}
    assert hows >= {"intact", "parallel", "fallback", "stopped"}


RELAY_TOPOLOGIES = [Topology(3, frozenset(range(1, 8))), Topology(4, frozenset({1, 2, 4, 8, 3, 12}))]


@pytest.mark.parametrize("topology", RELAY_TOPOLOGIES, ids=["K8", "Q4+folds"])
@pytest.mark.parametrize("collective", ["all-reduce", "all-gather", "all-to-all"])
@pytest.mark.parametrize("payload", [4096, 3 << 20])
def test_relay_cost_is_the_rewritten_programs_ideal_cost(topology: Topology, collective: str, payload: int) -> None:
    """The incremental relay pricing against the program rewritten transfer by transfer."""
    gens = sorted(topology.gens)
    size = 1 << topology.bits
    for s in schedules_for(collective):
        if s.name in AUTO_EXCLUDED or not s.valid(topology):
            continue
        program = s.build(topology, payload)
        used = sorted({t.gen for phase in program.phases for t in phase})
        for g in used:
            for a in gens:
                if a == g or a ^ g not in gens:
                    continue
                for pairs in ([0], [0, 5 % size], list(range(0, size, 3))):
                    relays = {(min(x, x ^ g), max(x, x ^ g)): min(x, x ^ g) ^ a for x in pairs}
                    want = ideal_cost(relayed_program(program, relays))
                    got = relay_cost(s.name, topology, payload, [(x, y, z) for (x, y), z in relays.items()])
                    assert got == (want.h, want.v), (s.name, g, a, pairs)


def test_json_keeps_the_report_keys() -> None:
    r = report("n16", "circuit")
    data = report_to_dict(r)
    assert data["schema"] == "ocsplan.faults/1" and data["kind"] == "circuit"
    assert data["healthy"]["objective"] == r.healthy
    assert {"count", "worst", "median", "stopped"} <= set(data["summary"])
    assert all({"id", "objective", "stopped", "demands"} <= set(f) for f in data["faults"])
    assert math.isfinite(data["summary"]["worst"]["objective"])


def test_sample_is_a_seeded_subset() -> None:
    plan, c = case("n64")
    one = analyse_faults(c, plan, "circuit", sample=10, seed=3)
    again = analyse_faults(c, plan, "circuit", sample=10, seed=3)
    full = {f.id: f for f in report("n64", "circuit").faults}
    assert one.sampled and len(one.faults) == 10 and one == again
    assert all(full[f.id] == f for f in one.faults)


@pytest.mark.parametrize("fault", ["circuit:99999", "circuit:x", "device:nope", "accelerator:16", "port:1"])
def test_bad_fault_ids(fault: str) -> None:
    with pytest.raises(InstanceError, match="--fail"):
        failed_circuits(case("n16")[1], fault)


def test_bad_kind_and_sample() -> None:
    plan, c = case("n16")
    with pytest.raises(InstanceError, match="--kind"):
        analyse_faults(c, plan, "rack")
    with pytest.raises(InstanceError, match="--sample"):
        analyse_faults(c, plan, "circuit", sample=0)


def test_a_plan_that_is_not_the_circuits_plan() -> None:
    with pytest.raises(PlanError, match="--plan"):
        check_match(case("n16")[1], case("n64")[0])


def test_a_generator_table_that_is_not_the_plans_is_refused_as_validate_says() -> None:
    """check_match shares validate's check of what the file restates (realization.plan_check.restated)."""
    plan, c = case("n16")
    first = c.generators[0]
    table = (replace(first, multiplicity=first.multiplicity + 1), *c.generators[1:])
    with pytest.raises(PlanError, match="does not belong to this plan: generators or multiplicities differ"):
        check_match(replace(c, generators=table), plan)

