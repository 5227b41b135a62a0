"""Realization of stacked-link plans: circulant axes as colored circuit sets (paper App. A.6).

Ranks are row-major over the mesh shape and run on accelerators in order
(contiguous placement). Axis i of size N and stride S (the product of the sizes
after it) joins rank x with the rank whose coordinate c = (x // S) mod N is
c + s mod N, for every offset s of its circulant. The offsets s and -s form one
2-regular circuit set (cycles; one circuit per rank and direction), N/2 a
1-regular one (a matching); each set and each circuit copy (multiplicity) is
edge-colored with :func:`ocsplan.realization.coloring.edge_coloring`, color =
port: two ports when the cycles are even, three when they are odd (the extra
port is reported as reserved, like a ring's Vizing reserve). A set is labelled
``circulant:A:N:S:s`` (A the axis's index among the plan's circulant axes, s <= N/2),
which is all the validator needs to re-derive every peer. Routing through the OCS levels:
:mod:`ocsplan.realization.paths`, as for shared-host plans.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass

from ..circulant import Circulant
from ..errors import InstanceError, RealizationError
from ..plan import Plan
from ..schedules.circulant import circulant_program
from .circuits import Circuits, Placement, PlanRef, Route, circulant_label, shift
from .coloring import edge_coloring, is_bipartite
from .fabrics import FabricSpec
from .paths import Logical, PortAssignment, check_fabric, wire_plan

__all__ = ["CirculantSet", "circulant_logical", "realize_stacked", "stacked_axes", "stacked_ports"]

@dataclass(frozen=True)
class CirculantSet:
    """One offset pair of one circulant axis: its label and circuit copies."""

    slot: int
    mesh: int
    axis: int
    size: int
    stride: int
    offset: int
    multiplicity: int

    @property
    def label(self) -> str:
        return circulant_label(self.slot, self.size, self.stride, self.offset)


def stacked_axes(plan: Plan) -> list[tuple[int, int, int]]:
    """(mesh, axis, stride) of every circulant axis of a stacked plan, in plan order."""
    out = []
    for m, mesh in enumerate(plan.meshes):
        for i, axis in enumerate(mesh.axes):
            if axis.circulant is not None:
                out.append((m, i, math.prod(mesh.shape[i + 1:])))
    return out


def circulant_logical(plan: Plan) -> tuple[list[Logical], list[CirculantSet], dict[str, tuple[int, ...]],
                                           dict[tuple[int, int], list[int]], list[str]]:
    """Circuits (a, b, port, label), the sets, ports per label, ports per directed edge, notes."""
    logical: list[Logical] = []
    sets: list[CirculantSet] = []
    ports_of: dict[str, tuple[int, ...]] = {}
    edge_ports: dict[tuple[int, int], list[int]] = defaultdict(list)
    notes: list[str] = []
    port = 0
    for slot, (m, i, stride) in enumerate(stacked_axes(plan)):
        axis = plan.meshes[m].axes[i]
        assert axis.circulant is not None
        size = axis.size
        for s in axis.circulant.offsets:
            if 2 * s > size:
                continue
            cset = CirculantSet(slot, m, i, size, stride, s, axis.circulant.multiplicity)
            sets.append(cset)
            if 2 * s == size:
                edges = [(x, shift(x, size, stride, s)) for x in range(plan.world) if (x // stride) % size < s]
            else:
                edges = [(x, shift(x, size, stride, s)) for x in range(plan.world)]
            colors = edge_coloring(edges)
            palette = max(colors, default=-1) + 1
            mine: list[int] = []
            for _ in range(cset.multiplicity):
                for (x, y), c in zip(edges, colors, strict=True):
                    logical.append((min(x, y), max(x, y), port + c, cset.label))
                    edge_ports[(x, y)].append(port + c)
                    edge_ports[(y, x)].append(port + c)
                mine.extend(range(port, port + palette))
                port += palette
            ports_of[cset.label] = tuple(mine)
            want = 1 if 2 * s == size else 2
            if palette > want:
                how = "bipartite" if is_bipartite(edges) else "odd cycles"
                notes.append(f"{cset.label}: {palette} ports per copy for {want} ({how}, cycles of "
                             f"{size // math.gcd(size, s)})")
    return logical, sets, ports_of, dict(edge_ports), notes


def _routes(plan: Plan, edge_ports: dict[tuple[int, int], list[int]]) -> tuple[Route, ...]:
    routes = []
    for m, i, stride in stacked_axes(plan):
        mesh, axis = plan.meshes[m], plan.meshes[m].axes[i]
        assert axis.circulant is not None
        graph = Circulant(axis.size, axis.circulant.offsets)
        bases = [x for x in range(plan.world) if (x // stride) % axis.size == 0]
        for k, d in enumerate(axis.demands):
            program = circulant_program(d.schedule, graph, d.payload_bytes, d.collective)
            table: list[list[tuple[tuple[int, tuple[int, ...]], ...]]] = [
                [() for _ in program.phases] for _ in range(plan.world)]
            for ph, phase in enumerate(program.phases):
                by_src: dict[int, list[int]] = {}
                for t in phase:
                    dsts = by_src.setdefault(t.src, [])
                    if t.dst not in dsts:
                        dsts.append(t.dst)
                for base in bases:
                    for src, dsts in by_src.items():
                        x = base + src * stride
                        entries = []
                        for dst in dsts:
                            y = base + dst * stride
                            ports = edge_ports.get((x, y), [])
                            if len(ports) < d.multiplicity:
                                raise RealizationError(f"mesh {mesh.name} axis {i} {d.schedule}: node {x} sends to "
                                                       f"{y} in phase {ph} without {d.multiplicity} circuit(s)")
                            entries.append((y, tuple(ports[: d.multiplicity])))
                        table[x][ph] = tuple(entries)
            routes.append(Route(mesh.name, i, k, d.collective, d.schedule, d.multiplicity, (),
                                tuple(tuple(row) for row in table)))
    return tuple(routes)


def _plan_ref(plan: Plan, sets: list[CirculantSet]) -> PlanRef:
    return PlanRef(plan.instance, plan.method, plan.world, plan.ports, plan.ports_used, plan.objective_s,
                   tuple((cs.label, cs.multiplicity) for cs in sets))


def stacked_ports(plan: Plan) -> PortAssignment:
    """The ports and routing tables :func:`realize_stacked` gives ``plan`` on any fabric (always
    with routing tables, as the realizer)."""
    _, sets, ports_of, edge_ports, _ = circulant_logical(plan)
    used = sum(len(p) for p in ports_of.values())
    return PortAssignment(_plan_ref(plan, sets), ports_of, max(0, used - plan.ports_used), _routes(plan, edge_ports))


def realize_stacked(plan: Plan, fabric: FabricSpec, placement: str = "contiguous") -> Circuits:
    """Circuits, cross-connects and routing tables of a stacked plan (contiguous placement)."""
    if placement != "contiguous":
        raise InstanceError("--placement", "", f"stacked plans run ranks in order: use contiguous, not {placement!r}")
    wire = check_fabric(plan, fabric)
    logical, sets, ports_of, edge_ports, notes = circulant_logical(plan)
    accelerator = tuple(range(plan.world))
    wired = wire_plan(plan, fabric, wire, logical, accelerator, ports_of, notes)
    generators = [wired.generator(cs.label, cs.offset, "circulant", cs.multiplicity, ports_of[cs.label])
                  for cs in sets]
    return wired.circuits_file(_plan_ref(plan, sets), Placement("contiguous", None, accelerator),
                               max(0, wired.ports_used - plan.ports_used), generators, _routes(plan, edge_ports),
                               notes)
