"""The worst instance the planners' read-time bounds accept is solved within the documented
memory (issue 38, category 4), and the first one past each bound is refused at read time.

Each runs in a subprocess under 2 GiB of address space (the refusals in a child of the fork
server, :mod:`tests.hostile.forked`); the timeout only detects a hang (no test asserts on
wall-clock time)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from ocsplan.limits import MAX_BIT_TYPES, MAX_DEMANDS, MAX_TOTAL_DEMANDS

from .forked import ForkServer

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
def test_one_past_a_bound_is_refused_at_read_time(meshes: int, demands: int, text: str, tmp_path: Path,
                                                  fork_server: ForkServer) -> None:
    """In a child of the fork server (a refusal at read time needs no fresh interpreter)."""
    path = tmp_path / "past.toml"
    path.write_text(_instance(meshes, demands))
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = fork_server.run(["solve", str(path)], cwd=os.getcwd(), env=env, limit=LIMIT, timeout=600)
    assert proc.returncode == 2 and proc.stderr.strip() == f"{path}: mesh: {text}"


# -- the JSON readers (issue 38, category 4): the worst file each accepts at read time ------------------------


def _run(*argv: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """``ocsplan argv`` under 2 GiB of address space; its status and its children's CPU seconds."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, "-m", "ocsplan", *argv], capture_output=True, text=True, timeout=120,
                          env=env, preexec_fn=_limit)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return proc, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def _base(tmp_path: Path) -> tuple[Path, Path]:
    """A plan and its circuits (the hostile base instance on the shipped single-level OCS)."""
    from ocsplan.instance import loads_instance
    from ocsplan.plan import dumps_plan
    from ocsplan.planning.heuristic import plan_heuristic
    from ocsplan.realization.circuits import dumps_circuits
    from ocsplan.realization.fabrics import load_fabric
    from ocsplan.realization.realize import realize

    from .cases import INSTANCE

    plan = plan_heuristic(loads_instance(INSTANCE, "instance.toml"))
    (tmp_path / "plan.json").write_text(dumps_plan(plan))
    circuits = realize(plan, load_fabric(ROOT / "simulate" / "fabrics" / "ocs-single.toml"))
    (tmp_path / "circuits.json").write_text(dumps_circuits(circuits))
    return tmp_path / "plan.json", tmp_path / "circuits.json"


@pytest.mark.slow
def test_the_worst_json_file_at_the_byte_cap_is_refused_within_2_gib(tmp_path: Path) -> None:
    """MAX_JSON_BYTES of the costliest JSON to parse (empty objects: about 830 MB of Python objects)
    in a plan's unknown key: parsed within 2 GiB, refused naming the key; one byte more is refused
    unread."""
    from ocsplan.limits import MAX_JSON_BYTES

    plan, _ = _base(tmp_path)
    text = plan.read_bytes().rstrip().removesuffix(b"}") + b', "x": ['
    count = (MAX_JSON_BYTES - len(text) - 4) // 3
    worst = text + b"{}," * count + b"{}]}"
    assert MAX_JSON_BYTES - 3 < len(worst) <= MAX_JSON_BYTES
    path = tmp_path / "worst.json"
    path.write_bytes(worst)
    proc, cpu = _run("validate", str(plan.parent / "circuits.json"), "--plan", str(path))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert proc.stderr.strip().startswith(f"{path}: x: "), proc.stderr
    assert cpu < 20, cpu
    with path.open("ab") as handle:
        handle.write(b" " * (MAX_JSON_BYTES + 1 - len(worst)))
    proc, _ = _run("validate", str(plan.parent / "circuits.json"), "--plan", str(path))
    assert proc.stderr.strip() == f"{path}: larger than the limit of 32 MiB", proc.stderr


@pytest.mark.slow
def test_the_most_circuits_a_file_may_hold_are_read_within_2_gib(tmp_path: Path) -> None:
    """MAX_CIRCUITS circuits (copies of one, so validate finds faults: exit 1, one per line) are read
    and checked within 2 GiB and 20 s of CPU; one more is refused at read time."""
    import json

    from ocsplan.limits import MAX_CIRCUITS

    _, circuits = _base(tmp_path)
    data = json.loads(circuits.read_text())
    for count, status in ((MAX_CIRCUITS, 1), (MAX_CIRCUITS + 1, 2)):
        data["circuits"] = [data["circuits"][i % len(data["circuits"])] for i in range(count)]
        data["fabric"]["ports"] = 4096  # a node may end this many: the copies reach the validator
        path = tmp_path / f"c{count}.json"
        path.write_text(json.dumps(data))
        proc, cpu = _run("validate", str(path))
        assert proc.returncode == status and "Traceback" not in proc.stderr, proc.stderr[-2000:]
        assert cpu < 20, cpu
    assert proc.stderr.strip() == f"{path}: circuits: {MAX_CIRCUITS + 1} entries, the limit is {MAX_CIRCUITS}"
