"""Simlette on a degraded fabric: the plan's demands run as the faults analysis says they run.

For circuit and device faults (``simulate --fail``) every demand gets the choice
:func:`ocsplan.deploy.faults.choices` makes, and Simlette runs it:

- ``intact`` and ``parallel``: the plan's own program;
- ``relay``: the program with each transfer of a dead pair x <-> y sent x -> z in its
  phase and z -> y in a phase added right after it, in the cosets that lost the pair
  (the rewrite :func:`ocsplan.deploy.faults.relay_cost` prices);
- ``fallback``: the fallback schedule built on the surviving Cayley graph, every coset;
- ``stopped``: not run, named in the notes.

In ``message`` and ``flit`` mode the circuits are the realization without the failed
ones, so a pair that kept fewer parallel circuits is slower on its own. ``ideal`` mode
makes the analysis' assumptions executable: every logical edge gets the demand's
degraded p (the fewest circuits left on what it drives), so it reproduces the analytical
degraded T where phases are balanced (the tests hold it to that on every single circuit
fault of two small fabrics).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from ..cayley import Topology, expand, mask_of
from ..errors import InstanceError
from ..plan import Plan
from ..realization.circuits import Circuit, Circuits, NodePort
from ..realization.fabrics import FabricSpec
from ..realization.technologies import OCS, fabric_technology, technology
from ..schedules import program as build
from ..simlette import SimOptions
from ..simlette.circuitmap import check_fit
from ..simlette.report import SimReport
from ..simlette.runs import simulate_workload
from ..simlette.setup import Setup, prepare
from ..simlette.technology import NETWORK_PIECES, Pieces, network_factory
from ..simlette.traffic import Send, Workload, program_workload
from .faults import Choice, choices, failed_circuits

__all__ = ["Surviving", "relayed_workload", "simulate_faults", "surviving"]


@dataclass(frozen=True)
class Surviving:
    """A realization without its failed circuits (what Simlette reads of one: nodes and circuits)."""

    nodes: tuple[tuple[NodePort, ...], ...]
    circuits: tuple[Circuit, ...]


def surviving(c: Circuits, faults: Sequence[str], option: str = "--fail") -> Surviving:
    """The circuits file with every circuit the faults take down removed, and its ports freed."""
    gone: set[int] = set()
    for fault in faults:
        gone.update(failed_circuits(c, fault, option)[0])
    ends = {(x.a, x.a_port) for i, x in enumerate(c.circuits) if i in gone}
    ends |= {(x.b, x.b_port) for i, x in enumerate(c.circuits) if i in gone}
    nodes = tuple(tuple(e for e in ports if (rank, e.port) not in ends) for rank, ports in enumerate(c.nodes))
    return Surviving(nodes, tuple(x for i, x in enumerate(c.circuits) if i not in gone))


def relayed_workload(healthy: Workload, bits: Sequence[int], order: str,
                     relays: Mapping[int, frozenset[tuple[int, int, int]]]) -> Workload:
    """``healthy`` (a program on every coset of the axis ``bits``) with each relay (x, y, z) of a
    coset base (local labels) rewritten: x -> y becomes x -> z in its phase and z -> y in a
    phase added after it (y -> x likewise). Cosets without relays leave the added phases
    empty, which costs them nothing (each node waits only for what is addressed to it)."""
    block = mask_of(bits)

    def glob(base: int, local: int) -> int:
        return base | expand(local, bits)

    # src -> {original dst: relay node}, global labels
    via: dict[int, dict[int, int]] = {}
    for base, triples in relays.items():
        if base & block:
            raise ValueError(f"coset base {base} has bits on the axis")
        for x, y, z in triples:
            for one, other in ((x, y), (y, x)):
                via.setdefault(glob(base, one), {})[glob(base, other)] = glob(base, z)
    first: dict[int, list[list[Send]]] = {x: [list(p) for p in healthy.sends[x]] for x in healthy.nodes}
    second: dict[int, list[list[Send]]] = {x: [[] for _ in range(healthy.phases)] for x in healthy.nodes}
    added = [False] * healthy.phases
    for src, hops in via.items():
        for k, msgs in enumerate(first[src]):
            for j, send in enumerate(msgs):
                hop = hops.get(send.dst)
                if hop is None:
                    continue
                msgs[j] = send._replace(dst=hop, gen=src ^ hop)
                second[hop][k].append(send._replace(gen=hop ^ send.dst))
                added[k] = True
    slots: list[tuple[int, bool]] = []  # (healthy phase, second hops?)
    for k in range(healthy.phases):
        slots.append((k, False))
        if added[k]:
            slots.append((k, True))
    sends: dict[int, tuple[tuple[Send, ...], ...]] = {}
    expect: dict[int, list[int]] = {x: [0] * len(slots) for x in healthy.nodes}
    for x in healthy.nodes:
        lists = []
        for j, (k, hop2) in enumerate(slots):
            msgs = second[x][k] if hop2 else first[x][k]
            if order == "rank":
                msgs = sorted(msgs, key=lambda m: m.dst)
            lists.append(tuple(msgs))
            for send in msgs:
                expect[send.dst][j] += 1
        sends[x] = tuple(lists)
    return replace(healthy, phases=len(slots), sends=sends, expect={x: tuple(v) for x, v in expect.items()})


def _workload(setup: Setup, plan: Plan, m: int, i: int, k: int, choice: Choice, order: str) -> Workload:
    axis = plan.meshes[m].axes[i]
    d = axis.demands[k]
    how, schedule = choice.outcome.how, choice.outcome.schedule
    if how == "fallback":
        assert schedule is not None and choice.alive is not None
        program = build(schedule, Topology(len(axis.bits), choice.alive), d.payload_bytes)
        label = f"{plan.meshes[m].name}[{i}].{k} {d.collective}"
        return program_workload(program, axis.bits, plan.world, order, label)
    healthy = setup.workload(m, i, k, order)
    if how == "relay":
        return relayed_workload(healthy, axis.bits, order, choice.relays)
    return healthy


def simulate_faults(
    plan: Plan,
    spec: FabricSpec,
    options: SimOptions,
    circuits: Circuits,
    faults: Sequence[str],
    *,
    only: Callable[[int, int, int], bool] | None = None,
    option: str = "--fail",
) -> SimReport:
    """Every selected demand of ``plan`` on the realization ``circuits`` with ``faults`` (circuit:ID,
    device:ID) failed together, each run the way the faults analysis chose."""
    options.check()
    if not fabric_technology(spec).circuits:
        raise InstanceError(option, "", f"faults are simulated on an all-OCS fabric ({spec.name} is "
                                        f"{technology(spec)})")
    picked = choices(circuits, plan, faults, option)
    setup = prepare(plan, spec, "contiguous", surviving(circuits, faults, option))
    pieces = Pieces()
    if options.on_fabric:
        check_fit(plan, spec)
        pieces = NETWORK_PIECES[OCS].pieces(setup)
    healthy_mult = {g.mask: g.multiplicity for g in plan.generators}
    rate = spec.link if options.on_fabric else plan.link_Bps
    results = []
    notes = []
    at = iter(picked)
    for m, mesh in enumerate(plan.meshes):
        for i, axis in enumerate(mesh.axes):
            for k, d in enumerate(axis.demands):
                choice = next(at)
                o = choice.outcome
                if only is not None and not only(m, i, k):
                    continue
                where = f"{mesh.name}[{i}].{k} {d.collective}"
                if o.how == "stopped" or o.p is None or o.schedule is None:
                    notes.append(f"{where}: stopped by the fault (not simulated)")
                    continue
                if o.how != "intact":
                    notes.append(f"{where}: {o.how}" + (f" on {o.schedule}" if o.schedule != d.schedule else "")
                                 + f", p = {o.p}")
                mult = healthy_mult if o.how == "intact" else dict.fromkeys(healthy_mult, o.p)
                factory = network_factory(spec, options, ports=plan.ports, circuits=pieces.circuits,
                                          ideal=(plan.latency_s, plan.link_Bps, mult), setup=setup)
                result = simulate_workload(
                    _workload(setup, plan, m, i, k, choice, options.order), factory, mode=options.mode,
                    rate=rate, multiplicity=o.p, payload=d.payload_bytes, collective=d.collective,
                    closed_form=o.T, lookahead=options.lookahead, barrier=options.barrier)
                results.append(replace(result, mesh=mesh.name, axis=i, demand=k, schedule=o.schedule, how=o.how))
    return SimReport(
        plan=plan.instance, fabric=spec.name, technology="ocs", mode=options.mode, buffer_bytes=options.buffer,
        switch_buffer_bytes=options.switch_buffer, order=options.order,
        circuits=pieces.circuits.source if pieces.circuits is not None else "",
        demands=tuple(results), notes=tuple(notes), faults=tuple(faults))
