"""`ocsplan report`: the HTML parses, every image decodes, every number is the input file's."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ocsplan.cli import app

from .conftest import ROOT, instance_path

runner = CliRunner()
FABRICS = ROOT / "simulate" / "fabrics"


class _Page(HTMLParser):
    """Collects table rows (cell texts), summary cells by id, and inline <svg> blocks."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self._text = text
        self._lines = [0]
        for line in text.splitlines(keepends=True):
            self._lines.append(self._lines[-1] + len(line))
        self.rows: list[list[str]] = []
        self.summary: dict[str, str] = {}
        self.svgs: list[str] = []
        self.scripts = 0
        self._cell: list[str] | None = None
        self._cell_id: str | None = None
        self._svg_depth = 0
        self._svg_start = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self.scripts += 1
        if tag == "svg":
            if not self._svg_depth:
                self._svg_start = self._offset()
            self._svg_depth += 1
        if self._svg_depth:
            return
        if tag == "tr":
            self.rows.append([])
        if tag in ("td", "th"):
            self._cell = []
            self._cell_id = dict(attrs).get("id")

    def handle_endtag(self, tag: str) -> None:
        if self._svg_depth:
            if tag == "svg":
                self._svg_depth -= 1
                if not self._svg_depth:
                    end = self._text.index(">", self._offset()) + 1
                    self.svgs.append(self._text[self._svg_start:end])
            return
        if tag in ("td", "th") and self._cell is not None:
            text = "".join(self._cell)
            self.rows[-1].append(text)
            if self._cell_id and self._cell_id.startswith("summary-"):
                self.summary[self._cell_id.removeprefix("summary-")] = text
            self._cell = None

    def _offset(self) -> int:
        line, column = self.getpos()
        return self._lines[line - 1] + column

    def handle_data(self, data: str) -> None:
        if self._cell is not None and not self._svg_depth:
            self._cell.append(data)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("report")
    plan, sim = folder / "plan.json", folder / "sim.json"
    result = runner.invoke(app, ["solve", str(instance_path("paper-multimesh-n256")), "--json", str(plan)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["simulate", str(plan), "--fabric", str(FABRICS / "ocs-single.toml"),
                                 "--json", str(sim)])
    assert result.exit_code == 0, result.output
    return plan, sim


def _page(path: Path) -> _Page:
    text = path.read_text(encoding="utf-8")
    page = _Page(text)
    page.feed(text)
    page.close()
    return page


def _same(text: str, value: float) -> bool:
    """The page shows floats to 6 significant digits, integers exactly."""
    if isinstance(value, int):
        return int(text) == value
    return float(text) == pytest.approx(value, rel=5e-6)


def test_report_numbers_equal_the_files(files: tuple[Path, Path], tmp_path: Path) -> None:
    plan_path, sim_path = files
    out = tmp_path / "r.html"
    result = runner.invoke(app, ["report", str(plan_path), "--simulation", str(sim_path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    plan: dict[str, Any] = json.loads(plan_path.read_text())
    sim: dict[str, Any] = json.loads(sim_path.read_text())
    page = _page(out)
    assert page.scripts == 0
    assert page.summary["instance"] == plan["instance"]
    assert page.summary["method"] == plan["method"] and page.summary["status"] == plan["status"]
    for key in ("ports_used", "ports", "world", "objective_s"):
        assert _same(page.summary[key], plan[key])
    # Demand rows: the header row starts with "mesh"; rows after it are the plan's demands in order.
    start = next(i for i, row in enumerate(page.rows) if row[:1] == ["mesh"])
    header, body = page.rows[start], page.rows[start + 1:]
    expected = [(mesh["name"], i, d) for mesh in plan["meshes"] for i, a in enumerate(mesh["axes"])
                for d in a["demands"]]
    assert len(body) == len(expected) == len(sim["demands"])
    for row, (mesh_name, axis, demand), simulated in zip(body, expected, sim["demands"], strict=True):
        cells = dict(zip(header, row, strict=True))
        assert cells["mesh"] == mesh_name and int(cells["axis"]) == axis
        assert cells["collective"] == demand["collective"] and cells["schedule"] == demand["schedule"]
        for key in ("payload_bytes", "phases", "volume_bytes", "multiplicity", "time_s"):
            assert _same(cells[key], demand[key])
        assert _same(cells["simulated_s"], simulated["simulated_s"])
        assert _same(cells["ratio"], simulated["simulated_s"] / demand["time_s"])


def test_report_images_decode(files: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    assert runner.invoke(app, ["report", str(files[0]), "--out", str(out)]).exit_code == 0
    page = _page(out)
    assert page.svgs
    for svg in page.svgs:
        root = ET.fromstring(svg)
        assert root.tag.endswith("svg")


def test_report_deterministic(files: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = tmp_path / "a.html", tmp_path / "b.html"
    for out in (a, b):
        assert runner.invoke(app, ["report", str(files[0]), "--out", str(out)]).exit_code == 0
    assert a.read_bytes() == b.read_bytes()


@pytest.mark.parametrize("text", ["{", "[]", '{"schema": "ocsplan.plan/1"}'])
def test_report_bad_plan_is_one_line_exit_2(text: str, tmp_path: Path) -> None:
    bad, out = tmp_path / "bad.json", tmp_path / "r.html"
    bad.write_text(text)
    result = runner.invoke(app, ["report", str(bad), "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert not out.exists()

