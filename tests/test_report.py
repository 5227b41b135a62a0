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
        self.tables: list[int] = []  # index into rows where each table starts
        self.table_attrs: list[dict[str, str | None]] = []
        self._cell: list[str] | None = None
        self._cell_id: str | None = None
        self._svg_depth = 0
        self._svg_start = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append(len(self.rows))
            self.table_attrs.append(dict(attrs))
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
            elif self._cell_id:
                self.summary[self._cell_id] = text
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



# -- circuits, decode, faults ---------------------------------------------------------


def _table_rows(page: _Page, index: int) -> list[list[str]]:
    end = page.tables[index + 1] if index + 1 < len(page.tables) else len(page.rows)
    return page.rows[page.tables[index]:end]


def _tables(page: _Page, cls: str) -> list[tuple[dict[str, str | None], list[list[str]]]]:
    return [(attrs, _table_rows(page, i)) for i, attrs in enumerate(page.table_attrs)
            if attrs.get("class") == cls]


def _gf2_rank(masks: list[int]) -> int:
    """Rank over GF(2) of the generator masks (Gaussian elimination, independent of the code)."""
    basis: list[int] = []
    for m in masks:
        for b in basis:
            m = min(m, m ^ b)
        if m:
            basis.append(m)
    return len(basis)


FAULTS: dict[str, Any] = {
    "schema": "ocsplan.faults/1", "kind": "circuit", "sampled": False, "healthy": {"objective": 1.5e-05},
    "faults": [{"id": f"circuit:{i}", "objective": 1.5e-05 + (i % 7) * 1.25e-06,
                "stopped": ["attention.axis1.all-reduce"] if i % 5 == 0 else [], "demands": i % 3}
               for i in range(14)],
    "summary": {"count": 14, "worst": {"id": "circuit:6", "objective": 2.25e-05}, "median": 1.875e-05,
                "stopped": 3},
}


SPLIT = "8,8,8,8"  # gpt-oss-120b on 64 accelerators: (KVP, TPA, EP, TPE)


