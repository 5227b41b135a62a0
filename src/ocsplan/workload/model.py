"""Model files: a decoder-only (MoE) transformer described with HuggingFace names.

A model is a catalogue name (``data/models/<name>.toml``: the six models of
the paper's Table 10), a TOML file or a HuggingFace ``config.json``; both use
the HuggingFace keys, so a ``config.json`` reads unchanged:

``num_hidden_layers`` L, ``hidden_size`` H, ``num_attention_heads`` n_q,
``num_key_value_heads`` n_kv (default n_q), ``head_dim`` d (default H / n_q),
``vocab_size`` V, experts E = ``num_local_experts`` | ``num_experts`` |
``n_routed_experts``, top-k = ``num_experts_per_tok`` | ``experts_per_token``,
expert width I = ``moe_intermediate_size`` | ``intermediate_size``,
``layer_types`` (``full_attention`` / ``sliding_attention``; in a TOML model a
cycle repeated over the layers, in a ``config.json`` one per layer) with
``sliding_window`` W, ``tie_word_embeddings``. Without ``layer_types``, a
``sliding_window`` is read as HuggingFace builds the layers: Qwen2's
``use_sliding_window`` / ``max_window_layers``, a ``sliding_window_pattern``
(Gemma 3), Gemma 2's alternation, else (Mistral) every layer slides. Without an
expert field the FFN is dense (E = k = 1), and MoE-only keys (top-k, shared
experts, dense-layer counts) are refused as a feature half-present.

Also read: fields nested under ``text_config`` (Llama 4 and other multimodal
wrappers; the vision tower is named as ignored); latent attention (MLA:
``q_lora_rank`` (null: one ``q_proj``), ``kv_lora_rank``, ``qk_nope_head_dim``,
``qk_rope_head_dim``, ``v_head_dim``); shared experts (``n_shared_experts`` x
``moe_intermediate_size``, ``shared_expert_intermediate_size``, Llama 4's one
shared expert of ``intermediate_size``); dense FFN layers among MoE ones
(``first_k_dense_replace`` / ``moe_layer_freq``, ``interleave_moe_layer_step``
/ ``intermediate_size_mlp``, ``decoder_sparse_step`` / ``mlp_only_layers``);
``num_nextn_predict_layers`` MTP modules (counted apart). Architectures that
cannot be modelled (linear or lightning attention and state-space layers, by every
spelling: ``layer_types``, ``attn_type_list``, ``linear_attn_config``,
``full_attention_interval``, ``linear_*`` / ``mamba_*`` / ``ssm_*`` keys,
``layers_block_type``, ``hybrid_override_pattern``; encoder-decoder) are refused
in one line listing every blocker, and so are features present in part (an MLA
key without the others, a ``text_config`` that is not a table). A TOML model file is the project's
own format, so a key outside :data:`MODEL_KEYS` is refused with the nearest known
one; a ``config.json`` carries many keys no decode model needs, so those are
ignored and kept in ``Model.unused`` (``--verbose`` lists them). Counts are bounded
by :mod:`ocsplan.limits` (MAX_MODEL_*); files by MAX_MODEL_FILE_BYTES (1 MiB).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import InstanceError
from ..fields import unknown_keys
from ..files import read_text, toml_data
from ..limits import MAX_MODEL_EXPERTS, MAX_MODEL_FILE_BYTES, MAX_MODEL_HIDDEN, MAX_MODEL_LAYERS, MAX_MODEL_VOCAB
from .latent import Mla

__all__ = [
    "MAX_LAYERS",
    "MODEL_KEYS",
    "Model",
    "catalogue",
    "load_model",
    "parse_model",
]

MAX_LAYERS = MAX_MODEL_LAYERS
_LIMIT = MAX_MODEL_HIDDEN  # any other integer field (ranks, head dims, top-k)

_EXPERTS = ("num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts")
_TOPK = ("num_experts_per_tok", "experts_per_token")
_WIDTH = ("moe_intermediate_size", "intermediate_size")
_LAYER_TYPES = {"full_attention": "full", "sliding_attention": "sliding", "chunked_attention": "chunked"}
_MLA_KEYS = ("kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")
# linear (lightning) attention or state-space layers, by every spelling the families use; then encoder-decoder
_BLOCKER_KEYS = ("layers_block_type", "hybrid_override_pattern", "attn_layer_period", "mamba_d_state", "ssm_cfg",
                 "linear_num_value_heads", "linear_attn_config", "full_attention_interval", "attn_type_list",
                 "is_encoder_decoder", "encoder_layers", "num_encoder_layers")
_STATE_PREFIXES = ("linear_", "mamba_", "ssm_")  # any such key: linear-attention or state-space layers
# MoE-only keys: on a model without an expert count they describe a part the model does not have
_MOE_ONLY = ("num_experts_per_tok", "experts_per_token", "moe_intermediate_size", "n_shared_experts",
             "num_shared_experts", "shared_expert_intermediate_size", "first_k_dense_replace", "moe_layer_freq",
             "interleave_moe_layer_step", "decoder_sparse_step", "mlp_only_layers", "intermediate_size_mlp")
_WIDTH_LIMIT = 1 << 20  # an FFN or expert width (the largest published: 53,248)
_WINDOW_LIMIT = 1 << 30  # tokens of a sliding window or attention chunk
# every key the reader reads (or refuses as not modelled): a TOML model may use no other
MODEL_KEYS = frozenset({
    "name", "description", "model_type", "num_hidden_layers", "hidden_size", "num_attention_heads",
    "num_key_value_heads", "head_dim", "vocab_size", *_EXPERTS, *_TOPK, *_WIDTH, "layer_types", "sliding_window",
    "tie_word_embeddings", "num_nextn_predict_layers", "q_lora_rank", *_MLA_KEYS, "first_k_dense_replace",
    "moe_layer_freq", "interleave_moe_layer_step", "decoder_sparse_step", "mlp_only_layers", "intermediate_size_mlp",
    "shared_expert_intermediate_size", "n_shared_experts", "num_shared_experts", "text_config", "vision_config",
    "audio_config", "attention_chunk_size", "no_rope_layers", "no_rope_layer_interval", *_BLOCKER_KEYS,
    "use_sliding_window", "max_window_layers", "sliding_window_pattern",
})


@dataclass(frozen=True)
class Model:
    """Shapes of one model (element counts; precisions come with the workload)."""

    name: str
    layers: int  # L
    hidden: int  # H
    heads: int  # n_q
    kv_heads: int  # n_kv (MLA: n_q, the latent is shared and replicated over TPA)
    head_dim: int  # d (MLA: v_head_dim, the width each head outputs)
    vocab: int  # V
    experts: int  # E (1: dense FFN)
    top_k: int  # k
    width: int  # I, width of one expert (or of the dense FFN)
    layer_types: tuple[str, ...]  # "full", "sliding" or "chunked", one per layer
    window: int = 0  # W of the sliding layers
    moe: bool = True
    tied: bool = False
    description: str = ""
    source: str = ""
    mla: Mla | None = None
    shared_width: int = 0  # summed width of the shared experts of a MoE layer (every token)
    dense_layers: tuple[int, ...] = ()  # indices of dense-FFN layers of a MoE model
    dense_width: int = 0  # width of those dense FFN layers
    mtp_layers: int = 0  # num_nextn_predict_layers (MTP modules, counted apart)
    ignored: tuple[str, ...] = ()  # config parts read past (vision tower ...)
    chunk: int = 0  # tokens per attention chunk of the chunked layers (Llama 4's attention_chunk_size)
    unused: tuple[str, ...] = ()  # keys of a config.json the model does not use (sorted)

    @property
    def full_layers(self) -> int:
        return self.layer_types.count("full")

    @property
    def sliding_layers(self) -> int:
        return self.layer_types.count("sliding")

    @property
    def chunked_layers(self) -> int:
        return self.layer_types.count("chunked")

    @property
    def moe_layers(self) -> int:
        """Layers with the routed FFN (all of them unless some are dense)."""
        return self.layers - len(self.dense_layers)

    @property
    def attention_params(self) -> int:
        """QKV (or MLA) and output projections of one layer (norms negligible, not counted)."""
        h, d = self.hidden, self.head_dim
        if self.mla is not None:
            m = self.mla
            return m.shared_params(h) + m.head_params(h, self.heads) + self.heads * m.v_head_dim * h
        return h * (self.heads + 2 * self.kv_heads) * d + self.heads * d * h

    @property
    def router_params(self) -> int:
        return self.hidden * self.experts if self.moe else 0

    @property
    def expert_params(self) -> int:
        """One SwiGLU expert (three matrices H x I)."""
        return 3 * self.hidden * self.width

    @property
    def shared_params(self) -> int:
        """Shared experts of one MoE layer (SwiGLU, summed width)."""
        return 3 * self.hidden * self.shared_width

    @property
    def dense_params(self) -> int:
        """The SwiGLU FFN of one dense layer of a MoE model."""
        return 3 * self.hidden * self.dense_width

    @property
    def embedding_params(self) -> int:
        """Embedding and LM head (one matrix if tied)."""
        return (1 if self.tied else 2) * self.vocab * self.hidden

    @property
    def moe_layer_params(self) -> int:
        return self.router_params + self.experts * self.expert_params + self.shared_params

    @property
    def total_params(self) -> int:
        per_layer = self.attention_params + self.router_params + self.experts * self.expert_params
        if not self.dense_layers and not self.shared_width:
            return self.layers * per_layer + self.embedding_params
        return (self.layers * self.attention_params + self.moe_layers * self.moe_layer_params
                + len(self.dense_layers) * self.dense_params + self.embedding_params)

    @property
    def active_params(self) -> int:
        """Parameters one token touches, embedding and LM head included (Table 10)."""
        per_layer = self.attention_params + self.router_params + self.top_k * self.expert_params
        if not self.dense_layers and not self.shared_width:
            return self.layers * per_layer + self.embedding_params
        moe = self.router_params + self.top_k * self.expert_params + self.shared_params
        return (self.layers * self.attention_params + self.moe_layers * moe
                + len(self.dense_layers) * self.dense_params + self.embedding_params)

    @property
    def mtp_params(self) -> int:
        """MTP modules as stored (DeepSeek-V3): one MoE layer, eh_proj 2H x H and own embedding + head each."""
        per = self.attention_params + self.moe_layer_params + 2 * self.hidden * self.hidden + self.embedding_params
        return self.mtp_layers * per

    @property
    def kv_per_layer(self) -> int:
        """Cached elements per token per layer: 2 n_kv d, or the MLA latent."""
        return self.mla.latent if self.mla is not None else 2 * self.kv_heads * self.head_dim

    @property
    def kv_elements_per_token(self) -> int:
        """K and V elements per token of context in the layers whose cache grows with it."""
        return self.kv_per_layer * self.full_layers

    def kv_elements_per_user(self, context: int) -> int:
        """K and V elements of one user at ``context`` tokens (sliding layers keep W, chunked ones a chunk)."""
        return self.kv_per_layer * sum(self.context_of(kind, context) * self.layer_types.count(kind)
                                       for kind in ("full", "sliding", "chunked"))

    def context_of(self, kind: str, context: int) -> int:
        """Tokens a layer of ``kind`` attends to (and keeps in its KV cache).

        A chunked layer (Llama 4) attends within the current chunk of ``chunk`` tokens: from 1 to
        ``chunk`` tokens as decoding moves through a chunk. It is priced at a full chunk, the worst
        position, which is also the cache a deployment must hold per user.
        """
        if kind == "full":
            return context
        return min(self.window if kind == "sliding" else self.chunk, context)


class _Fields:
    def __init__(self, data: Mapping[str, Any], source: str) -> None:
        self.data = data
        self.source = source

    def fail(self, field: str, message: str) -> InstanceError:
        return InstanceError(self.source, field, message)

    def first(self, keys: tuple[str, ...]) -> str | None:
        for key in keys:
            if self.data.get(key) is not None:
                return key
        return None

    def integer(self, key: str, default: int | None = None, limit: int = _LIMIT) -> int:
        value = self.data.get(key)
        if value is None:
            if default is None:
                raise self.fail(key, "missing")
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(key, f"expected a positive integer, got {value!r}")
        if value <= 0:
            raise self.fail(key, f"must be positive, got {value}")
        if value > limit:
            raise self.fail(key, f"{value} exceeds the limit of {limit}")
        return value


_NOT_ATTENTION = ("linear_attention", "mamba", "mamba2", "ssm", "rwkv", "recurrent", "conv")


def _blockers(data: Mapping[str, Any]) -> list[str]:
    """Every part of the config that cannot be modelled, as ``field (reason)``."""
    found: list[str] = []
    types = data.get("layer_types")
    if isinstance(types, list):
        bad = sorted({t for t in types if isinstance(t, str) and any(w in t for w in _NOT_ATTENTION)})
        if bad:
            found.append(f"layer_types ({', '.join(bad)}: linear-attention or state-space layers)")
    for key in _BLOCKER_KEYS[:9]:
        value = data.get(key)
        if value is None or (key == "attn_type_list" and isinstance(value, list) and set(value) <= {1}):
            continue  # MiniMax's attn_type_list: 0 = lightning (linear) attention, 1 = softmax
        found.append(f"{key} (state-space or linear-attention layers)")
    named = set(_BLOCKER_KEYS)
    prefixed = sorted(str(k) for k in data if str(k).startswith(_STATE_PREFIXES) and k not in named
                      and data[k] is not None)
    if prefixed:
        found.append(f"{prefixed[0]} ({', '.join(prefixed)[:200]}: linear-attention or state-space layers)")
    if data.get("is_encoder_decoder") is True or data.get("encoder_layers") or data.get("num_encoder_layers"):
        key = "is_encoder_decoder" if data.get("is_encoder_decoder") is True else (
            "encoder_layers" if data.get("encoder_layers") else "num_encoder_layers")
        found.append(f"{key} (encoder-decoder model)")
    return found


def _incomplete(outer: Mapping[str, Any], data: Mapping[str, Any], layers: object,
                json_file: bool) -> list[tuple[str, str]]:
    """Features present in part, all of them, as (field, reason): the config hides what it is."""
    found: list[tuple[str, str]] = []
    text = outer.get("text_config")
    if text is not None and not isinstance(text, Mapping):
        found.append(("text_config", f"expected a table of the text model's fields, got {type(text).__name__}"))
    present = [k for k in _MLA_KEYS if data.get(k) is not None]
    if present and len(present) < len(_MLA_KEYS):
        missing = [k for k in _MLA_KEYS if k not in present]
        found.append((missing[0], f"missing (latent attention needs {', '.join(_MLA_KEYS)}; "
                                  f"{', '.join(present)} given)"))
    if not any(data.get(k) is not None for k in _EXPERTS):
        moe_only = [k for k in _MOE_ONLY if data.get(k) not in (None, 0, [], False)]
        if moe_only:
            found.append((moe_only[0], f"{', '.join(moe_only)} on a model with no experts "
                                       f"(give {' | '.join(_EXPERTS[:3])})"))
    types = data.get("layer_types")
    if (json_file and isinstance(types, list) and types and type(layers) is int
            and 0 < layers <= MAX_MODEL_LAYERS and len(types) != layers):
        found.append(("layer_types", f"{len(types)} entries for num_hidden_layers = {layers}"))
    return found


def _chunked_layer_types(f: _Fields, layers: int) -> tuple[str, ...]:
    """Llama 4: the RoPE layers attend in chunks, the NoPE ones (every ``no_rope_layer_interval``-th,
    default 4, or the 0 entries of ``no_rope_layers``) to the whole context."""
    flags = f.data.get("no_rope_layers")
    if flags is not None:
        if not isinstance(flags, list) or len(flags) < layers or any(type(x) is not int or x not in (0, 1)
                                                                     for x in flags):
            raise f.fail("no_rope_layers", f"expected a list of {layers} entries 0 (NoPE) or 1 (RoPE)")
        return tuple("chunked" if flags[i] else "full" for i in range(layers))
    interval = f.integer("no_rope_layer_interval", default=4, limit=MAX_MODEL_LAYERS)
    return tuple("full" if (i + 1) % interval == 0 else "chunked" for i in range(layers))


def _dense_layer_list(f: _Fields, layers: int) -> tuple[int, ...]:
    """Indices of the dense-FFN layers of a MoE model from the DeepSeek, Llama 4 and Qwen fields."""
    data = f.data
    dense: set[int] = set()
    if data.get("first_k_dense_replace") is not None:
        k = data["first_k_dense_replace"]
        if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= layers:
            raise f.fail("first_k_dense_replace", f"expected an integer in 0..{layers}, got {k!r}")
        freq = f.integer("moe_layer_freq", 1, limit=layers)
        dense |= {i for i in range(layers) if i < k or i % freq}
    elif data.get("moe_layer_freq") is not None:
        freq = f.integer("moe_layer_freq", limit=layers)
        dense |= {i for i in range(layers) if i % freq}
    if data.get("interleave_moe_layer_step") is not None:
        step = f.integer("interleave_moe_layer_step", limit=layers)
        dense |= {i for i in range(layers) if (i + 1) % step}
    if data.get("decoder_sparse_step") is not None:
        step = f.integer("decoder_sparse_step", limit=layers)
        dense |= {i for i in range(layers) if (i + 1) % step}
    only = data.get("mlp_only_layers")
    if only is not None:
        if not isinstance(only, list):
            raise f.fail("mlp_only_layers", f"expected a list of layer indices, got {only!r}")
        for j, item in enumerate(only):
            if isinstance(item, bool) or not isinstance(item, int) or not 0 <= item < layers:
                raise f.fail(f"mlp_only_layers[{j}]", f"expected a layer index in 0..{layers - 1}, got {item!r}")
            dense.add(item)
    return tuple(sorted(dense))


def _mla(f: _Fields) -> Mla | None:
    """The latent attention of a config, or None; every MLA key must be there once one is."""
    present = [k for k in _MLA_KEYS if f.data.get(k) is not None]
    if not present:
        return None
    missing = [k for k in _MLA_KEYS if k not in present]
    if missing:
        raise f.fail(missing[0], f"missing (latent attention needs {', '.join(_MLA_KEYS)}; "
                                 f"{', '.join(present)} given)")
    q_lora = 0 if f.data.get("q_lora_rank") is None else f.integer("q_lora_rank")
    return Mla(q_lora, *(f.integer(k) for k in _MLA_KEYS))


def _unwrap(data: Mapping[str, Any]) -> tuple[Mapping[str, Any], tuple[str, ...]]:
    """The text model's fields (``text_config`` of a multimodal wrapper) and the parts ignored."""
    text = data.get("text_config")
    if not isinstance(text, Mapping):
        return data, ()
    ignored = tuple(k for k in ("vision_config", "audio_config") if data.get(k) is not None)
    merged = {k: v for k, v in data.items() if k not in ("text_config", "vision_config", "audio_config")}
    merged.update(text)
    return merged, ignored


