"""The worst instance the planners' read-time bounds accept is solved within the documented
memory (issue 38, category 4), and the first one past each bound is refused at read time.

Each runs in a subprocess under 2 GiB of address space; the timeout only detects a hang
(no test asserts on wall-clock time)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from ocsplan.limits import MAX_BIT_TYPES, MAX_DEMANDS, MAX_TOTAL_DEMANDS

ROOT = Path(__file__).resolve().parent.parent.parent
LIMIT = 2 << 30


def _instance(meshes: int, demands: int) -> str:
    """``meshes`` meshes of shape [16, 16] on 256 ranks, every axis with ``demands`` demands: each
    mesh has two bit classes, so the partition search has 2^meshes bit types."""
    colls = ("all-reduce", "all-gather", "all-to-all")
    lines = ['name = "worst"', "[fabric]", "world = 256", "ports = 16", 'latency = "0.52us"', 'link = "400Gb/s"']
    for m in range(meshes):
        axes = []
        for a in range(2):
            row = ", ".join(f'{{ collective = "{colls[(m + a + d) % 3]}", payload = "{4 * (d + 1)}KiB", '
                            f"weight = {d + 1} }}" for d in range(demands))
            axes.append(f"  {{ demands = [{row}] }}")
        lines += ["[[mesh]]", f'name = "m{m}"', "shape = [16, 16]", "axes = [\n" + ",\n".join(axes) + "\n]"]
    return "\n".join(lines) + "\n"


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def _solve(path: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    return subprocess.run([sys.executable, "-m", "ocsplan", "solve", str(path)], capture_output=True, text=True,
                          timeout=600, env=env, preexec_fn=_limit)


# 2^9 = 512 bit types (MAX_BIT_TYPES) and 8 x 2 x 64 = 1024 demands (MAX_TOTAL_DEMANDS)
WORST = {"types": (MAX_BIT_TYPES.bit_length() - 1, 4), "demands": (8, MAX_DEMANDS)}


def test_the_worst_cases_are_at_the_bounds() -> None:
    assert 2 ** WORST["types"][0] == MAX_BIT_TYPES
    meshes, demands = WORST["demands"]
    assert meshes * 2 * demands == MAX_TOTAL_DEMANDS and 2**meshes <= MAX_BIT_TYPES


@pytest.mark.slow
@pytest.mark.parametrize("which", sorted(WORST))
def test_the_worst_accepted_instance_is_solved_within_2_gib(which: str, tmp_path: Path) -> None:
    path = tmp_path / "worst.toml"
    path.write_text(_instance(*WORST[which]))
    proc = _solve(path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "objective sum w*T" in proc.stdout


@pytest.mark.parametrize(("meshes", "demands", "text"), [
    (WORST["types"][0] + 1, 1, f"1024 bit types (the product of the axis classes of the multi-axis meshes "
                               f"that have demands), the limit is {MAX_BIT_TYPES}"),
    (9, MAX_DEMANDS, f"1152 demands in all, the limit is {MAX_TOTAL_DEMANDS}"),
])
def test_one_past_a_bound_is_refused_at_read_time(meshes: int, demands: int, text: str, tmp_path: Path) -> None:
    path = tmp_path / "past.toml"
    path.write_text(_instance(meshes, demands))
    proc = _solve(path)
    assert proc.returncode == 2 and proc.stderr.strip() == f"{path}: mesh: {text}"
