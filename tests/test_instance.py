from __future__ import annotations

from pathlib import Path

import pytest

from ocsplan.errors import InstanceError
from ocsplan.instance import (
    dumps_instance,
    load_instance,
    loads_instance,
    require_shared_host,
    shared_host_problem,
)

from .conftest import INSTANCES

NAMED = sorted(p.stem for p in INSTANCES.glob("*.toml"))

GOOD = """
name = "t"
[fabric]
world = 16
ports = 6
latency = "0.52us"
link = "400Gb/s"
[[mesh]]
name = "m"
shape = [4, 4]
axes = [
  { collective = "all-reduce", payload = "4KiB" },
  { demands = [{ collective = "all-gather", payload = "1KiB", weight = 3 },
               { collective = "all-to-all", payload = "66B", schedule = "bruck" }] },
]
"""


@pytest.mark.parametrize("name", NAMED)
def test_named_instances_load_and_round_trip(name: str) -> None:
    inst = load_instance(INSTANCES / f"{name}.toml")
    assert inst.name == name
    again = loads_instance(dumps_instance(inst), inst.source)
    assert again == inst


AWKWARD = ['say "hi"', "two\nlines", "back\\slash", "tab\there", "quote ' and \"\"\"", "ünïcode"]


@pytest.mark.parametrize("text", AWKWARD)
def test_names_with_quotes_and_newlines_round_trip(text: str) -> None:
    """Instance, description and mesh names with quotes, newlines or backslashes (the TOML is
    written by tomli-w) read back to the same instance."""
    from dataclasses import replace

    inst = loads_instance(GOOD, "t.toml")
    odd = replace(inst, name=text, description=f"about {text}",
                  meshes=(replace(inst.meshes[0], name=f"mesh {text}"),))
    again = loads_instance(dumps_instance(odd), "t.toml")
    assert (again.name, again.description, again.meshes[0].name) == (text, f"about {text}", f"mesh {text}")
    assert again == odd


def test_dumps_instance_is_the_documented_data() -> None:
    """What the writer puts in the file, read back with tomllib, by hand from GOOD: the whole
    weight 1.0 as the integer 1, the idle default schedule left out, bruck kept."""
    import tomllib

    data = tomllib.loads(dumps_instance(loads_instance(GOOD, "t.toml")))
    assert data == {
        "name": "t",
        "fabric": {"world": 16, "ports": 6, "latency": "0.52us", "link": "400Gb/s"},
        "mesh": [{"name": "m", "shape": [4, 4], "axes": [
            {"demands": [{"collective": "all-reduce", "payload": 4096, "weight": 1}]},
            {"demands": [{"collective": "all-gather", "payload": 1024, "weight": 3},
                         {"collective": "all-to-all", "payload": 66, "weight": 1, "schedule": "bruck"}]},
        ]}],
    }


def test_several_demands_per_axis() -> None:
    inst = loads_instance(GOOD, "t.toml")
    axis = inst.meshes[0].axes[1]
    assert [d.collective for d in axis.demands] == ["all-gather", "all-to-all"]
    assert axis.demands[0].weight == 3 and axis.demands[1].schedule == "bruck"
    assert axis.demands[1].payload == 66


def test_megatron_matches_table1() -> None:
    # Paper Table 1 at batch 1 (Helix (KVP, TPA, EP, TPE) = (4, 128, 64, 8), FP4)
    inst = load_instance(INSTANCES / "megatron-5t-n512-b1.toml")
    world, attention, ffn = inst.meshes
    assert inst.budget.world == 512 and inst.budget.ports == 36
    assert [(d.collective, d.payload, d.weight) for d in world.axes[0].demands] == [
        ("all-reduce", 4096, 128),
        ("all-gather", 25 * 1024, 1),
    ]
    assert attention.shape == (4, 128)
    assert [(d.collective, d.payload, d.weight) for d in attention.axes[0].demands] == [("all-to-all", 66, 128)]
    assert attention.axes[1].demands == ()
    assert ffn.shape == (8, 64)
    assert [(d.collective, d.payload) for d in ffn.axes[0].demands] == [("all-reduce", 4096)]
    assert [(d.collective, d.payload) for d in ffn.axes[1].demands] == [("all-gather", 256 * 1024)]


