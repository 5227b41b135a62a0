"""Simlette's fast paths against the straightforward ones, bit for bit, on small cases.

The reference is the engine with every look-ahead off (``SimOptions(lookahead=False)``:
one decision per event, accelerator ports deciding in events, no final drain, every
rail simulated) and, for direct networks, the runner fed message objects one at a time.
The fast paths are: accelerator ports deciding as pieces arrive when no credits are
counted, the longer look-ahead and the final drain of one-level switch queues, rails
in lockstep (only rail 0 simulated) and the direct runner's ``Network.land``.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from ocsplan.cayley import Topology, expand
from ocsplan.plan import GeneratorPlan, Plan
from ocsplan.realization.fabrics import FabricSpec, load_fabric
from ocsplan.schedules import SCHEDULES
from ocsplan.simlette import DL_FLIT, SimOptions, network_factory, program_workload, simulate_program
from ocsplan.simlette.circuitmap import circuits_for_generators, hybrid_uplinks
from ocsplan.simlette.circuits_net import CircuitNetwork
from ocsplan.simlette.engine import Engine, Message
from ocsplan.simlette.report import DemandResult, analytical
from ocsplan.simlette.runner import Runner

from .conftest import ROOT

FABRICS = ROOT / "simulate" / "fabrics"


def _fabric(name: str, accelerators: int, ports: int) -> FabricSpec:
    return replace(load_fabric(FABRICS / f"{name}.toml"), accelerators=accelerators, ports=ports)


def _figures(r: DemandResult) -> tuple[object, ...]:
    busiest = r.busiest
    assert busiest is not None
    return (r.simulated_s, r.acked_s, r.analytical_s, r.flits, r.credit_stall_s, r.credit_stall_total_s,
            busiest.bytes, busiest.busy_s, busiest.stall_s)


@pytest.mark.parametrize("mode", ["message", "flit"])
@pytest.mark.parametrize("schedule", ["one-shot", "rs-ag", "recursive-doubling"])
@pytest.mark.parametrize(
    ("ports", "payload"),
    [
        (8, 40 * 1024),  # 64-flit messages over 8 ports: rails in lockstep for one-shot
        (3, 40 * 1024),  # uneven spray: every rail simulated
        (4, 5000),  # 8-flit messages, rs-ag's quarters of 2 flits
    ],
)
@pytest.mark.parametrize(("order", "barrier"), [("program", False), ("rank", False), ("program", True)])
def test_switched_fast_paths_match_reference(
    mode: str, schedule: str, ports: int, payload: int, order: str, barrier: bool
) -> None:
    spec = _fabric("eps-single", 16, ports)
    program = SCHEDULES[schedule].build(Topology.from_profile((4,)), payload)
    options = SimOptions(mode=mode, order=order, barrier=barrier)
    fast = simulate_program(program, spec, options, ports=ports)
    slow = simulate_program(program, spec, replace(options, lookahead=False), ports=ports)
    assert _figures(fast) == _figures(slow)
    assert fast.events < slow.events


def test_lockstep_rails_only_when_every_message_divides() -> None:
    # 40 KiB = 64 DL flits: a multiple of 8 ports, not of 3 (hand check of the condition)
    assert (40 * 1024 // DL_FLIT) % 8 == 0 and (40 * 1024 // DL_FLIT) % 3 != 0
    program = SCHEDULES["one-shot"].build(Topology.from_profile((3,)), 40 * 1024)
    for ports, rails in ((8, 1), (3, 3)):
        spec = _fabric("eps-single", 8, ports)
        factory = network_factory(spec, SimOptions(), ports=ports)
        runner = Runner(program_workload(program, (0, 1, 2), 8), Engine(DL_FLIT / spec.link, False), factory)
        assert runner.net.rails == rails  # type: ignore[attr-defined]


class _MessageRunner(Runner):
    """The runner as it was: Message objects through ``send``, landings via the inbox."""

    def _begin(self, x: int) -> None:
        k = self.phase[x]
        for i, s in enumerate(self.w.sends[x][k]):
            self.net.send(Message(x, s.dst, s.gen, k, s.nbytes, s.flits, i), self.ready[x])


@pytest.mark.parametrize("schedule", ["one-shot", "recursive-doubling", "rs-ag"])
@pytest.mark.parametrize("multiplicity", [1, 3])
@pytest.mark.parametrize("barrier", [False, True])
def test_direct_runner_matches_message_objects(schedule: str, multiplicity: int, barrier: bool) -> None:
    # OCS circuits into unlimited buffers: the direct runner (Network.land, no message
    # objects) against the same network fed Message objects through send(), each delivered
    # as it lands (the runner told it is not direct).
    spec = _fabric("ocs-single", 16, 64)
    program = SCHEDULES[schedule].build(Topology.from_profile((4,)), 3000)
    gens = sorted({t.gen for phase in program.phases for t in phase})
    cmap = circuits_for_generators([(g, multiplicity, 0) for g in gens], 16, spec)
    factory = network_factory(spec, SimOptions(), ports=64, circuits=cmap)
    workload = program_workload(program, (0, 1, 2, 3), 16)
    outcomes = []
    for kind in (Runner, _MessageRunner):
        eng = Engine(DL_FLIT / spec.link, False)
        runner = kind(workload, eng, factory, barrier)
        assert isinstance(runner.net, CircuitNetwork) and runner.net.direct
        done = runner.run()
        ports = [(p.name, p.busy, p.flits) for p in runner.net.port_list()]
        outcomes.append((done, runner.net.acked, dict(runner.finish), ports))
    assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize("schedule", ["one-shot", "rs-ag", "recursive-doubling"])
@pytest.mark.parametrize("ports", [1, 3, 8])
def test_phase_cost_matches_generic_analytical(schedule: str, ports: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # Eq. 1 on the fabric's paths: one level's phase_cost shortcut against the generic
    # loop over latency() and resources() (phase_cost off), bit for bit.
    spec = _fabric("eps-single", 16, ports)
    program = SCHEDULES[schedule].build(Topology.from_profile((4,)), 5000)
    workload = program_workload(program, (0, 1, 2, 3), 16)
    factory = network_factory(spec, SimOptions(), ports=ports)
    net = factory(Engine(DL_FLIT / spec.link, False), lambda _m: None)
    assert all(net.phase_cost(workload, k) is not None for k in range(workload.phases))
    fast = analytical(workload, net)
    monkeypatch.setattr(type(net), "phase_cost", lambda self, w, k: None)
    assert analytical(workload, net) == fast
    assert fast > 0


@pytest.mark.parametrize("fabric", ["nvl576-all-eps", "nvl576-hybrid"])
@pytest.mark.parametrize("schedule", ["one-shot", "rs-ag", "bruck"])
def test_two_level_phase_cost_matches_generic_analytical(fabric: str, schedule: str,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # the same on two levels: ranks in one rack and in others (a spine's up- and down-links,
    # or the hybrid's OCS hops, one and two of them)
    spec = load_fabric(FABRICS / f"{fabric}.toml")
    bits = (8, 6, 5, 1)
    program = SCHEDULES[schedule].build(Topology.from_profile((len(bits),)), 5000)
    workload = program_workload(program, bits, 512)
    routes = None
    if fabric == "nvl576-hybrid":
        masks = sorted({expand(g, bits) for g in range(1, 1 << len(bits))})
        plan = Plan("t", "native", "native", 512, spec.ports, 0, 1e-6, spec.link,
                    tuple(GeneratorPlan(m, 1, "fold") for m in masks), (), 0.0)
        routes = hybrid_uplinks(plan, spec)
    factory = network_factory(spec, SimOptions(), ports=spec.ports, routes=routes)
    net = factory(Engine(DL_FLIT / spec.link, False), lambda _m: None)
    assert all(net.phase_cost(workload, k) is not None for k in range(workload.phases))
    fast = analytical(workload, net)
    monkeypatch.setattr(type(net), "phase_cost", lambda self, w, k: None)
    assert analytical(workload, net) == fast
    assert fast > 0
