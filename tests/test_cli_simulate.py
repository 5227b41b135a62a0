"""``ocsplan simulate`` and ``ocsplan sweep`` through typer's CliRunner."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ocsplan.cli import app

from .conftest import ROOT, instance_path

runner = CliRunner()
FABRICS = ROOT / "simulate" / "fabrics"


@pytest.fixture(scope="module")
def plan_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("plans") / "plan.json"
    result = runner.invoke(app, ["solve", str(instance_path("paper-multimesh-n256")), "--json", str(path)])
    assert result.exit_code == 0, result.output
    return path


def test_simulate_prints_and_writes_json(plan_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "sim.json"
    result = runner.invoke(
        app,
        [
            "simulate",
            str(plan_file),
            "--fabric",
            str(FABRICS / "ocs-single.toml"),
            "--demand",
            "attention:0",
            "--json",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "attention[0].0 all-reduce" in result.stdout and "T simulated" in result.stdout
    data = json.loads(out.read_text())
    assert data["schema"] == "ocsplan.simulation/1" and data["circuits"] == "realization"
    (d,) = data["demands"]
    # one-shot on K4, 4 KiB = 7 DL flits: 520 ns + 7 x 12.8 ns
    assert d["simulated_s"] == pytest.approx(609.6e-9) and d["ratio"] > 1


def test_simulate_ideal_mode_to_stdout(plan_file: Path) -> None:
    result = runner.invoke(
        app,
        [
            "simulate",
            str(plan_file),
            "--fabric",
            str(FABRICS / "eps-single.toml"),
            "--mode",
            "ideal",
            "--demand",
            "ffn",
            "--json",
            "-",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [d["mesh"] for d in data["demands"]] == ["ffn", "ffn"]
    for d in data["demands"]:
        assert d["simulated_s"] == pytest.approx(d["closed_form_s"], rel=1e-9)


def test_simulate_with_a_saved_realization(plan_file: Path, tmp_path: Path) -> None:
    circuits = tmp_path / "circuits.json"
    fabric = str(FABRICS / "nvl576-all-ocs.toml")
    result = runner.invoke(app, ["realize", str(plan_file), "--fabric", fabric, "--out", str(circuits)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(
        app,
        [
            "simulate",
            str(plan_file),
            "--fabric",
            fabric,
            "--circuits",
            str(circuits),
            "--demand",
            "attention:0",
            "--buffer",
            "4KiB",
            "--json",
            "-",
        ],
    )
    assert result.exit_code == 0, result.output
    (d,) = json.loads(result.stdout)["demands"]
    # one-shot-dvo on K4, 4 KiB messages = 7 DL flits, sent together. 4 KiB of buffer holds
    # 6 credits: the 7th flit of every message waits for a credit, so the run is slower than
    # with unlimited buffers by exactly the worst credit wait. 4480 B = 7 credits: no wait.
    runs = {}
    for buffer in ("4480B", None):
        extra = ["--buffer", buffer] if buffer else []
        again = runner.invoke(
            app,
            ["simulate", str(plan_file), "--fabric", fabric, "--circuits", str(circuits),
             "--demand", "attention:0", *extra, "--json", "-"],
        )
        assert again.exit_code == 0, again.output
        (runs[buffer],) = json.loads(again.stdout)["demands"]
    free = runs[None]
    assert free["credit_stall_s"] == 0.0
    assert d["credit_stall_s"] > 0
    assert d["simulated_s"] - free["simulated_s"] == pytest.approx(d["credit_stall_s"], rel=1e-9)
    assert runs["4480B"]["credit_stall_s"] == 0.0
    assert runs["4480B"]["simulated_s"] == pytest.approx(free["simulated_s"], rel=1e-12)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--mode", "fast"], "--mode"),
        (["--buffer", "100B"], "--buffer"),
        (["--buffer", "lots"], "--buffer"),
        (["--order", "random"], "--order"),
        (["--demand", "nope"], "--demand"),
        (["--latency-preset", "fast"], "--latency-preset"),
    ],
)
def test_simulate_bad_options(plan_file: Path, args: list[str], message: str) -> None:
    result = runner.invoke(app, ["simulate", str(plan_file), "--fabric", str(FABRICS / "ocs-single.toml"), *args])
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_latency_preset(plan_file: Path) -> None:
    # Table 9: the high budget moves latency into the switch core and out of the endpoint,
    # so an OCS hop (which skips the switch) gets shorter: 810 - 500 + 10 = 320 ns + 7 flits.
    args = [
        "simulate",
        str(plan_file),
        "--fabric",
        str(FABRICS / "ocs-single.toml"),
        "--demand",
        "attention:0",
        "--json",
        "-",
    ]
    nominal = json.loads(runner.invoke(app, args).stdout)["demands"][0]["simulated_s"]
    high = json.loads(runner.invoke(app, [*args, "--latency-preset", "high"]).stdout)["demands"][0]["simulated_s"]
    assert nominal == pytest.approx(520e-9 + 7 * 12.8e-9)
    assert high == pytest.approx(320e-9 + 7 * 12.8e-9)


def test_simulate_bad_files(plan_file: Path, tmp_path: Path) -> None:
    missing = runner.invoke(app, ["simulate", str(plan_file), "--fabric", str(tmp_path / "none.toml")])
    assert missing.exit_code == 2 and "none.toml" in missing.output
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    result = runner.invoke(app, ["simulate", str(bad), "--fabric", str(FABRICS / "ocs-single.toml")])
    assert result.exit_code == 2 and "schema" in result.output


def test_sweep_writes_csv_and_png(plan_file: Path, tmp_path: Path) -> None:
    out_csv, out_png = tmp_path / "sweep.csv", tmp_path / "sweep.png"
    result = runner.invoke(
        app,
        [
            "sweep",
            str(plan_file),
            "--fabric",
            str(FABRICS / "ocs-single.toml"),
            "--demand",
            "attention:0",
            "--payloads",
            "1KiB:4KiB",
            "--schedules",
            "all",
            "--csv",
            str(out_csv),
            "--plot",
            str(out_png),
        ],
    )
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(out_csv.open()))
    schedules = {r["schedule"] for r in rows}
    assert {"one-shot", "coset-factored", "rs-ag-parallel"} <= schedules and "ring" not in schedules
    assert len(rows) == 3 * len(schedules)  # 1, 2 and 4 KiB
    assert {int(r["payload_bytes"]) for r in rows} == {1024, 2048, 4096}
    assert all(float(r["simulated_s"]) >= float(r["analytical_s"]) * 0.999 for r in rows)
    assert out_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_sweep_rejects_a_wrong_schedule(plan_file: Path, tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        [
            "sweep",
            str(plan_file),
            "--fabric",
            str(FABRICS / "ocs-single.toml"),
            "--schedules",
            "bruck",
            "--csv",
            str(tmp_path / "x.csv"),
        ],
    )
    assert result.exit_code == 2 and "bruck" in result.output
    assert not (tmp_path / "x.csv").exists()


@pytest.fixture(scope="module")
def default_simulated_s(plan_file: Path) -> float:
    """simulate's time for the attention[1] demand on nvl576-all-eps without --spray (run once a module)."""
    default = runner.invoke(app, ["simulate", str(plan_file), "--fabric", "all-eps", "--demand", "attention:1",
                                  "--json", "-"])
    assert default.exit_code == 0, default.output
    simulated_s = json.loads(default.stdout)["demands"][0]["simulated_s"]
    assert isinstance(simulated_s, float)
    return simulated_s


