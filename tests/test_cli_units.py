"""One prefix family per table column (issue 42 goal 4): every byte count of a column is binary
(KiB, MiB, GiB) or every one decimal (kB, MB, GB), never ``3.584kB`` beside ``4KiB``.

The tables are rendered by the commands themselves and read back cell by cell.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ocsplan.cli import app
from ocsplan.units import SIZE as SIZE_UNITS
from ocsplan.units import byte_family, format_byte_column, format_bytes

from .conftest import ROOT, instance_path

runner = CliRunner()
FABRICS = ROOT / "simulate" / "fabrics"
SIZE = re.compile(r"^[0-9.]+(B|kB|MB|GB|KiB|MiB|GiB)$")
FAMILY = {"kB": "decimal", "MB": "decimal", "GB": "decimal", "KiB": "binary", "MiB": "binary", "GiB": "binary"}


def columns(text: str) -> list[list[str]]:
    """The cells of every box table in ``text``, column by column (tables appended one after another)."""
    cols: list[list[str]] = []
    width = 0
    for line in text.splitlines():
        if line.startswith("┏"):  # a new table: its columns start after the previous table's
            width = len(cols)
        if not line.startswith("│"):
            continue
        cells = [c.strip() for c in line.strip("│").split("│")]
        while len(cols) < width + len(cells):
            cols.append([])
        for i, cell in enumerate(cells):
            cols[width + i].append(cell)
    return cols


def families(text: str) -> list[set[str]]:
    """Per column holding sizes: the prefix families of its cells (plain bytes belong to both)."""
    found = []
    for col in columns(text):
        sizes = [c for c in col if SIZE.match(c)]
        if sizes:
            found.append({FAMILY[m.group(1)] for c in sizes if (m := SIZE.match(c)) and m.group(1) != "B"})
    return found


@pytest.fixture(scope="module")
def plan_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("units") / "plan.json"
    result = runner.invoke(app, ["solve", str(instance_path("paper-multimesh-n256")), "--json", str(path)])
    assert result.exit_code == 0, result.output
    return path


COMMANDS = {
    "schedules": ["schedules", "--bits", "4", "--payload", "4KiB"],  # v: 4KiB beside 3.584kB before
    "circulant": ["circulant", "--size", "72", "--degree", "14", "--payload", "8kB"],
    "workload": ["workload", "deepseek-v3", "--split", "4,128,64,8", "--batch", "16", "--context", "128000"],
    "decode": ["decode", "gpt-oss-120b", "--world", "64", "--fabric", str(FABRICS / "nvl576-all-ocs.toml"),
               "--batch", "3"],
}


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_one_family_per_column(name: str) -> None:
    result = runner.invoke(app, COMMANDS[name])
    assert result.exit_code == 0, result.output
    found = families(result.stdout)
    assert found and all(len(f) <= 1 for f in found), found


def test_plan_simulate_and_sweep_tables(plan_file: Path, tmp_path: Path) -> None:
    fabric = str(FABRICS / "ocs-single.toml")
    for args in (["solve", str(instance_path("paper-multimesh-n256"))],
                 ["simulate", str(plan_file), "--fabric", fabric],
                 ["sweep", str(plan_file), "--fabric", fabric, "--demand", "attention:0", "--payloads", "1000:3000",
                  "--csv", str(tmp_path / "s.csv")]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        found = families(result.stdout)
        assert found and all(len(f) <= 1 for f in found), (args[0], found)


def test_the_readme_column_is_binary_throughout() -> None:
    """Q4 with a 4 KiB buffer: the rs-ag column holds 15/8 x 4096 = 7680 bytes, 7.5 KiB exactly."""
    result = runner.invoke(app, COMMANDS["schedules"])
    (v,) = [col for col in columns(result.stdout) if col and "16KiB" in col]
    assert "7.5KiB" in v and "4KiB" in v  # a fraction and an exact size, one family


def test_a_decimal_column_stays_decimal() -> None:
    """A user's 8 kB buffer: the circulant v column is 6 x 8000 = 48000 bytes (48 kB) and 2/9 of 8000."""
    result = runner.invoke(app, COMMANDS["circulant"])
    (v,) = [col for col in columns(result.stdout) if col and "48kB" in col]
    assert "1.778kB" in v and not any("KiB" in c for c in v)


@pytest.mark.parametrize(("sizes", "family"), [
    ([4096, 3584, 7680], "binary"),  # 4 KiB is whole in KiB only
    ([8000, 48000, 1777.8], "decimal"),  # 8 and 48 kB are whole in kB only
    ([264, 500.5], "binary"),  # nothing whole: binary
    ([2**20 * 1000], "binary"),  # 1000 MiB is whole in both: a tie goes to binary
])
def test_byte_family(sizes: list[float], family: str) -> None:
    assert byte_family(sizes) == family
    for text, n in zip(format_byte_column(sizes), sizes, strict=True):
        assert SIZE_UNITS.parse(text) == pytest.approx(n, rel=5e-4)  # 4 significant digits


def test_a_lone_size_keeps_its_exact_form() -> None:
    assert (format_bytes(4096), format_bytes(32000), format_bytes(3584)) == ("4KiB", "32kB", "3.584kB")
    assert (format_bytes(3584, "binary"), format_bytes(4096, "decimal")) == ("3.5KiB", "4.096kB")
