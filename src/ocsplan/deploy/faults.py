"""What one fault costs a realized plan: every single circuit, OCS device or accelerator fault.

A workload-static fabric cannot route around a dead circuit, so for every fault of
a kind and every demand of the plan this module says whether the demand still runs
on the surviving circuits, how, and at what cost (paper Eq. 1, :func:`ocsplan.cost.phase_time`):

- ``intact``: no circuit the demand drives failed;
- ``parallel``: each failed pair keeps a parallel circuit; p drops to the fewest left;
- ``relay``: a pair lost its last circuit, and a common neighbour z on the same axis
  (circuits x-z and z-y alive) carries its transfers in two hops: the schedule's program
  with each relayed transfer split (first hop in its phase, second in an added phase)
  gives the degraded h and v (:func:`ocsplan.schedules.ideal_cost`); p is the fewest
  circuits left on any pair the demand drives;
- ``fallback``: the axis loses the dead generator entirely (every coset runs the same
  schedule) and the cheapest catalogue schedule valid on the remaining Cayley graph
  (the planner's own validity predicates) runs instead;
- ``stopped``: nothing of the above (or the fault removed an accelerator the demand runs on).

When relay and fallback are both possible the cheaper one is reported.

A stopped demand is reported apart, never priced: a fault's ``objective`` is sum w*T over
the demands that still run and its ``stopped`` list names the rest, so the objective of a
fault that stops something is partial and must not be compared with the healthy one. The
summary ranks every stopping fault above every fault that stops nothing (the more demands
stopped, the worse), takes the median over the faults that stop nothing, and names the
worst of those apart (``worst_running``).
Shared-host (cube and fold) plans only: ring and stacked plans are refused with the reason.
"""

from __future__ import annotations

import random
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

from ..cayley import Topology, axis_generators, compress, expand, mask_of
from ..cost import phase_time
from ..errors import InstanceError, PlanError
from ..plan import Plan, construction, demand_topology
from ..realization.circuits import Circuits, parse_label, plan_mismatch
from ..realization.plan_check import restated
from ..schedules import AUTO_EXCLUDED, LinkLoads, closed_form, link_loads, loads_cost, schedules_for
from ..schedules import program as build

__all__ = [
    "KINDS",
    "MAX_FAULTS",
    "SCHEMA",
    "Choice",
    "DemandOutcome",
    "FaultOutcome",
    "FaultReport",
    "FaultSummary",
    "analyse_faults",
    "check_match",
    "choices",
    "failed_circuits",
    "fault_ids",
    "rank_key",
    "ranked",
    "relay_cost",
    "report_from_dict",
    "report_to_dict",
    "summarize",
]

SCHEMA = "ocsplan.faults/1"
KINDS = ("circuit", "device", "accelerator")
MAX_FAULTS = 20_000
"""More faults of a kind than this need ``--sample N`` (the megatron plan has 8,960 circuits)."""


@dataclass(frozen=True)
class DemandOutcome:
    """One demand under one fault; h, v, p, T are None when it stopped."""

    mesh: str
    axis: int
    demand: int
    how: str  # intact | parallel | relay | fallback | stopped
    schedule: str | None
    h: int | None
    v: float | None
    p: int | None
    T: float | None

    @property
    def key(self) -> str:
        return f"{self.mesh}.{self.axis}.{self.demand}"


@dataclass(frozen=True)
class FaultOutcome:
    id: str
    objective: float  # sum w*T over the demands that still run (partial if any stopped)
    stopped: tuple[str, ...]
    demands: tuple[DemandOutcome, ...]


@dataclass(frozen=True)
class FaultSummary:
    count: int
    worst: FaultOutcome | None  # a stopping fault whenever there is one
    worst_running: FaultOutcome | None  # the largest objective among the faults that stop nothing
    median: float | None  # over the faults that stop nothing
    stopped: int  # faults that stop at least one demand


