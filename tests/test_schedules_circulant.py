"""One-shot schedules on circulant axes: symbolic verification, conformance with
the closed forms, and hand-derived values on rings and complete graphs."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import pytest

from ocsplan.circulant import Circulant
from ocsplan.planning.circulant import least_diameter
from ocsplan.schedules import ScheduleError, ideal_cost, verify
from ocsplan.schedules.circulant import CIRCULANT_CATALOGUE, circulant_cost, circulant_program

PAYLOAD = 8000

GRAPHS = {
    g.name: g
    for g in [
        *(
            least_diameter(n, d).graph
            for n in (5, 6, 8, 12, 13, 24)
            for d in range(2, n, 3)
            if n % 2 == 0 or d % 2 == 0
        ),
        *(Circulant.from_representatives(n, [1]) for n in (2, 7, 8)),
        Circulant.from_representatives(8, [1, 4]),
        Circulant.from_representatives(72, [1, 4, 15, 36]),
        Circulant.from_representatives(9, [3, 1]),
        least_diameter(64, 14).graph,
        Circulant.complete(6),
    ]
}

CASES = [
    pytest.param(c, s, name, id=f"{c}:{s}@{name}")
    for name in GRAPHS
    for c, names in CIRCULANT_CATALOGUE.items()
    for s in names
]


@pytest.mark.parametrize(("collective", "schedule", "graph"), CASES)
def test_conformance(collective: str, schedule: str, graph: str) -> None:
    topo = GRAPHS[graph]
    payload = PAYLOAD * topo.size  # whole bytes per block
    program = circulant_program(schedule, topo, payload, collective)
    assert program.collective == collective
    verify(program, topo)
    ideal = ideal_cost(program)
    form = circulant_cost(schedule, topo, collective)
    assert (ideal.h, ideal.v, ideal.u) == (form.h, form.v_factor * payload, form.u)
    assert form.h == topo.diameter


@pytest.mark.parametrize("size", [4, 7, 8, 11, 16])
def test_ring_by_hand(size: int) -> None:
    # ring C_N(1): diameter D = floor(N/2), |Ball(k)| = 2k + 1 for k < D, so one-shot
    # moves sum_{k<D} (2k + 1) = D^2 payloads; the balanced tree sends each distance
    # layer (two labels, one at +k and one at -k) over two generators: one per phase.
    ring = Circulant.from_representatives(size, [1])
    diameter = size // 2
    assert circulant_cost("one-shot", ring).v_factor == diameter**2
    assert circulant_cost("one-shot-dvo", ring).v_factor == diameter
    assert circulant_cost("one-shot-dvo", ring).h == diameter


@pytest.mark.parametrize("size", [2, 8, 72])
def test_complete_graph_by_hand(size: int) -> None:
    # K_N: one phase, every rank sends its own input once over every link
    form = circulant_cost("one-shot-dvo", Circulant.complete(size))
    assert (form.h, form.v_factor, form.u) == (1, Fraction(1), size - 1)
    assert circulant_cost("one-shot", Circulant.complete(size)).v_factor == 1


def test_wagner_graph_by_hand() -> None:
    # C8(1,4): distance 1 = {1, 4, 7}, distance 2 = {2, 3, 5, 6}. One-shot sends
    # |Ball(0)| + |Ball(1)| = 1 + 4 = 5 payloads. DVO: phase 1 sends one input per
    # generator; phase 2 puts 4 labels on 3 generators (2 = 1 + 1 only, 6 = 7 + 7 only,
    # 3 = 7 + 4 = 4 + 7, 5 = 1 + 4 = 4 + 1), so some generator carries 2: total 1 + 2 = 3.
    graph = Circulant.from_representatives(8, [1, 4])
    assert circulant_cost("one-shot", graph).v_factor == 5
    assert circulant_cost("one-shot-dvo", graph).v_factor == 3


def test_verifier_rejects_wrong_group_and_broken_programs() -> None:
    graph = Circulant.from_representatives(8, [1, 4])
    program = circulant_program("one-shot-dvo", graph, PAYLOAD)
    with pytest.raises(ScheduleError, match="Z_8"):
        verify(program, Circulant.from_representatives(9, [1, 4]))
    missing = replace(program, phases=(program.phases[0][1:], *program.phases[1:]))
    with pytest.raises(ScheduleError):
        verify(missing, graph)
    t = program.phases[0][0]
    xor_edge = replace(t, dst=t.src ^ t.gen) if t.src ^ t.gen != t.dst else replace(t, dst=(t.dst + 1) % 8)
    broken = replace(program, phases=((xor_edge, *program.phases[0][1:]), *program.phases[1:]))
    with pytest.raises(ScheduleError, match="not an edge"):
        verify(broken, graph)
    assert ideal_cost(program).v == Fraction(3 * PAYLOAD)


def test_only_one_shot_runs_on_a_circulant() -> None:
    with pytest.raises(ValueError, match="does not run all-reduce on a circulant"):
        circulant_cost("coset-factored", Circulant.complete(4))
    with pytest.raises(ValueError, match="does not run all-to-all"):
        circulant_cost("one-shot-dvo", Circulant.complete(4), "all-to-all")


def test_all_gather_and_all_to_all_by_hand() -> None:
    ring = Circulant.from_representatives(8, [1])
    # all-gather on C8(1): blocks of sigma/8; flooding moves |Ball(k-1)| blocks in phase k,
    # 1 + 3 + 5 + 7 = 16 blocks = 2 sigma; the tree sends one block per generator per phase: 4/8
    assert circulant_cost("one-shot", ring, "all-gather").v_factor == Fraction(16, 8)
    assert circulant_cost("one-shot-dvo", ring, "all-gather").v_factor == Fraction(4, 8)
    # all-to-all on C8(1): in phase j the blocks still travelling one way are those for
    # offsets j..3 plus the antipode 4 (routed the same way): 4 + 3 + 2 + 1 = 10 blocks
    assert circulant_cost("one-shot", ring, "all-to-all").v_factor == Fraction(10, 8)
    # K_N: one phase, one block per link
    form = circulant_cost("one-shot", Circulant.complete(6), "all-to-all")
    assert (form.h, form.v_factor, form.u) == (1, Fraction(1, 6), 5)
