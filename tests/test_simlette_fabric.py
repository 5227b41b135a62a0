"""Fabric descriptions for the simulator: circuits from a plan or a realization, hybrid uplinks."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

import pytest

from ocsplan.errors import InstanceError, RealizationError
from ocsplan.instance import load_instance
from ocsplan.plan import Plan
from ocsplan.planning.heuristic import plan_heuristic
from ocsplan.realization.fabrics import FabricSpec, load_fabric
from ocsplan.realization.realize import realize
from ocsplan.realization.technologies import technology
from ocsplan.simlette import Link, circuits_from_plan, circuits_from_realization, hybrid_uplinks
from ocsplan.simlette.circuitmap import circuits_for_generators

from .conftest import ROOT, instance_path

FABRICS = ROOT / "simulate" / "fabrics"


def _plan(name: str) -> Plan:
    return plan_heuristic(load_instance(instance_path(name)))


@pytest.fixture(scope="module")
def multimesh() -> Plan:
    return _plan("paper-multimesh-n256")


@pytest.mark.parametrize(
    ("fabric", "tech"),
    [
        ("ocs-single", "ocs"),
        ("eps-single", "eps"),
        ("nvl576-all-eps", "eps"),
        ("nvl576-hybrid", "hybrid"),
        ("nvl576-all-ocs", "ocs"),
    ],
)
def test_technology(fabric: str, tech: str) -> None:
    assert technology(load_fabric(FABRICS / f"{fabric}.toml")) == tech


def test_ocs_over_eps_is_refused() -> None:
    spec = load_fabric(FABRICS / "nvl576-hybrid.toml")
    levels = (replace(spec.levels[0], technology="ocs"), replace(spec.levels[1], technology="eps"))
    flipped = replace(spec, levels=levels)
    with pytest.raises(InstanceError, match="not simulated"):
        technology(flipped)


def test_circuits_from_plan_single_and_two_level(multimesh: Plan) -> None:
    single = circuits_from_plan(multimesh, load_fabric(FABRICS / "ocs-single.toml"))
    two = circuits_from_plan(multimesh, load_fabric(FABRICS / "nvl576-all-ocs.toml"))
    ports = sum(g.ports for g in multimesh.generators)
    for x in (0, 77, 255):
        owned = [link.port for g in multimesh.generators for link in single.of(x, g.mask)]
        assert sorted(owned) == list(range(ports))  # every copy of every generator on its own port
    for g in multimesh.generators:
        for x in (0, 200):
            link = two.of(x, g.mask)[0]
            inside = x // 32 == (x ^ g.mask) // 32  # racks of 32
            assert (link.ocs, link.cables) == ((1, 2) if inside else (3, 4))
            assert single.of(x, g.mask)[0].ocs == 1


def _reference_links(gens: Sequence[tuple[int, int, int]], world: int,
                     spec: FabricSpec) -> dict[tuple[int, int], tuple[Link, ...]]:
    """Brute force: circuits_for_generators's links before issue 37, one Link per rank, copy and port."""
    two = spec.two_level
    links: dict[tuple[int, int], list[Link]] = {}
    port = 0
    crossing: Counter[int] = Counter()
    for mask, copies, skip in gens:
        port += skip
        for _ in range(copies):
            for x in range(world):
                inter = two and x // spec.rack_size != (x ^ mask) // spec.rack_size
                links.setdefault((x, mask), []).append(Link(port, 3, 4) if inter else Link(port, 1, 2))
                crossing[port] += inter
            port += 1
    return {k: tuple(v) for k, v in links.items()}


@pytest.mark.parametrize("fabric", ["ocs-single", "nvl576-all-ocs"])
@pytest.mark.parametrize("gens", [((1, 2, 0), (0b110, 1, 0), (96, 0, 2), (1, 1, 0), (64, 3, 1)),
                                  ((255, 4, 0), (32, 1, 0), (0b10001, 2, 0))])
def test_circuits_for_generators_equal_the_brute_force(fabric: str, gens: tuple[tuple[int, int, int], ...]) -> None:
    """Shared Links, all copies of a rank at once: the same map, in the same order (repeated masks, rings)."""
    spec = load_fabric(FABRICS / f"{fabric}.toml")
    got = circuits_for_generators(gens, 256, spec).links
    want = _reference_links(gens, 256, spec)
    assert list(got.items()) == list(want.items())


def test_plan_circuits_equal_the_brute_force(multimesh: Plan) -> None:
    spec = load_fabric(FABRICS / "nvl576-all-ocs.toml")
    gens = [(g.mask, g.multiplicity if g.kind != "ring" else 0, g.ports if g.kind == "ring" else 0)
            for g in multimesh.generators]
    assert list(circuits_from_plan(multimesh, spec).links.items()) == list(_reference_links(gens, 256, spec).items())