def parse_model(data: Mapping[str, Any], source: str = "<model>", name: str = "", strict: bool = False) -> Model:
    """Validate HuggingFace-style model data (errors name the file and field).

    ``strict`` (TOML model files): a key outside :data:`MODEL_KEYS` is refused; otherwise
    (a HuggingFace ``config.json``) such keys are ignored and listed in ``Model.unused``."""
    outer = data
    data, ignored = _unwrap(data)

    def fail(field: str, message: str) -> InstanceError:
        return InstanceError(source, field, message)

    if strict:
        unknown_keys(outer, MODEL_KEYS, fail)
        if isinstance(outer.get("text_config"), Mapping):
            unknown_keys(outer["text_config"], MODEL_KEYS, fail, "text_config")
    unused = tuple(sorted(str(k) for k in data if k not in MODEL_KEYS))
    blockers = _blockers(data)
    if blockers:
        raise InstanceError(source, blockers[0].split(" ")[0],
                            "not modelled: " + "; ".join(blockers))
    incomplete = _incomplete(outer, data, data.get("num_hidden_layers"), not strict)
    if incomplete:
        (first, reason), rest = incomplete[0], "; ".join(f"{k}: {why}" for k, why in incomplete[1:])
        raise InstanceError(source, first, reason + (f"; also {rest}" if rest else ""))
    f = _Fields(data, source)
    layers = f.integer("num_hidden_layers", limit=MAX_MODEL_LAYERS)
    hidden = f.integer("hidden_size", limit=MAX_MODEL_HIDDEN)
    heads = f.integer("num_attention_heads", limit=MAX_MODEL_HIDDEN)
    mla = _mla(f)
    kv_heads = heads if mla is not None else f.integer("num_key_value_heads", heads, limit=MAX_MODEL_HIDDEN)
    if heads % kv_heads:
        raise f.fail("num_key_value_heads",
                     f"num_attention_heads={heads} is not a multiple of num_key_value_heads={kv_heads}")
    if mla is not None:
        head_dim = mla.v_head_dim
    elif "head_dim" not in data or data["head_dim"] is None:
        if hidden % heads:
            raise f.fail("head_dim", f"missing, and hidden_size={hidden} is not a multiple of "
                                     f"num_attention_heads={heads}")
        head_dim = hidden // heads
    else:
        head_dim = f.integer("head_dim", limit=MAX_MODEL_HIDDEN)
    vocab = f.integer("vocab_size", limit=MAX_MODEL_VOCAB)
    expert_key = f.first(_EXPERTS)
    moe = expert_key is not None
    shared_width = dense_width = 0
    dense: tuple[int, ...] = ()
    if moe:
        assert expert_key is not None
        experts = f.integer(expert_key, limit=MAX_MODEL_EXPERTS)
        topk_key = f.first(_TOPK)
        if topk_key is None:
            raise f.fail(_TOPK[0], "missing (a MoE model needs its top-k)")
        top_k = f.integer(topk_key)
        if top_k > experts:
            raise f.fail(topk_key, f"top-k {top_k} exceeds the {experts} experts")
        width_key = f.first(_WIDTH)
        if width_key is None:
            raise f.fail(_WIDTH[0], "missing")
        width = f.integer(width_key, limit=_WIDTH_LIMIT)
        shared_width = _shared_width(f, width)
        dense = _dense_layer_list(f, layers)
        if dense:
            key = "intermediate_size_mlp" if data.get("intermediate_size_mlp") is not None else "intermediate_size"
            if key == "intermediate_size" and width_key == "intermediate_size":
                raise f.fail("intermediate_size", "dense layers need their width (moe_intermediate_size "
                                                  "for the experts, intermediate_size for the dense FFN)")
            dense_width = f.integer(key, limit=_WIDTH_LIMIT)
    else:
        experts = top_k = 1
        width = f.integer("intermediate_size", limit=_WIDTH_LIMIT)
    raw_types = data.get("layer_types")
    if raw_types is None:
        types = ("full",) * layers
    else:
        if not isinstance(raw_types, list) or not raw_types:
            raise f.fail("layer_types", "expected a non-empty list of layer types")
        if len(raw_types) > layers:
            raise f.fail("layer_types", f"{len(raw_types)} entries for {layers} layers")
        cycle = []
        for i, item in enumerate(raw_types):
            kind = _LAYER_TYPES.get(item) if isinstance(item, str) else None
            if kind is None:
                raise f.fail(f"layer_types[{i}]", f"unknown layer type {item!r} "
                                                   f"(use {', '.join(_LAYER_TYPES)})")
            cycle.append(kind)
        types = tuple(cycle[i % len(cycle)] for i in range(layers))
    if raw_types is None and data.get("attention_chunk_size") is not None:
        types = _chunked_layer_types(f, layers)
    if raw_types is None and data.get("attention_chunk_size") is None:
        types = _windowed_layer_types(f, layers)
    window = 0
    if "sliding" in types:
        window = f.integer("sliding_window", limit=_WINDOW_LIMIT)
    chunk = 0
    if "chunked" in types:
        chunk = f.integer("attention_chunk_size", limit=_WINDOW_LIMIT)
    tied = data.get("tie_word_embeddings", False)
    if not isinstance(tied, bool):
        raise f.fail("tie_word_embeddings", f"expected true or false, got {tied!r}")
    mtp = 0
    if data.get("num_nextn_predict_layers"):
        mtp = f.integer("num_nextn_predict_layers", limit=MAX_MODEL_LAYERS)
    description = outer.get("description", "")
    label = outer.get("name", name)
    return Model(
        name=str(label) if label else Path(source).stem,
        layers=layers, hidden=hidden, heads=heads, kv_heads=kv_heads, head_dim=head_dim,
        vocab=vocab, experts=experts, top_k=top_k, width=width, layer_types=types,
        window=window, chunk=chunk, moe=moe, tied=tied,
        description=str(description) if isinstance(description, str) else "", source=source,
        mla=mla, shared_width=shared_width, dense_layers=dense, dense_width=dense_width,
        mtp_layers=mtp, ignored=ignored, unused=unused,
    )


