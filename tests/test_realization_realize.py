"""The realizer: port coloring, placement, Clos routing, routing tables, counts."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ocsplan.errors import InstanceError, RealizationError
from ocsplan.instance import loads_instance
from ocsplan.plan import Decision, DemandDecision, assemble, demand_topology
from ocsplan.realization.circuits import by_port, dumps_circuits, loads_circuits
from ocsplan.realization.paths import route_rail
from ocsplan.realization.realize import realize
from ocsplan.realization.shared_host import place
from ocsplan.realization.validate import validate
from ocsplan.schedules import SCHEDULES

from .realize_cases import SMALL_FABRIC, fabric, named_plan, small_fabric, small_plan


def test_table6_realizes_at_17_ports_on_a_single_level_fabric() -> None:
    plan = named_plan("paper-multimesh-n256")
    c = realize(plan, fabric("ocs-single"))
    assert plan.ports_used == c.ports_used == 17 and c.reserved_ports == 0
    # 17 ports x 256 nodes / 2 ends; one OCS plane per port index, one device each
    assert c.counts.circuits == 17 * 128 and c.counts.inter_rack == 0
    assert len(c.devices) == 17 and all(len(d.cross_connects) == 128 for d in c.devices)
    # brute force: every node uses ports 0..16 once, each to x XOR its generator
    mask_of_port = {p: g.mask for g in c.generators for p in g.ports}
    for x, node in enumerate(c.nodes):
        assert [e.port for e in node] == list(range(17))
        assert all(e.peer == x ^ mask_of_port[e.port] and e.peer_port == e.port for e in node)
    assert validate(c, plan) == []


def test_megatron_on_the_all_ocs_fabric_counts() -> None:
    plan = named_plan("megatron-5t-n512-b1")
    spec = fabric("nvl576-all-ocs")
    c = realize(plan, spec)
    # Hand count. Contiguous placement: rack = bits 8..5, slot = bits 4..0. Generators
    # inside bits 4..0: cubes 4,3,2,1,0 with p = 1,2,2,2,2 and folds 110,101,011,111 on
    # bits 2..0 with p = 2: 9 + 8 = 17 intra-rack ports; the other 35 - 17 = 18 leave
    # the rack. Each port index carries 512 / 2 = 256 circuits.
    intra, inter = 17 * 256, 18 * 256
    assert (c.counts.circuits, c.counts.intra_rack, c.counts.inter_rack) == (35 * 256, intra, inter)
    used = c.counts.used
    assert used.accelerator_ports == used.converters == 512 * 35  # one CPO per port carrying a circuit
    one, two = used.levels
    # level 1: 16 serving racks x 35 rails; ports: 2 per intra circuit, 4 per inter circuit
    assert (one.devices, one.ports, one.links_below) == (16 * 35, 2 * intra + 4 * inter, 2 * 35 * 256)
    # level 2: the 18 inter-rack rails x 8 devices; every rack fills its 32 uplinks per rail
    assert (two.devices, two.ports, two.links_below, two.logical) == (18 * 8, 2 * inter, 2 * inter, 18 * 32)
    assert {g.label for g in c.generators if g.scope == "intra-rack"} == {
        "000010000",
        "000001000",
        "000000100",
        "000000010",
        "000000001",
        "000000110",
        "000000101",
        "000000011",
        "000000111",
    }
    assert all(circ.stages == (3 if circ.scope == "inter-rack" else 1) for circ in c.circuits)
    # Table 9 nominal budget: endpoint 390 + protocol 100 + cables x 10 + OCS stages x 10 ns,
    # i.e. 520 ns in a rack (the instance's lambda = 0.52 us) and 560 ns between racks
    hop = {circ.scope: circ.latency(spec.latency) for circ in c.circuits}
    assert hop == pytest.approx({"intra-rack": 520e-9, "inter-rack": 560e-9})
    ends = by_port(c)
    assert all(ends[(x, e.port)].generator == e.generator for x, node in enumerate(c.nodes) for e in node)
    assert validate(c, plan) == []


def test_bit_placement_keeps_more_ports_in_the_rack() -> None:
    plan = named_plan("megatron-5t-n512-b1")
    # By hand: the world axis has layers {8,7,3}, {2,1,0} (p = 2, 7 generators each, 14
    # ports) and {6,5,4} (p = 1, 7 ports). Five rank bits hold at most one full layer of
    # p = 2 plus two bits of the other (2 cubes + 1 fold at p = 2): 14 + 6 = 20 ports.
    # The lowest such bit set is {0,1,2,3,7}.
    c = realize(plan, fabric("nvl576-all-ocs"), placement="bits")
    assert c.placement.slot_bits == (7, 3, 2, 1, 0)
    intra = sum(len(g.ports) for g in c.generators if g.scope == "intra-rack")
    assert intra == 20 and c.counts.inter_rack == (35 - 20) * 256
    assert validate(c, plan) == []


def test_explicit_slot_bits_4_to_0_are_the_contiguous_placement() -> None:
    plan = named_plan("megatron-5t-n512-b1")
    assert place(plan, fabric("nvl576-all-ocs"), "bits:4,3,2,1,0").accelerator == tuple(range(512))


@pytest.mark.parametrize("bad", ["diagonal", "bits:1,2", "bits:0,1,2,3,9", "bits:a"])
def test_bad_placement_options(bad: str) -> None:
    with pytest.raises(InstanceError, match="--placement"):
        place(named_plan("megatron-5t-n512-b1"), fabric("nvl576-all-ocs"), bad)


def test_ring_is_edge_colored_with_two_ports_per_copy() -> None:
    # Table 7 single-mesh ring: a degree-2 Gray ring on 32 labels, 17 copies, plus one cube.
    plan = named_plan("paper-table7-ring-single")
    ring = next(g for g in plan.generators if g.kind == "ring")
    c = realize(plan, fabric("ocs-single"))
    use = next(g for g in c.generators if g.kind == "ring")
    # even cycles are bipartite: König needs exactly the degree 2 x 17, no reserved port
    assert len(use.ports) == 2 * ring.multiplicity == 34 and c.reserved_ports == 0
    # each ring port is a perfect matching: every node has it exactly once
    per_port = Counter(e.port for node in c.nodes for e in node if e.generator == use.label)
    assert set(per_port) == set(use.ports) and set(per_port.values()) == {plan.world}
    assert validate(c, plan) == []


def test_routing_table_follows_the_schedule() -> None:
    plan = named_plan("paper-multimesh-n256")
    c = realize(plan, fabric("ocs-single"))
    mesh = plan.meshes[0]
    axis = mesh.axes[1]  # bits 5..0, coset-factored-parallel on K8 x K8
    demand = axis.demands[0]
    route = next(r for r in c.routes if (r.mesh, r.axis, r.demand) == (mesh.name, 1, 0))
    program = SCHEDULES[demand.schedule].build(demand_topology(demand.groups, axis.bits), demand.payload_bytes)
    port_of = {g.mask: g.ports for g in c.generators}
    node = 0b10_000000  # coset base with bit 7 set: local label 0 is global node 128
    for ph, phase in enumerate(program.phases):
        want = {(128 | t.dst, port_of[t.src ^ t.dst][: demand.multiplicity]) for t in phase if t.src == 0}
        assert set(route.table[node][ph]) == want


def test_deterministic_and_round_trips() -> None:
    plan = small_plan()
    first = dumps_circuits(realize(plan, small_fabric()))
    second = realize(plan, small_fabric())
    assert dumps_circuits(second) == first
    assert loads_circuits(first) == second


def test_eps_levels_cannot_carry_circuits() -> None:
    with pytest.raises(RealizationError, match="level 1 is eps"):
        realize(named_plan("megatron-5t-n512-b1"), fabric("nvl576-hybrid"))


def test_more_inter_rack_circuits_than_uplinks() -> None:
    # 4:1 level 1 (8 uplinks per rack and rail): every inter-rack rail of megatron needs
    # 32 uplinks per rack (each of the 32 slots has a circuit leaving the rack).
    with pytest.raises(RealizationError, match="rack 0 needs 32 uplinks to level 2, fabric nvl576-ocs-4to1 has 8"):
        realize(named_plan("megatron-5t-n512-b1"), fabric("nvl576-ocs-4to1"))


def test_plan_larger_than_the_serving_racks() -> None:
    with pytest.raises(RealizationError, match="needs 256 accelerators"):
        realize(named_plan("paper-multimesh-n256"), small_fabric())


def test_plan_with_more_ports_than_the_fabric() -> None:
    with pytest.raises(RealizationError, match="needs 8 ports per node"):
        realize(small_plan(), small_fabric(SMALL_FABRIC.replace("ports = 8", "ports = 7")))


def test_single_level_devices_smaller_than_the_world() -> None:
    small = SMALL_FABRIC.split("[racks]")[0] + '[[level]]\ntechnology = "ocs"\nradix = {radix}\n'
    # devices of 64 accelerators hold the whole 64-node plan: one device per rail
    c = realize(small_plan(), small_fabric(small.format(radix=64)))
    assert len(c.devices) == 8 and validate(c, small_plan()) == []
    # devices of 16: generator 100000 joins node 0 and node 32 on different devices
    with pytest.raises(RealizationError, match="generator 100000 joins node 0"):
        realize(small_plan(), small_fabric(small.format(radix=16)))


def _check_rail(pairs: list[tuple[int, int]], routed: list[tuple[int, int, int]], spines: int, fanout: int) -> None:
    """Independent check: each (device, rack, cable) carries at most one circuit."""
    taken: set[tuple[int, int, int]] = set()
    for (a, b), (spine, ja, jb) in zip(pairs, routed, strict=True):
        assert 0 <= spine < spines and 0 <= ja < fanout and 0 <= jb < fanout
        for end in ((spine, a, ja), (spine, b, jb)):
            assert end not in taken
            taken.add(end)


@st.composite
def rack_multigraphs(draw: st.DrawFn) -> tuple[list[tuple[int, int]], int, int]:
    spines = draw(st.integers(1, 4))
    fanout = draw(st.sampled_from([2, 4]))
    racks = draw(st.integers(2, 7))
    cap = spines * fanout
    load: Counter[int] = Counter()
    pairs = []
    for a, b in draw(st.lists(st.tuples(st.integers(0, racks - 1), st.integers(0, racks - 1)), max_size=60)):
        if a != b and load[a] < cap and load[b] < cap:
            load[a] += 1
            load[b] += 1
            pairs.append((a, b))
    return pairs, spines, fanout


@settings(max_examples=150, deadline=None)
@given(rack_multigraphs())
def test_route_rail_routes_any_rack_graph_within_the_uplinks(case: tuple[list[tuple[int, int]], int, int]) -> None:
    # König after an Euler split: with an even fan-out every rack multigraph whose
    # degrees fit the uplinks is routable, odd cycles or not.
    pairs, spines, fanout = case
    _check_rail(pairs, route_rail(pairs, spines, fanout), spines, fanout)


def test_route_rail_with_odd_fanout() -> None:
    # bipartite: König with spines x fanout colors always works
    square = [(0, 1), (1, 2), (2, 3), (3, 0)] * 2
    _check_rail(square, route_rail(square, 4, 1), 4, 1)
    # a triangle on two devices with one cable each: three edges at degree 2 need three
    # colors (an odd cycle), so no assignment exists
    with pytest.raises(RealizationError, match="odd cycles"):
        route_rail([(0, 1), (1, 2), (2, 0)], 2, 1)
    triangle = [(0, 1), (1, 2), (2, 0)]
    _check_rail(triangle, route_rail(triangle, 3, 1), 3, 1)


def test_inter_rack_circuits_spread_over_level_2() -> None:
    c = realize(small_plan(), small_fabric())
    per_device: dict[str, int] = defaultdict(int)
    for d in c.devices:
        if d.level == 2:
            per_device[d.id] += len(d.cross_connects)
    # 4 inter-rack rails x 4 level-2 devices. Each of the 8 serving racks sends 8 circuits
    # per rail up its 8 uplinks, 2 cables to each device: every device uses 8 x 2 = 16 of
    # its 24 ports (4 spare racks idle), i.e. 8 cross-connects.
    assert len(per_device) == 16 and set(per_device.values()) == {8}


@pytest.mark.parametrize(("shape", "ring_bits", "copies"), [((4, 2), (0,), 3), ((2, 4), (1, 0), 2)])
def test_small_rings_by_hand(shape: tuple[int, int], ring_bits: tuple[int, ...], copies: int) -> None:
    # A ring of two labels is a double edge (x -> y and y -> x), so 2 x copies parallel
    # circuits join each pair; a ring of four is a 4-cycle, each pair joined `copies` times.
    inst = loads_instance(
        f'name = "ring"\n[fabric]\nworld = 8\nports = 12\nlatency = "0.52us"\nlink = "400Gb/s"\n'
        f'[[mesh]]\nname = "r"\nshape = [{shape[0]}, {shape[1]}]\n'
        'axes = [{ collective = "none" }, { collective = "all-reduce", payload = "1MiB", schedule = "ring" }]\n',
        "ring.toml",
    )
    decision = Decision(
        partitions=((tuple(b for b in range(3) if b not in ring_bits), ring_bits),),
        choices=(((), (DemandDecision("ring", tuple((b,) for b in ring_bits), copies),)),),
        rings=frozenset({(0, 1)}),
    )
    plan = assemble(inst, decision, method="manual", status="manual")
    c = realize(plan, fabric("ocs-single"))
    ring = next(g for g in c.generators if g.kind == "ring")
    assert len(ring.ports) == 2 * copies and c.reserved_ports == 0
    pairs = Counter((circ.a, circ.b) for circ in c.circuits if circ.generator == ring.label)
    assert set(pairs.values()) == {2 * copies if len(ring_bits) == 1 else copies}
    assert validate(c, plan) == []


@pytest.mark.parametrize("enabled", [True, False])
def test_writing_and_reading_leave_the_cyclic_collector_as_they_found_it(enabled: bool) -> None:
    """The circuits writer and reader pause the collector (a million small containers at N = 2048:
    3.9 -> 1.3 s to read, 1.5 -> 0.7 s to write) and restore it, also when the file is refused."""
    import gc

    from ocsplan.errors import PlanError

    c = realize(small_plan(), small_fabric())
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        text = dumps_circuits(c)
        assert gc.isenabled() is enabled
        assert loads_circuits(text) == c
        assert gc.isenabled() is enabled
        with pytest.raises(PlanError, match="circuits"):
            loads_circuits(text.replace('"circuits": [', '"circuits": [7,', 1))
        assert gc.isenabled() is enabled
        with pytest.raises(PlanError, match="not JSON"):
            loads_circuits(text[:-3])
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()
