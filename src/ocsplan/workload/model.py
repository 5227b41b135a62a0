"""Model files: a decoder-only (MoE) transformer described with HuggingFace names.

A model is a catalogue name (``data/models/<name>.toml``: the six models of
the paper's Table 10), a TOML file or a HuggingFace ``config.json``; both use
the HuggingFace keys, so a ``config.json`` reads unchanged:

``num_hidden_layers`` L, ``hidden_size`` H, ``num_attention_heads`` n_q,
``num_key_value_heads`` n_kv (default n_q), ``head_dim`` d (default H / n_q),
``vocab_size`` V, experts E = ``num_local_experts`` | ``num_experts`` |
``n_routed_experts``, top-k = ``num_experts_per_tok`` | ``experts_per_token``,
expert width I = ``moe_intermediate_size`` | ``intermediate_size``,
``layer_types`` (``full_attention`` / ``sliding_attention``, repeated
cyclically over the layers) with ``sliding_window`` W, ``tie_word_embeddings``.
Without an expert field the FFN is dense (E = k = 1). Other keys are ignored;
latent attention, shared experts and dense first layers are refused.
Files are limited to 1 MiB and 4096 layers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import InstanceError
from ..files import read_text, toml_data

__all__ = [
    "MAX_FILE_BYTES",
    "MAX_LAYERS",
    "Model",
    "catalogue",
    "load_model",
    "parse_model",
]

MAX_FILE_BYTES = 1 << 20
MAX_LAYERS = 4096
_LIMIT = 1 << 40  # any other integer field

_EXPERTS = ("num_local_experts", "num_experts", "n_routed_experts")
_TOPK = ("num_experts_per_tok", "experts_per_token")
_WIDTH = ("moe_intermediate_size", "intermediate_size")
_LAYER_TYPES = {"full_attention": "full", "sliding_attention": "sliding"}


@dataclass(frozen=True)
class Model:
    """Shapes of one model (element counts; precisions come with the workload)."""

    name: str
    layers: int  # L
    hidden: int  # H
    heads: int  # n_q
    kv_heads: int  # n_kv
    head_dim: int  # d
    vocab: int  # V
    experts: int  # E (1: dense FFN)
    top_k: int  # k
    width: int  # I, width of one expert (or of the dense FFN)
    layer_types: tuple[str, ...]  # "full" or "sliding", one per layer
    window: int = 0  # W of the sliding layers
    moe: bool = True
    tied: bool = False
    description: str = ""
    source: str = ""

    @property
    def full_layers(self) -> int:
        return self.layer_types.count("full")

    @property
    def sliding_layers(self) -> int:
        return self.layer_types.count("sliding")

    @property
    def attention_params(self) -> int:
        """QKV and output projections of one layer."""
        h, d = self.hidden, self.head_dim
        return h * (self.heads + 2 * self.kv_heads) * d + self.heads * d * h

    @property
    def router_params(self) -> int:
        return self.hidden * self.experts if self.moe else 0

    @property
    def expert_params(self) -> int:
        """One SwiGLU expert (three matrices H x I)."""
        return 3 * self.hidden * self.width

    @property
    def embedding_params(self) -> int:
        """Embedding and LM head (one matrix if tied)."""
        return (1 if self.tied else 2) * self.vocab * self.hidden

    @property
    def total_params(self) -> int:
        per_layer = self.attention_params + self.router_params + self.experts * self.expert_params
        return self.layers * per_layer + self.embedding_params

    @property
    def active_params(self) -> int:
        """Parameters one token touches, embedding and LM head included (Table 10)."""
        per_layer = self.attention_params + self.router_params + self.top_k * self.expert_params
        return self.layers * per_layer + self.embedding_params

    @property
    def kv_elements_per_token(self) -> int:
        """K and V elements per token of context in the layers whose cache grows with it."""
        return 2 * self.kv_heads * self.head_dim * self.full_layers

    def kv_elements_per_user(self, context: int) -> int:
        """K and V elements of one user at ``context`` tokens (sliding layers keep W)."""
        per_layer = 2 * self.kv_heads * self.head_dim
        return per_layer * (self.full_layers * context + self.sliding_layers * min(self.window, context))

    def context_of(self, kind: str, context: int) -> int:
        """Tokens a layer of ``kind`` attends to."""
        return context if kind == "full" else min(self.window, context)


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


def _refuse_unmodelled(f: _Fields) -> None:
    data = f.data
    if data.get("kv_lora_rank"):
        raise f.fail("kv_lora_rank", "latent attention (MLA) is not modelled")
    for key in ("n_shared_experts", "num_shared_experts", "shared_expert_intermediate_size"):
        if data.get(key):
            raise f.fail(key, "shared experts are not modelled")
    for key in ("first_k_dense_replace", "mlp_only_layers"):
        if data.get(key):
            raise f.fail(key, "dense first layers are not modelled")
    for key in ("decoder_sparse_step", "moe_layer_freq"):
        value = data.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 1:
            raise f.fail(key, "MoE on only some layers is not modelled")


def parse_model(data: Mapping[str, Any], source: str = "<model>", name: str = "") -> Model:
    """Validate HuggingFace-style model data (errors name the file and field)."""
    f = _Fields(data, source)
    _refuse_unmodelled(f)
    layers = f.integer("num_hidden_layers", limit=MAX_LAYERS)
    hidden = f.integer("hidden_size")
    heads = f.integer("num_attention_heads")
    kv_heads = f.integer("num_key_value_heads", heads)
    if heads % kv_heads:
        raise f.fail("num_key_value_heads",
                     f"num_attention_heads={heads} is not a multiple of num_key_value_heads={kv_heads}")
    if "head_dim" not in data or data["head_dim"] is None:
        if hidden % heads:
            raise f.fail("head_dim", f"missing, and hidden_size={hidden} is not a multiple of "
                                     f"num_attention_heads={heads}")
        head_dim = hidden // heads
    else:
        head_dim = f.integer("head_dim")
    vocab = f.integer("vocab_size")
    expert_key = f.first(_EXPERTS)
    moe = expert_key is not None
    if moe:
        assert expert_key is not None
        experts = f.integer(expert_key)
        topk_key = f.first(_TOPK)
        if topk_key is None:
            raise f.fail(_TOPK[0], "missing (a MoE model needs its top-k)")
        top_k = f.integer(topk_key)
        if top_k > experts:
            raise f.fail(topk_key, f"top-k {top_k} exceeds the {experts} experts")
        width_key = f.first(_WIDTH)
        if width_key is None:
            raise f.fail(_WIDTH[0], "missing")
        width = f.integer(width_key)
    else:
        experts = top_k = 1
        width = f.integer("intermediate_size")
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
    window = 0
    if "sliding" in types:
        window = f.integer("sliding_window")
    tied = data.get("tie_word_embeddings", False)
    if not isinstance(tied, bool):
        raise f.fail("tie_word_embeddings", f"expected true or false, got {tied!r}")
    description = data.get("description", "")
    label = data.get("name", name)
    return Model(
        name=str(label) if label else Path(source).stem,
        layers=layers, hidden=hidden, heads=heads, kv_heads=kv_heads, head_dim=head_dim,
        vocab=vocab, experts=experts, top_k=top_k, width=width, layer_types=types,
        window=window, moe=moe, tied=tied,
        description=str(description) if isinstance(description, str) else "", source=source,
    )


def catalogue() -> list[str]:
    """Names of the shipped models (``data/models/*.toml``)."""
    folder = resources.files("ocsplan.workload").joinpath("data").joinpath("models")
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml"))


def _read_limited(path: Path, source: str) -> str:
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise InstanceError(source, "", f"cannot read file: {exc.strerror or exc}") from None
    if size > MAX_FILE_BYTES:
        raise InstanceError(source, "", f"file of {size} bytes exceeds the limit of {MAX_FILE_BYTES}")
    return read_text(path, lambda msg: InstanceError(source, "", msg))


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
        return parse_model(read_document(path, text), text, name)
    names = catalogue()
    if text not in names:
        raise InstanceError(text, "model", f"unknown model (catalogue: {', '.join(names)}; or a "
                                           f".toml / config.json path)")
    shipped = resources.files("ocsplan.workload").joinpath("data").joinpath("models").joinpath(f"{text}.toml")
    return parse_model(toml_data(shipped.read_text(encoding="utf-8"), f"models/{text}.toml"),
                       f"models/{text}.toml", text)
