"""The decode step on a fabric (paper App. B.4): kernels + launches + collectives, no overlap.

step = kernels + (3L + 1) t_l + sum over demands of calls x T;
tokens/s/user = 1 / step, tokens/s = B / step, tokens/s/MW against the
fabric's Table 12 power pro-rated to the N serving accelerators.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import InfeasibleError, InstanceError, PlanError
from ..files import write_atomic
from ..instance import loads_instance
from ..plan import Plan, dumps_plan, loads_plan
from ..realization.fabrics import FabricSpec
from ..simlette.circuitmap import technology
from .accelerator import Accelerator
from .demand import COMM, DemandRow, Precision, demand_rows, instance_toml
from .kernels import Compute, Memory, compute_time, memory_per_rank, require_fit
from .model import Model
from .power import fabric_power
from .pricing import NETWORKS, Priced, price_native, price_planned
from .splits import Split, check_split, check_world, valid_splits

__all__ = [
    "STEP_SCHEMA",
    "CollectiveTime",
    "Step",
    "best_step",
    "clear_plan_memory",
    "decode_step",
    "plan_for",
    "step_to_dict",
    "use_plan_cache",
]


@dataclass(frozen=True)
class CollectiveTime:
    row: DemandRow
    schedule: str
    time_s: float  # one call

    @property
    def total_s(self) -> float:
        return self.row.calls * self.time_s


@dataclass(frozen=True)
class Step:
    model: str
    accelerator: str
    fabric: str
    technology: str
    network: str
    comm: str
    world: int
    split: Split
    batch: int
    context: int
    compute: Compute
    memory: Memory
    collectives: tuple[CollectiveTime, ...]
    system_w: float  # Table 12 power of the whole installed fabric
    installed: int  # accelerators installed (the power is pro-rated to world / installed)

    @property
    def comm_s(self) -> float:
        return sum(c.total_s for c in self.collectives)

    @property
    def step_s(self) -> float:
        return self.compute.total_s + self.comm_s

    @property
    def tokens_per_s_user(self) -> float:
        return 1.0 / self.step_s

    @property
    def tokens_per_s(self) -> float:
        return self.batch / self.step_s

    @property
    def power_w(self) -> float:
        return self.system_w * self.world / self.installed

    @property
    def tokens_per_s_mw(self) -> float:
        return self.tokens_per_s / (self.power_w / 1e6)


_PLAN_DIR: list[Path] = []  # the on-disk plan cache, when one is in use


def use_plan_cache(directory: Path | None) -> None:
    """Keep plans as ``<sha256 of the instance>.json`` in ``directory`` (None: memory only)."""
    _PLAN_DIR.clear()
    if directory is not None:
        directory.mkdir(parents=True, exist_ok=True)
        _PLAN_DIR.append(directory)


_MEMORY: dict[str, Plan] = {}  # plans of this process by instance text (at most 512)


def clear_plan_memory() -> None:
    """Forget the plans held in memory (the disk cache stays)."""
    _MEMORY.clear()


def _plan_text(text: str) -> Plan:
    from ..planning.registry import solve

    plan = _MEMORY.get(text)
    path = _PLAN_DIR[0] / f"{hashlib.sha256(text.encode()).hexdigest()}.json" if _PLAN_DIR else None
    if plan is None and path is not None and path.exists():
        try:
            plan = loads_plan(path.read_text(encoding="utf-8"), str(path))
        except (OSError, PlanError):
            plan = None  # a damaged cache entry is planned again
    if plan is None:
        plan = solve(loads_instance(text, "<workload>"))
    if path is not None and not path.exists():
        write_atomic(path, dumps_plan(plan))
    if len(_MEMORY) >= 512:
        _MEMORY.clear()
    _MEMORY[text] = plan
    return plan


def plan_for(model: Model, spec: FabricSpec, world: int, split: Split, batch: int,
             precision: Precision = COMM["fp4"]) -> Plan:
    """The planner's plan of the step's demand on ``spec`` (cached by demand: context does not enter)."""
    text = instance_toml(model, world, split, batch, ports=spec.ports, latency=spec.latency.hop(ocs=1),
                         link=spec.link, precision=precision, name=f"{model.name}-gxnet")
    return _plan_text(text)


def _price_ocs(model: Model, spec: FabricSpec, world: int, split: Split, batch: int, precision: Precision,
               network: str) -> Priced:
    """Analytical prices of the plan, kept next to it in the disk cache (keyed by instance and fabric)."""
    text = instance_toml(model, world, split, batch, ports=spec.ports, latency=spec.latency.hop(ocs=1),
                         link=spec.link, precision=precision, name=f"{model.name}-gxnet")
    if network != "analytical" or not _PLAN_DIR:
        return price_planned(_plan_text(text), spec, network)
    key = hashlib.sha256((text + repr(spec)).encode()).hexdigest()
    path = _PLAN_DIR[0] / f"{key}.times.json"
    if path.exists():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            times = {tuple(k.split("/", 1)): (str(v[0]), float(v[1])) for k, v in data.items()}
            return Priced({(a, b): v for (a, b), v in times.items()})
        except (OSError, ValueError, TypeError, IndexError, AttributeError):
            pass  # a damaged entry is priced again
    priced = price_planned(_plan_text(text), spec, network)
    write_atomic(path, json.dumps({f"{r}/{a}": [sch, t] for (r, a), (sch, t) in sorted(priced.times.items())},
                                  sort_keys=True))
    return priced


def _check_fabric(spec: FabricSpec, world: int) -> None:
    serving = min(spec.serving, spec.accelerators)
    if world > serving:
        raise InstanceError(spec.source or spec.name, "accelerators",
                            f"world {world} exceeds the {serving} accelerators the fabric serves")


def decode_step(model: Model, acc: Accelerator, spec: FabricSpec, world: int, split: Split, batch: int,
                context: int, *, network: str = "analytical", precision: Precision = COMM["fp4"],
                check_memory: bool = True) -> Step:
    """Time one decode step; InfeasibleError when the batch does not fit in HBM."""
    check_world(world)
    check_split(model, world, split)
    if network not in NETWORKS:
        raise InstanceError("network", "", f"unknown network {network!r} (use {', '.join(NETWORKS)})")
    _check_fabric(spec, world)
    memory = memory_per_rank(model, acc, world, split, batch, context, precision)
    if check_memory:
        require_fit(memory, batch)
    rows = demand_rows(model, world, split, batch, precision)
    tech = technology(spec)
    priced: Priced
    if tech == "ocs":
        priced = _price_ocs(model, spec, world, split, batch, precision, network)
    else:
        text = instance_toml(model, world, split, batch, ports=spec.ports, latency=spec.latency.hop(ocs=1),
                             link=spec.link, precision=precision)
        priced = price_native(loads_instance(text, "<workload>"), rows, spec, network)
    collectives = tuple(CollectiveTime(r, *priced.times[(r.region, r.axis)]) for r in rows if r.calls)
    power = fabric_power(spec, acc.power)
    return Step(model.name, acc.name, spec.name, tech, network, precision.name, world, split, batch, context,
                compute_time(model, acc, world, split, batch, context, precision), memory, collectives,
                power.total, spec.accelerators)


def best_step(model: Model, acc: Accelerator, spec: FabricSpec, world: int, batch: int, context: int, *,
              network: str = "analytical", precision: Precision = COMM["fp4"], within: float = 0.07,
              progress: Callable[[Split], None] | None = None) -> tuple[Step, list[Step]]:
    """The split with the most tokens/s/user, and every feasible split's analytical step.

    With ``network="simlette"`` every split whose analytical interactivity is
    within ``within`` of the best is re-simulated and the best simulated one
    wins (App. B.6). InfeasibleError when no split fits in HBM.
    """
    check_world(world)
    steps: list[Step] = []
    needed = []
    for split in valid_splits(model, world):
        mem = memory_per_rank(model, acc, world, split, batch, context, precision)
        if not mem.fits:
            needed.append(mem.total)
            continue
        if progress is not None:
            progress(split)
        steps.append(decode_step(model, acc, spec, world, split, batch, context, precision=precision))
    if not steps:
        if not needed:
            raise InfeasibleError(f"{model.name}: no valid Helix split on {world} accelerators")
        least = min(needed)
        raise InfeasibleError(f"batch {batch} does not fit in HBM with any split: it needs at least "
                              f"{least / 1e9:.4g} GB per rank, {acc.name} holds {acc.hbm_capacity / 1e9:.4g} GB")
    ranked = sorted(steps, key=lambda s: (-s.tokens_per_s_user, s.split))
    best = ranked[0]
    if network == "simlette":
        finalists = [s for s in ranked if s.tokens_per_s_user >= (1 - within) * best.tokens_per_s_user]
        simulated = [decode_step(model, acc, spec, world, s.split, batch, context, network="simlette",
                                 precision=precision) for s in finalists]
        best = min(simulated, key=lambda s: (-s.tokens_per_s_user, s.split))
    return best, ranked


STEP_SCHEMA = "ocsplan.decode/1"


def step_to_dict(step: Step) -> dict[str, object]:
    """The step as plain data (schema ``ocsplan.decode/1``)."""
    c = step.compute
    return {
        "schema": STEP_SCHEMA,
        "model": step.model, "accelerator": step.accelerator, "fabric": step.fabric,
        "technology": step.technology, "network": step.network, "comm": step.comm,
        "world": step.world, "split": {"kvp": step.split.kvp, "tpa": step.split.tpa, "ep": step.split.ep,
                                       "tpe": step.split.tpe},
        "batch": step.batch, "context": step.context,
        "memory": {"weights_bytes": step.memory.weights, "kv_bytes": step.memory.kv,
                   "total_bytes": step.memory.total, "capacity_bytes": step.memory.capacity},
        "kernels": [{"name": k.name, "region": k.region, "count": k.count, "flops": k.flops, "bytes": k.bytes,
                     "time_s": k.time_s} for k in c.kernels],
        "attention_s": c.attention_s, "ffn_s": c.ffn_s, "lm_head_s": c.lm_head_s,
        "windows": c.windows, "launch_s": c.launch_s,
        "collectives": [{"region": x.row.region, "axis": x.row.axis, "collective": x.row.collective,
                         "groups": x.row.groups, "ranks": x.row.ranks, "calls": x.row.calls,
                         "payload_bytes": x.row.payload, "schedule": x.schedule, "time_s": x.time_s,
                         "total_s": x.total_s} for x in step.collectives],
        "comm_s": step.comm_s, "step_s": step.step_s,
        "tokens_per_s_user": step.tokens_per_s_user, "tokens_per_s": step.tokens_per_s,
        "power_w": step.power_w, "system_w": step.system_w, "installed": step.installed,
        "tokens_per_s_mw": step.tokens_per_s_mw,
    }
