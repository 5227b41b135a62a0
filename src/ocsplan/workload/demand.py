"""Per-step collective demand of Helix decode (paper §3.1, Table 1, App. B.2) and its instance.

Precision (App. B.1): weights w, KV cache c and activations a in FP4 (0.5 B),
softmax statistics s = 1 B per local head and token; ``bf16`` communication
(App. E) sends a = 2 B and s = 4 B. MoE load (Eqs. 7, 8): N_act distinct
active experts, R rows on the busiest EP rank. MLA's KVP all-to-all sends the
partial outputs after W_UV (v_head_dim per head, as for GQA): W_UV is linear, so
each rank applies it to its partial latent output before the exchange, and
v_head_dim (128) is a quarter of the latent's kv_lora_rank (512). Shared experts
and dense FFN layers split the batch over EP (ceil(B / EP) rows) and are TP over
TPE: the shared rows join the MoE rows' all-gather and all-reduce; dense layers
get their own ``ffn-dense`` rows (calls = number of dense layers).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..errors import InstanceError
from ..instance import Instance, loads_instance
from .model import Model
from .splits import Split

__all__ = [
    "COMM",
    "DemandRow",
    "Precision",
    "active_experts",
    "busiest_rows",
    "demand_rows",
    "instance_for",
    "instance_toml",
    "precision_for",
]


@dataclass(frozen=True)
class Precision:
    """Bytes per element: weights, KV cache, communicated activations, softmax statistics."""

    weight: float = 0.5
    kv: float = 0.5
    act: float = 0.5
    stats: float = 1.0
    name: str = "fp4"


COMM = {"fp4": Precision(), "bf16": Precision(act=2.0, stats=4.0, name="bf16")}


def precision_for(comm: str) -> Precision:
    found = COMM.get(comm)
    if found is None:
        raise InstanceError("comm", "", f"unknown communication precision {comm!r} (use {', '.join(COMM)})")
    return found


def active_experts(experts: int, batch: int, top_k: int) -> int:
    """Eq. 7: E (1 - (1 - 1/E)^(B k)), rounded half up (1 for a dense FFN)."""
    if experts == 1:
        return 1
    value = experts * (1.0 - (1.0 - 1.0 / experts) ** (batch * top_k))
    return max(1, math.floor(value + 0.5))


def busiest_rows(experts: int, batch: int, top_k: int, ep: int) -> int:
    """Eq. 8: rows of the busiest EP rank, ceil(B k ceil(N_act / EP) / N_act)."""
    n_act = active_experts(experts, batch, top_k)
    local = -(-n_act // ep)
    return -(-(batch * top_k * local) // n_act)


@dataclass(frozen=True)
class DemandRow:
    """One row of Table 1: a collective on a mesh axis, per decode step."""

    region: str  # attention, ffn, lm-head
    axis: str  # world, KVP, TPA, TPE, EP
    collective: str  # all-reduce, all-gather, all-to-all or none
    groups: int
    ranks: int
    calls: int  # per step (0 when the axis has one rank or no collective)
    payload: int  # bytes per call (buffer sigma; 0 for none)


def _bytes(value: float) -> int:
    return math.ceil(value - 1e-9)


def demand_rows(model: Model, world: int, split: Split, batch: int,
                precision: Precision = COMM["fp4"]) -> tuple[DemandRow, ...]:
    """The six rows of Table 1 for this model, split and batch."""
    a, s = precision.act, precision.stats
    L, H = model.layers, model.hidden
    rows_r = busiest_rows(model.experts, batch, model.top_k, split.ep)

    def row(region: str, axis: str, coll: str, groups: int, ranks: int, calls: int, payload: float) -> DemandRow:
        if ranks == 1 or coll == "none":
            return DemandRow(region, axis, "none" if coll == "none" else coll, groups, ranks, 0, 0)
        return DemandRow(region, axis, coll, groups, ranks, calls, _bytes(payload))

    heads = model.heads // split.tpa
    share = -(-batch // split.ep)  # rows of a shared expert or dense FFN per EP rank
    if model.shared_width:
        rows_r += share
    moe_calls = model.moe_layers
    dense_calls = len(model.dense_layers)
    rows: tuple[DemandRow, ...] = (
        row("attention", "world", "all-reduce", 1, world, L, batch * H * a),
        row("attention", "KVP", "all-to-all", split.tpa, split.kvp, L,
            batch * heads * (model.head_dim * a + s)),
        row("attention", "TPA", "none", split.kvp, split.tpa, 0, 0),
        row("ffn", "EP", "all-gather", split.tpe, split.ep, moe_calls, split.ep * rows_r * H * a),
        row("ffn", "TPE", "all-reduce", split.ep, split.tpe, moe_calls, rows_r * H * a),
    )
    if dense_calls:
        rows += (
            row("ffn-dense", "EP", "all-gather", split.tpe, split.ep, dense_calls, split.ep * share * H * a),
            row("ffn-dense", "TPE", "all-reduce", split.ep, split.tpe, dense_calls, share * H * a),
        )
    return (*rows, row("lm-head", "world", "all-gather", 1, world, 1, batch * model.vocab * a))


def _size(nbytes: int) -> str:
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale and nbytes % scale == 0:
            return f"{nbytes // scale}{unit}"
    return f"{nbytes}B"


_IDLE: dict[str, Any] = {"collective": "none"}


def _demand(row: DemandRow) -> dict[str, Any]:
    if row.calls == 0:
        return dict(_IDLE)
    return {"collective": row.collective, "payload": _size(row.payload), "weight": row.calls}


def _axis(by_axis: dict[tuple[str, str], DemandRow], axis: str) -> dict[str, Any]:
    """One FFN axis: its MoE demand, with the dense layers' demand beside it when there are any."""
    moe = by_axis[("ffn", axis)]
    dense = by_axis.get(("ffn-dense", axis))
    if dense is None:
        return _demand(moe)
    found = [d for d in (moe, dense) if d.calls]
    if not found:
        return dict(_IDLE)
    return {"demands": [_demand(d) for d in found]}