@dataclass(frozen=True)
class FaultReport:
    kind: str
    healthy: float
    sampled: bool
    faults: tuple[FaultOutcome, ...]
    summary: FaultSummary


# -- the fault catalogue ---------------------------------------------------------------


def fault_ids(c: Circuits, kind: str) -> list[str]:
    """Every single fault of a kind: circuits by index, devices by id, serving accelerators placed."""
    if kind == "circuit":
        return [f"circuit:{i}" for i in range(len(c.circuits))]
    if kind == "device":
        return [f"device:{d.id}" for d in c.devices if d.cross_connects]
    if kind == "accelerator":
        return [f"accelerator:{a}" for a in sorted(c.placement.accelerator)]
    raise InstanceError("--kind", "", f"expected one of {', '.join(KINDS)}, got {kind!r}")


def failed_circuits(c: Circuits, fault: str, option: str = "--fail") -> tuple[tuple[int, ...], frozenset[int]]:
    """(indices of the circuits a fault takes down, ranks it removes); InstanceError on a bad id."""
    kind, _, name = fault.partition(":")
    if kind == "circuit":
        if not name.isdigit() or int(name) >= len(c.circuits):
            raise InstanceError(option, "", f"{fault}: circuit ids are 0..{len(c.circuits) - 1}")
        return (int(name),), frozenset()
    if kind == "device":
        if name not in {d.id for d in c.devices}:
            raise InstanceError(option, "", f"{fault}: no OCS device {name!r} in the circuits file")
        return tuple(i for i, x in enumerate(c.circuits) if any(h.device == name for h in x.path)), frozenset()
    if kind == "accelerator":
        if not name.isdigit() or int(name) >= c.fabric.accelerators:
            raise InstanceError(option, "", f"{fault}: accelerator ids are 0..{c.fabric.accelerators - 1}")
        ranks = frozenset(x for x, a in enumerate(c.placement.accelerator) if a == int(name))
        return tuple(i for i, x in enumerate(c.circuits) if x.a in ranks or x.b in ranks), ranks
    raise InstanceError(option, "", f"{fault}: expected circuit:ID, device:ID or accelerator:ID")


def check_match(c: Circuits, plan: Plan, source: str = "--plan", circuits: str = "the circuits file") -> None:
    """The circuits realize this plan (:func:`plan_mismatch`: instance, world, objective, generators;
    then :func:`~ocsplan.realization.plan_check.restated`, the check ``validate --plan`` makes of the
    fields the file restates) and the plan is one the analysis handles; PlanError naming the option,
    the circuits file and the field."""
    differs = plan_mismatch(c.plan, plan)
    if differs:
        raise PlanError(f"{source}: {circuits} does not belong to this plan: {differs}")
    if not construction(plan).faults or not all(g.host for g in plan.generators):
        raise PlanError(f"{source}: faults handles shared-host cube/fold plans only (ring or stacked plan given)")
    wrong = restated(c, plan)
    if wrong:
        raise PlanError(f"{source}: {circuits} does not belong to this plan: {wrong[0]}")


# -- one demand's context ---------------------------------------------------------------


@dataclass(frozen=True)
class _Demand:
    mesh: str
    axis: int
    demand: int
    collective: str
    schedule: str
    payload: int
    weight: float
    block: tuple[int, ...]
    topology: Topology
    uses: frozenset[int]  # global masks the schedule drives
    gens: tuple[int, ...]  # global masks of the axis's host generators
    p: int
    h: int
    v: float
    T: float


def _demands(plan: Plan) -> list[_Demand]:
    host = [g.mask for g in plan.generators]
    out = []
    for mesh in plan.meshes:
        for i, axis in enumerate(mesh.axes):
            for k, d in enumerate(axis.demands):
                out.append(_Demand(mesh.name, i, k, d.collective, d.schedule, d.payload_bytes, d.weight,
                                   axis.bits, demand_topology(d.groups, axis.bits, d.fold), frozenset(d.uses),
                                   tuple(axis_generators(host, axis.bits)), d.multiplicity, d.phases,
                                   d.volume_bytes, d.time_s))
    return out


