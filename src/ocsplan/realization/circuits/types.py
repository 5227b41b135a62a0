"""The data of a circuit file: circuits and their paths, devices, routes, counts, and the
references to the plan and fabric it realizes (with the one check that they match)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...errors import InstanceError
from ...plan import construction
from ..fabrics import FabricSpec, LatencyBudget, Level
from ..wiring import Inventory
from .labels import generator_label

if TYPE_CHECKING:
    from ...plan import Plan

__all__ = [
    "Circuit",
    "Circuits",
    "Counts",
    "Device",
    "FabricRef",
    "GeneratorUse",
    "Hop",
    "NodePort",
    "Placement",
    "PlanRef",
    "Route",
    "by_port",
    "fabric_mismatch",
    "plan_mismatch",
    "require_realizes",
]


@dataclass(frozen=True, slots=True)
class Hop:
    """One OCS device on a circuit's path: entered at port ``enter``, left at ``leave``."""

    device: str
    enter: int
    leave: int


@dataclass(frozen=True, slots=True)
class Circuit:
    """A duplex circuit from node ``a`` port ``a_port`` to node ``b`` port ``b_port``."""

    a: int
    a_port: int
    b: int
    b_port: int
    generator: str  # label, see generator_label
    scope: str  # "single-level", "intra-rack" or "inter-rack"
    path: tuple[Hop, ...]  # devices from a to b

    @property
    def stages(self) -> int:
        """OCS devices crossed (1 in a rack or single level, 3 between racks)."""
        return len(self.path)

    @property
    def cables(self) -> int:
        return len(self.path) + 1

    def latency(self, budget: LatencyBudget) -> float:
        """One accelerator-to-accelerator hop over this circuit under a Table 9 budget."""
        return budget.hop(ocs=self.stages, cables=self.cables)


@dataclass(frozen=True, slots=True)
class NodePort:
    """What one port of a node connects to."""

    port: int
    peer: int
    peer_port: int
    generator: str


@dataclass(frozen=True)
class Device:
    """An OCS device and its cross-connects (pairs of its ports)."""

    id: str
    level: int
    rail: int
    index: int  # rack (level 1 of two) or device number within the rail
    radix: int
    cross_connects: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class GeneratorUse:
    """A host generator: its port indices, circuits and how many leave a rack."""

    label: str
    mask: int
    kind: str
    multiplicity: int
    ports: tuple[int, ...]
    circuits: int
    inter_rack: int
    scope: str  # "single-level", "intra-rack", "inter-rack" or "mixed"


@dataclass(frozen=True)
class Route:
    """Routing table of one demand: ``table[node][phase]`` = ((peer, ports), ...) it sends on."""

    mesh: str
    axis: int
    demand: int
    collective: str
    schedule: str
    multiplicity: int
    bits: tuple[int, ...]
    table: tuple[tuple[tuple[tuple[int, tuple[int, ...]], ...], ...], ...]

    @property
    def phases(self) -> int:
        return len(self.table[0]) if self.table else 0


@dataclass(frozen=True)
class PlanRef:
    """Which plan was realized (enough to tell a mismatched ``--plan``)."""

    instance: str
    method: str
    world: int
    ports: int
    ports_used: int
    objective_s: float
    generators: tuple[tuple[str, int], ...]  # (label, multiplicity)


@dataclass(frozen=True)
class FabricRef:
    """The fabric the circuits were realized on, with its wiring numbers."""

    name: str
    source: str
    accelerators: int
    ports: int
    link_Bps: float
    rack_size: int
    serving_racks: int
    levels: tuple[Level, ...]
    domain: int
    groups: int
    down: int
    up: int
    spines: int
    fanout: int


def fabric_mismatch(ref: FabricRef, spec: FabricSpec) -> str:
    """How the fabric a circuits file was realized on differs from ``spec`` in what the
    circuits depend on (accelerators, ports, racks, levels); "" when it does not."""
    pairs = (("accelerators", ref.accelerators, spec.accelerators), ("ports", ref.ports, spec.ports),
             ("rack size", ref.rack_size, spec.rack_size), ("serving racks", ref.serving_racks, spec.serving_racks),
             ("levels", ref.levels, spec.levels))
    for name, theirs, mine in pairs:
        if theirs != mine:
            return f"realized on {ref.name} ({name} {_short(theirs)}), not {spec.name} ({name} {_short(mine)})"
    return ""