@pytest.mark.parametrize("spray", [None, "packet", "flit-1"])
def test_sweep_sprays_as_simulate_does(plan_file: Path, tmp_path: Path, spray: str | None,
                                       default_simulated_s: float) -> None:
    # the attention[1] demand at its own payload (32 KiB) crosses racks of nvl576-all-eps: sweep's simulated
    # time is simulate's with the same granularity, and packet / flit-1 differ from the default
    given = [] if spray is None else ["--spray", spray]
    out_csv = tmp_path / "sweep.csv"
    swept = runner.invoke(app, ["sweep", str(plan_file), "--fabric", "all-eps", "--demand", "attention:1",
                                "--payloads", "32KiB:32KiB", "--csv", str(out_csv), *given])
    assert swept.exit_code == 0, swept.output
    assert (f"(spray {spray})" in swept.stdout) == (spray is not None)
    simulated = runner.invoke(app, ["simulate", str(plan_file), "--fabric", "all-eps", "--demand", "attention:1",
                                    "--json", "-", *given])
    assert simulated.exit_code == 0, simulated.output
    (row,) = csv.DictReader(out_csv.open())
    (demand,) = json.loads(simulated.stdout)["demands"]
    assert demand["payload_bytes"] == int(row["payload_bytes"]) == 32768
    assert float(row["simulated_s"]) == demand["simulated_s"]
    assert (default_simulated_s == demand["simulated_s"]) == (spray is None)


@pytest.mark.parametrize(("args", "needle"), [
    (["--fabric", "all-ocs", "--spray", "packet"], "--spray: has no effect on the optical fabric all-ocs"),
    (["--fabric", "all-eps", "--spray", "packet", "--mode", "ideal"], "--spray: has no effect in ideal mode"),
    (["--fabric", "all-eps", "--spray", "flit-0"], "--spray: unknown granularity 'flit-0'"),
])
def test_sweep_refuses_spray_where_it_cannot_apply(plan_file: Path, tmp_path: Path, args: list[str],
                                                   needle: str) -> None:
    result = runner.invoke(app, ["sweep", str(plan_file), *args, "--csv", str(tmp_path / "x.csv")])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(needle), lines
    assert not (tmp_path / "x.csv").exists()
