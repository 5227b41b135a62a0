"""Kernel times (paper Eq. 9, App. B.3) and memory per rank of one decode step.

Per layer on the busiest rank: QKV projection, flash-decode attention over
the local KV shard, output projection, router, grouped expert GEMM; the LM
head once. t = max(X / (P eta_F(X)), D / (M eta_D(D))); a GEMM does
X = 2 x rows x weight elements. MLA decodes in the absorbed form (W_UK folded
into the query, W_UV into the output): per head and context token
2 (2 kv_lora_rank + qk_rope_head_dim) FLOPs over the latent, which every TPA rank
reads whole (replicated) for its KVP shard. Shared experts and the dense FFN
layers of a MoE model take ceil(B / EP) rows per rank, TP over TPE. Each window between collectives pays the
in-graph launch t_l once: 3L + 1 windows. Element-wise kernels are ignored.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InfeasibleError
from .accelerator import Accelerator
from .demand import COMM, Precision, active_experts
from .model import Model
from .splits import Split

__all__ = ["Compute", "Kernel", "Memory", "compute_time", "extended_weights", "kernel_time", "memory_per_rank",
           "require_fit"]


@dataclass(frozen=True)
class Kernel:
    """One kernel of the step: ``count`` calls of ``time_s`` each."""

    name: str
    region: str  # attention, ffn, lm-head
    count: int
    flops: float
    bytes: float
    time_s: float

    @property
    def total_s(self) -> float:
        return self.count * self.time_s


@dataclass(frozen=True)
class Compute:
    kernels: tuple[Kernel, ...]
    windows: int
    launch_s: float  # windows x t_l

    def region_s(self, region: str) -> float:
        return sum(k.total_s for k in self.kernels if k.region == region)

    @property
    def attention_s(self) -> float:
        return self.region_s("attention")

    @property
    def ffn_s(self) -> float:
        return self.region_s("ffn")

    @property
    def lm_head_s(self) -> float:
        return self.region_s("lm-head")

    @property
    def kernels_s(self) -> float:
        return sum(k.total_s for k in self.kernels)

    @property
    def total_s(self) -> float:
        return self.kernels_s + self.launch_s


def kernel_time(acc: Accelerator, flops: float, nbytes: float, elements: float) -> float:
    """Eq. 9 with the accelerator's step efficiencies (eta_D on bytes or elements)."""
    size = elements if acc.efficiency_size == "elements" else nbytes
    t_mem = nbytes / (acc.hbm_bandwidth * acc.memory_efficiency(size)) if nbytes > 0 else 0.0
    t_flop = flops / (acc.peak_flops * acc.compute_efficiency(flops)) if flops > 0 else 0.0
    return max(t_flop, t_mem)


