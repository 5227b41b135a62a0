"""Generated instance families: valid, deterministic, within their stated ranges."""

from __future__ import annotations

from pathlib import Path

import pytest

from ocsplan.instance import dumps_instance, load_instance, write_instances
from ocsplan.studies.families import FAMILIES, generate, generate_instance

KiB, MiB = 1024, 1 << 20
PAYLOADS = {"random": (64, 64 * MiB), "latency": (64, 64 * KiB), "bandwidth": (MiB, 64 * MiB)}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_same_seed_same_instances(family: str) -> None:
    a = [dumps_instance(i) for i in generate(family, 5, seed=11)]
    b = [dumps_instance(i) for i in generate(family, 5, seed=11)]
    c = [dumps_instance(i) for i in generate(family, 5, seed=12)]
    assert a == b and a != c


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_files_are_valid_instances(family: str, tmp_path: Path) -> None:
    instances = generate(family, 8, seed=3)
    paths = write_instances(instances, tmp_path)
    assert [p.name for p in paths] == [f"{i.name}.toml" for i in instances]
    for path, inst in zip(paths, instances, strict=True):
        again = load_instance(path)
        assert dumps_instance(again) == dumps_instance(inst)


@pytest.mark.parametrize("family", sorted(PAYLOADS))
@pytest.mark.parametrize("index", range(40))
def test_random_like_ranges(family: str, index: int) -> None:
    inst = generate_instance(family, 5, index)
    n = inst.n
    assert 4 <= n <= 9
    assert n <= inst.budget.ports <= 4 * n
    assert 1 <= len(inst.meshes) <= 4
    assert all(1 <= len(m.axes) <= 2 for m in inst.meshes)
    low, high = PAYLOADS[family]
    demands = inst.demands()
    assert demands
    assert all(low <= d.payload <= high for *_, d in demands)


@pytest.mark.parametrize("index", range(20))
def test_helix_structure(index: int) -> None:
    inst = generate_instance("helix", 5, index, min_bits=4, max_bits=8)
    world, attention, ffn = inst.meshes
    assert 4 <= inst.n <= 8
    assert world.shape == (inst.budget.world,)
    assert [d.collective for d in world.axes[0].demands] == ["all-reduce", "all-gather"]
    kvp, tpa = attention.shape
    tpe, ep = ffn.shape
    assert kvp * tpa == tpe * ep == inst.budget.world
    assert [d.collective for d in attention.axes[0].demands] == ["all-to-all"]
    assert attention.axes[1].demands == ()
    assert ffn.axes[0].demands[0].collective == "all-reduce"
    assert ffn.axes[1].demands[0].collective in ("all-gather", "all-to-all")


def test_bit_range_is_honoured() -> None:
    sizes = {generate_instance("random", 1, k, min_bits=5, max_bits=6).n for k in range(30)}
    assert sizes == {5, 6}
    with pytest.raises(ValueError, match="unknown family"):
        generate_instance("nope", 0, 0)


def test_wide_family_shape() -> None:
    for inst in generate("wide", 12, seed=4, min_bits=6, max_bits=12):
        assert 6 <= inst.n <= 12 and inst.n <= inst.budget.ports <= 4 * inst.n
        assert 3 <= len(inst.meshes) <= 4
        for mesh in inst.meshes:
            assert 2 <= len(mesh.axes) <= 3
            assert sum(ax.size.bit_length() - 1 for ax in mesh.axes) == inst.n
            for ax in mesh.axes:
                assert 1 <= len(ax.demands) <= 3
                for d in ax.demands:
                    assert 0.01 <= d.weight <= 100 and 64 <= d.payload <= 64 * MiB
