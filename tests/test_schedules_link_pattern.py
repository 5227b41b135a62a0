"""A schedule's declared link pattern (``Schedule.masks``) is exactly what its program sends.

The realizer and the validator read routes from :func:`ocsplan.schedules.link_pattern`, which uses the
masks when a schedule declares them and builds nothing; here each declaration is held to the program
the schedule builds (every transfer's source and peer, phase by phase, in the program's order), on the
whole conformance matrix and at several payloads.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from ocsplan.schedules import SCHEDULES, link_pattern

from .test_schedules import MATRIX

DECLARED = sorted(name for name, s in SCHEDULES.items() if s.masks is not None)
CASES = [
    pytest.param(name, topo_name, id=f"{name}@{topo_name}")
    for name in DECLARED
    for topo_name, topo in MATRIX.items()
    if SCHEDULES[name].valid(topo)
]


def _from_program(schedule: str, topo_name: str, payload: int) -> list[dict[int, list[int]]]:
    """Each phase's sources and their peers in order of first transfer, read off the built program."""
    phases = []
    for phase in SCHEDULES[schedule].build(MATRIX[topo_name], payload).phases:
        peers: dict[int, list[int]] = {}
        for t in phase:
            if t.dst not in peers.setdefault(t.src, []):
                peers[t.src].append(t.dst)
        phases.append(peers)
    return phases


def test_the_layered_families_declare_their_pattern() -> None:
    assert {"layered", "layered-parallel", "bruck", "bruck-parallel", "coset-factored",
            "coset-factored-parallel"} <= set(DECLARED)


@pytest.mark.parametrize("payload", [1, 4096, 3 * 64 * 1024])
@pytest.mark.parametrize(("schedule", "topology"), CASES)
def test_declared_masks_equal_the_program(schedule: str, topology: str, payload: int) -> None:
    declared = link_pattern(SCHEDULES[schedule], MATRIX[topology], payload)
    assert [{x: list(peers) for x, peers in phase.items()} for phase in declared] == _from_program(
        schedule, topology, payload)


@pytest.mark.parametrize(("schedule", "topology"), CASES[:: max(1, len(CASES) // 12)])
def test_without_masks_the_pattern_is_read_from_the_program(schedule: str, topology: str) -> None:
    built = replace(SCHEDULES[schedule], masks=None)
    assert link_pattern(built, MATRIX[topology], 4096) == link_pattern(SCHEDULES[schedule], MATRIX[topology], 4096)
