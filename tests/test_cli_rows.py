"""``--json`` (``ocsplan.rows/1``) on the commands whose answer is one table (issue 42 goal 3, part).

Each command's rows validate against the shipped schema, go to stdout alone with ``--json -`` (the
table then on stderr), and carry numbers a reader can recompute: the Helix split count of the paper
(App. B.6: 72 for Megatron-5T on 512), Eq. 1 of every schedule, the power totals and ratios.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

from ocsplan.cli import app
from ocsplan.schemas import schema

runner = CliRunner()
COMMANDS = {
    "splits": ["splits", "megatron-5t", "--world", "512"],
    "power": ["power", "all-eps", "all-ocs"],
    "schedules": ["schedules", "--bits", "3", "--payload", "4KiB"],
    "frontier": ["frontier", "--bits", "4"],
    "circulant": ["circulant", "--size", "12", "--degree", "3"],
}


def rows_of(args: list[str]) -> tuple[dict[str, Any], str]:
    result = runner.invoke(app, [*args, "--json", "-"])
    assert result.exit_code == 0, result.output
    doc: dict[str, Any] = json.loads(result.stdout)  # stdout holds the document alone
    return doc, result.stderr


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_rows_validate_and_the_table_moves_to_stderr(name: str, tmp_path: Path) -> None:
    doc, stderr = rows_of(COMMANDS[name])
    jsonschema.validate(doc, schema("rows-1"))
    assert doc["command"] == name and doc["rows"] and "\x1b" not in stderr and stderr.strip()
    path = tmp_path / "rows.json"
    result = runner.invoke(app, [*COMMANDS[name], "--json", str(path)])
    assert result.exit_code == 0 and json.loads(path.read_text()) == doc


def test_splits_are_the_papers_72() -> None:
    doc, _ = rows_of(COMMANDS["splits"])
    assert len(doc["rows"]) == 72  # paper App. B.6
    assert all(r["kvp"] * r["tpa"] == 512 == r["ep"] * r["tpe"] for r in doc["rows"])


@pytest.mark.parametrize("name", ["schedules", "circulant"])
def test_schedule_rows_are_eq1(name: str) -> None:
    """T = h lambda + v / R with the defaults lambda = 0.52 us, R = 400 Gb/s (p = 1)."""
    doc, _ = rows_of(COMMANDS[name])
    valid = [r for r in doc["rows"] if r.get("valid", True)]
    assert valid
    for r in valid:
        assert r["T_s"] == pytest.approx(r["h"] * 0.52e-6 + r["v_bytes"] / 50e9, rel=1e-12)
        assert r["verified"] == "ok"


def test_power_rows_add_up() -> None:
    doc, _ = rows_of(COMMANDS["power"])
    first = doc["rows"][0]["total_w"]
    for r in doc["rows"]:
        assert r["total_w"] == pytest.approx(r["xpus_w"] + r["switches_w"] + r["pluggables_w"] + r["cpo_w"])
        assert r["first_over_this"] == pytest.approx(first / r["total_w"])