def plan_mismatch(ref: PlanRef, plan: Plan) -> str:
    """How the plan a circuits file realizes (its ``plan`` reference) differs from ``plan``: instance,
    world, method, ports, ports used, objective, then generators and multiplicities; "" when it
    does not. The one check that a circuits file belongs to a plan (simulate, faults, repair, report,
    export)."""
    pairs = (("instance", ref.instance, plan.instance), ("world", ref.world, plan.world),
             ("method", ref.method, plan.method), ("ports", ref.ports, plan.ports),
             ("ports_used", ref.ports_used, plan.ports_used), ("objective_s", ref.objective_s, plan.objective_s))
    for name, theirs, mine in pairs:
        if theirs != mine:
            return (f"plan.{name}: realizes {ref.instance[:80]!r} ({ref.world} ranks, {name} {str(theirs)[:80]}), "
                    f"not {plan.instance[:80]!r} ({plan.world} ranks, {name} {str(mine)[:80]})")
    if construction(plan).cayley:
        want = tuple((generator_label(g.mask, g.kind, plan.n), g.multiplicity) for g in plan.generators)
        if ref.generators != want:
            return f"plan.generators: generators or multiplicities differ from plan {plan.instance[:80]!r}'s"
    return ""


def require_realizes(circuits: Circuits, plan: Plan, spec: FabricSpec, *, option: str = "--circuits",
                     prefix: str = "", plan_context: str = "", fabric: str | None = None) -> None:
    """InstanceError naming ``option`` unless ``circuits`` realize ``plan`` on ``spec``: the first of
    :func:`plan_mismatch` (after ``plan_context``) and :func:`fabric_mismatch` (with ``--fabric``
    and ``fabric``, default the fabric's name), each message after ``prefix``. The check every
    consumer of a given circuits file makes (simulate, decode)."""
    differs = plan_mismatch(circuits.plan, plan)
    if differs:
        raise InstanceError(option, "", f"{prefix}{plan_context}{differs}")
    differs = fabric_mismatch(circuits.fabric, spec)
    if differs:
        raise InstanceError(option, "", f"{prefix}{differs} (--fabric {spec.name if fabric is None else fabric})")


def _short(value: object) -> str:
    if isinstance(value, tuple):
        return "+".join(f"{v.technology}/{v.radix}" for v in value if isinstance(v, Level))
    return str(value)


@dataclass(frozen=True)
class Placement:
    """Ranks to accelerators: ``accelerator[x]`` runs rank x (rack = accelerator // rack size)."""

    method: str
    slot_bits: tuple[int, ...] | None  # rank bits that index the slot in a rack ("bits")
    accelerator: tuple[int, ...]


@dataclass(frozen=True)
class Counts:
    """Figure-25-style counts: circuits, and hardware installed and used."""

    nodes: int
    ports_per_node: int
    circuits: int
    intra_rack: int
    inter_rack: int
    installed: Inventory
    used: Inventory


@dataclass(frozen=True)
class Circuits:
    """A realized plan (schema ``ocsplan.circuits/1``)."""

    plan: PlanRef
    fabric: FabricRef
    placement: Placement
    ports_used: int
    reserved_ports: int  # ports beyond the plan's, reserved by edge coloring (Vizing)
    generators: tuple[GeneratorUse, ...]
    nodes: tuple[tuple[NodePort, ...], ...]
    circuits: tuple[Circuit, ...]
    devices: tuple[Device, ...]
    routes: tuple[Route, ...]
    counts: Counts
    notes: tuple[str, ...] = field(default=())


def by_port(c: Circuits) -> dict[tuple[int, int], Circuit]:
    """Every circuit under both of its ends (node, port), for lookups from routing tables."""
    index = {}
    for circuit in c.circuits:
        index[(circuit.a, circuit.a_port)] = circuit
        index[(circuit.b, circuit.b_port)] = circuit
    return index
