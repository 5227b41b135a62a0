"""Model files: Table 10 from the shipped catalogue, the HuggingFace reader, bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ocsplan.errors import InstanceError
from ocsplan.workload import catalogue, load_model, parse_model

DATA = Path(__file__).resolve().parent / "data"
CONFIG = DATA / "gpt-oss-120b" / "config.json"

# Paper Table 10: total parameters (T, as printed), active parameters (B, as printed),
# KV cache per token of context (KiB, FP4, growing layers only).
TABLE10 = [
    ("megatron-235b", "0.23", "17", 144),
    ("megatron-1t", "1.10", "38", 256),
    ("megatron-5t", "5.00", "207", 1024),
    ("gpt-oss-120b", "0.12", "5.7", 9),
    ("gpt-oss-1t-like", "1.05", "21", 16),
    ("gpt-oss-5.3-like", "4.97", "95", 48),
]


def _printed(value: float, template: str) -> str:
    """``value`` rounded to as many decimals as the paper prints in ``template``."""
    decimals = len(template.split(".")[1]) if "." in template else 0
    return f"{value:.{decimals}f}"


NEW_MODELS = ["deepseek-v3", "kimi-k2", "llama-4-maverick", "qwen3-235b-a22b"]


def test_catalogue_has_the_six_models_and_four_deployed_ones() -> None:
    assert catalogue() == sorted([name for name, *_ in TABLE10] + NEW_MODELS)


@pytest.mark.parametrize(("name", "total", "active", "kv_kib"), TABLE10)
def test_table10_parameters_and_kv(name: str, total: str, active: str, kv_kib: int) -> None:
    m = load_model(name)
    assert _printed(m.total_params / 1e12, total) == total
    assert _printed(m.active_params / 1e9, active) == active
    assert m.kv_elements_per_token * 0.5 == kv_kib * 1024  # FP4: 0.5 B per element


def test_kv_per_user_at_5m() -> None:
    # App. D.1: one Megatron 5T user at 5M tokens occupies 5.2 TB (5.24 TB), GPT-OSS-5.3-like 246 GB.
    assert f"{load_model('megatron-5t').kv_elements_per_user(5_000_000) * 0.5 / 1e12:.2f}" == "5.24"
    assert f"{load_model('gpt-oss-5.3-like').kv_elements_per_user(5_000_000) * 0.5 / 1e9:.0f}" == "246"


def test_gpt_oss_layers_alternate() -> None:
    # Figure 26b / App. D.1: sliding and full layers interleaved, 48 of 96 read the whole context.
    m = load_model("gpt-oss-5.3-like")
    assert (m.full_layers, m.sliding_layers, m.window) == (48, 48, 128)
    assert m.layer_types[:4] == ("sliding", "full", "sliding", "full")


def test_config_json_matches_catalogue() -> None:
    from_json = load_model(CONFIG)
    shipped = load_model("gpt-oss-120b")
    fields = ("layers", "hidden", "heads", "kv_heads", "head_dim", "vocab", "experts", "top_k", "width",
              "layer_types", "window", "moe", "tied")
    assert {f: getattr(from_json, f) for f in fields} == {f: getattr(shipped, f) for f in fields}
    assert from_json.name == "gpt-oss-120b"
    assert (from_json.total_params, from_json.active_params) == (shipped.total_params, shipped.active_params)


def test_dense_model_and_defaults() -> None:
    m = parse_model({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 8,
                     "vocab_size": 100, "intermediate_size": 256})
    assert (m.moe, m.experts, m.top_k, m.kv_heads, m.head_dim) == (False, 1, 1, 8, 8)
    # hand count: 2 x (64*(8+16)*8 + 8*8*64 + 3*64*256) + 2*100*64
    assert m.total_params == 2 * (64 * 24 * 8 + 8 * 8 * 64 + 3 * 64 * 256) + 2 * 100 * 64
    assert m.active_params == m.total_params


def _config(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(CONFIG.read_text())
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return data


@pytest.mark.parametrize(
    ("changes", "field", "text"),
    [
        ({"num_hidden_layers": None}, "num_hidden_layers", "missing"),
        ({"hidden_size": 0}, "hidden_size", "positive"),
        ({"hidden_size": -3}, "hidden_size", "positive"),
        ({"vocab_size": "big"}, "vocab_size", "integer"),
        ({"num_key_value_heads": 7}, "num_key_value_heads", "not a multiple"),
        ({"layer_types": ["global_attention"] * 36}, "layer_types[0]", "unknown layer type"),
        ({"kv_lora_rank": 512}, "qk_nope_head_dim", "missing (latent attention needs"),
        ({"n_shared_experts": 1}, "moe_intermediate_size", "n_shared_experts needs"),
        ({"first_k_dense_replace": 3}, "intermediate_size", "dense layers need their width"),
        ({"first_k_dense_replace": -1}, "first_k_dense_replace", "expected an integer"),
        ({"mlp_only_layers": [0, 36]}, "mlp_only_layers[1]", "layer index"),
        ({"num_hidden_layers": 5000}, "num_hidden_layers", "exceeds the limit"),
        ({"num_local_experts": 1 << 17}, "num_local_experts", "exceeds the limit"),
        ({"vocab_size": 1 << 25}, "vocab_size", "exceeds the limit"),
        ({"num_experts_per_tok": None, "experts_per_token": None}, "num_experts_per_tok", "missing"),
        ({"sliding_window": None}, "sliding_window", "missing"),
    ],
)
def test_bad_config_names_file_and_field(tmp_path: Path, changes: dict[str, Any], field: str, text: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(_config(**changes)))
    with pytest.raises(InstanceError) as info:
        load_model(path)
    assert info.value.field == field and text in info.value.detail
    assert str(info.value).startswith(f"{path}: {field}: ")


def test_unknown_model_and_syntax(tmp_path: Path) -> None:
    with pytest.raises(InstanceError, match="unknown model"):
        load_model("megatron-9t")
    bad = tmp_path / "m.toml"
    bad.write_text("num_hidden_layers = [\n")
    with pytest.raises(InstanceError, match="toml"):
        load_model(bad)
    big = tmp_path / "big.json"
    big.write_text(" " * ((1 << 20) + 1))
    with pytest.raises(InstanceError, match="larger than the limit of 1 MiB"):
        load_model(big)