def compute_time(model: Model, acc: Accelerator, world: int, split: Split, batch: int, context: int,
                 precision: Precision = COMM["fp4"], tokens_per_step: int = 1) -> Compute:
    """Kernels of one decode step on the busiest rank and the launch overheads.

    ``tokens_per_step`` k (speculative or multi-token verification): every GEMM
    takes B k rows and attention does k times the FLOPs, but the KV cache of the
    B users is read once.
    """
    users = batch
    B, H, d = batch * tokens_per_step, model.hidden, model.head_dim
    w, c = precision.weight, precision.kv
    kernels: list[Kernel] = []

    def add(name: str, region: str, count: int, flops: float, elements: float, nbytes_per: float) -> None:
        if count:
            nbytes = elements * nbytes_per
            kernels.append(Kernel(name, region, count, flops, nbytes, kernel_time(acc, flops, nbytes, elements)))

    L = model.layers
    mla = model.mla
    if mla is None:
        qkv = H * (model.heads + 2 * model.kv_heads) * d / split.tpa
    else:  # shared down-projections replicated over TPA, per-head up-projections (W_UK, W_UV absorbed) split
        qkv = mla.shared_params(H) + mla.head_params(H, model.heads) / split.tpa
    add("qkv" if mla is None else "mla projections", "attention", L, 2 * B * qkv, qkv, w)
    local_q = model.heads / split.tpa
    local_kv = model.kv_heads / split.tpa
    for kind, count in (("full", model.full_layers), ("sliding", model.sliding_layers),
                        ("chunked", model.chunked_layers)):
        tokens = model.context_of(kind, context) / split.kvp
        if mla is None:
            kv = users * tokens * local_kv * 2 * d
            add(f"flash-decode ({kind})", "attention", count, 4 * B * local_q * tokens * d, kv, c)
        else:  # the latent is read whole by every TPA rank (replicated), its KVP shard only
            kv = users * tokens * mla.latent
            add(f"flash-decode mla ({kind})", "attention", count,
                B * local_q * tokens * mla.flops_per_context_token, kv, c)
    out = model.heads * d * H / world
    add("output projection", "attention", L, 2 * B * out, out, w)
    moe_layers = model.moe_layers
    if model.moe:
        router = H * model.experts
        add("router", "ffn", moe_layers, 2 * B * router, router, w)
    n_act = active_experts(model.experts, B, model.top_k)
    local = -(-n_act // split.ep)
    rows = -(-(B * model.top_k) // n_act)
    experts = local * 3 * H * model.width / split.tpe
    add("experts" if model.moe else "ffn", "ffn", moe_layers, 2 * rows * experts, experts, w)
    share = -(-B // split.ep)  # shared experts and dense layers: batch split over EP, TP over TPE
    if model.shared_width:
        shared = model.shared_params / split.tpe
        add("shared experts", "ffn", moe_layers, 2 * share * shared, shared, w)
    if model.dense_layers:
        dense = model.dense_params / split.tpe
        add("dense ffn", "ffn", len(model.dense_layers), 2 * share * dense, dense, w)
    head = H * model.vocab / world
    add("lm head", "lm-head", 1, 2 * B * head, head, w)
    windows = 3 * L + 1
    return Compute(tuple(kernels), windows, windows * acc.launch)


@dataclass(frozen=True)
class Memory:
    """HBM per rank: weights and the KV cache of the batch (bytes)."""

    weights: float
    kv: float
    capacity: float

    @property
    def total(self) -> float:
        return self.weights + self.kv

    @property
    def fits(self) -> bool:
        return self.total <= self.capacity


def memory_per_rank(model: Model, acc: Accelerator, world: int, split: Split, batch: int, context: int,
                    precision: Precision = COMM["fp4"]) -> Memory:
    """w[L(H(n_q+2n_kv)d/TPA + n_q d H/N + H E + 3EHI/N) + 2VH/N] + B c KV_user / N."""
    H, d = model.hidden, model.head_dim
    if model.mla is None and not model.shared_width and not model.dense_layers:
        per_layer = (H * (model.heads + 2 * model.kv_heads) * d / split.tpa + model.heads * d * H / world
                     + model.router_params + model.experts * model.expert_params / world)
        weights = precision.weight * (model.layers * per_layer + model.embedding_params / world)
    else:
        weights = precision.weight * extended_weights(model, world, split)
    kv = batch * precision.kv * model.kv_elements_per_user(context) / world
    return Memory(weights, kv, float(acc.hbm_capacity))


def extended_weights(model: Model, world: int, split: Split) -> float:
    """Weight elements per rank with MLA, shared experts or dense layers.

    MLA: q_a / kv_a replicated over TPA, q_b / kv_b split by TPA, o_proj over all N;
    routed experts over all N; shared experts and dense FFNs TP over TPE, replicated over EP.
    """
    H, d = model.hidden, model.head_dim
    if model.mla is None:
        attn = H * (model.heads + 2 * model.kv_heads) * d / split.tpa
    else:
        attn = model.mla.shared_params(H) + model.mla.head_params(H, model.heads) / split.tpa
    attn += model.heads * d * H / world
    moe = model.router_params + model.experts * model.expert_params / world + model.shared_params / split.tpe
    dense = model.dense_params / split.tpe
    return (model.layers * attn + model.moe_layers * moe + len(model.dense_layers) * dense
            + model.embedding_params / world)


def require_fit(memory: Memory, batch: int) -> None:
    """InfeasibleError naming the memory needed per rank when it exceeds HBM."""
    if not memory.fits:
        raise InfeasibleError(
            f"batch {batch} needs {memory.total / 1e9:.4g} GB per rank ({memory.weights / 1e9:.4g} GB "
            f"weights + {memory.kv / 1e9:.4g} GB KV cache), HBM holds {memory.capacity / 1e9:.4g} GB")
