"""Per-step demand: Table 1 exactly, Eqs. 7 and 8 by hand, the emitted instance."""

from __future__ import annotations

import tomllib

import pytest

from ocsplan.instance import load_instance, loads_instance
from ocsplan.workload import (
    COMM,
    Split,
    active_experts,
    busiest_rows,
    demand_rows,
    instance_for,
    instance_toml,
    load_model,
)

from .conftest import instance_path

KIB = 1024

# Paper Table 1: Megatron 5T, (KVP, TPA, EP, TPE) = (4, 128, 64, 8), FP4, payload per call at B = 1/4/16.
TABLE1 = {
    ("attention", "world"): ("all-reduce", 1, 512, 128, (4 * KIB, 16 * KIB, 64 * KIB)),
    ("attention", "KVP"): ("all-to-all", 128, 4, 128, (66, 264, 1056)),
    ("attention", "TPA"): ("none", 4, 128, 0, (0, 0, 0)),
    ("ffn", "EP"): ("all-gather", 8, 64, 128, (256 * KIB, 512 * KIB, 768 * KIB)),
    ("ffn", "TPE"): ("all-reduce", 64, 8, 128, (4 * KIB, 8 * KIB, 12 * KIB)),
    ("lm-head", "world"): ("all-gather", 1, 512, 1, (25 * KIB, 100 * KIB, 400 * KIB)),
}


@pytest.mark.parametrize(("index", "batch"), [(0, 1), (1, 4), (2, 16)])
def test_table1_exactly(index: int, batch: int) -> None:
    rows = demand_rows(load_model("megatron-5t"), 512, Split(4, 128, 64, 8), batch)
    got = {(r.region, r.axis): (r.collective, r.groups, r.ranks, r.calls, r.payload) for r in rows}
    want = {k: (c, g, n, calls, p[index]) for k, (c, g, n, calls, p) in TABLE1.items()}
    assert got == want


@pytest.mark.parametrize(
    ("batch", "n_act"),
    # Eq. 7 by hand: 256 (1 - (255/256)^(8B)) = 7.89, 30.12, 100.88
    [(1, 8), (4, 30), (16, 101)],
)
def test_active_experts(batch: int, n_act: int) -> None:
    assert active_experts(256, batch, 8) == n_act


def test_busiest_rows_by_hand() -> None:
    # Eq. 8, B = 16, k = 8, N_act = 101: EP = 64 -> ceil(128 * 2 / 101) = 3; EP = 8 -> ceil(128 * 13 / 101) = 17
    assert busiest_rows(256, 16, 8, 64) == 3
    assert busiest_rows(256, 16, 8, 8) == 17
    assert busiest_rows(1, 7, 1, 1) == 7  # dense: every row on every rank


def test_bf16_communication() -> None:
    # App. E: BF16 activations (2 B) and FP32 statistics (4 B): all-reduce x4, KVP 2 x (64 x 2 + 4) = 264 B
    rows = demand_rows(load_model("megatron-5t"), 512, Split(4, 128, 64, 8), 1, COMM["bf16"])
    got = {(r.region, r.axis): r.payload for r in rows}
    assert got[("attention", "world")] == 16 * KIB and got[("attention", "KVP")] == 264


def test_emitted_instance_equals_named_instance() -> None:
    # instances/megatron-5t-n512-b1.toml is Table 1 at B = 1, L = 36, 400 Gb/s, 0.52 us, written by hand.
    inst = instance_for(load_model("megatron-5t"), 512, Split(4, 128, 64, 8), 1,
                        ports=36, latency=0.52e-6, link=50e9)
    named = load_instance(instance_path("megatron-5t-n512-b1"))
    assert inst.meshes == named.meshes
    assert (inst.budget.world, inst.budget.ports) == (named.budget.world, named.budget.ports)
    assert inst.budget.latency == pytest.approx(named.budget.latency)
    assert inst.budget.link == pytest.approx(named.budget.link)


def test_single_rank_axes_carry_no_demand() -> None:
    m = load_model("gpt-oss-5.3-like")
    rows = demand_rows(m, 512, Split(512, 1, 1, 512), 1)
    calls = {(r.region, r.axis): r.calls for r in rows}
    assert calls[("ffn", "EP")] == 0 and calls[("attention", "KVP")] == 96
    text = instance_toml(m, 512, Split(512, 1, 1, 512), 1, ports=36, latency=0.52e-6, link=50e9)
    assert tomllib.loads(text)["mesh"][1]["shape"] == [512, 1]  # attention: KVP 512 x TPA 1


@pytest.mark.parametrize("name", ['model "x"', "two\nlines", "back\\slash"])
def test_emitted_instance_round_trips_any_model_name(name: str) -> None:
    """workload --emit writes its TOML with tomli-w: a model name with quotes or a newline
    lands in the instance name and description unchanged."""
    from dataclasses import replace

    m = replace(load_model("megatron-5t"), name=name)
    text = instance_toml(m, 512, Split(4, 128, 64, 8), 1, ports=36, latency=0.52e-6, link=50e9)
    inst = loads_instance(text, "emitted.toml")
    assert inst.name == f"{name}-n512-b1-4-128-64-8"
    assert inst.description.startswith(f"{name} decode, Helix (KVP, TPA, EP, TPE) = (4, 128, 64, 8)")
    assert [mesh.name for mesh in inst.meshes] == ["world", "attention", "ffn"]
