"""Decode step on the NVL576 fabrics with the analytical network (§6.1, §6.2)."""

from __future__ import annotations

import pytest

from ocsplan.cayley import Topology
from ocsplan.decode.step import decode_step
from ocsplan.errors import InfeasibleError, InstanceError
from ocsplan.realization.fabrics import load_fabric
from ocsplan.schedules import SCHEDULES
from ocsplan.simlette import SimOptions, network_factory, simulate_workload
from ocsplan.simlette.traffic import program_workload
from ocsplan.workload import Split, load_accelerator, load_model
from ocsplan.workload.step import step_to_dict

from .conftest import EPS_TINY, ROOT

FABRICS = ROOT / "simulate" / "fabrics"
RX00 = load_accelerator("rx00")
T5M = 5_000_000


@pytest.mark.parametrize(
    ("model", "split", "paper"),
    # §6.1/§6.2: all-OCS at B = 1, 5M: Megatron (4,128,8,64) 698, GPT-OSS-5.3-like (32,16,2,256) 1277 tokens/s/user
    # (Simlette). The analytical network ignores contention and credit stalls; it must land within 5 %.
    [("megatron-5t", Split(4, 128, 8, 64), 698), ("gpt-oss-5.3-like", Split(32, 16, 2, 256), 1277)],
)
def test_all_ocs_interactivity(model: str, split: Split, paper: float) -> None:
    step = decode_step(load_model(model), RX00, load_fabric(FABRICS / "nvl576-all-ocs.toml"), 512, split, 1, T5M)
    assert step.tokens_per_s_user == pytest.approx(paper, rel=0.05)
    assert step.tokens_per_s == step.tokens_per_s_user  # B = 1
    assert step.step_s == pytest.approx(step.compute.total_s + sum(c.total_s for c in step.collectives))
    assert [c.row.axis for c in step.collectives] == ["world", "KVP", "EP", "TPE", "world"]
    data = step_to_dict(step)
    assert data["schema"] == "ocsplan.decode/1" and data["tokens_per_s_user"] == step.tokens_per_s_user


def test_eps_prefers_the_papers_split() -> None:
    # §6.1: on all-EPS Megatron at B = 1 uses (4,128,16,32), on all-OCS (4,128,8,64): the TPE group of 64
    # forces EPS traffic through both levels.
    m, eps = load_model("megatron-5t"), load_fabric(FABRICS / "nvl576-all-eps.toml")
    a = decode_step(m, RX00, eps, 512, Split(4, 128, 16, 32), 1, T5M)
    b = decode_step(m, RX00, eps, 512, Split(4, 128, 8, 64), 1, T5M)
    assert a.tokens_per_s_user > b.tokens_per_s_user
    tpe = {c.row.axis: c for c in b.collectives}["TPE"]
    assert tpe.row.ranks == 64 and tpe.time_s > {c.row.axis: c for c in a.collectives}["TPE"].time_s


def test_power_prorated() -> None:
    step = decode_step(load_model("gpt-oss-120b"), RX00, load_fabric(FABRICS / "nvl576-all-eps.toml"), 8,
                       Split(1, 8, 8, 1), 4, 32768)
    assert step.power_w == pytest.approx(step.system_w * 8 / 576)
    assert step.tokens_per_s_mw == pytest.approx(4 / step.step_s / (step.power_w / 1e6))


def test_batch_not_fitting_and_bad_network() -> None:
    m, ocs = load_model("megatron-5t"), load_fabric(FABRICS / "nvl576-all-ocs.toml")
    with pytest.raises(InfeasibleError, match="GB per rank"):
        decode_step(m, RX00, ocs, 512, Split(4, 128, 8, 64), 32, T5M)
    with pytest.raises(InstanceError, match="unknown network"):
        decode_step(m, RX00, ocs, 512, Split(4, 128, 8, 64), 1, T5M, network="psychic")
    with pytest.raises(InstanceError, match="accelerators"):
        decode_step(m, RX00, ocs, 1024, Split(8, 128, 8, 128), 1, T5M)


@pytest.mark.parametrize("fabric", ["nvl576-all-ocs", "nvl576-all-eps", "nvl576-hybrid"])
def test_simlette_network_small(fabric: str) -> None:
    # Simlette (message mode) adds DL-flit rounding, credits and contention to the analytical model:
    # never faster than it by more than rounding, and on these small collectives within 2x.
    m, spec = load_model("gpt-oss-120b"), load_fabric(FABRICS / f"{fabric}.toml")
    split = Split(2, 8, 4, 4)
    ana = decode_step(m, RX00, spec, 16, split, 2, 32768)
    sim = decode_step(m, RX00, spec, 16, split, 2, 32768, network="simlette")
    assert sim.network == "simlette" and sim.compute == ana.compute
    for a, s in zip(ana.collectives, sim.collectives, strict=True):
        assert a.row == s.row and a.schedule == s.schedule
        assert 0.98 * a.time_s <= s.time_s <= 2 * a.time_s