@pytest.mark.parametrize("fabric", ["ocs-single", "nvl576-all-ocs"])
@pytest.mark.parametrize("name", ["paper-multimesh-n256", "megatron-5t-n512-b1"])
def test_realization_adapter_agrees_with_the_plan_coloring(fabric: str, name: str) -> None:
    plan = _plan(name)
    spec = load_fabric(FABRICS / f"{fabric}.toml")
    adapted = circuits_from_realization(realize(plan, spec))
    assert adapted.source == "realization"
    assert dict(adapted.links) == dict(circuits_from_plan(plan, spec).links)


def test_realization_adapter_reads_paths() -> None:
    class NodePort:
        def __init__(self, port: int, peer: int, generator: str) -> None:
            self.port, self.peer, self.generator = port, peer, generator

    class Circuit:
        def __init__(self, a: int, a_port: int, b: int, b_port: int, stages: int) -> None:
            self.a, self.a_port, self.b, self.b_port, self.stages = a, a_port, b, b_port, stages
            self.cables = stages + 1

    class Real:
        def __init__(self) -> None:
            # Q2 on 4 ranks: generator 01 on port 0 inside a rack, 10 on port 1 between racks
            self.nodes = [[NodePort(0, x ^ 1, "01"), NodePort(1, x ^ 2, "10")] for x in range(4)]
            self.circuits = [
                Circuit(0, 0, 1, 0, 1),
                Circuit(2, 0, 3, 0, 1),
                Circuit(0, 1, 2, 1, 3),
                Circuit(1, 1, 3, 1, 3),
            ]

    real = Real()
    cmap = circuits_from_realization(real)
    assert cmap.of(0, 0b01) == (Link(0, 1, 2),)
    assert cmap.of(3, 0b10) == (Link(1, 3, 4),)
    real.nodes[0][0].peer = 2
    with pytest.raises(RealizationError, match="XOR"):
        circuits_from_realization(real)


def test_plan_too_big_for_the_fabric(multimesh: Plan) -> None:
    small = replace(load_fabric(FABRICS / "ocs-single.toml"), accelerators=128)
    with pytest.raises(InstanceError, match="accelerators"):
        circuits_from_plan(multimesh, small)
    few = replace(load_fabric(FABRICS / "ocs-single.toml"), ports=8)
    with pytest.raises(InstanceError, match="ports"):
        circuits_from_plan(multimesh, few)


def test_hybrid_with_fewer_uplinks_than_offsets() -> None:
    # megatron on 16 racks needs rack offsets 1, 2, 3 (64 circuits each per rack) and 4, 8, 12
    # (128 each). With 4 uplinks two of them go over two circuits; the busiest uplink's load equals
    # the brute-force optimum over every set of 4 masks and every shortest route (test_simlette_uplinks);
    # with 2 uplinks the racks 4 and 8 apart cannot be reached at all.
    from .test_simlette_uplinks import brute_force_busiest, walked_loads

    plan = _plan("megatron-5t-n512-b1")
    spec = load_fabric(FABRICS / "nvl576-hybrid.toml")
    four = replace(spec, levels=(replace(spec.levels[0], up=4), spec.levels[1]))
    routes = hybrid_uplinks(plan, four)
    need = {1: 64, 2: 64, 3: 64, 4: 128, 8: 128, 12: 128}
    assert len(set(routes.masks)) == 4
    assert all(routes.hops[d] <= 2 for d in need)
    assert max(walked_loads(routes, need).values()) == brute_force_busiest(need, 4, 16) == 256
    two = replace(spec, levels=(replace(spec.levels[0], up=2), spec.levels[1]))
    with pytest.raises(RealizationError, match="cannot be reached"):
        hybrid_uplinks(plan, two)


def test_hybrid_uplinks(multimesh: Plan) -> None:
    routes = hybrid_uplinks(multimesh, load_fabric(FABRICS / "nvl576-hybrid.toml"))
    # Racks of 32 (rank bits 8..5 index the rack). The plan's generators that leave a
    # rack: 00100000, 00110000, 00100001, 00110001 (rack offset 1), 01000000 (2),
    # 10000000 (4), 11000000 (6). Eight uplinks: one per offset, the four spare ones to
    # offset 1, which carries four generators' circuits.
    assert sorted(routes.masks) == [1, 1, 1, 1, 1, 2, 4, 6]
    assert routes.next_hop[6] == 6 and routes.hops[6] == 1
    assert routes.hops[3] == 2 and routes.next_hop[3] in (1, 2)  # offset 3: over 1 and 2