class _Fabric:
    """The circuits as pairs: how many parallel circuits join x and x XOR g."""

    def __init__(self, c: Circuits) -> None:
        self.c = c
        self.mask = [parse_label(x.generator)[0] for x in c.circuits]
        self.pair = [(min(x.a, x.b), max(x.a, x.b)) for x in c.circuits]
        self.count: Counter[tuple[int, int]] = Counter(self.pair)
        self.multiplicity = {parse_label(g.label)[0]: g.multiplicity for g in c.generators}


def _surviving(fab: _Fabric, lost: Mapping[tuple[int, int], int], x: int, y: int) -> int:
    key = (min(x, y), max(x, y))
    return fab.count[key] - lost.get(key, 0)


@lru_cache(maxsize=4096)
def _fallbacks(
    collective: str, bits: int, gens: frozenset[int]
) -> tuple[tuple[str, int, Fraction, frozenset[int]], ...]:
    """(schedule, h, v factor, local generators driven) of every catalogue schedule valid on Cay(gens)."""
    topo = Topology(bits, gens)
    if not topo.connected:
        return ()
    out = []
    for s in schedules_for(collective):
        if s.name in AUTO_EXCLUDED or not s.valid(topo):
            continue
        form = closed_form(s.name, topo)
        out.append((s.name, form.h, form.v_factor, frozenset(s.uses(topo))))
    return tuple(out)


@dataclass(frozen=True, eq=False)
class _Loads:
    """A demand's program as its :func:`~ocsplan.schedules.link_loads`: what relaying a pair changes,
    priced incrementally.

    ``load[k][(src, gen)]`` = bytes src sends on its generator ``gen`` link in phase k (local
    labels); ``top[k]`` the heaviest entries, so a phase's new maximum needs no full scan;
    (h, v) their :func:`~ocsplan.schedules.loads_cost`."""

    load: LinkLoads
    top: tuple[tuple[tuple[Fraction, tuple[int, int]], ...], ...]
    h: int
    v: Fraction


_TOP = 16


@lru_cache(maxsize=256)
def _loads(schedule: str, topology: Topology, payload: int) -> _Loads:
    loads = link_loads(build(schedule, topology, payload))
    tops = tuple(tuple(sorted(((b, k) for k, b in load.items()), key=lambda e: (-e[0], e[1]))[:_TOP])
                 for load in loads)
    cost = loads_cost(loads)
    return _Loads(loads, tops, cost.h, cost.v)


def _phase_max(prep: _Loads, k: int, changed: Mapping[tuple[int, int], Fraction]) -> Fraction:
    """Largest load of phase k once the ``changed`` links carry their new loads."""
    best = max(changed.values(), default=Fraction(0))
    for b, key in prep.top[k]:
        if key not in changed:
            return max(best, b)
    if len(prep.top[k]) == len(prep.load[k]):
        return best
    return max([best, *(b for key, b in prep.load[k].items() if key not in changed)])


@lru_cache(maxsize=65536)
def _relayed(prep: _Loads, relays: frozenset[tuple[int, int, int]]) -> tuple[int, Fraction]:
    """(h, v) of the program with the transfers x <-> y of each relay (x, y, z) sent via z.

    The first hop (x -> z) stays in its phase; the second (z -> y) runs in a phase added
    right after it, which is what ``ideal_cost`` of the rewritten program would count
    (the tests check this against the rewritten program)."""
    h, v = 0, Fraction(0)
    for k, load in enumerate(prep.load):
        changed: dict[tuple[int, int], Fraction] = {}
        second: dict[tuple[int, int], Fraction] = defaultdict(Fraction)
        for x, y, z in relays:
            for s, t in ((x, y), (y, x)):
                b = load.get((s, s ^ t))
                if not b:
                    continue
                changed[(s, s ^ t)] = changed.get((s, s ^ t), load[(s, s ^ t)]) - b
                changed[(s, s ^ z)] = changed.get((s, s ^ z), load.get((s, s ^ z), Fraction(0))) + b
                second[(z, z ^ t)] += b
        if load:
            h += 1
            v += _phase_max(prep, k, changed)
        if second:
            h += 1
            v += max(second.values())
    return h, v


