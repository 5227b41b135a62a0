"""Joint moves (planning/joint.py) on hard instances whose proven optima need them."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from ocsplan.instance import load_instance
from ocsplan.planning import search as S
from ocsplan.planning.context import Context, Eval
from ocsplan.planning.joint import follow, joint
from ocsplan.planning.space import iter_partitions

HARD = Path(__file__).resolve().parent.parent / "instances" / "families" / "hard"
# optima proven by CP-SAT and HiGHS alike (instances/families/hard/README.md)
OPTIMA = {row["instance"]: float(row["optimum_s"]) for row in csv.DictReader((HARD / "optima.csv").open())}


def _beam_state(name: str, k: int) -> tuple[S.Search, Eval]:
    """Partition class k's best state after the screening pass and the block-fold beam."""
    inst = load_instance(HARD / f"{name}.toml")
    ctx = Context(inst, irregular=False)
    search = S.Search(ctx, list(iter_partitions(inst))[k])
    screened, _ = search.descend(1, effort=0)
    assert screened is not None
    start = search.evaluate(screened.profiles, screened.shapes, 1)
    assert start is not None
    return search, search.beam(start, S.BEAM, S.MAX_PASSES, 1)[0]


@pytest.mark.parametrize(("name", "k"), [("random-s12-0005", 2), ("helix-s12-0014", 1)])
def test_joint_moves_reach_the_proven_optimum(name: str, k: int) -> None:
    # class k holds the optimum (its plan's partition); one-axis moves stop above it
    search, state = _beam_state(name, k)
    assert state.objective > OPTIMA[name] * (1 + 1e-3)
    for _ in range(S.MAX_PASSES):
        moved = joint(search, state, 1)
        if not moved.objective < state.objective * (1 - 1e-12):
            break
        state = search.beam(moved, S.BEAM, S.MAX_PASSES, 1)[0]
    assert state.objective == pytest.approx(OPTIMA[name], rel=1e-9)


def test_a_world_axis_follows_a_second_mesh_into_its_optimal_layers() -> None:
    # helix-s12-0014: ffn's 9-bit axis takes K8^3 on bits (9,8,7), (5,4,3), (2,1,0); the
    # world axis (K16 K16 K8) re-placed around them is the optimum's: (10..7), (6..3), (2,1,0)
    search, state = _beam_state("helix-s12-0014", 1)
    ffn = 3
    moves = follow(search, ffn, ((9, 8, 7), (5, 4, 3), (2, 1, 0)), (3, 3, 3), state.profiles, state.shapes)
    world = {frozenset(g for g in profiles[0] if len(g) >= 2) for profiles, _ in moves}
    assert frozenset({(10, 9, 8, 7), (6, 5, 4, 3), (2, 1, 0)}) in world
