"""decode.simulated: one memo keyed by the traffic, and the distinct runs made in worker processes."""

from __future__ import annotations

import itertools
import tomllib
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

import pytest

from ocsplan.decode import simulated as sim
from ocsplan.decode.ranking import best_step
from ocsplan.decode.step import decode_step
from ocsplan.executor import Executor, Failure
from ocsplan.realization.fabrics import load_fabric, parse_fabric
from ocsplan.schedules import SCHEDULES
from ocsplan.simlette import SimOptions, network_factory, simulate_workload
from ocsplan.simlette.traffic import Workload, program_workload
from ocsplan.workload import Split, load_accelerator, load_model
from ocsplan.workload.step import step_to_dict

from .conftest import EPS_TINY, ROOT

T = TypeVar("T")
R = TypeVar("R")
RX00 = load_accelerator("rx00")
EPS = load_fabric(ROOT / "simulate" / "fabrics" / "nvl576-all-eps.toml")
TINY = parse_fabric(tomllib.loads(EPS_TINY), "eps-tiny")

# the native schedules of decode.pricing.NATIVE as (schedule, layout)
NATIVE = [("one-shot", "flat"), ("rs-ag", "flat"), ("rs-ag", "cube"), ("layered", "flat"), ("bruck", "flat")]


def _traffic(workload: Workload) -> object:
    """Everything a run reads of a workload, written out (the test's own reading, not the digest's)."""
    return (workload.phases, workload.nodes,
            tuple((x, tuple(tuple((s.dst, s.gen, s.nbytes) for s in phase) for phase in workload.sends[x]))
                  for x in workload.nodes),
            tuple(sorted(workload.expect.items())))


@pytest.mark.parametrize("bits", [2, 3, 4])
def test_same_key_exactly_when_the_same_traffic(bits: int) -> None:
    # every pair of native schedules at payloads that make some of them send the same bytes
    # (layered at M x P sends what one-shot sends at P): equal keys iff equal workloads
    size = 1 << bits
    axis = tuple(range(bits - 1, -1, -1))
    runs = [sim.NativeRun(s, layout, axis, payload, size, EPS, None, "message")
            for s, layout in NATIVE for payload in (4096, 4096 * size, 100)]
    workloads = {}
    for run in runs:
        topology = sim.native_topology(run.layout, bits)
        workloads[run] = _traffic(program_workload(SCHEDULES[run.schedule].build(topology, run.payload), axis, size))
    pairs = 0
    for a, b in itertools.combinations(runs, 2):
        same = workloads[a] == workloads[b]
        assert (a.key() == b.key()) == same, (a, b)
        pairs += same
    assert pairs >= 2  # one-shot = layered at M x P, and at 100 B (a flit each) more


def test_messages_counts_every_groups_sends() -> None:
    for (schedule, layout), bits, world in itertools.product(NATIVE, (2, 3), (8, 16)):
        axis = tuple(range(bits))
        run = sim.NativeRun(schedule, layout, axis, 4096, world, EPS, None, "message")
        program = SCHEDULES[schedule].build(sim.native_topology(layout, bits), 4096)
        assert run.messages == program_workload(program, axis, world).messages


def test_a_run_is_a_direct_simulation() -> None:
    run = sim.NativeRun("rs-ag", "flat", (3, 2, 1, 0), 8192, 16, TINY, None, "packet")
    factory = network_factory(TINY, SimOptions(spray="packet").check(), ports=TINY.ports)
    program = SCHEDULES["rs-ag"].build(sim.native_topology("flat", 4), 8192)
    direct = simulate_workload(program_workload(program, (3, 2, 1, 0), 16), factory, mode="message",
                               rate=TINY.link).simulated_s
    assert sim.simulate_native(run) == direct


def test_planned_runs_records_and_makes_nothing() -> None:
    run = sim.NativeRun("bruck", "flat", (1, 0), 3000, 16, TINY, None, "flit-2")
    sim._SIMULATED.pop(run.key(), None)
    with sim.planned_runs() as runs:
        assert sim.simulated(run) == 0.0
    assert runs == [run] and run.key() not in sim._SIMULATED
    assert sim.simulated(run) == sim.simulate_native(run) > 0


POOLS: list[int] = []  # the worker processes of each pool prefetch started, in this process


class _Counted(Executor):
    def run(self, fn: Callable[[T], R], tasks: Sequence[T], done: Callable[[int, R | Failure], None]) -> None:
        POOLS.append(self.jobs)
        super().run(fn, tasks, done)


@pytest.fixture
def cold(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """An empty memo (restored after), worker processes whatever the work; a pool of two is started."""
    monkeypatch.setattr(sim, "_SIMULATED", {})
    monkeypatch.setattr(sim, "PARALLEL_MESSAGES", 0)
    monkeypatch.setattr(sim, "Executor", _Counted)
    POOLS.clear()
    yield
    assert POOLS and set(POOLS) == {2}


@pytest.mark.usefixtures("cold")
def test_prefetch_in_workers_gives_the_same_floats() -> None:
    runs = [sim.NativeRun(s, layout, (3, 2, 1, 0), payload, 16, TINY, None, "message")
            for (s, layout), payload in itertools.product(NATIVE, (1000, 20000))]
    assert sim.prefetch([*runs, *runs], jobs=2) == len({r.key() for r in runs})
    made = dict(sim._SIMULATED)
    for run in runs:
        assert made[run.key()] == sim.simulate_native(run)
    assert sim.prefetch(runs, jobs=2) == 0  # all in the memo


@pytest.mark.usefixtures("cold")
def test_decode_with_workers_is_the_same_step() -> None:
    m = load_model("gpt-oss-120b")
    one = decode_step(m, RX00, TINY, 16, Split(2, 8, 4, 4), 2, 32768, network="simlette", spray="packet")
    sim._SIMULATED.clear()
    two = decode_step(m, RX00, TINY, 16, Split(2, 8, 4, 4), 2, 32768, network="simlette", spray="packet", jobs=2)
    assert step_to_dict(two) == step_to_dict(one)


@pytest.mark.usefixtures("cold")
def test_split_auto_with_workers_is_the_same_choice() -> None:
    m = load_model("gpt-oss-120b")
    one = best_step(m, RX00, TINY, 16, 2, 32768, network="simlette")
    sim._SIMULATED.clear()
    two = best_step(m, RX00, TINY, 16, 2, 32768, network="simlette", jobs=2)
    assert step_to_dict(two.best) == step_to_dict(one.best)
    assert [step_to_dict(s) for s in two.ranked] == [step_to_dict(s) for s in one.ranked]