def relay_cost(schedule: str, topology: Topology, payload: int,
               relays: Iterable[tuple[int, int, int]]) -> tuple[int, Fraction]:
    """(h, v) of a catalogue schedule with the transfers x <-> y of each relay (x, y, z), local
    labels, sent in two hops via z (the second in a phase added after the first)."""
    return _relayed(_loads(schedule, topology, payload), frozenset(relays))


@dataclass(frozen=True)
class Choice:
    """How one demand runs under a fault, with what Simlette needs to run it: the relays per
    coset (base -> (x, y, z) local triples) when relayed, the surviving generators (local masks
    of the axis) when on a fallback schedule."""

    outcome: DemandOutcome
    relays: Mapping[int, frozenset[tuple[int, int, int]]]
    alive: frozenset[int] | None


def _outcome(d: _Demand, fab: _Fabric, lost: Mapping[tuple[int, int], int], removed: frozenset[int],
             latency: float, rate: float) -> DemandOutcome:
    return _choose(d, fab, lost, removed, latency, rate).outcome


def _choose(d: _Demand, fab: _Fabric, lost: Mapping[tuple[int, int], int], removed: frozenset[int],
            latency: float, rate: float) -> Choice:
    def result(how: str, schedule: str | None, h: int | None = None, v: float | None = None,
               p: int | None = None, relays: Mapping[int, frozenset[tuple[int, int, int]]] | None = None,
               alive: frozenset[int] | None = None) -> Choice:
        t = None if h is None or v is None or p is None else phase_time(h, v, p, latency, rate)
        return Choice(DemandOutcome(d.mesh, d.axis, d.demand, how, schedule, h, v, p, t), relays or {}, alive)

    if removed:
        return result("stopped", None)
    block = mask_of(d.block)
    hit = [(pair, n) for pair, n in lost.items() if (pair[0] ^ pair[1]) in d.gens]
    if not any((a ^ b) in d.uses for (a, b), _ in hit):
        return result("intact", d.schedule, d.h, d.v, d.p)
    left = {pair: fab.count[pair] - n for pair, n in hit}
    driven = {pair: n for pair, n in left.items() if (pair[0] ^ pair[1]) in d.uses}
    if min(driven.values()) > 0:
        return result("parallel", d.schedule, d.h, d.v, min(d.p, *driven.values()))
    options: list[tuple[float, str, str, int, float, int]] = []
    relay = _relay(d, fab, lost, driven, block)
    cosets: Mapping[int, frozenset[tuple[int, int, int]]] = {}
    if relay is not None:
        h, v, p, cosets = relay
        options.append((phase_time(h, v, p, latency, rate), "relay", d.schedule, h, v, p))
    dead = {pair[0] ^ pair[1] for pair, n in left.items() if n == 0}
    alive = frozenset(compress(g, d.block) for g in d.gens if g not in dead)
    for name, h, factor, used in _fallbacks(d.collective, len(d.block), alive):
        masks = [expand(g, d.block) for g in used]
        worst = {m: max((n for pair, n in lost.items() if pair[0] ^ pair[1] == m), default=0) for m in masks}
        p = min([d.p, *(fab.multiplicity[m] - worst[m] for m in masks)])
        v = float(factor * Fraction(d.payload)) if d.payload else 0.0
        options.append((phase_time(h, v, p, latency, rate), "fallback", name, h, v, p))
    if not options:
        return result("stopped", None)
    _, how, schedule, h, v, p = min(options, key=lambda o: (o[0], o[1], o[2]))
    if how == "relay":
        return result(how, schedule, h, v, p, relays=cosets)
    return result(how, schedule, h, v, p, alive=alive)


