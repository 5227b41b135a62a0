"""Helix splits (App. B.6): counts at N = 512 against an independent enumeration."""

from __future__ import annotations

import itertools

import pytest

from ocsplan.errors import InstanceError
from ocsplan.workload import Split, check_split, check_world, load_model, parse_split, valid_splits


def test_paper_counts_at_512() -> None:
    # App. B.6: "At N = 512, this gives 72 splits for Megatron 5T and 45 for GPT-OSS-5.3-like."
    assert len(valid_splits(load_model("megatron-5t"), 512)) == 72
    assert len(valid_splits(load_model("gpt-oss-5.3-like"), 512)) == 45


@pytest.mark.parametrize("name", ["megatron-235b", "megatron-1t", "gpt-oss-120b", "gpt-oss-1t-like"])
@pytest.mark.parametrize("world", [8, 64, 512])
def test_against_brute_force(name: str, world: int) -> None:
    m = load_model(name)
    found = set()
    for kvp, ep in itertools.product(range(1, world + 1), repeat=2):
        if world % kvp or world % ep:
            continue
        tpa, tpe = world // kvp, world // ep
        if any(v & (v - 1) for v in (kvp, tpa, ep, tpe)):
            continue
        if m.kv_heads % tpa == 0 and m.experts % ep == 0 and m.width % tpe == 0:
            found.add(Split(kvp, tpa, ep, tpe))
    assert set(valid_splits(m, world)) == found


def test_check_split_messages() -> None:
    m = load_model("gpt-oss-5.3-like")
    with pytest.raises(InstanceError) as info:
        check_split(m, 512, Split(16, 32, 2, 256))
    assert str(info.value) == "split: TPA=32 does not divide num_key_value_heads=16"
    with pytest.raises(InstanceError, match="KVP\\*TPA"):
        check_split(m, 512, Split(4, 16, 2, 256))
    with pytest.raises(InstanceError, match="not a power of two"):
        check_split(m, 512, Split(3, 16, 2, 256))
    with pytest.raises(InstanceError, match="four positive integers"):
        parse_split("4,128,64")
    assert parse_split("4,128,64,8") == Split(4, 128, 64, 8)


@pytest.mark.parametrize("world", [0, 1, 96, 1 << 17])
def test_world_rules(world: int) -> None:
    with pytest.raises(InstanceError, match="power of two"):
        check_world(world)
