"""Results of a simulation, the analytical model on the fabric's paths, and JSON.

:func:`analytical` evaluates the paper's Eq. 1 the way App. C.2 derives it,
but on the simulated fabric: every phase costs the largest unloaded hop
latency among its transfers plus the time the most loaded bandwidth resource
needs for its bytes (a logical edge of p_g circuits on OCS; a node's L ports,
a rack's uplinks or a level-2 circuit bundle on EPS). It assumes what the
closed form assumes: phases do not overlap, no waiting for credits.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Hashable
from dataclasses import asdict, dataclass, field
from typing import Any

from .network import Network
from .traffic import Workload

__all__ = [
    "SCHEMA", "DemandResult", "LinkStat", "SimReport", "SweepRow", "analytical", "dumps_report",
    "report_to_dict", "weighted",
]

SCHEMA = "ocsplan.simulation/1"


def analytical(workload: Workload, network: Network) -> float:
    """Sum over phases of (max hop latency + max resource load / capacity)."""
    total = 0.0
    hop = network.latency
    resources = network.resources
    # networks whose paths depend on (src, gen) alone: look each edge up once
    edges: dict[tuple[int, int], tuple[float, list[tuple[Hashable, float]]]] | None = (
        {} if network.by_edge else None)
    for k in range(workload.phases):
        fast = network.phase_cost(workload, k)
        if fast is not None:
            total += fast
            continue
        latency = 0.0
        load: dict[Hashable, float] = defaultdict(float)
        for src in workload.nodes:
            for s in workload.sends[src][k]:
                if edges is None:
                    lat, used = hop(src, s.dst, s.gen), resources(src, s.dst, s.gen)
                else:
                    found = edges.get((src, s.gen))
                    if found is None:
                        found = edges[(src, s.gen)] = (hop(src, s.dst, s.gen), resources(src, s.dst, s.gen))
                    lat, used = found
                if lat > latency:
                    latency = lat
                for key, capacity in used:
                    load[key] += s.size / capacity
        if load:
            total += latency + max(load.values())
    return total


@dataclass(frozen=True)
class LinkStat:
    """One link (port) of the run: what it carried and how long it waited for credits."""

    name: str
    bytes: float  # wire bytes (DL flits x 640; the message bytes in ideal mode)
    busy_s: float
    stall_s: float


@dataclass(frozen=True)
class DemandResult:
    """One demand (or one driven program) simulated on one fabric."""

    name: str
    collective: str
    schedule: str
    payload_bytes: int
    groups: int
    group_size: int
    multiplicity: int
    phases: int
    messages: int
    flits: int
    closed_form_s: float | None  # the plan's time (instance lambda), when there is a plan
    analytical_s: float  # Eq. 1 on the simulated fabric (ideal mode: the closed form's world)
    simulated_s: float
    acked_s: float  # last write response back at its originator
    credit_stall_s: float  # the port that waited longest for credits
    credit_stall_total_s: float
    stalled_link: str
    busiest: LinkStat | None
    events: int
    wall_s: float
    mesh: str = ""
    axis: int = -1
    demand: int = -1
    how: str = ""  # with faults: intact, parallel, relay or fallback (ocsplan.deploy.faults)

    @property
    def ratio(self) -> float:
        return self.simulated_s / self.analytical_s if self.analytical_s else float("nan")


@dataclass(frozen=True)
class SimReport:
    """All demands of a plan simulated in one mode on one fabric."""

    plan: str
    fabric: str
    technology: str
    mode: str
    buffer_bytes: int | None
    switch_buffer_bytes: int | None
    order: str
    circuits: str  # where the OCS circuits came from: "plan", "realization" or "" (EPS)
    demands: tuple[DemandResult, ...]
    notes: tuple[str, ...] = field(default=())
    faults: tuple[str, ...] = field(default=())  # circuit:ID / device:ID failed together (simulate --fail)


@dataclass(frozen=True)
class SweepRow:
    """One point of a sweep (:func:`ocsplan.simlette.sweep.sweep`): demand x schedule x payload."""

    demand: str
    schedule: str
    payload_bytes: int
    multiplicity: int
    phases: int
    closed_form_s: float
    analytical_s: float
    simulated_s: float
    ratio: float
    credit_stall_s: float


def weighted(report: SimReport, weights: dict[tuple[str, int, int], float]) -> tuple[float, float]:
    """(sum w * analytical, sum w * simulated) over the report's demands; ``weights`` by
    (mesh, axis, demand), as the plan gives them (a demand not simulated counts 0)."""
    analytic = sum(weights[(d.mesh, d.axis, d.demand)] * d.analytical_s for d in report.demands)
    simulated = sum(weights[(d.mesh, d.axis, d.demand)] * d.simulated_s for d in report.demands)
    return analytic, simulated


_TIMING = ("wall_s",)


def report_to_dict(report: SimReport, timing: bool = True) -> dict[str, Any]:
    """Plain data; ``timing=False`` drops the wall-clock fields (byte-stable output)."""
    demands = []
    for d in report.demands:
        row = asdict(d)
        row["ratio"] = d.ratio
        if not d.how:
            row.pop("how")
        if not timing:
            for key in _TIMING:
                row.pop(key)
        demands.append(row)
    out: dict[str, Any] = {
        "schema": SCHEMA,
        "plan": report.plan,
        "fabric": report.fabric,
        "technology": report.technology,
        "mode": report.mode,
        "buffer_bytes": report.buffer_bytes,
        "switch_buffer_bytes": report.switch_buffer_bytes,
        "order": report.order,
        "circuits": report.circuits,
        "demands": demands,
        "notes": list(report.notes),
    }
    if report.faults:
        out["faults"] = list(report.faults)
    return out


def dumps_report(report: SimReport, timing: bool = True) -> str:
    return json.dumps(report_to_dict(report, timing), indent=1) + "\n"