def _windowed_layer_types(f: _Fields, layers: int) -> tuple[str, ...]:
    """Sliding-window layers of a config without ``layer_types``, as HuggingFace builds them.

    Qwen2 (``use_sliding_window``): layers from ``max_window_layers`` on slide, none when it is false;
    a ``sliding_window_pattern`` P (Gemma 3, Cohere 2): every layer but each P-th; Gemma 2: every
    other layer, from the first; otherwise (Mistral) a ``sliding_window`` makes every layer slide."""
    data = f.data
    full = ("full",) * layers
    if data.get("sliding_window") is None:
        return full
    if "use_sliding_window" in data:
        if data["use_sliding_window"] is not True:
            if data["use_sliding_window"] not in (False, None):
                raise f.fail("use_sliding_window", f"expected true or false, got {data['use_sliding_window']!r}")
            return full
        first = f.integer("max_window_layers", default=0, limit=MAX_MODEL_LAYERS) \
            if data.get("max_window_layers") != 0 else 0
        return tuple("sliding" if i >= first else "full" for i in range(layers))
    if data.get("sliding_window_pattern") is not None:
        period = f.integer("sliding_window_pattern", limit=MAX_MODEL_LAYERS)
        return tuple("full" if (i + 1) % period == 0 else "sliding" for i in range(layers))
    if str(data.get("model_type", "")) == "gemma2":
        return tuple("sliding" if i % 2 == 0 else "full" for i in range(layers))
    return ("sliding",) * layers


