"""The decode step (paper App. B.4): kernels + launches + collectives, no overlap.

step = kernels + (3L + 1) t_l + sum over demands of calls x T;
tokens/s/user = 1 / step (k a / step when k tokens per step are verified and a fraction a
accepted), tokens/s = B / step (times k a), tokens/s/MW against the
fabric's Table 12 power pro-rated to the N serving accelerators. The
collective times come from :mod:`ocsplan.decode` (planned and priced there).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import PlanError
from .demand import DemandRow
from .kernels import Compute, Kernel, Memory
from .splits import Split

__all__ = ["STEP_SCHEMA", "CollectiveTime", "Step", "step_from_dict", "step_to_dict"]


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
    tokens_per_step: int = 1  # k tokens verified per user per step (speculative decoding, MTP)
    accept_rate: float = 1.0  # a: mean fraction of the k tokens accepted
    circuits: str = ""  # all-OCS: the circuits file priced (decode --circuits); "" = the plan's own

    @property
    def accepted(self) -> float:
        """Tokens each user keeps per step: k a (1 for plain decode)."""
        return self.tokens_per_step * self.accept_rate

    @property
    def comm_s(self) -> float:
        return sum(c.total_s for c in self.collectives)

    @property
    def step_s(self) -> float:
        return self.compute.total_s + self.comm_s

    @property
    def tokens_per_s_user(self) -> float:
        """Accepted tokens per second of one user."""
        if self.tokens_per_step == 1 and self.accept_rate == 1.0:
            return 1.0 / self.step_s
        return self.accepted / self.step_s

    @property
    def tokens_per_s(self) -> float:
        if self.tokens_per_step == 1 and self.accept_rate == 1.0:
            return self.batch / self.step_s
        return self.batch * self.accepted / self.step_s

    @property
    def power_w(self) -> float:
        return self.system_w * self.world / self.installed

    @property
    def tokens_per_s_mw(self) -> float:
        return self.tokens_per_s / (self.power_w / 1e6)


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
    } | ({"tokens_per_step": step.tokens_per_step, "accept_rate": step.accept_rate}
         if step.tokens_per_step != 1 or step.accept_rate != 1.0 else {}) | (
        {"circuits": step.circuits} if step.circuits else {})


def _restated(name: str, field: str, stated: object, derived: float) -> None:
    """A number the file states must be the one its own data give (PlanError naming the field)."""
    if not (isinstance(stated, int | float) and math.isclose(stated, derived, rel_tol=1e-9, abs_tol=1e-30)):
        raise PlanError(f"{name}: {field}: states {stated!r}, its own data give {derived!r}")


def step_from_dict(data: Mapping[str, Any], name: str) -> Step:
    """The step a decode file (:data:`STEP_SCHEMA`, :func:`step_to_dict`) holds, every number it
    restates re-derived from its data (memory total, compute regions, each collective's total,
    communication, step, throughputs, power); PlanError naming the file and field otherwise.
    Launch time, kernel and collective times and the system's power are the file's own data."""
    from ..schemas import first_error

    error = first_error(data, "decode-1")
    if error is not None:
        raise PlanError(f"{name}: {error[0]}: {error[1]}")
    mem = data["memory"]
    memory = Memory(mem["weights_bytes"], mem["kv_bytes"], mem["capacity_bytes"])
    kernels = tuple(Kernel(k["name"], k["region"], k["count"], k["flops"], k["bytes"], k["time_s"])
                    for k in data["kernels"])
    compute = Compute(kernels, data["windows"], data["launch_s"])
    collectives = tuple(CollectiveTime(DemandRow(c["region"], c["axis"], c["collective"], c["groups"], c["ranks"],
                                                 c["calls"], c["payload_bytes"]), c["schedule"], c["time_s"])
                        for c in data["collectives"])
    s = data["split"]
    step = Step(data["model"], data["accelerator"], data["fabric"], data["technology"], data["network"],
                data["comm"], data["world"], Split(s["kvp"], s["tpa"], s["ep"], s["tpe"]), data["batch"],
                data["context"], compute, memory, collectives, data["system_w"], data["installed"],
                data.get("tokens_per_step", 1), data.get("accept_rate", 1.0), data.get("circuits", ""))
    derived: list[tuple[str, Callable[[], float]]] = [
        ("memory.total_bytes", lambda: memory.total), ("attention_s", lambda: compute.attention_s),
        ("ffn_s", lambda: compute.ffn_s), ("lm_head_s", lambda: compute.lm_head_s),
        *((f"collectives.{i}.total_s", lambda x=x: x.total_s) for i, x in enumerate(collectives)),
        ("comm_s", lambda: step.comm_s), ("step_s", lambda: step.step_s),
        ("tokens_per_s_user", lambda: step.tokens_per_s_user), ("tokens_per_s", lambda: step.tokens_per_s),
        ("power_w", lambda: step.power_w), ("tokens_per_s_mw", lambda: step.tokens_per_s_mw)]
    for field, value in derived:
        head, _, rest = field.partition(".")
        stated: Any = data[head]
        for part in rest.split(".") if rest else ():
            stated = stated[int(part)] if part.isdigit() else stated[part]
        try:
            got = value()
        except ZeroDivisionError:
            raise PlanError(f"{name}: {field}: a zero step time, world or power gives no {field}") from None
        _restated(name, field, stated, got)
    return step