def _relay(d: _Demand, fab: _Fabric, lost: Mapping[tuple[int, int], int],
           driven: Mapping[tuple[int, int], int], block: int
           ) -> tuple[int, float, int, dict[int, frozenset[tuple[int, int, int]]]] | None:
    """Degraded (h, v, p) with every dead driven pair relayed through a common axis neighbour,
    and the relays per coset base."""
    dead = sorted(pair for pair, n in driven.items() if n == 0)
    cosets: dict[int, set[tuple[int, int, int]]] = defaultdict(set)
    fewest = min([d.p, *(n for n in driven.values() if n > 0)])
    for x, y in dead:
        g = x ^ y
        best = None
        for a in d.gens:
            b = a ^ g
            if a == g or b not in d.gens:
                continue
            z = x ^ a
            here = min(_surviving(fab, lost, x, z), _surviving(fab, lost, z, y))
            if here > 0 and (best is None or here > best[0]):
                best = (here, a)
        if best is None:
            return None
        fewest = min(fewest, best[0])
        z = x ^ best[1]
        cosets[x & ~block].add((compress(x & block, d.block), compress(y & block, d.block),
                                compress(z & block, d.block)))
    prep = _loads(d.schedule, d.topology, d.payload)
    h, v = max((_relayed(prep, frozenset(relays)) for relays in cosets.values()), key=lambda hv: (hv[1], hv[0]))
    return (max(h, prep.h), float(max(v, prep.v)), fewest,
            {base: frozenset(relays) for base, relays in sorted(cosets.items())})


def choices(c: Circuits, plan: Plan, faults: Sequence[str], option: str = "--fail") -> list[Choice]:
    """Every demand of the plan under the faults together (circuit and device ids, as
    :func:`failed_circuits` reads them), in plan order: what ``simulate --fail`` runs."""
    check_match(c, plan)
    fab = _Fabric(c)
    lost: Counter[tuple[int, int]] = Counter()
    removed: frozenset[int] = frozenset()
    seen: set[int] = set()
    for fault in faults:
        if fault.partition(":")[0] == "accelerator":
            raise InstanceError(option, "", f"{fault}: an accelerator fault stops every demand on its ranks; "
                                            "move them to a spare first (ocsplan repair --failed accelerator:ID)")
        failed, gone = failed_circuits(c, fault, option)
        lost.update(fab.pair[i] for i in failed if i not in seen)
        seen.update(failed)
        removed |= gone
    return [_choose(d, fab, lost, removed, plan.latency_s, plan.link_Bps) for d in _demands(plan)]


def analyse_faults(c: Circuits, plan: Plan, kind: str, sample: int | None = None, seed: int = 0) -> FaultReport:
    """Every single fault of ``kind`` (or ``sample`` of them, drawn with ``seed``), every demand."""
    check_match(c, plan)
    ids = fault_ids(c, kind)
    if sample is not None:
        if sample < 1:
            raise InstanceError("--sample", "", f"must be at least 1, got {sample}")
        chosen = set(random.Random(seed).sample(range(len(ids)), min(sample, len(ids))))
        ids = [f for i, f in enumerate(ids) if i in chosen]
    elif len(ids) > MAX_FAULTS:
        raise InstanceError("--sample", "", f"{len(ids)} {kind} faults exceed {MAX_FAULTS}; give --sample N")
    fab = _Fabric(c)
    demands = _demands(plan)
    healthy = sum(d.weight * d.T for d in demands)
    outcomes = [_fault(f, c, fab, demands, plan) for f in ids]
    return FaultReport(kind, healthy, sample is not None, tuple(outcomes), summarize(outcomes))