@pytest.fixture(scope="module")
def extra(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One deployment: the instance of gpt-oss-120b at SPLIT, its plan, simulation, circuits, decode on
    OCS and EPS at the same split, and a faults file whose healthy objective and demands are the plan's."""
    folder = tmp_path_factory.mktemp("report-extra")
    out = {name: folder / f"{name}.json" for name in ("plan", "sim", "circuits", "ocs", "eps", "faults")}
    inst = folder / "inst.toml"
    for argv in (["workload", "gpt-oss-120b", "--world", "64", "--split", SPLIT, "--emit", str(inst)],
                 ["solve", str(inst), "--json", str(out["plan"])],
                 ["simulate", str(out["plan"]), "--fabric", str(FABRICS / "ocs-single.toml"), "--mode", "ideal",
                  "--json", str(out["sim"])],
                 ["realize", str(out["plan"]), "--fabric", str(FABRICS / "ocs-single.toml"),
                  "--out", str(out["circuits"])]):
        result = runner.invoke(app, argv)
        assert result.exit_code == 0, result.output
    for tech in ("ocs", "eps"):
        result = runner.invoke(app, ["decode", "gpt-oss-120b", "--world", "64", "--split", SPLIT, "--fabric",
                                     str(FABRICS / f"nvl576-all-{tech}.toml"), "--json", str(out[tech])])
        assert result.exit_code == 0, result.output
    plan = json.loads(out["plan"].read_text())
    FAULTS["healthy"]["objective"] = plan["objective_s"]
    first = plan["meshes"][0]
    row = {"mesh": first["name"], "axis": 0, "demand": 0, "how": "fallback", "schedule": "one-shot", "h": 2,
           "v": 4096, "p": 1, "T": 1e-6}
    for fault in FAULTS["faults"]:
        fault["demands"] = [row] * int(fault["demands"])
    out["faults"].write_text(json.dumps(FAULTS))
    return out


def _full(files: tuple[Path, Path], extra: dict[str, Path], out: Path) -> _Page:
    result = runner.invoke(app, ["report", str(extra["plan"]), "--simulation", str(extra["sim"]), "--circuits",
                                 str(extra["circuits"]), "--decode", str(extra["ocs"]), "--decode",
                                 str(extra["eps"]), "--faults", str(extra["faults"]), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return _page(out)


def test_report_host_graphs(files: tuple[Path, Path], extra: dict[str, Path], tmp_path: Path) -> None:
    page = _full(files, extra, tmp_path / "r.html")
    plan: dict[str, Any] = json.loads(extra["plan"].read_text())
    circuits: dict[str, Any] = json.loads(extra["circuits"].read_text())
    gens = {g["generator"]: g for g in circuits["generators"]}
    tables = _tables(page, "host")
    axes = [(m["name"], i, a) for m in plan["meshes"] for i, a in enumerate(m["axes"])
            if any(d["uses"] for d in a["demands"])]  # an axis without demands is named, not drawn
    assert [(a["data-mesh"], int(str(a["data-axis"]))) for a, _ in tables] == [(m, i) for m, i, _ in axes]
    assert len(page.svgs) == 2 + len(axes)  # port budget, decode split, one drawing per axis (all small)
    for (_, rows), (_, _, axis) in zip(tables, axes, strict=True):
        uses = sorted({u for d in axis["demands"] for u in d["uses"]})
        # A Cayley graph of (Z2)^n: rank 0's component has 2^(GF(2) rank of the masks) ranks, and
        # each rank has one circuit per port, so a generator of multiplicity m has m * ranks / 2 circuits.
        ranks = 2 ** _gf2_rank([int(u, 2) for u in uses])
        header, body = rows[0], rows[1:]
        assert [r[0] for r in body] == uses
        for row in body:
            cells = dict(zip(header, row, strict=True))
            use = gens[cells["generator"]]
            assert cells["kind"] == use["kind"]
            assert cells["ports"] == ",".join(str(p) for p in use["ports"])
            assert int(cells["circuits_drawn"]) == use["multiplicity"] * ranks // 2
            assert int(cells["circuits_total"]) == use["circuits"]


def test_report_decode(files: tuple[Path, Path], extra: dict[str, Path], tmp_path: Path) -> None:
    page = _full(files, extra, tmp_path / "r.html")
    [(_, rows)] = _tables(page, "decode")
    steps = [json.loads(extra[t].read_text()) for t in ("ocs", "eps")]
    assert rows[0] == ["file", extra["ocs"].name, extra["eps"].name]
    table = {r[0]: r[1:] for r in rows[1:]}
    for column, step in enumerate(steps):
        for key in ("fabric", "technology", "network"):
            assert table[key][column] == step[key]
        for key in ("world", "batch", "launch_s", "comm_s", "step_s", "tokens_per_s_user", "tokens_per_s",
                    "power_w", "tokens_per_s_mw"):
            assert _same(table[key][column], step[key])
        assert table["split"][column] == ",".join(f"{k}={v}" for k, v in step["split"].items())
        compute = step["attention_s"] + step["ffn_s"] + step["lm_head_s"]
        assert _same(table["compute_s"][column], compute)
        # The three parts are the whole step (an identity of the decode model, checked on its file).
        assert compute + step["launch_s"] + step["comm_s"] == pytest.approx(step["step_s"], rel=1e-9)
    assert steps[0]["technology"] == "ocs" and steps[1]["technology"] == "eps"


def test_report_faults(files: tuple[Path, Path], extra: dict[str, Path], tmp_path: Path) -> None:
    page = _full(files, extra, tmp_path / "r.html")
    s = FAULTS["summary"]
    assert page.summary["faults-kind"] == "circuit"
    assert _same(page.summary["faults-healthy-objective_s"], FAULTS["healthy"]["objective"])
    assert int(page.summary["faults-count"]) == s["count"] and int(page.summary["faults-stopped"]) == s["stopped"]
    assert page.summary["faults-worst"] == s["worst"]["id"]
    assert _same(page.summary["faults-worst-objective_s"], s["worst"]["objective"])
    assert _same(page.summary["faults-median-objective_s"], s["median"])
    [(_, rows)] = _tables(page, "faults")
    # The worst ten by hand: objectives 1.5e-5 + k * 1.25e-6, k = i % 7; faults i = 0, 5, 10 stop a demand
    # and come first (k = 5, 3, 0); then k = 6 (i = 6, 13: ties in natural order), 5 (12), 4 (4, 11), 3 (3),
    # 2 (2, ...)
    ids = ["circuit:5", "circuit:10", "circuit:0", "circuit:6", "circuit:13", "circuit:12", "circuit:4",
           "circuit:11", "circuit:3", "circuit:2"]
    assert [r[1] for r in rows[1:]] == ids
    by_id = {f["id"]: f for f in FAULTS["faults"]}
    for rank, row in enumerate(rows[1:], start=1):
        fault = by_id[row[1]]
        assert int(row[0]) == rank and _same(row[2], fault["objective"])
        assert row[3] == (",".join(fault["stopped"]) or "-") and int(row[4]) == len(fault["demands"])


def test_report_full_images_decode(files: tuple[Path, Path], extra: dict[str, Path], tmp_path: Path) -> None:
    page = _full(files, extra, tmp_path / "r.html")
    assert page.scripts == 0 and len(page.svgs) >= 3
    for svg in page.svgs:
        assert ET.fromstring(svg).tag.endswith("svg")


@pytest.mark.parametrize("which, text", [
    ("--faults", '{"schema": "ocsplan.faults/2"}'),
    ("--faults", '{"schema": "ocsplan.faults/1", "kind": "circuit"}'),
    ("--decode", '{"schema": "ocsplan.decode/1", "fabric": "x"}'),
    ("--circuits", '{"schema": "ocsplan.circuits/1", "plan": {"instance": "other", "world": 2}}'),
])
def test_report_bad_extra_is_one_line_exit_2(files: tuple[Path, Path], which: str, text: str,
                                             tmp_path: Path) -> None:
    bad, out = tmp_path / "bad.json", tmp_path / "r.html"
    bad.write_text(text)
    result = runner.invoke(app, ["report", str(files[0]), which, str(bad), "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not out.exists()
