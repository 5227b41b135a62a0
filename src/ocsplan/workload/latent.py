"""Multi-head latent attention (MLA, DeepSeek-V2/V3, Kimi K2): weights, cache, absorbed decode FLOPs.

The cache holds kv_lora_rank + qk_rope_head_dim elements per token and layer,
shared by all heads: split by KVP with the sequence, replicated over TPA.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Mla"]


@dataclass(frozen=True)
class Mla:
    """Multi-head latent attention (DeepSeek-V2/V3): ranks and head dimensions."""

    q_lora_rank: int  # 0: one q_proj H -> heads x (nope + rope)
    kv_lora_rank: int  # latent c_KV cached per token
    qk_nope_head_dim: int
    qk_rope_head_dim: int  # decoupled RoPE key, cached per token, shared by all heads
    v_head_dim: int

    @property
    def latent(self) -> int:
        """KV-cache elements per token per layer: kv_lora_rank + qk_rope_head_dim (all heads share it)."""
        return self.kv_lora_rank + self.qk_rope_head_dim

    def shared_params(self, hidden: int) -> int:
        """Down-projections every head shares (q_a, kv_a_proj_with_mqa): replicated over TPA."""
        q_a = hidden * self.q_lora_rank
        return q_a + hidden * self.latent

    def head_params(self, hidden: int, heads: int) -> int:
        """Per-head up-projections (q_b or q_proj, kv_b): split by heads over TPA."""
        qk = self.qk_nope_head_dim + self.qk_rope_head_dim
        q_b = (self.q_lora_rank or hidden) * heads * qk
        kv_b = self.kv_lora_rank * heads * (self.qk_nope_head_dim + self.v_head_dim)
        return q_b + kv_b

    @property
    def flops_per_context_token(self) -> int:
        """Absorbed decode FLOPs per head per context token: 2 (2 kv_lora_rank + qk_rope_head_dim).

        Scores q_lat . c (kv_lora_rank) + q_rope . k_rope (qk_rope_head_dim), then p c
        (kv_lora_rank), two FLOPs per multiply-add; W_UK and W_UV are applied once per
        token (in the kv_b projection), not per context token.
        """
        return 2 * (2 * self.kv_lora_rank + self.qk_rope_head_dim)