@pytest.mark.parametrize("fabric", ["nvl576-all-ocs.toml", "nvl576-all-eps.toml"])
def test_deepseek_v3_prices_its_dense_layer_rows(fabric: str) -> None:
    m = load_model("deepseek-v3")
    step = decode_step(m, RX00, load_fabric(FABRICS / fabric), 512, Split(16, 32, 16, 32), 4, 32768)
    by_key = {(c.row.region, c.row.axis): c for c in step.collectives}
    assert by_key[("ffn-dense", "EP")].row.calls == 3 and by_key[("ffn", "EP")].row.calls == 58
    # the dense rows' payload (ceil(4/16) = 1 row) is below the MoE rows', and so is its time per call
    for axis in ("EP", "TPE"):
        assert 0 < by_key[("ffn-dense", axis)].time_s <= by_key[("ffn", axis)].time_s


def test_simlette_shared_demands_match_a_direct_simulation() -> None:
    # Splits share demands (the world all-reduce depends on the batch only), and the native
    # schedules' simulated times are memoised: every split's world all-reduce must still be
    # what Simlette gives for that workload simulated directly on the fabric.
    m, spec = load_model("gpt-oss-120b"), load_fabric(FABRICS / "nvl576-all-eps.toml")
    steps = [decode_step(m, RX00, spec, 16, split, 2, 32768, network="simlette")
             for split in (Split(2, 8, 4, 4), Split(2, 8, 8, 2), Split(2, 8, 4, 4))]
    factory = network_factory(spec, SimOptions(), ports=spec.ports)
    for step in steps:
        world = next(c for c in step.collectives if c.row.region == "attention" and c.row.axis == "world")
        schedule, topology = {"one-shot": ("one-shot", Topology.from_profile([4])),
                              "two-shot": ("rs-ag", Topology.from_profile([4])),
                              "halving-doubling": ("rs-ag", Topology.cube(4))}[world.schedule]
        program = SCHEDULES[schedule].build(topology, world.row.payload)
        direct = simulate_workload(program_workload(program, (3, 2, 1, 0), 16), factory, mode="message",
                                   rate=spec.link).simulated_s
        assert world.time_s == direct


# the world axis's native schedules as programs on K16 (decode.pricing.NATIVE, layout "flat")
WORLD_PROGRAMS = {("all-reduce", "one-shot"): "one-shot", ("all-reduce", "two-shot"): "rs-ag",
                  ("all-gather", "one-shot"): "layered"}


@pytest.mark.parametrize("spray", ["message", "packet", "flit-1", "flit-3"])
def test_spray_reaches_simlette(spray: str) -> None:
    # every world demand of the step is what Simlette gives for its program simulated directly with that
    # granularity; the world all-gather (98 flits per message, over 4 uplinks) differs from the default's
    import tomllib

    from ocsplan.realization.fabrics import parse_fabric

    m, spec = load_model("gpt-oss-120b"), parse_fabric(tomllib.loads(EPS_TINY), "eps-tiny")
    step = decode_step(m, RX00, spec, 16, Split(2, 8, 4, 4), 2, 32768, network="simlette", spray=spray)
    factory = network_factory(spec, SimOptions(spray=spray).check(), ports=spec.ports)
    default = network_factory(spec, SimOptions(), ports=spec.ports)
    worlds = [c for c in step.collectives if c.row.axis == "world"]
    assert [c.row.collective for c in worlds] == ["all-reduce", "all-gather"]
    for c in worlds:
        program = SCHEDULES[WORLD_PROGRAMS[(c.row.collective, c.schedule)]].build(Topology.from_profile([4]),
                                                                                   c.row.payload)
        workload = program_workload(program, (3, 2, 1, 0), 16)
        assert c.time_s == simulate_workload(workload, factory, mode="message", rate=spec.link).simulated_s
        if c.row.collective == "all-gather":
            by_default = simulate_workload(workload, default, mode="message", rate=spec.link).simulated_s
            assert (c.time_s == by_default) == (spray == "message")


@pytest.mark.parametrize(("fabric", "network", "needle"), [
    ("nvl576-all-eps", "analytical", "needs network simlette"),
    ("nvl576-all-eps", "analytical-symmetric", "needs network simlette"),
    ("nvl576-all-ocs", "simlette", "ocs fabric"),
])
def test_spray_refused_where_it_cannot_apply(fabric: str, network: str, needle: str) -> None:
    m, spec = load_model("gpt-oss-120b"), load_fabric(FABRICS / f"{fabric}.toml")
    with pytest.raises(InstanceError, match=f"spray: 'packet' {needle}|spray: 'packet'.*{needle}"):
        decode_step(m, RX00, spec, 16, Split(2, 8, 4, 4), 2, 32768, network=network, spray="packet")
