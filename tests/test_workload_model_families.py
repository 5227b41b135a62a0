"""The deployed families (MLA, shared experts, dense layers, text_config): parameters by hand vs model cards.

Every weight matrix is listed here by hand (HuggingFace names), independent of the
code's formulas; the published totals come from the model cards (DeepSeek-V3:
671B total / 37B active, +14B MTP, 685B on disk; Kimi K2: 1.04T / 32B;
Qwen3-235B-A22B: 235B / 22B; Llama 4 Maverick: 400B / 17B).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ocsplan.errors import InstanceError
from ocsplan.workload import COMM, Split, demand_rows, load_accelerator, load_model, parse_model
from ocsplan.workload.kernels import compute_time


def _swiglu(h: int, i: int) -> int:
    return 3 * h * i  # gate_proj, up_proj (h x i), down_proj (i x h)


def _mla_layer(h: int, heads: int, q_lora: int, kv_lora: int, nope: int, rope: int, v: int) -> int:
    q_a = h * q_lora  # q_a_proj
    q_b = q_lora * heads * (nope + rope)  # q_b_proj
    kv_a = h * (kv_lora + rope)  # kv_a_proj_with_mqa
    kv_b = kv_lora * heads * (nope + v)  # kv_b_proj
    o = heads * v * h  # o_proj
    return q_a + q_b + kv_a + kv_b + o  # (RMS norms: a few thousand elements, not counted)


def _deepseek_like(heads: int, experts: int, dense: int, vocab: int) -> tuple[int, int, int]:
    """(total, active, per-MoE-layer) of DeepSeek-V3-shaped models, H = 7168, 61 layers."""
    h, layers = 7168, 61
    attn = _mla_layer(h, heads, 1536, 512, 128, 64, 128)
    router = h * experts  # gate.weight
    expert = _swiglu(h, 2048)
    shared = _swiglu(h, 2048)  # n_shared_experts = 1 of moe_intermediate_size
    dense_ffn = _swiglu(h, 18432)
    emb = 2 * vocab * h  # embed_tokens, lm_head
    moe_layers = layers - dense
    total = layers * attn + dense * dense_ffn + moe_layers * (router + experts * expert + shared) + emb
    active = layers * attn + dense * dense_ffn + moe_layers * (router + 8 * expert + shared) + emb
    return total, active, attn + router + experts * expert + shared


def _within(value: float, card: float, tolerance: float = 0.02) -> bool:
    return abs(value / card - 1.0) <= tolerance


def test_deepseek_v3_by_hand() -> None:
    m = load_model("deepseek-v3")
    total, active, moe_layer = _deepseek_like(128, 256, 3, 129280)
    assert (m.total_params, m.active_params) == (total, active)
    assert _within(total, 671e9) and _within(active, 37e9)
    # MTP module as stored: one MoE layer with MLA, eh_proj (2H x H), its own embedding and head copies.
    mtp = moe_layer + 2 * 7168 * 7168 + 2 * 129280 * 7168
    assert m.mtp_params == mtp
    assert _within(total + mtp, 685e9)  # the card's 685B = 671B main + 14B MTP
    assert m.kv_elements_per_token == 61 * 576  # kv_lora_rank 512 + qk_rope_head_dim 64, 61 layers


def test_kimi_k2_by_hand() -> None:
    m = load_model("kimi-k2")
    total, active, _ = _deepseek_like(64, 384, 1, 163840)
    assert (m.total_params, m.active_params) == (total, active)
    assert _within(total, 1.04e12)
    # The 32B activated of the card leaves out the input embedding (a lookup, not a GEMM).
    assert _within(active - 163840 * 7168, 32e9)
    assert m.mtp_params == 0


def test_qwen3_235b_by_hand() -> None:
    m = load_model("qwen3-235b-a22b")
    h, layers = 4096, 94
    attn = h * 64 * 128 + 2 * h * 4 * 128 + 64 * 128 * h  # q, k, v, o (q_norm/k_norm 128 each, not counted)
    total = layers * (attn + h * 128 + 128 * _swiglu(h, 1536)) + 2 * 151936 * h
    active = layers * (attn + h * 128 + 8 * _swiglu(h, 1536)) + 2 * 151936 * h
    assert (m.total_params, m.active_params) == (total, active)
    assert _within(total, 235e9) and _within(active, 22e9)
    assert (m.dense_layers, m.shared_width) == ((), 0)


def test_llama_4_maverick_by_hand() -> None:
    m = load_model("llama-4-maverick")
    h, layers = 5120, 48
    attn = h * 40 * 128 + 2 * h * 8 * 128 + 40 * 128 * h
    moe = h * 128 + 128 * _swiglu(h, 8192) + _swiglu(h, 8192)  # router, 128 routed, 1 shared expert
    moe_active = h * 128 + _swiglu(h, 8192) + _swiglu(h, 8192)
    dense = _swiglu(h, 16384)  # intermediate_size_mlp on the even layers
    emb = 2 * 202048 * h
    assert m.dense_layers == tuple(range(0, 48, 2))
    assert m.total_params == layers * attn + 24 * moe + 24 * dense + emb
    assert m.active_params == layers * attn + 24 * moe_active + 24 * dense + emb
    assert _within(m.total_params, 400e9) and _within(m.active_params, 17e9)


LLAMA4_WRAPPED: dict[str, Any] = {
    "architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4",
    "text_config": {"model_type": "llama4_text", "hidden_size": 5120, "intermediate_size": 8192,
                    "intermediate_size_mlp": 16384, "num_hidden_layers": 48, "num_attention_heads": 40,
                    "num_key_value_heads": 8, "head_dim": 128, "num_local_experts": 128,
                    "num_experts_per_tok": 1, "interleave_moe_layer_step": 2, "vocab_size": 202048,
                    "tie_word_embeddings": False, "attention_chunk_size": 8192},
    "vision_config": {"model_type": "llama4_vision_model", "hidden_size": 1408},
}


def test_text_config_is_read_and_the_vision_tower_named(tmp_path: Path) -> None:
    path = tmp_path / "llama-4-maverick" / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps(LLAMA4_WRAPPED))
    m = load_model(path)
    shipped = load_model("llama-4-maverick")
    assert (m.total_params, m.active_params, m.kv_elements_per_token) == (
        shipped.total_params, shipped.active_params, shipped.kv_elements_per_token)
    assert m.ignored == ("vision_config",)


BASE: dict[str, Any] = {"num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 8, "vocab_size": 100,
                        "intermediate_size": 32}
MOE: dict[str, Any] = BASE | {"num_experts": 8, "num_experts_per_tok": 2}


@pytest.mark.parametrize("key", ["num_experts", "n_routed_experts", "num_local_experts", "moe_num_experts"])
@pytest.mark.parametrize("topk", ["num_experts_per_tok", "experts_per_token"])
def test_expert_aliases(key: str, topk: str) -> None:
    data = BASE | {key: 8, topk: 2}
    m = parse_model(data)
    assert (m.experts, m.top_k, m.head_dim) == (8, 2, 8)  # head_dim absent: 64 / 8
    # hand count: 4 x (64*(8+16)*8 + 8*8*64 + 64*8 + 8 * 3*64*32) + 2*100*64
    assert m.total_params == 4 * (64 * 24 * 8 + 8 * 8 * 64 + 64 * 8 + 8 * 3 * 64 * 32) + 2 * 100 * 64


def test_qwen_sparse_fields_without_dense_layers_change_nothing() -> None:
    plain = parse_model(MOE)
    qwen = parse_model(MOE | {"decoder_sparse_step": 1, "mlp_only_layers": []})
    split = Split(1, 2, 2, 2)
    assert demand_rows(qwen, 4, split, 8) == demand_rows(plain, 4, split, 8)
    assert len(demand_rows(qwen, 4, split, 8)) == 6


def test_dense_layers_get_their_own_rows() -> None:
    m = load_model("deepseek-v3")
    split = Split(4, 128, 64, 8)
    rows = {(r.region, r.axis): r for r in demand_rows(m, 512, split, 16, COMM["fp4"])}
    assert (rows[("ffn", "EP")].calls, rows[("ffn-dense", "EP")].calls) == (58, 3)
    # B = 16, EP = 64: each EP rank takes ceil(16/64) = 1 dense row; the all-gather collects 64 rows of H x 0.5 B.
    assert rows[("ffn-dense", "EP")].payload == 64 * 1 * 7168 // 2
    assert rows[("ffn-dense", "TPE")].payload == 7168 // 2
    # MoE rows: Eq. 7 with E=256, B k = 128: N_act = round(256 (1 - (255/256)^128)) = 101;
    # ceil(101/64) = 2 local experts, ceil(128*2/101) = 3 routed rows, + 1 shared-expert row.
    assert rows[("ffn", "TPE")].payload == (3 + 1) * 7168 // 2
    # KVP exchanges the partial outputs after W_UV: v_head_dim 128 x 0.5 B + 1 B LSE per local head.
    assert rows[("attention", "KVP")].payload == 16 * (128 // 128) * (128 // 2 + 1)


def test_mla_flash_decode_reads_the_replicated_latent() -> None:
    m = load_model("deepseek-v3")
    acc = load_accelerator("rx00")
    split, batch, context = Split(4, 128, 64, 8), 2, 1_000_000
    c = compute_time(m, acc, 512, split, batch, context)
    (k,) = [k for k in c.kernels if k.name.startswith("flash-decode")]
    tokens = context / 4
    assert k.count == 61
    assert k.bytes == batch * tokens * 576 * 0.5  # whole latent per TPA rank, KVP shard of the sequence
    assert k.flops == batch * 1 * tokens * 2 * (2 * 512 + 64)  # 128 heads / TPA 128 = 1 local head


@pytest.mark.parametrize(
    ("changes", "field", "text"),
    [
        ({"kv_lora_rank": 512, "qk_rope_head_dim": 64}, "qk_nope_head_dim", "latent attention needs"),
        ({"num_experts": 8, "num_experts_per_tok": 2, "n_shared_experts": 1}, "moe_intermediate_size",
         "shared experts' width"),
        ({"num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 16, "first_k_dense_replace": 5},
         "first_k_dense_replace", "expected an integer in 0..4"),
        ({"num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 16, "moe_layer_freq": 0},
         "moe_layer_freq", "positive"),
        ({"num_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 16, "mlp_only_layers": [4]},
         "mlp_only_layers[0]", "layer index"),
        ({"kv_lora_rank": 0, "qk_rope_head_dim": 64, "qk_nope_head_dim": 8, "v_head_dim": 8}, "kv_lora_rank",
         "positive"),
        ({"layer_types": ["chunked_attention", "full_attention"] * 2}, "attention_chunk_size", "missing"),
        ({"attention_chunk_size": 16, "no_rope_layers": [1, 1, 0]}, "no_rope_layers", "4 entries"),
        ({"attention_chunk_size": 16, "no_rope_layers": [1, 2, 1, 0]}, "no_rope_layers", "0 (NoPE) or 1"),
        ({"attention_chunk_size": 0}, "attention_chunk_size", "positive"),
    ],
)
def test_half_present_features(changes: dict[str, Any], field: str, text: str) -> None:
    with pytest.raises(InstanceError) as info:
        parse_model(BASE | changes, "cfg.json")
    assert info.value.field == field and text in info.value.detail


@pytest.mark.parametrize(("context", "tokens"), [(4096, 48 * 4096), (5_000_000, 12 * 5_000_000 + 36 * 8192)])
def test_llama_4_chunked_layers_keep_one_chunk(context: int, tokens: int) -> None:
    """Layers 4, 8, ..., 48 (NoPE) attend to the whole context, the other 36 within 8192-token chunks."""
    m = load_model("llama-4-maverick")
    assert (m.full_layers, m.chunked_layers, m.chunk) == (12, 36, 8192)
    assert m.layer_types[3] == m.layer_types[47] == "full" and m.layer_types[0] == "chunked"
    per_layer = 8 * 128 * 2  # K and V of 8 KV heads of 128
    assert m.kv_elements_per_user(context) == per_layer * tokens
    assert m.kv_elements_per_token == per_layer * 12
    c = compute_time(m, load_accelerator("rx00"), 512, Split(64, 8, 8, 64), 1, context)
    chunked = {k.name: k for k in c.kernels}.get("flash-decode (chunked)")
    if context > 8192:
        assert chunked is not None and chunked.count == 36
        assert chunked.bytes == (8192 / 64) * 1 * 2 * 128 * 0.5  # one KV head per TPA rank, KVP shard of a chunk


@pytest.mark.parametrize(("flags", "full"), [([1, 1, 1, 0], (3,)), ([0, 1, 0, 1], (0, 2))])
def test_no_rope_layers_name_the_global_layers(flags: list[int], full: tuple[int, ...]) -> None:
    m = parse_model(BASE | {"attention_chunk_size": 16, "no_rope_layers": flags}, "cfg.json")
    assert tuple(i for i, kind in enumerate(m.layer_types) if kind == "full") == full
    assert m.kv_elements_per_user(100) == m.kv_per_layer * (len(full) * 100 + (4 - len(full)) * 16)


def test_every_blocker_in_one_line() -> None:
    data = BASE | {"layer_types": ["full_attention", "linear_attention", "mamba"], "is_encoder_decoder": True}
    with pytest.raises(InstanceError) as info:
        parse_model(data, "next.json")
    text = str(info.value)
    assert "\n" not in text and text.startswith("next.json: layer_types: not modelled: ")
    assert "linear_attention, mamba" in text and "is_encoder_decoder (encoder-decoder model)" in text


@pytest.mark.parametrize("name", ["megatron-5t", "deepseek-v3"])
def test_tokens_per_step_scale_compute_but_read_the_kv_once(name: str) -> None:
    m = load_model(name)
    acc = load_accelerator("rx00")
    split = Split(4, 128, 64, 8)
    one = {k.name: k for k in compute_time(m, acc, 512, split, 4, 100_000).kernels}
    three = {k.name: k for k in compute_time(m, acc, 512, split, 4, 100_000, tokens_per_step=3).kernels}
    for name_, kernel in one.items():
        if name_.startswith("flash-decode"):
            assert three[name_].bytes == kernel.bytes  # the KV cache of the 4 users, read once
            assert three[name_].flops == pytest.approx(3 * kernel.flops)
    assert three["lm head"].flops == pytest.approx(3 * one["lm head"].flops)
    assert three["output projection"].flops == pytest.approx(3 * one["output projection"].flops)


def test_tokens_per_step_payloads_scale_by_k() -> None:
    m = load_model("megatron-5t")
    split = Split(4, 128, 64, 8)
    one = {(r.region, r.axis): r.payload for r in demand_rows(m, 512, split, 1)}
    # k = 4 verified tokens of one user = the rows of four: Table 1's B = 4 payloads (16KiB world AR, 264B KVP).
    four = {(r.region, r.axis): r.payload for r in demand_rows(m, 512, split, 1 * 4)}
    assert four[("attention", "world")] == 4 * one[("attention", "world")] == 16 * 1024
    assert four[("attention", "KVP")] == 264


# issue 38, category 7: configs that hide what they are
def test_every_half_present_feature_in_one_line() -> None:
    data = BASE | {"text_config": "llama", "kv_lora_rank": 512, "n_shared_experts": 1}
    with pytest.raises(InstanceError) as info:
        parse_model(data, "cfg.json")
    text = str(info.value)
    assert "\n" not in text and text.startswith("cfg.json: text_config: expected a table")
    assert "qk_nope_head_dim: missing (latent attention" in text
    assert "n_shared_experts on a model with no experts" in text


@pytest.mark.parametrize(("key", "value"), [
    ("num_experts_per_tok", 2), ("experts_per_token", 4), ("moe_intermediate_size", 16), ("n_shared_experts", 1),
    ("num_shared_experts", 2), ("shared_expert_intermediate_size", 64), ("first_k_dense_replace", 1),
    ("moe_layer_freq", 2), ("interleave_moe_layer_step", 2), ("decoder_sparse_step", 1), ("mlp_only_layers", [0]),
    ("intermediate_size_mlp", 64),
])
def test_moe_parts_on_a_model_without_experts_are_refused(key: str, value: object) -> None:
    with pytest.raises(InstanceError) as info:
        parse_model(BASE | {key: value}, "cfg.json")
    assert info.value.field == key and "on a model with no experts" in info.value.detail


@pytest.mark.parametrize("extra", [{}, {"n_shared_experts": 0, "mlp_only_layers": []}])
def test_empty_moe_defaults_on_a_dense_model_are_accepted(extra: dict[str, Any]) -> None:
    m = parse_model(BASE | extra, "cfg.json")
    assert (m.experts, m.top_k, m.moe) == (1, 1, False)


@pytest.mark.parametrize("changes", [
    {"layer_types": ["linear_attention", "full_attention"] * 2},
    {"attn_type_list": [0, 1, 0, 1]},  # MiniMax-01: 0 is lightning (linear) attention
    {"linear_attn_config": {"kda_layers": [1, 2]}},  # Kimi Linear
    {"full_attention_interval": 4},  # Qwen3-Next: gated DeltaNet between the full layers
    {"linear_key_head_dim": 128, "linear_conv_kernel_dim": 4},
    {"layers_block_type": ["mamba", "attention", "mamba", "attention"]},  # Zamba
    {"hybrid_override_pattern": "M-M*"},  # Nemotron-H
    {"attn_layer_period": 8, "attn_layer_offset": 4},  # Jamba
    {"mamba_d_conv": 4},
    {"ssm_state_size": 16},
])
def test_linear_attention_and_state_space_layers_by_every_spelling(changes: dict[str, Any]) -> None:
    with pytest.raises(InstanceError) as info:
        parse_model(BASE | changes, "hybrid.json")
    assert "not modelled" in info.value.detail and "\n" not in str(info.value)


def test_softmax_only_attn_type_list_is_accepted() -> None:
    assert parse_model(BASE | {"attn_type_list": [1, 1, 1, 1]}, "cfg.json").full_layers == 4


def test_layer_types_of_a_config_json_name_every_layer() -> None:
    with pytest.raises(InstanceError) as info:
        parse_model(BASE | {"sliding_window": 8, "layer_types": ["sliding_attention", "full_attention"]}, "cfg.json")
    assert info.value.field == "layer_types" and "2 entries for num_hidden_layers = 4" in info.value.detail
    # the project's TOML model keeps its cycle (the catalogue's GPT-OSS: sliding, full, ...)
    m = load_model("gpt-oss-120b")
    assert m.sliding_layers == m.full_layers == 18


# K and V of 8 heads of 64 (H 64 / 8 heads, no num_key_value_heads): per token and layer
PER_LAYER = 2 * 8 * 8


@pytest.mark.parametrize(("changes", "sliding"), [
    ({"sliding_window": 16}, (0, 1, 2, 3)),  # Mistral: every layer
    ({"sliding_window": 16, "use_sliding_window": False, "max_window_layers": 2}, ()),  # Qwen2.5's default
    ({"sliding_window": 16, "use_sliding_window": True, "max_window_layers": 2}, (2, 3)),  # Qwen2: from layer 2
    ({"sliding_window": 16, "sliding_window_pattern": 2}, (0, 2)),  # Gemma 3: all but every 2nd
    ({"sliding_window": 16, "model_type": "gemma2"}, (0, 2)),  # Gemma 2: every other, from the first
    ({"sliding_window": None}, ()),  # Mixtral: null
])
def test_sliding_window_without_layer_types_is_priced_as_windowed_layers(changes: dict[str, Any],
                                                                         sliding: tuple[int, ...]) -> None:
    m = parse_model(BASE | changes, "cfg.json")
    assert tuple(i for i, kind in enumerate(m.layer_types) if kind == "sliding") == sliding
    context = 1000  # by hand: sliding layers keep 16 tokens, full ones all 1000
    assert m.kv_elements_per_user(context) == PER_LAYER * (16 * len(sliding) + context * (4 - len(sliding)))


@pytest.mark.parametrize(("key", "value"), [("intermediate_size", 10**12), ("sliding_window", 2**40),
                                            ("head_dim", 2**30), ("q_lora_rank", 2**40)])
def test_integer_sizes_have_real_bounds(key: str, value: int) -> None:
    data = BASE | {key: value}
    if key == "q_lora_rank":
        data |= {"kv_lora_rank": 16, "qk_nope_head_dim": 8, "qk_rope_head_dim": 8, "v_head_dim": 8}
    with pytest.raises(InstanceError) as info:
        parse_model(data, "cfg.json")
    assert info.value.field == key and "exceeds the limit" in info.value.detail
