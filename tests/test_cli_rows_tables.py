"""``--json`` rows (``ocsplan.rows/1``) of workload, repair, pareto and sweep (issue 42 goal 3, part).

Each document validates against the shipped schema (with the keys that schema requires of the
command's rows), goes to stdout alone with ``--json -`` and carries numbers recomputed here from the
inputs: Table 1's world all-reduce from the model file, the circuits a failed accelerator held from
the circuits file, tokens per second from the step time, Eq. 1 of a one-shot all-reduce on K4.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

from ocsplan.cli import app
from ocsplan.schemas import schema

from .conftest import ROOT, instance_path
from .test_deploy_faults import N16, single_level

runner = CliRunner()
FABRICS = ROOT / "simulate" / "fabrics"
SINGLE = FABRICS / "ocs-single.toml"
MODELS = ROOT / "src" / "ocsplan" / "workload" / "data" / "models"


def rows_of(args: list[str]) -> tuple[dict[str, Any], str]:
    result = runner.invoke(app, [*args, "--json", "-"])
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = json.loads(result.stdout)  # stdout holds the document alone
    jsonschema.validate(doc, schema("rows-1"))
    assert doc["command"] == args[0] and doc["rows"] and result.stderr.strip()
    return doc, result.stderr


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A 16-rank plan realized on a 32-accelerator single-level OCS fabric (16 spares); the paper's
    multi-mesh plan realized on ocs-single (spare ports to re-path through)."""
    d = tmp_path_factory.mktemp("rows-tables")
    paths = {"instance": d / "n16.toml", "fabric": d / "f32.toml", "plan": d / "plan.json",
             "circuits": d / "c.json", "paper": d / "paper.json", "paper_circuits": d / "paper.c.json"}
    paths["instance"].write_text(N16)
    paths["fabric"].write_text(single_level(32, 8))
    for args in (["solve", str(paths["instance"]), "--json", str(paths["plan"])],
                 ["realize", str(paths["plan"]), "--fabric", str(paths["fabric"]), "--out", str(paths["circuits"])],
                 ["solve", str(instance_path("paper-multimesh-n256")), "--json", str(paths["paper"])],
                 ["realize", str(paths["paper"]), "--fabric", str(SINGLE), "--out", str(paths["paper_circuits"])]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
    return paths


def test_workload_rows_are_table_1(tmp_path: Path) -> None:
    """Megatron-5T, B = 4, fp4: the world all-reduce carries B x hidden x 0.5 bytes once per layer."""
    args = ["workload", "megatron-5t", "--split", "4,128,64,8", "--batch", "4"]
    doc, stderr = rows_of(args)
    model = tomllib.loads((MODELS / "megatron-5t.toml").read_text())
    (world,) = [r for r in doc["rows"] if r["axis"] == "world" and r["collective"] == "all-reduce"]
    assert world["payload_bytes"] == 4 * model["hidden_size"] // 2
    assert world["calls"] == model["num_hidden_layers"]
    assert all(r["groups"] * r["ranks"] == 512 for r in doc["rows"])
    assert {(r["axis"], r["ranks"]) for r in doc["rows"]} >= {("KVP", 4), ("TPA", 128), ("EP", 64), ("TPE", 8)}
    assert any(n.startswith("memory per rank:") for n in doc["notes"]) and "memory per rank:" in stderr
    emit, path = tmp_path / "inst.toml", tmp_path / "rows.json"
    result = runner.invoke(app, [*args, "--emit", str(emit), "--json", str(path)])
    assert result.exit_code == 0 and json.loads(path.read_text()) == doc and emit.exists()


def test_repair_rows_move_every_circuit_of_the_failed_accelerator(files: dict[str, Path]) -> None:
    args = ["repair", str(files["circuits"]), "--plan", str(files["plan"]), "--fabric", str(files["fabric"]),
            "--failed", "accelerator:3", "--out", str(files["circuits"].with_name("r.json"))]
    doc, _ = rows_of(args)
    circuits = json.loads(files["circuits"].read_text())
    on_3 = [c for c in circuits["circuits"] if 3 in (c["a"][0], c["b"][0])]  # rank 3 on accelerator 3
    (move,) = doc["rows"]
    assert move["failed"] == 3 and move["ranks"] == [3] and move["circuits"] == len(on_3) == 8
    assert move["spare"] not in circuits["placement"]["accelerator"]
    plan = json.loads(files["plan"].read_text())
    eq1 = [n for n in doc["notes"] if n.startswith("Eq. 1, the plan")]
    assert eq1 == [f"Eq. 1, the plan (lambda per phase): sum w*T healthy {plan['objective_s']!r} s, "
                   f"repaired {plan['objective_s']!r} s"]


def test_repair_rows_of_a_repath_name_the_circuit(files: dict[str, Path]) -> None:
    args = ["repair", str(files["paper_circuits"]), "--plan", str(files["paper"]), "--fabric", str(SINGLE),
            "--failed", "circuit:0", "--no-simulate", "--out", str(files["circuits"].with_name("r0.json"))]
    doc, _ = rows_of(args)
    first = json.loads(files["paper_circuits"].read_text())["circuits"][0]
    (row,) = doc["rows"]
    assert (row["circuit"], row["a"], row["b"], row["generator"]) == (0, first["a"][0], first["b"][0],
                                                                     first["generator"])
    assert row["before"] == [hop[0] for hop in first["path"]] and not doc["notes"]


def test_pareto_rows_are_tokens_per_second(tmp_path: Path) -> None:
    fabrics = ",".join(str(FABRICS / f"nvl576-{f}.toml") for f in ("all-eps", "all-ocs"))
    doc, _ = rows_of(["pareto", "gpt-oss-120b", "--world", "8", "--contexts", "32Ki", "--batches", "1,4",
                      "--fabrics", fabrics])
    assert len(doc["rows"]) == 4  # 1 context x 2 batches x 2 fabrics
    for r in doc["rows"]:
        assert r["context"] == 32 * 1024 and r["timed"] + r["infeasible"] == 16  # TPA, EP in 1, 2, 4, 8
        assert r["kvp"] * r["tpa"] == 8 == r["ep"] * r["tpe"]
        assert r["tokens_per_s_user"] == pytest.approx(1 / r["step_s"])  # one token per user and step
        assert r["tokens_per_s"] == pytest.approx(r["batch"] / r["step_s"])
        assert r["tokens_per_s_mw"] == pytest.approx(r["tokens_per_s"] / r["power_w"] * 1e6)
        assert 0 < r["comm_s"] < r["step_s"]


def test_sweep_rows_are_eq1_of_one_shot_on_k4(files: dict[str, Path], tmp_path: Path) -> None:
    """paper-multimesh-n256's attention axis 0 is a one-shot all-reduce on K4 (diameter 1): h = 1,
    v = sigma, lambda = 0.52 us, R = 400 Gb/s."""
    doc, _ = rows_of(["sweep", str(files["paper"]), "--fabric", str(SINGLE), "--demand",
                      "attention:0", "--payloads", "1KiB:4KiB", "--csv", str(tmp_path / "s.csv")])
    assert [r["payload_bytes"] for r in doc["rows"]] == [1024, 2048, 4096]
    for r in doc["rows"]:
        assert r["schedule"] in ("one-shot", "one-shot-dvo") and r["phases"] == 1
        assert r["closed_form_s"] == pytest.approx(0.52e-6 + r["payload_bytes"] / (r["multiplicity"] * 50e9))
        assert r["ratio"] == pytest.approx(r["simulated_s"] / r["analytical_s"])


def test_the_schema_holds_each_command_to_its_keys(files: dict[str, Path]) -> None:
    doc, _ = rows_of(["workload", "megatron-5t", "--split", "4,128,64,8"])
    for broken in ({**doc, "command": "nosuch"},
                   {**doc, "rows": [{k: v for k, v in doc["rows"][0].items() if k != "payload_bytes"}]},
                   {**doc, "rows": [{**doc["rows"][0], "calls": "128"}]}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, schema("rows-1"))