_HEADER = """\
# Decode instance written by `ocsplan workload --emit` (Helix split KVP, TPA, EP, TPE).
# Meshes: world = Region 2 and the LM head, one axis over all accelerators;
# attention = Region 1, axes KVP (partial outputs + LSE) and TPA; ffn = Region 3 (FFN/MoE), axes TPE and EP.
"""


def instance_toml(model: Model, world: int, split: Split, batch: int, *, ports: int, latency: float,
                  link: float, precision: Precision = COMM["fp4"], context: int | None = None,
                  name: str = "") -> str:
    """Instance TOML (meshes as in ``instances/megatron-5t-n512-b1.toml``) for ``ocsplan solve``,
    written by tomli-w (any model name round-trips) under a comment naming the meshes."""
    import tomli_w

    rows = demand_rows(model, world, split, batch, precision)
    by_axis = {(r.region, r.axis): r for r in rows}
    label = name or f"{model.name}-n{world}-b{batch}-{split.kvp}-{split.tpa}-{split.ep}-{split.tpe}"
    ctx = f", context {context}" if context is not None else ""
    world_ar, lm_ag = by_axis[("attention", "world")], by_axis[("lm-head", "world")]
    world_demands = [d for d in (world_ar, lm_ag) if d.calls]
    doc = {
        "name": label,
        "description": f"{model.name} decode, Helix (KVP, TPA, EP, TPE) = ({split.kvp}, {split.tpa}, "
                       f"{split.ep}, {split.tpe}), batch {batch}{ctx}, {precision.name} communication",
        "fabric": {"world": world, "ports": ports, "latency": f"{latency * 1e6:.12g}us",
                   "link": f"{link * 8 / 1e9:.12g}Gb/s"},
        "mesh": [
            {"name": "world", "shape": [world], "axes": [{"demands": [_demand(d) for d in world_demands]}]},
            {"name": "attention", "shape": [split.kvp, split.tpa],
             "axes": [_demand(by_axis[("attention", "KVP")]), _demand(by_axis[("attention", "TPA")])]},
            {"name": "ffn", "shape": [split.tpe, split.ep], "axes": [_axis(by_axis, "TPE"), _axis(by_axis, "EP")]},
        ],
    }
    return _HEADER + "\n" + tomli_w.dumps(doc)


def instance_for(model: Model, world: int, split: Split, batch: int, *, ports: int, latency: float,
                 link: float, precision: Precision = COMM["fp4"], context: int | None = None,
                 name: str = "") -> Instance:
    """The instance of :func:`instance_toml`, read back with the instance reader."""
    text = instance_toml(model, world, split, batch, ports=ports, latency=latency, link=link,
                         precision=precision, context=context, name=name)
    return loads_instance(text, f"<workload {model.name}>")
