"""CLI: splits, workload, decode, power; one-line errors with exit 2, infeasible batches exit 3."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ocsplan.cli import app
from ocsplan.instance import load_instance

from .conftest import EPS_TINY, ROOT

runner = CliRunner()
FABRICS = ROOT / "simulate" / "fabrics"
CONFIG = ROOT / "tests" / "data" / "gpt-oss-120b" / "config.json"


def test_splits_counts() -> None:
    result = runner.invoke(app, ["splits", "megatron-5t", "--world", "512"])
    assert result.exit_code == 0, result.output
    assert "72 splits" in result.stdout  # App. B.6
    result = runner.invoke(app, ["splits", str(CONFIG), "--world", "8"])
    assert result.exit_code == 0 and "16 splits" in result.stdout  # TPA in 1,2,4,8 x EP in 1,2,4,8


def test_workload_emits_an_instance(tmp_path: Path) -> None:
    target = tmp_path / "inst.toml"
    result = runner.invoke(app, ["workload", "megatron-5t", "--accelerator", "rx00", "--world", "512", "--batch", "4",
                                 "--context", "5M", "--split", "4,128,64,8", "--emit", str(target)])
    assert result.exit_code == 0, result.output
    assert "16KiB" in result.stdout and "264B" in result.stdout and "512KiB" in result.stdout  # Table 1, B = 4
    inst = load_instance(target)
    assert [m.shape for m in inst.meshes] == [(512,), (4, 128), (8, 64)]
    assert inst.budget.ports == 36


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["workload", "megatron-9t", "--split", "4,128,64,8"], "megatron-9t: model: unknown model"),
        (["workload", "gpt-oss-5.3-like", "--split", "16,32,2,256"],
         "split: TPA=32 does not divide num_key_value_heads=16"),
        (["workload", "megatron-5t", "--split", "4,128,64,8", "--world", "500"], "--world: must be a power of two"),
        (["workload", "megatron-5t", "--split", "4,128,64,8", "--context", "5X"], "--context: unknown unit"),
        (["workload", "megatron-5t", "--split", "4,128,64,8", "--comm", "fp8"], "comm: unknown communication"),
        (["workload", "megatron-5t", "--split", "4,128,64,8", "--accelerator", "tpu"], "tpu: accelerator: unknown"),
        (["splits", "megatron-5t", "--world", "3"], "--world: must be a power of two"),
        (["decode", "megatron-5t", "--fabric", str(FABRICS / "nvl576-all-ocs.toml"), "--network", "x"],
         "--network: unknown network"),
        (["power", str(FABRICS / "nvl576-all-ocs.toml"), "--link-rate", "300G"],
         "--link-rate: 300 Gb/s has no Table 12"),
    ],
)
def test_bad_input_one_line_exit_2(args: list[str], message: str, tmp_path: Path) -> None:
    target = tmp_path / "out.toml"
    result = runner.invoke(app, [*args, "--emit", str(target)] if args[0] == "workload" else args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), lines
    assert not target.exists()


def test_batch_not_fitting_exit_3(tmp_path: Path) -> None:
    # §6.1: Megatron 5T at 5M on 512 RX00 holds batch 16, not 32
    target = tmp_path / "inst.toml"
    result = runner.invoke(app, ["workload", "megatron-5t", "--split", "4,128,8,64", "--batch", "32",
                                 "--emit", str(target)])
    assert result.exit_code == 3
    assert "GB per rank" in result.stderr and not target.exists()
    result = runner.invoke(app, ["decode", "megatron-5t", "--fabric", str(FABRICS / "nvl576-all-eps.toml"),
                                 "--batch", "32"])
    assert result.exit_code == 3 and "does not fit in HBM with any split" in result.stderr


def test_decode_json(tmp_path: Path) -> None:
    target = tmp_path / "step.json"
    result = runner.invoke(app, ["decode", "gpt-oss-120b", "--fabric", str(FABRICS / "nvl576-all-eps.toml"),
                                 "--world", "8", "--batch", "4", "--context", "32Ki", "--json", str(target)])
    assert result.exit_code == 0, result.output
    data = json.loads(target.read_text())
    assert data["context"] == 32768 and data["world"] == 8
    assert "tokens/s/user" in result.stdout and "tokens/s/MW" in result.stdout


def test_power_ratios_printed() -> None:
    files = [str(FABRICS / f"nvl576-{f}.toml") for f in ("all-eps", "hybrid", "all-ocs")]
    result = runner.invoke(app, ["power", *files])
    assert result.exit_code == 0, result.output
    assert "1.327" in result.stdout  # App. E: all-EPS / all-OCS
    result = runner.invoke(app, ["power", files[0], files[2], "--link-rate", "1600G"])
    assert "1.604" in result.stdout
    result = runner.invoke(app, ["power", files[0], files[2], "--radix", "128"])
    assert "1.937" in result.stdout


def test_pareto_writes_csv_and_png(tmp_path: Path) -> None:
    csv_path, png = tmp_path / "f4.csv", tmp_path / "f4.png"
    fabrics = ",".join(str(FABRICS / f"nvl576-{f}.toml") for f in ("all-eps", "all-ocs"))
    result = runner.invoke(app, ["pareto", "gpt-oss-120b", "--world", "8", "--contexts", "32Ki", "--batches", "1,4",
                                 "--fabrics", fabrics, "--csv", str(csv_path), "--plot", str(png)])
    assert result.exit_code == 0, result.output
    assert "64 points" in result.stdout  # 16 splits x 1 context x 2 batches x 2 fabrics
    assert len(csv_path.read_text().splitlines()) == 1 + 4 and png.exists()
    bad = runner.invoke(app, ["pareto", "gpt-oss-120b", "--world", "8", "--fabrics", "no-such",
                              "--csv", str(tmp_path / "x.csv")])
    assert bad.exit_code == 2 and "--fabrics: unknown fabric 'no-such' (catalogue: all-eps," in bad.stderr
    assert not (tmp_path / "x.csv").exists()


def test_pareto_on_a_dask_local_cluster_gives_the_serial_csv(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    fabrics = ",".join(str(FABRICS / f"nvl576-{f}.toml") for f in ("all-eps", "all-ocs"))
    base = ["pareto", "gpt-oss-120b", "--world", "8", "--contexts", "32Ki", "--batches", "1,4", "--fabrics", fabrics]
    serial = runner.invoke(app, [*base, "--csv", str(tmp_path / "a.csv")])
    dask = runner.invoke(app, [*base, "--scheduler", "local", "--jobs", "2", "--csv", str(tmp_path / "b.csv")])
    assert serial.exit_code == 0 and dask.exit_code == 0, dask.output
    assert (tmp_path / "a.csv").read_text() == (tmp_path / "b.csv").read_text()
    bad = runner.invoke(app, [*base, "--jobs", "0"])
    assert bad.exit_code == 2 and "--jobs" in bad.stderr


@pytest.mark.parametrize("args", [["decode", "--help"], ["pareto", "--help"],
                                  ["workload", "megatron-5t", "--split", "4,128,64,8"]])
def test_workload_commands_import_no_heavy_library(args: list[str]) -> None:
    from .test_cli_startup import _command, _loaded

    assert _loaded(_command(args)) == set()


def test_workload_deepseek_v3_first_line_and_extras(tmp_path: Path) -> None:
    target = tmp_path / "ds.toml"
    result = runner.invoke(app, ["workload", "deepseek-v3", "--split", "4,128,64,8", "--batch", "16",
                                 "--context", "128K", "--emit", str(target)])
    assert result.exit_code == 0, result.output
    first, second = result.stdout.splitlines()[:2]
    assert first.startswith("deepseek-v3: 671B parameters, 37.6B active, KV cache ")  # form kept
    assert "1 MTP module(s) of 13.5B parameters" in result.stdout and "3 dense FFN layers" in second
    inst = load_instance(target)
    ffn = inst.meshes[2]
    assert [len(axis.demands) for axis in ffn.axes] == [2, 2]  # MoE rows (58 calls) and dense rows (3 calls)


def test_unmodellable_config_one_line_exit_2(tmp_path: Path) -> None:
    data = json.loads(CONFIG.read_text())
    data["layer_types"] = ["linear_attention", "full_attention", "mamba"]
    data["is_encoder_decoder"] = True
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    target = tmp_path / "out.toml"
    result = runner.invoke(app, ["workload", str(path), "--split", "1,8,8,8", "--world", "8", "--emit", str(target)])
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.strip().splitlines()
    assert "not modelled" in line and "linear_attention, mamba" in line and "is_encoder_decoder" in line
    assert not target.exists()


def test_decode_counts_accepted_tokens() -> None:
    base = ["decode", "megatron-5t", "--fabric", str(FABRICS / "nvl576-all-ocs.toml"), "--split", "4,128,64,8",
            "--batch", "4", "--context", "1M", "--json", "-"]
    plain = json.loads(runner.invoke(app, base).stdout)
    spec = json.loads(runner.invoke(app, [*base, "--tokens-per-step", "2", "--accept-rate", "0.75"]).stdout)
    assert spec["tokens_per_s_user"] == pytest.approx(2 * 0.75 / spec["step_s"])
    assert spec["step_s"] > plain["step_s"]  # k = 2 costs more per step, less than twice
    assert spec["step_s"] < 2 * plain["step_s"]
    assert (spec["tokens_per_step"], spec["accept_rate"]) == (2, 0.75)
    bad = runner.invoke(app, [*base, "--accept-rate", "1.5"])
    assert bad.exit_code == 2 and "--accept-rate" in bad.stderr


@pytest.mark.parametrize(
    ("command", "option", "old", "new"),
    [
        ("decode", ["--link-rate", "800G"], 'link = "400Gb/s"', 'link = "800Gb/s"'),
        ("decode", ["--radix", "48"], "ports = 36", "ports = 48"),
        ("decode", ["--switch-latency", "400ns"], 'latency = "nominal"', 'latency = "high"'),
        ("decode", ["--accelerator-latency", "300ns"], 'latency = "nominal"', 'latency = { endpoint = "200ns" }'),
        ("pareto", ["--switch-latency", "100ns"], 'latency = "nominal"', 'latency = "low"'),
        ("pareto", ["--link-rate", "1600G"], 'link = "400Gb/s"', 'link = "1.6Tb/s"'),
    ],
)
@pytest.mark.parametrize("fabric", ["nvl576-all-eps.toml", "nvl576-all-ocs.toml"])
def test_fabric_override_equals_an_edited_fabric_file(command: str, option: list[str], old: str, new: str,
                                                      fabric: str, tmp_path: Path) -> None:
    edited = tmp_path / fabric
    text = (FABRICS / fabric).read_text()
    assert old in text
    edited.write_text(text.replace(old, new))
    outputs = []
    for n, (path, extra) in enumerate(((FABRICS / fabric, option), (edited, []), (FABRICS / fabric, []))):
        target = tmp_path / f"out{n}"
        if command == "decode":
            args = ["decode", "gpt-oss-120b", "--fabric", str(path), "--world", "8", "--batch", "4",
                    "--context", "32Ki", "--json", str(target)]
        else:
            args = ["pareto", "gpt-oss-120b", "--world", "8", "--contexts", "32Ki", "--batches", "1",
                    "--fabrics", str(path), "--csv", str(target)]
        result = runner.invoke(app, [*args, *extra])
        assert result.exit_code == 0, result.output
        outputs.append(target.read_text())
    assert outputs[0] == outputs[1]  # the override is the edit
    # ... and it changes the answer, except a switch-core shift on 8 accelerators of one EPS rack:
    # every path there is one switch hop, which App. E keeps at 810 ns.
    assert (outputs[0] == outputs[2]) == (fabric == "nvl576-all-eps.toml" and option[0] == "--switch-latency")


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--link-rate", "700G"], "--link-rate: 700 Gb/s has no Table 12 power figures"),
        (["--link-rate", "fast"], "--link-rate: "),
        (["--radix", "0"], "--radix: must be between 1 and 4096"),
        (["--switch-latency", "600ns"], "--switch-latency: 600 ns leaves a negative endpoint latency"),
        (["--switch-latency", "-1ns"], "--switch-latency: "),
        (["--accelerator-latency", "20ns"], "--accelerator-latency: 20 ns is below the 100 ns"),
    ],
)
@pytest.mark.parametrize("command", ["decode", "pareto"])
def test_fabric_override_bounds_one_line_exit_2(command: str, option: list[str], message: str,
                                                tmp_path: Path) -> None:
    fabric = str(FABRICS / "nvl576-all-eps.toml")
    target = tmp_path / "out"
    args = (["decode", "gpt-oss-120b", "--fabric", fabric, "--world", "8", "--json", str(target)] if command == "decode"
            else ["pareto", "gpt-oss-120b", "--world", "8", "--fabrics", fabric, "--csv", str(target)])
    result = runner.invoke(app, [*args, *option])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), lines
    assert not target.exists()


def test_power_rate_is_now_link_rate() -> None:
    """One name per quantity (decode, pareto and power say --link-rate): the old --rate still works one
    release, hidden from --help, with a warning on stderr and the same table; both names together refused."""
    fabric = str(FABRICS / "nvl576-all-ocs.toml")
    new = runner.invoke(app, ["power", fabric, "--link-rate", "1600G"])
    old = runner.invoke(app, ["power", fabric, "--rate", "1600G"])
    assert new.exit_code == old.exit_code == 0
    default = runner.invoke(app, ["power", fabric]).stdout
    assert old.stdout == new.stdout != default  # the option took effect under either name
    assert old.stderr.startswith("warning: power --rate is now --link-rate") and new.stderr == ""
    both = runner.invoke(app, ["power", fabric, "--rate", "800G", "--link-rate", "1600G"])
    assert both.exit_code == 2 and both.stderr.startswith("--rate: is the old name of --link-rate")
    help_text = runner.invoke(app, ["power", "--help"], env={"COLUMNS": "200"}).stdout
    assert "--link-rate" in help_text and "--rate " not in help_text




@pytest.mark.parametrize("split", ["2,8,4,4", "auto"])
@pytest.mark.parametrize("spray", [None, "packet", "flit-3"])
def test_decode_spray_reaches_simlette(tmp_path: Path, split: str, spray: str | None) -> None:
    from ocsplan.decode.ranking import best_step
    from ocsplan.decode.step import decode_step
    from ocsplan.realization.fabrics import load_fabric
    from ocsplan.workload import Split, load_accelerator, load_model

    fabric = tmp_path / "eps-tiny.toml"
    fabric.write_text(EPS_TINY)
    given = [] if spray is None else ["--spray", spray]
    result = runner.invoke(app, ["decode", "gpt-oss-120b", "--fabric", str(fabric), "--world", "16", "--batch", "2",
                                 "--context", "32Ki", "--split", split, "--network", "simlette", "--json", "-",
                                 *given])
    assert result.exit_code == 0, result.output
    assert (f"simlette, spray {spray})" in result.stderr) == (spray is not None)
    data = json.loads(result.stdout)
    m, acc, spec = load_model("gpt-oss-120b"), load_accelerator("rx00"), load_fabric(str(fabric))
    sprayed = spray or "message"
    if split == "auto":
        step = best_step(m, acc, spec, 16, 2, 32768, network="simlette", spray=sprayed).best
    else:
        step = decode_step(m, acc, spec, 16, Split(2, 8, 4, 4), 2, 32768, network="simlette", spray=sprayed)
    assert [c["time_s"] for c in data["collectives"]] == [c.time_s for c in step.collectives]
    assert data["step_s"] == step.step_s
    default = decode_step(m, acc, spec, 16, step.split, 2, 32768, network="simlette")
    assert (step.comm_s == default.comm_s) == (spray is None)  # the world all-gather's uplinks differ


@pytest.mark.parametrize(("args", "needle"), [
    (["--fabric", "all-eps", "--spray", "packet"],
     "--spray: has no effect with --network analytical (Simlette's spraying: --network simlette)"),
    (["--fabric", "all-eps", "--network", "analytical-symmetric", "--spray", "message"],
     "--spray: has no effect with --network analytical-symmetric"),
    (["--fabric", "all-ocs", "--network", "simlette", "--spray", "packet"],
     "--spray: has no effect on the optical fabric all-ocs (no packet switch to spray)"),
    (["--fabric", "all-eps", "--network", "simlette", "--spray", "flit-0"], "--spray: unknown granularity 'flit-0'"),
    (["--fabric", "hybrid", "--network", "simlette", "--spray", "bytes"], "--spray: unknown granularity 'bytes'"),
    (["--fabric", "all-eps", "--jobs", "2"],
     "--jobs: has no effect outside --network simlette on an EPS or hybrid fabric"),
    (["--fabric", "all-ocs", "--network", "simlette", "--jobs", "2"],
     "--jobs: has no effect outside --network simlette on an EPS or hybrid fabric"),
    (["--fabric", "all-eps", "--network", "simlette", "--jobs", "0"], "--jobs: must be between 1 and 256, got 0"),
])
def test_decode_refuses_spray_and_jobs_where_they_cannot_apply(args: list[str], needle: str) -> None:
    result = runner.invoke(app, ["decode", "megatron-5t", "--split", "4,128,16,32", *args])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(needle), lines


@pytest.mark.parametrize(("args", "needle"), [
    (["--fabrics", "all-eps,all-ocs", "--spray", "packet"],
     "--spray: has no effect with --network analytical (Simlette's spraying: --network simlette)"),
    (["--fabrics", "all-ocs", "--network", "simlette", "--spray", "packet"],
     "--spray: has no effect when every fabric is optical (no packet switch to spray)"),
    (["--fabrics", "all-eps", "--network", "simlette", "--spray", "flit-0"], "--spray: unknown granularity 'flit-0'"),
])
def test_pareto_refuses_spray_where_it_cannot_apply(args: list[str], needle: str) -> None:
    result = runner.invoke(app, ["pareto", "gpt-oss-120b", "--world", "8", "--contexts", "32Ki", "--batches", "1",
                                 *args])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(needle), lines


def test_pareto_spray_titles_the_table() -> None:
    result = runner.invoke(app, ["pareto", "gpt-oss-120b", "--world", "8", "--contexts", "32Ki", "--batches", "1",
                                 "--fabrics", "all-eps", "--network", "simlette", "--spray", "packet", "--quiet"])
    assert result.exit_code == 0, result.output
    assert "best split per cell (simlette, spray packet)" in result.output
