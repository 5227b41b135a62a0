"""Hostile inputs, round 4, category 7: HuggingFace configs that hide what they are.

A Llama-like ``config.json`` with one hostile change each: a feature present in part (every
blocker listed in one line), linear / lightning attention or state-space layers under each
spelling the families use (refused, not modelled), sizes past their bounds or of the wrong
type. Given to ``workload`` (the reader ``decode``, ``splits``, ``pareto`` and ``deploy``
share); each is one line naming the file and the field, exit 2, no instance written.
(Sliding windows priced without ``layer_types``, Mistral's and Qwen2's, are accepted and
checked by hand in ``tests/test_workload_model_families.py``.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["MODEL_CASES", "build_models"]

BASE: dict[str, Any] = {"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096,
                        "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32000,
                        "intermediate_size": 14336}
NO_EXPERTS = "on a model with no experts"
NOT_MODELLED = "not modelled: "
# file stem -> (changes to BASE, what the one line names after the file's name)
CONFIGS: dict[str, tuple[dict[str, Any], str]] = {
    "mla-half": ({"kv_lora_rank": 512}, "qk_nope_head_dim: missing (latent attention needs kv_lora_rank"),
    "shared-on-dense": ({"n_shared_experts": 1}, f"n_shared_experts: n_shared_experts {NO_EXPERTS}"),
    "dense-layers-on-dense": ({"first_k_dense_replace": 3},
                              f"first_k_dense_replace: first_k_dense_replace {NO_EXPERTS}"),
    "topk-no-experts": ({"num_experts_per_tok": 2}, f"num_experts_per_tok: num_experts_per_tok {NO_EXPERTS}"),
    "every-blocker": ({"kv_lora_rank": 512, "num_experts_per_tok": 2, "n_shared_experts": 2},
                      "qk_nope_head_dim: missing (latent attention needs kv_lora_rank, qk_nope_head_dim, "
                      "qk_rope_head_dim, v_head_dim; kv_lora_rank given); also num_experts_per_tok: "
                      f"num_experts_per_tok, n_shared_experts {NO_EXPERTS}"),
    "text-config-int": ({"text_config": 5}, "text_config: expected a table of the text model's fields, got int"),
    "text-config-list": ({"text_config": []}, "text_config: expected a table"),
    "layer-types-short": ({"layer_types": ["full_attention"] * 31}, "layer_types: 31 entries for "
                                                                    "num_hidden_layers = 32"),
    "layer-types-linear": ({"layer_types": ["linear_attention", "full_attention"] * 16},
                           f"layer_types: {NOT_MODELLED}layer_types (linear_attention"),
    "attn-type-list": ({"attn_type_list": [0, 1] * 16}, f"attn_type_list: {NOT_MODELLED}attn_type_list"),
    "linear-attn-config": ({"linear_attn_config": {"kda_layers": [1, 2]}},
                           f"linear_attn_config: {NOT_MODELLED}linear_attn_config"),
    "full-attention-interval": ({"full_attention_interval": 4},
                                f"full_attention_interval: {NOT_MODELLED}full_attention_interval"),
    "linear-key": ({"linear_num_key_heads": 16}, f"linear_num_key_heads: {NOT_MODELLED}linear_num_key_heads"),
    "layers-block-type": ({"layers_block_type": ["mamba", "attention"] * 16},
                          f"layers_block_type: {NOT_MODELLED}layers_block_type"),
    "hybrid-override": ({"hybrid_override_pattern": "M-M-M*-"},
                        f"hybrid_override_pattern: {NOT_MODELLED}hybrid_override_pattern"),
    "mamba-key": ({"mamba_d_state": 16}, f"mamba_d_state: {NOT_MODELLED}mamba_d_state"),
    "ssm-cfg": ({"ssm_cfg": {}}, f"ssm_cfg: {NOT_MODELLED}ssm_cfg"),
    "text-config-linear": ({"text_config": {"layer_types": ["linear_attention"] * 32}},
                           f"layer_types: {NOT_MODELLED}layer_types (linear_attention"),
    "intermediate-1e12": ({"intermediate_size": 10**12}, "intermediate_size: 1000000000000 exceeds the limit"),
    "hidden-0": ({"hidden_size": 0}, "hidden_size: must be positive, got 0"),
    "layers-1e9": ({"num_hidden_layers": 10**9}, "num_hidden_layers: 1000000000 exceeds the limit of 4096"),
    "vocab-2e40": ({"vocab_size": 2**40}, "vocab_size: 1099511627776 exceeds the limit of 16777216"),
    "heads-bool": ({"num_attention_heads": True}, "num_attention_heads: expected a positive integer, got True"),
    "head-dim-float": ({"head_dim": 128.5}, "head_dim: expected a positive integer, got 128.5"),
    "window-2e40": ({"sliding_window": 2**40}, "sliding_window: 1099511627776 exceeds the limit of 1073741824"),
    "kv-heads-negative": ({"num_key_value_heads": -8}, "num_key_value_heads: must be positive, got -8"),
    "intermediate-str": ({"intermediate_size": "14336"}, "intermediate_size: expected a positive integer"),
}


def _placeholder(stem: str) -> str:
    return "cfg_" + stem.replace("-", "_")


def build_models(d: Path, files: dict[str, str]) -> None:
    """Category 7's config.json files, one per :data:`CONFIGS` entry."""
    for stem, (changes, _) in CONFIGS.items():
        path = d / f"cfg-{stem}.json"
        path.write_text(json.dumps(BASE | changes))
        files[_placeholder(stem)] = str(path)


# (id, argv, what the one line names, outputs that must not exist)
MODEL_CASES: tuple[tuple[str, tuple[str, ...], str, tuple[str, ...]], ...] = tuple(
    (f"workload-config-{stem}",
     ("workload", "{" + _placeholder(stem) + "}", "--split", "8,8,1,64", "--world", "64", "--context", "32Ki",
      "--emit", "{dir}/w4m.toml"),
     f"cfg-{stem}.json: {names}", ("{dir}/w4m.toml",))
    for stem, (_, names) in CONFIGS.items()
)