def _fault(fault: str, c: Circuits, fab: _Fabric, demands: Sequence[_Demand], plan: Plan) -> FaultOutcome:
    failed, removed = failed_circuits(c, fault)
    lost = Counter(fab.pair[i] for i in failed)
    rows = tuple(_outcome(d, fab, lost, removed, plan.latency_s, plan.link_Bps) for d in demands)
    objective = sum(d.weight * r.T for d, r in zip(demands, rows, strict=True) if r.T is not None)
    return FaultOutcome(fault, objective, tuple(r.key for r in rows if r.how == "stopped"), rows)


def _natural(fault: str) -> tuple[str, int, str]:
    kind, _, name = fault.partition(":")
    return (kind, int(name), "") if name.isdigit() else (kind, -1, name)


def rank_key(stopped: int, objective: float, fault: str) -> tuple[int, float, tuple[str, int, str]]:
    """The one ranking of faults, worst first: more demands stopped, then a larger objective,
    then the fault id in natural order (circuit:6 before circuit:13). The report sorts by it too."""
    return -stopped, -objective, _natural(fault)


def _rank(f: FaultOutcome) -> tuple[int, float, tuple[str, int, str]]:
    return rank_key(len(f.stopped), f.objective, f.id)


def summarize(outcomes: Iterable[FaultOutcome]) -> FaultSummary:
    """Worst fault (most demands stopped, then largest objective), median and worst over the
    faults that stop nothing, how many faults stop a demand."""
    items = list(outcomes)
    running = [f for f in items if not f.stopped]
    return FaultSummary(
        len(items),
        min(items, key=_rank) if items else None,
        min(running, key=_rank) if running else None,
        statistics.median(f.objective for f in running) if running else None,
        len(items) - len(running),
    )


def ranked(r: FaultReport) -> list[FaultOutcome]:
    """Faults worst first: stopping faults (most stopped first), then by objective, ties by id."""
    return sorted(r.faults, key=_rank)


def report_to_dict(r: FaultReport) -> dict[str, Any]:
    """The ``ocsplan.faults/1`` JSON (schema in ``ocsplan/schemas/faults-1.json``)."""
    return {
        "schema": SCHEMA,
        "kind": r.kind,
        "sampled": r.sampled,
        "healthy": {"objective": r.healthy},
        "faults": [
            {"id": f.id, "objective": f.objective, "stopped": list(f.stopped),
             "demands": [{"mesh": d.mesh, "axis": d.axis, "demand": d.demand, "how": d.how,
                          "schedule": d.schedule, "h": d.h, "v": d.v, "p": d.p, "T": d.T} for d in f.demands]}
            for f in r.faults
        ],
        "summary": {
            "count": r.summary.count,
            "worst": _brief(r.summary.worst),
            "worst_running": _brief(r.summary.worst_running),
            "median": r.summary.median,
            "stopped": r.summary.stopped,
        },
    }


def _brief(f: FaultOutcome | None) -> dict[str, Any] | None:
    return None if f is None else {"id": f.id, "objective": f.objective, "stopped": list(f.stopped)}


def _outcome_from(data: Mapping[str, Any]) -> FaultOutcome:
    demands = tuple(DemandOutcome(d["mesh"], d["axis"], d["demand"], d["how"], d["schedule"], d["h"], d["v"],
                                  d["p"], d["T"]) for d in data.get("demands", ()))
    return FaultOutcome(data["id"], data["objective"], tuple(data.get("stopped", ())), demands)


def report_from_dict(data: Mapping[str, Any]) -> FaultReport:
    """The :class:`FaultReport` of an ``ocsplan.faults/1`` object already held to its JSON Schema
    (``report.inputs.check_faults``); numbers as the file has them. The summary's worst faults are
    the file's briefs (id, objective, stopped; no demands)."""
    summary = data["summary"]
    worst, running = summary.get("worst"), summary.get("worst_running")
    return FaultReport(
        data["kind"], data["healthy"]["objective"], data["sampled"], tuple(_outcome_from(f) for f in data["faults"]),
        FaultSummary(summary["count"], None if worst is None else _outcome_from(worst),
                     None if running is None else _outcome_from(running), summary["median"], summary["stopped"]))
