"""Collective times of one decode step on a fabric file (paper §5.4, App. B.4).

all-OCS: every demand of the emitted instance's plan (``ocsplan.solve``, the
fabric's L ports and OCS hop latency) is priced on the fabric: analytically
(Eq. 1 on the fabric's own paths, :func:`ocsplan.simlette.analytical`) or by
Simlette in message mode.

all-EPS and hybrid: every axis is the complete graph K_M with the native
schedules: all-reduce one-shot, two-shot (rs-ag on one layer) or
halving-doubling (rs-ag on the cube), the cheapest; all-gather and
all-to-all one-shot (a single layer). A two-axis mesh takes the rank-bit
order (which axis gets the low, intra-rack bits) that is cheaper. Priced the
same two ways. Collective groups of an axis run concurrently; each demand is
priced alone (the analytical model) or simulated alone (all its groups).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..cayley import Topology, expand
from ..instance import Instance
from ..plan import GeneratorPlan, Plan, demand_topology
from ..realization.fabrics import FabricSpec
from ..schedules import program as build
from ..schedules.compiled import Compiled, compiled
from ..simlette import SimOptions, network_factory, simulate_plan
from ..simlette.circuitmap import (
    RackRoutes,
    Realization,
    check_fit,
    circuits_for_generators,
    circuits_from_realization,
    plan_generators,
)
from ..simlette.contention import SwitchedShape, hybrid_shape, hybrid_time, switched_time
from ..simlette.engine import Engine
from ..simlette.network import Network
from ..simlette.report import analytical
from ..simlette.switched import SwitchedNetwork
from ..simlette.timing import DL_FLIT
from ..simlette.traffic import demand_workload
from ..workload.demand import DemandRow
from .simulated import NativeRun, native_topology, simulated

__all__ = [
    "EPS_MODELS", "NATIVE", "NETWORKS", "EdgeMemo", "EpsModel", "PlanNetwork", "Priced", "analytical_model",
    "group_analytical", "native_routes", "native_sends", "plan_network", "price_native", "price_planned",
    "price_realized", "symmetric_analytical",
]

Sends = tuple[tuple[tuple[int, float], ...], ...]  # per phase: (local generator, bytes) one node sends

# -- analytical EPS models (issue 28), keyed by name -----------------------------------------
# (sends, axis bits, world, network, rack size) -> seconds of one call
EpsModel = Callable[[Sends, Sequence[int], int, Network, int], float]


def _symmetric(sends: Sends, bits: Sequence[int], world: int, net: Network, rack_size: int) -> float:
    return symmetric_analytical(sends, bits, net, rack_size)


def _contention(sends: Sends, bits: Sequence[int], world: int, net: Network, rack_size: int) -> float:
    """Flits of every message on the links the spraying gives it (EPS leaves and spines, a hybrid's OCS uplinks)."""
    if not isinstance(net, SwitchedNetwork):
        return symmetric_analytical(sends, bits, net, rack_size)
    if net.routes is not None:
        hybrid, latencies = hybrid_shape(net)
        return hybrid_time(sends, bits, world, hybrid, latencies, net.eng.flit_time)
    shape = SwitchedShape(net.L, net.rack_size, net.up, net.spines)
    cross = net.latency(0, net.rack_size, net.rack_size) if net.two else 0.0
    return switched_time(sends, bits, world, shape, net.latency(0, 1, 1), cross, net.eng.flit_time)


EPS_MODELS: dict[str, EpsModel] = {"contention": _contention, "symmetric": _symmetric}
DEFAULT_EPS_MODEL = "contention"
NETWORKS = ("analytical", *(f"analytical-{name}" for name in EPS_MODELS), "simlette")


def analytical_model(network: str) -> str:
    """The EPS model a network name prices with: ``analytical`` the default, ``analytical-NAME`` NAME."""
    return network.removeprefix("analytical-") if network.startswith("analytical-") else DEFAULT_EPS_MODEL

# Native EPS schedules: (schedule, layout) with layout "flat" = K_M, "cube" = unit masks.
NATIVE: dict[str, tuple[tuple[str, str, str], ...]] = {
    "all-reduce": (("one-shot", "one-shot", "flat"), ("two-shot", "rs-ag", "flat"),
                   ("halving-doubling", "rs-ag", "cube")),
    "all-gather": (("one-shot", "layered", "flat"),),
    "all-to-all": (("one-shot", "bruck", "flat"),),
}


@dataclass(frozen=True)
class Priced:
    """Time of one call of each demand, keyed (region, axis) as in :class:`DemandRow`."""

    times: dict[tuple[str, str], tuple[str, float]]  # (schedule, seconds per call)
    plan: Plan | None = None
    notes: tuple[str, ...] = ()


# -- all-OCS: the planner's circuits -------------------------------------------------------

_PLAN_KEYS = {("world", 0, "all-reduce"): ("attention", "world"), ("world", 0, "all-gather"): ("lm-head", "world"),
              ("attention", 0, "all-to-all"): ("attention", "KVP"), ("ffn", 0, "all-reduce"): ("ffn", "TPE"),
              ("ffn", 1, "all-gather"): ("ffn", "EP")}


def _plan_key(mesh: str, axis: int, demand: int, collective: str) -> tuple[str, str]:
    """(region, axis) of a plan's demand: an FFN axis's second demand is the dense layers' one."""
    region, name = _PLAN_KEYS[(mesh, axis, collective)]
    return ("ffn-dense", name) if mesh == "ffn" and demand == 1 else (region, name)


def _engine(spec: FabricSpec) -> Engine:
    return Engine(DL_FLIT / spec.link, False)


def _ignore(_msg: object) -> None:
    return None


@dataclass(frozen=True)
class PlanNetwork:
    """The circuits network of a generator set on a fabric, shared by every plan with those
    generators (a sweep's 360 plans have 61 sets): the circuits are realized once, each
    (rack, generator) edge asked of the network once (``edges``, :func:`group_analytical`'s
    memo) and each demand priced once (``times``, by schedule, topology, payload and bits)."""

    net: Network
    rack_size: int
    edges: EdgeMemo
    times: dict[tuple[str, Topology, int, tuple[int, ...]], float]

    def price(self, schedule: str, topology: Topology, payload: int, bits: tuple[int, ...]) -> float:
        """:func:`group_analytical` of the demand's program on this network (remembered)."""
        key = (schedule, topology, payload, bits)
        found = self.times.get(key)
        if found is None:
            found = self.times[key] = group_analytical(compiled(schedule, topology, payload), bits,
                                                       self.net, self.rack_size, self.edges)
        return found


@lru_cache(maxsize=64)
def plan_network(gens: tuple[tuple[int, int, int], ...], world: int, ports: int, spec: FabricSpec) -> PlanNetwork:
    """The :class:`PlanNetwork` of ``gens`` (:func:`~ocsplan.simlette.circuitmap.plan_generators`)
    on ``world`` ranks with ``ports`` ports each, on ``spec``."""
    cmap = circuits_for_generators(gens, world, spec)
    factory = network_factory(spec, SimOptions(mode="message"), ports=ports, circuits=cmap)
    rack = spec.rack_size if spec.two_level else spec.accelerators
    return PlanNetwork(factory(_engine(spec), _ignore), rack, EdgeMemo(world, {}), {})


@lru_cache(maxsize=1024)
def price_planned(plan: Plan, spec: FabricSpec, network: str = "analytical") -> Priced:
    """Price every demand of an OCS plan on ``spec`` (cached: a sweep re-prices a plan per context;
    plans with the same generators share one :func:`plan_network`)."""
    times: dict[tuple[str, str], tuple[str, float]] = {}
    check_fit(plan, spec)
    shared = plan_network(plan_generators(plan), plan.world, plan.ports, spec)
    for mesh in plan.meshes:
        for i, axis in enumerate(mesh.axes):
            for j, d in enumerate(axis.demands):
                key = _plan_key(mesh.name, i, j, d.collective)
                topology = demand_topology(d.groups, axis.bits, d.fold)
                times[key] = (d.schedule, shared.price(d.schedule, topology, d.payload_bytes, tuple(axis.bits)))
    return _simulated_too(plan, spec, network, times, None)


def price_realized(plan: Plan, spec: FabricSpec, circuits: Realization, network: str = "analytical") -> Priced:
    """:func:`price_planned` on a given realization of ``plan`` (e.g. a repaired circuits file):
    every circuit with its real OCS devices and cables, every group priced (a circuit moved to a
    spare in another rack pays its extra hops, whichever group it serves)."""
    times: dict[tuple[str, str], tuple[str, float]] = {}
    factory = network_factory(spec, SimOptions(mode="message"), ports=plan.ports,
                              circuits=circuits_from_realization(circuits))
    net = factory(_engine(spec), _ignore)
    for m, mesh in enumerate(plan.meshes):
        for i, axis in enumerate(mesh.axes):
            for j, d in enumerate(axis.demands):
                times[_plan_key(mesh.name, i, j, d.collective)] = (
                    d.schedule, analytical(demand_workload(plan, m, i, j), net))
    return _simulated_too(plan, spec, network, times, circuits)


def _simulated_too(plan: Plan, spec: FabricSpec, network: str, times: dict[tuple[str, str], tuple[str, float]],
                   circuits: Realization | None) -> Priced:
    """With ``network="simlette"`` every demand re-timed by Simlette in message mode."""
    notes: tuple[str, ...] = ()
    if network == "simlette":
        report = simulate_plan(plan, spec, SimOptions(mode="message"), circuits=circuits)
        for r in report.demands:
            times[_plan_key(r.mesh, r.axis, r.demand, r.collective)] = (r.schedule, r.simulated_s)
        notes = report.notes
    return Priced(times, plan, notes)


@dataclass(frozen=True)
class EdgeMemo:
    """(latency, capacity) of a network's edges by ``(rack or rank) * span + generator``, global
    labels below ``span``: shared by the :func:`group_analytical` calls on one network."""

    span: int
    found: dict[int, tuple[float, float]]


def group_analytical(program: Compiled, bits: Sequence[int], net: Network, rack_size: int = 0,
                     shared: EdgeMemo | None = None) -> float:
    """:func:`ocsplan.simlette.analytical` over the group of rank 0 only.

    On circuits every resource is one node's edge, so groups share nothing,
    and with rank-order placement every group sees the same stages: one group
    gives the time of all (the tests compare with the full workload). With a
    power-of-two ``rack_size`` an edge's latency and capacity depend only on
    the sender's rack and the generator and are looked up once per pair (the
    first transfer of the pair asks the network). Per phase: the largest latency
    plus the busiest (sender, generator) edge, its bytes over capacity summed in
    program order (``np.bincount`` adds in input order: the sums of a loop).

    ``shared``: the memo of those lookups, shared by calls on ``net`` with the same
    ``rack_size`` (its span above every global label)."""
    size, phases = program
    glob = np.array([expand(x, bits) for x in range(size)], dtype=np.int64)  # expand is linear: gens map alike
    shift = rack_size.bit_length() - 1 if rack_size > 0 and rack_size & (rack_size - 1) == 0 else -1
    span = int(glob.max(initial=0)) + 1  # a global generator or rank is below this
    if shared is not None:
        if span > shared.span:
            raise ValueError(f"group_analytical: label {span - 1} beyond the shared memo's span {shared.span}")
        span = shared.span
    # (rack or rank) * span + generator -> (latency, capacity)
    memo: dict[int, tuple[float, float]] = {} if shared is None else shared.found
    total = 0.0
    for edges, nbytes in phases:
        if not len(nbytes):
            continue
        src, dst, gen = glob[edges[:, 0]], glob[edges[:, 1]], glob[edges[:, 2]]
        where = ((src >> shift) if shift >= 0 else src) * span + gen
        pairs, first, inverse = np.unique(where, return_index=True, return_inverse=True)
        for k in np.argsort(first, kind="stable"):  # the network asked in the loop's order
            key = int(pairs[k])
            if key not in memo:
                t = int(first[k])
                s, d, g = int(src[t]), int(dst[t]), int(gen[t])
                resources = net.resources(s, d, g)
                if len(resources) != 1:
                    raise ValueError("group_analytical prices circuit networks (one resource per edge)")
                memo[key] = (net.latency(s, d, g), resources[0][1])
        found = np.array([memo[int(key)] for key in pairs], dtype=np.float64).reshape(-1, 2)
        latency = max(0.0, float(found[:, 0].max()))
        edge, slot = np.unique(src * span + gen, return_inverse=True)
        load = np.bincount(slot.reshape(-1), weights=nbytes / found[inverse.reshape(-1), 1], minlength=len(edge))
        total += latency + float(load.max())
    return total


# -- all-EPS and hybrid: native schedules on K_M --------------------------------------------


def _bits_of_axes(shape: Sequence[int], low_first: int) -> list[tuple[int, ...]]:
    """Global bit positions of each axis; axis ``low_first`` takes the lowest bits."""
    order = [low_first] + [i for i in range(len(shape)) if i != low_first]
    bits: list[tuple[int, ...]] = [()] * len(shape)
    pos = 0
    for i in order:
        width = shape[i].bit_length() - 1
        bits[i] = tuple(range(pos + width - 1, pos - 1, -1))
        pos += width
    return bits


@lru_cache(maxsize=4096)
def native_sends(schedule: str, layout: str, size: int, payload: int) -> Sends:
    """What every node sends per phase in a native schedule on M = ``size`` ranks.

    K_M (``flat``): one-shot sends sigma to every peer; rs-ag (two phases), the
    layered all-gather and the one-layer Bruck all-to-all send sigma / M to every
    peer per phase. The cube (``cube``, halving-doubling) is read off node 0 of
    the catalogue's program. The tests compare both with the executable programs.
    """
    peers = range(1, size)
    if layout == "flat":
        if schedule == "one-shot":
            return (tuple((g, float(payload)) for g in peers),)
        phases = 2 if schedule == "rs-ag" else 1
        return tuple(tuple((g, payload / size) for g in peers) for _ in range(phases))
    program = build(schedule, native_topology(layout, size.bit_length() - 1), payload)
    return tuple(tuple((t.gen, float(t.nbytes)) for t in phase if t.src == 0 and t.nbytes > 0)
                 for phase in program.phases)


def symmetric_analytical(sends: Sends, bits: Sequence[int], net: Network, rack_size: int) -> float:
    """Eq. 1 on a switched network for a schedule every node runs alike on every group.

    Per phase: the largest hop latency plus the most loaded resource, where a
    node's ports carry what one node sends and a rack's uplinks (or a level-2
    bundle) what all ``rack_size`` nodes of a rack send across racks: the same
    sum :func:`ocsplan.simlette.analytical` forms transfer by transfer.
    """
    total = 0.0
    for phase in sends:
        latency = 0.0
        load: dict[object, float] = {}
        for local, nbytes in phase:
            g = expand(local, bits)
            latency = max(latency, net.latency(0, g, g))
            for key, capacity in net.resources(0, g, g):
                kind = key[0] if isinstance(key, tuple) else key
                per_rack = kind not in ("out", "in")
                cls = (kind, key[-1]) if kind == "l2" and isinstance(key, tuple) else kind
                load[cls] = load.get(cls, 0.0) + nbytes * (rack_size if per_rack else 1) / capacity
        if load:
            total += latency + max(load.values())
    return total


def native_routes(instance: Instance, spec: FabricSpec) -> Plan:
    """A stand-in plan whose generators are every rank pair an axis uses (K_M), for the hybrid's uplinks."""
    masks: set[int] = set()
    for mesh in instance.meshes:
        widths = [a.bits for a in mesh.axes]
        for low in range(len(mesh.axes)):
            for i, bits in enumerate(_bits_of_axes(mesh.shape, low)):
                if not mesh.axes[i].demands or not widths[i]:
                    continue
                lo = min(bits)
                masks.update(g << lo for g in range(1, 1 << len(bits)))
    gens = tuple(GeneratorPlan(mask, 1, "fold") for mask in sorted(masks))
    b = instance.budget
    return Plan(instance.name, "native", "native", b.world, spec.ports, 0, b.latency, b.link, gens, (), 0.0)


def price_native(instance: Instance, rows: Sequence[DemandRow], spec: FabricSpec,
                 network: str = "analytical", routes: RackRoutes | None = None, spray: str = "message") -> Priced:
    """Price the demands on EPS or hybrid fabrics with native K_M schedules.

    ``routes``: the circuits of a hybrid's OCS uplinks between racks (None on all-EPS).
    ``spray``: Simlette's granularity over equal links (:class:`~ocsplan.simlette.SimOptions`),
    with ``network="simlette"``; the analytical models do not read it.
    """
    factory = network_factory(spec, SimOptions(mode="message", spray=spray).check(), ports=spec.ports,
                              routes=routes)
    world = instance.budget.world
    by_key = {(r.region, r.axis): r for r in rows}
    mesh_keys = {"world": [[("attention", "world"), ("lm-head", "world")]],
                 "attention": [[("attention", "KVP")], [("attention", "TPA")]],
                 "ffn": [[("ffn", "TPE"), ("ffn-dense", "TPE")], [("ffn", "EP"), ("ffn-dense", "EP")]]}
    cache: dict[tuple[str, str, tuple[int, ...], int], float] = {}
    net_holder: list[Network] = []

    def net() -> Network:
        if not net_holder:
            net_holder.append(factory(_engine(spec), _ignore))
        return net_holder[0]

    rack_size = spec.rack_size if spec.two_level else spec.accelerators

    model = EPS_MODELS[analytical_model(network)]

    def analytic(schedule: str, layout: str, bits: tuple[int, ...], payload: int) -> float:
        key = (schedule, layout, bits, payload)
        if key not in cache:
            sends = native_sends(schedule, layout, 1 << len(bits), payload)
            cache[key] = model(sends, bits, world, net(), rack_size)
        return cache[key]

    def best(collective: str, bits: tuple[int, ...], payload: int) -> tuple[str, str, str, float]:
        options = [(label, sched, layout, analytic(sched, layout, bits, payload))
                   for label, sched, layout in NATIVE[collective]]
        return min(options, key=lambda o: o[3])

    times: dict[tuple[str, str], tuple[str, float]] = {}
    for mesh in instance.meshes:
        layouts = [_bits_of_axes(mesh.shape, low) for low in range(len(mesh.shape))]
        keys = mesh_keys[mesh.name]
        choices = []
        for layout_bits in layouts:
            total = 0.0
            picked: dict[tuple[str, str], tuple[str, str, str, tuple[int, ...], float]] = {}
            for i, axis_keys in enumerate(keys):
                for key in axis_keys:
                    row = by_key.get(key)
                    if row is None or not row.calls:
                        continue
                    label, sched, lay, t = best(row.collective, layout_bits[i], row.payload)
                    picked[key] = (label, sched, lay, layout_bits[i], t)
                    total += row.calls * t
            choices.append((total, picked))
        _, picked = min(choices, key=lambda c: c[0])
        for key, (label, sched, lay, bits, t) in picked.items():
            if network == "simlette":
                t = simulated(NativeRun(sched, lay, bits, by_key[key].payload, world, spec, routes, spray))
            times[key] = (label, t)
    return Priced(times)
