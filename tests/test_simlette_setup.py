"""The simulation set-up cache and the sweep on the executor: reuse changes no result."""

from __future__ import annotations

import gc
import importlib
import subprocess
import sys
from dataclasses import replace

import pytest

import ocsplan.simlette.setup as simcache
from ocsplan.executor import Executor
from ocsplan.instance import load_instance
from ocsplan.plan import Plan
from ocsplan.planning.heuristic import plan_heuristic
from ocsplan.realization.fabrics import FabricSpec, load_fabric
from ocsplan.simlette import SimOptions, dumps_report, simulate_plan
from ocsplan.simlette.runner import paused_gc
from ocsplan.simlette.sweep import sweep, sweep_csv

from .conftest import ROOT, instance_path

FABRICS = ROOT / "simulate" / "fabrics"
realize_module = importlib.import_module("ocsplan.realization.realize")


@pytest.fixture(scope="module")
def plan() -> Plan:
    return plan_heuristic(load_instance(instance_path("paper-multimesh-n256")))


@pytest.fixture(scope="module")
def ocs() -> FabricSpec:
    return load_fabric(FABRICS / "ocs-single.toml")


def _count_realize(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    real = realize_module.realize

    def counting(*args: object, **kwargs: object) -> object:
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(realize_module, "realize", counting)
    return calls


def test_one_realization_serves_every_mode_and_demand(
    plan: Plan, ocs: FabricSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    simcache.clear_cache()
    calls = _count_realize(monkeypatch)
    options = [SimOptions(mode="message"), SimOptions(mode="message", buffer=1280), SimOptions(mode="ideal")]
    cached = [dumps_report(simulate_plan(plan, ocs, o), timing=False) for o in options]
    assert calls[0] == 1
    # the same plan content in another object, and the same fabric: still one set-up
    again = replace(plan)
    assert simcache.prepare(again, ocs) is simcache.prepare(plan, ocs)
    assert simcache.prepare(plan, ocs, "bits") is not simcache.prepare(plan, ocs)
    # every report equals one computed with an empty cache
    fresh = []
    for o in options:
        simcache.clear_cache()
        fresh.append(dumps_report(simulate_plan(plan, ocs, o), timing=False))
    assert cached == fresh


def test_workloads_are_reused_across_modes(plan: Plan, ocs: FabricSpec) -> None:
    simcache.clear_cache()
    simulate_plan(plan, ocs, SimOptions(mode="ideal"))
    setup = simcache.prepare(plan, ocs)
    demands = sum(len(axis.demands) for mesh in plan.meshes for axis in mesh.axes if not axis.ring)
    assert setup.hits == 0
    simulate_plan(plan, ocs, SimOptions(mode="message"))
    assert setup.hits == demands


def test_the_cache_is_bounded(ocs: FabricSpec, plan: Plan) -> None:
    simcache.clear_cache()
    made = [simcache.prepare(plan, replace(ocs, name=f"copy {i}")) for i in range(simcache.CACHE_SIZE + 2)]
    assert len(simcache._CACHE) == simcache.CACHE_SIZE
    assert simcache.prepare(plan, replace(ocs, name="copy 0")) is not made[0]  # dropped, made again


@pytest.mark.parametrize("fabric", ["ocs-single", "eps-single"])
def test_sweep_on_processes_gives_the_serial_rows(plan: Plan, fabric: str) -> None:
    spec = load_fabric(FABRICS / f"{fabric}.toml")
    options = SimOptions(mode="message")

    def pick(m: int, i: int, k: int) -> bool:
        return (m, i) == (1, 0)

    serial = sweep(plan, spec, options, [1024], "all", only=pick)
    seen: list[str] = []
    parallel = sweep(plan, spec, options, [1024], "all", only=pick, executor=Executor(jobs=2),
                     on_row=lambda row: seen.append(row.schedule))
    assert sweep_csv(parallel) == sweep_csv(serial)
    assert sorted(seen) == sorted(r.schedule for r in serial)


_PAUSE_PROBE = """
import gc, weakref
from ocsplan.gcpause import paused_gc

class Node:
    def __init__(self):
        self.me = self  # a reference cycle: only the cyclic collector frees it

gc.collect()
assert gc.isenabled()
with paused_gc(keep={keep}):
    assert not gc.isenabled()
    built = [[i] for i in range(20_000)]  # tracked objects made during the pause
    node = Node()
    ref = weakref.ref(node)
assert gc.isenabled() and gc.get_freeze_count() == 0  # nothing left out of collection
# kept: aged into the oldest generation at once (else a young collection moves them up one)
assert any(o is built for o in gc.get_objects(generation=2)) is {keep}
del node
gc.collect()
assert ref() is None  # the full collection still frees a cycle made during the pause
print("ok")
"""


@pytest.mark.parametrize("keep", [False, True])
def test_paused_gc_pauses_and_still_collects_what_it_kept(keep: bool) -> None:
    """In a fresh interpreter: the collector's generations are the process's, and a test worker's
    (millions of objects, the suite's thresholds) made the full collections cost seconds."""
    result = subprocess.run([sys.executable, "-c", _PAUSE_PROBE.format(keep=keep)], capture_output=True,
                            text=True, cwd=ROOT, check=False)
    assert (result.returncode, result.stdout, result.stderr) == (0, "ok\n", "")


def test_paused_gc_nested_leaves_the_collector_to_the_outer_pause() -> None:
    with paused_gc(keep=True):
        with paused_gc():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()
