"""The decode step (paper App. B.4): kernels + launches + collectives, no overlap.

step = kernels + (3L + 1) t_l + sum over demands of calls x T;
tokens/s/user = 1 / step (k a / step when k tokens per step are verified and a fraction a
accepted), tokens/s = B / step (times k a), tokens/s/MW against the
fabric's Table 12 power pro-rated to the N serving accelerators. The
collective times come from :mod:`ocsplan.decode` (planned and priced there).
"""

from __future__ import annotations

from dataclasses import dataclass

from .demand import DemandRow
from .kernels import Compute, Memory
from .splits import Split

__all__ = ["STEP_SCHEMA", "CollectiveTime", "Step", "step_to_dict"]


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
