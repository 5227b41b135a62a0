"""workload.step: the decode file's reader gives back the step, and refuses a number its own data contradict."""

from __future__ import annotations

import copy
import json
from functools import cache
from typing import Any

import pytest
from typer.testing import CliRunner

from ocsplan.cli import app
from ocsplan.decode.step import decode_step
from ocsplan.errors import PlanError
from ocsplan.realization.fabrics import load_fabric
from ocsplan.workload import Split, load_accelerator, load_model
from ocsplan.workload.step import Step, step_from_dict, step_to_dict

from .conftest import ROOT

FABRICS = ROOT / "simulate" / "fabrics"
runner = CliRunner()


@cache
def _steps() -> dict[str, Step]:
    m, acc = load_model("gpt-oss-120b"), load_accelerator("rx00")
    ocs, eps = load_fabric(FABRICS / "nvl576-all-ocs.toml"), load_fabric(FABRICS / "nvl576-all-eps.toml")
    return {"ocs": decode_step(m, acc, ocs, 16, Split(2, 8, 4, 4), 2, 32768),
            "eps": decode_step(m, acc, eps, 16, Split(2, 8, 4, 4), 2, 32768),
            "speculative": decode_step(m, acc, eps, 16, Split(2, 8, 8, 2), 4, 32768, tokens_per_step=3,
                                       accept_rate=0.7)}


@pytest.mark.parametrize("which", ["ocs", "eps", "speculative"])
def test_the_file_reads_back_as_the_step(which: str) -> None:
    step = _steps()[which]
    data = json.loads(json.dumps(step_to_dict(step)))  # the file's text, as decode --json writes it
    assert step_from_dict(data, "d.json") == step


# every number the file restates, as a path into it
RESTATED = ["memory.total_bytes", "attention_s", "ffn_s", "lm_head_s", "collectives.0.total_s", "comm_s", "step_s",
            "tokens_per_s_user", "tokens_per_s", "power_w", "tokens_per_s_mw"]


def _at(data: Any, path: str) -> tuple[Any, Any]:
    *head, last = [int(p) if p.isdigit() else p for p in path.split(".")]
    for part in head:
        data = data[part]
    return data, last


@pytest.mark.parametrize("field", RESTATED)
@pytest.mark.parametrize("which", ["eps", "speculative"])
def test_a_restated_number_off_by_a_millionth_is_refused(which: str, field: str) -> None:
    data = copy.deepcopy(step_to_dict(_steps()[which]))
    holder, key = _at(data, field)
    holder[key] = holder[key] * (1 + 1e-6) + 1e-12
    with pytest.raises(PlanError, match=rf"^d\.json: {field}: states "):
        step_from_dict(data, "d.json")


def test_a_malformed_file_names_its_field() -> None:
    data = step_to_dict(_steps()["ocs"])
    data["kernels"] = [{"name": "x"}]
    with pytest.raises(PlanError, match=r"^d\.json: kernels\.0: "):
        step_from_dict(data, "d.json")


def test_report_refuses_a_decode_file_whose_numbers_disagree(tmp_path: Any) -> None:
    plan, bad = tmp_path / "plan.json", tmp_path / "eps.json"
    for argv in (["solve", str(ROOT / "instances" / "megatron-5t-n512-b1.toml"), "--json", str(plan)],
                 ["decode", "megatron-5t", "--fabric", "all-eps", "--split", "4,128,64,8", "--json", str(bad)]):
        result = runner.invoke(app, argv)
        assert result.exit_code == 0, result.output
    data = json.loads(bad.read_text())
    data["step_s"] *= 0.5  # a step twice as fast as its own kernels and collectives add up to
    bad.write_text(json.dumps(data))
    out = tmp_path / "r.html"
    result = runner.invoke(app, ["report", str(plan), "--decode", str(bad), "--out", str(out)])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"--decode: {bad}: step_s: states "), lines
    assert not out.exists()