def _mutate(old: str, new: str) -> str:
    assert old in GOOD
    return GOOD.replace(old, new, 1)


BAD = [
    (_mutate("world = 16", "world = 24"), "mesh[0].shape"),
    (_mutate("world = 16", "world = 1"), "fabric.world"),
    (_mutate("shape = [4, 4]", "shape = [4, 8]"), "mesh[0].shape"),
    (_mutate("shape = [4, 4]", "shape = [0, 4]"), "mesh[0].shape[0]"),
    (_mutate("ports = 6", "ports = 0"), "fabric.ports"),
    (_mutate('collective = "all-reduce"', 'collective = "allreduce"'), "mesh[0].axes[0].collective"),
    (_mutate('schedule = "bruck"', 'schedule = "brook"'), "mesh[0].axes[1].demands[1].schedule"),
    (_mutate('schedule = "bruck"', 'schedule = "one-shot"'), "mesh[0].axes[1].demands[1].schedule"),
    (_mutate('payload = "4KiB"', 'payload = "4 KB/s"'), "mesh[0].axes[0].payload"),
    (_mutate('payload = "4KiB"', 'payload = "-4KiB"'), "mesh[0].axes[0].payload"),
    (_mutate('payload = "4KiB"', "payload = 0"), "mesh[0].axes[0].payload"),
    (_mutate("weight = 3", "weight = -3"), "mesh[0].axes[1].demands[0].weight"),
    (_mutate('latency = "0.52us"', 'latency = "0.52 parsecs"'), "fabric.latency"),
    (_mutate('link = "400Gb/s"', 'link = "fast"'), "fabric.link"),
    (_mutate('name = "m"', 'name = "m"\ncolour = "red"'), "mesh[0].colour"),
    (_mutate("[fabric]", "[fabric\n"), "toml"),
    (GOOD.replace("[[mesh]]", "[[nope]]"), "nope"),
]


@pytest.mark.parametrize(("text", "field"), BAD)
def test_invalid_input_names_file_and_field(text: str, field: str) -> None:
    with pytest.raises(InstanceError) as info:
        loads_instance(text, "bad.toml")
    assert info.value.field == field
    message = str(info.value)
    assert message.startswith(f"bad.toml: {field}: ")
    assert "\n" not in message


# Read fine (--method stacked takes them), refused by the shared-host planners.
SHARED_HOST_BAD = [
    (_mutate("world = 16", "world = 24").replace("shape = [4, 4]", "shape = [4, 6]"), "fabric.world",
     "world 24 is not a power of two: use --method stacked"),
    (_mutate("world = 16", "world = 12").replace("shape = [4, 4]", "shape = [3, 4]"), "fabric.world",
     "world 12 is not a power of two: use --method stacked"),
    (_mutate("world = 16", "world = 16").replace("shape = [4, 4]", "shape = [2, 8]"), None, ""),
    (_mutate("ports = 6", "ports = 3"), "fabric.ports", "3 ports cannot hold the base cube of 4 generators"),
]


@pytest.mark.parametrize(("text", "field", "message"), SHARED_HOST_BAD)
def test_shared_host_problems(text: str, field: str | None, message: str) -> None:
    inst = loads_instance(text, "bad.toml")
    problem = shared_host_problem(inst)
    if field is None:
        assert problem is None
        return
    assert problem is not None and problem.field == field
    assert str(problem) == f"bad.toml: {field}: {message}"
    with pytest.raises(InstanceError):
        require_shared_host(inst)


def test_non_power_of_two_axis_named() -> None:
    text = GOOD.replace("world = 16", "world = 48").replace("shape = [4, 4]", "shape = [4, 12]")
    problem = shared_host_problem(loads_instance(text, "bad.toml"))
    assert problem is not None and problem.field == "fabric.world"
    text = text.replace("world = 48", "world = 64").replace("shape = [4, 12]", "shape = [4, 16]")
    assert shared_host_problem(loads_instance(text, "ok.toml")) is None


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InstanceError) as info:
        load_instance(tmp_path / "missing.toml")
    assert "missing.toml" in str(info.value) and "cannot read" in str(info.value)