def _shared_width(f: _Fields, width: int) -> int:
    """Summed width of the shared experts (DeepSeek / Kimi, Qwen2-MoE, Llama 4), 0 if none."""
    data = f.data
    if data.get("shared_expert_intermediate_size") is not None:
        return f.integer("shared_expert_intermediate_size", limit=_WIDTH_LIMIT)
    for key in ("n_shared_experts", "num_shared_experts"):
        if data.get(key) is not None and data[key] != 0:
            if data.get("moe_intermediate_size") is None:
                raise f.fail("moe_intermediate_size", f"missing ({key} needs the shared experts' width)")
            return f.integer(key, limit=MAX_MODEL_EXPERTS) * width
    if data.get("interleave_moe_layer_step") is not None or str(data.get("model_type", "")).startswith("llama4"):
        return width  # Llama 4: one shared expert of intermediate_size in every MoE layer
    return 0


def catalogue() -> list[str]:
    """Names of the shipped models (``data/models/*.toml``)."""
    folder = resources.files("ocsplan.workload").joinpath("data").joinpath("models")
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml"))


def _read_limited(path: Path, source: str) -> str:
    return read_text(path, lambda msg: InstanceError(source, "", msg), limit=MAX_MODEL_FILE_BYTES)


def read_document(path: Path, source: str) -> dict[str, Any]:
    """TOML or JSON (by suffix) of at most 1 MiB, as a dict."""
    text = _read_limited(path, source)
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InstanceError(source, "json", f"syntax error: {exc}") from None
        if not isinstance(data, dict):
            raise InstanceError(source, "json", "expected a JSON object")
        return data
    return toml_data(text, source)


def load_model(spec: str | Path) -> Model:
    """A catalogue name, a TOML file or a HuggingFace ``config.json``."""
    text = str(spec)
    path = Path(text)
    if path.suffix in (".toml", ".json") or path.is_file():
        name = path.parent.name if path.name == "config.json" and path.parent.name else path.stem
        return parse_model(read_document(path, text), text, name, strict=path.suffix != ".json")
    names = catalogue()
    if text not in names:
        raise InstanceError(text, "model", f"unknown model (catalogue: {', '.join(names)}; or a "
                                           f".toml / config.json path)")
    shipped = resources.files("ocsplan.workload").joinpath("data").joinpath("models").joinpath(f"{text}.toml")
    return parse_model(toml_data(shipped.read_text(encoding="utf-8"), f"models/{text}.toml"),
                       f"models/{text}.toml", text, strict=True)
