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
    """Collects table rows, summary cells by id, and inline <svg> blocks. ``rows`` and ``summary``
    hold what a script reads (a header's ``data-key``, a number's exact ``data-value``, else the
    text); ``texts`` and ``shown`` what a person reads."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self._text = text
        self._lines = [0]
        for line in text.splitlines(keepends=True):
            self._lines.append(self._lines[-1] + len(line))
        self.rows: list[list[str]] = []
        self.texts: list[list[str]] = []
        self.summary: dict[str, str] = {}
        self.shown: dict[str, str] = {}
        self._machine: str | None = None
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
            self.texts.append([])
        if tag in ("td", "th"):
            self._cell = []
            found = dict(attrs)
            self._cell_id = found.get("id")
            self._machine = found.get("data-key") or found.get("data-value")

    def handle_endtag(self, tag: str) -> None:
        if self._svg_depth:
            if tag == "svg":
                self._svg_depth -= 1
                if not self._svg_depth:
                    end = self._text.index(">", self._offset()) + 1
                    self.svgs.append(self._text[self._svg_start:end])
            return
        if tag in ("td", "th") and self._cell is not None:
            shown = "".join(self._cell)
            text = shown if self._machine is None else self._machine
            self.rows[-1].append(text)
            self.texts[-1].append(shown)
            if self._cell_id:
                key = self._cell_id.removeprefix("summary-")
                self.summary[key], self.shown[key] = text, shown
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
    """A number's ``data-value`` is the file's value exactly (integers as written, floats by repr)."""
    if isinstance(value, int):
        return int(text) == value
    return float(text) == value


_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "B": 1.0, "kB": 1e3, "MB": 1e6, "GB": 1e9,
          "KiB": 2.0**10, "MiB": 2.0**20, "GiB": 2.0**30, "W": 1.0, "kW": 1e3, "MW": 1e6, "x": 1.0,
          "b/s": 1 / 8, "Mb/s": 1e6 / 8, "Gb/s": 1e9 / 8, "Tb/s": 1e12 / 8, "Pb/s": 1e15 / 8}


def _read_human(text: str) -> float:
    """A number as a person reads it off the page ("1.387 ms", "4KiB", "14.4 Tb/s" in bytes/s, "1.27x")."""
    import re

    found = re.fullmatch(r"(-?[0-9.]+(?:e[-+]?[0-9]+)?) ?([A-Za-z/]*)", text.replace(",", ""))
    assert found is not None, text
    return float(found.group(1)) * _UNITS.get(found.group(2), 1.0) if found.group(2) else float(found.group(1))


def test_report_every_number_reads_as_its_value(files: tuple[Path, Path], tmp_path: Path) -> None:
    """Every number shown for people, read back with its unit, is its exact value to the 3-4
    significant digits shown."""
    out = tmp_path / "r.html"
    result = runner.invoke(app, ["report", str(files[0]), "--simulation", str(files[1]), "--out", str(out)])
    assert result.exit_code == 0, result.output
    page = _page(out)
    pairs = [(shown, float(exact)) for shown_row, row in zip(page.texts, page.rows, strict=True)
             for shown, exact in zip(shown_row, row, strict=True)
             if shown != exact and shown != "-" and exact.replace(".", "").replace("e-", "").lstrip("-").isdigit()]
    assert len(pairs) > 20
    for shown, exact in pairs:
        assert _read_human(shown) == pytest.approx(exact, rel=5e-3), (shown, exact)


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
    # Demand rows: the table's header names the fields; the rows are the plan's demands in order.
    [(_, rows)] = _tables(page, "demands")
    header, body = rows[0], rows[1:]
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


@pytest.fixture(scope="module")
def full(extra: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of the whole deployment (plan, simulation, circuits, both decodes, faults): written once
    per module, then only read by the tests of its parts (the report is deterministic: its own test)."""
    out = tmp_path_factory.mktemp("report-full") / "r.html"
    result = runner.invoke(app, ["report", str(extra["plan"]), "--simulation", str(extra["sim"]), "--circuits",
                                 str(extra["circuits"]), "--decode", str(extra["ocs"]), "--decode",
                                 str(extra["eps"]), "--faults", str(extra["faults"]), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


def test_report_host_graphs(extra: dict[str, Path], full: Path) -> None:
    page = _page(full)
    plan: dict[str, Any] = json.loads(extra["plan"].read_text())
    circuits: dict[str, Any] = json.loads(extra["circuits"].read_text())
    gens = {g["generator"]: g for g in circuits["generators"]}
    tables = _tables(page, "host")
    axes = [(m["name"], i, a) for m in plan["meshes"] for i, a in enumerate(m["axes"])
            if any(d["uses"] for d in a["demands"])]  # an axis without demands is named, not drawn
    assert [(a["data-mesh"], int(str(a["data-axis"]))) for a, _ in tables] == [(m, i) for m, i, _ in axes]
    # port budget, decode split, one drawing per axis (all small), the fault chart, the fabric's
    # picture and, with racks, its circuits between racks
    racks = circuits["fabric"]["wiring"]["groups"]
    assert len(page.svgs) == 2 + len(axes) + 1 + 1 + (racks > 1)
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


def test_report_host_graph_of_a_ring_axis(tmp_path: Path) -> None:
    """A ring axis is drawn over its ring's circuits (the circuits name a ring ``ring:<mask>``):
    rank 0's ring has one circuit per rank and parallel ring."""
    plan_path, circuits_path, out = tmp_path / "plan.json", tmp_path / "c.json", tmp_path / "r.html"
    for argv in (["solve", str(instance_path("paper-table7-ring-single")), "--json", str(plan_path)],
                 ["realize", str(plan_path), "--fabric", str(FABRICS / "ocs-single.toml"), "--out", str(circuits_path)],
                 ["report", str(plan_path), "--circuits", str(circuits_path), "--out", str(out)]):
        result = runner.invoke(app, argv)
        assert result.exit_code == 0, result.output
    plan: dict[str, Any] = json.loads(plan_path.read_text())
    rings = [(m["name"], i, a) for m in plan["meshes"] for i, a in enumerate(m["axes"]) if a.get("ring")]
    assert rings
    kinds = {g["mask"]: g for g in plan["generators"]}
    tables = {(a["data-mesh"], int(str(a["data-axis"]))): rows for a, rows in _tables(_page(out), "host")}
    for mesh, index, axis in rings:
        [mask] = {u for d in axis["demands"] for u in d["uses"]}
        header, *body = tables[(mesh, index)]
        [row] = [dict(zip(header, r, strict=True)) for r in body]
        assert (row["generator"], row["kind"]) == (f"ring:{mask}", "ring")
        assert int(row["circuits_drawn"]) == kinds[mask]["multiplicity"] * axis["size"]


@pytest.mark.parametrize("instance", ["fig15-n512-L16", "n576-8x72"])
def test_report_of_a_stacked_plan(instance: str, tmp_path: Path) -> None:
    """A stacked plan's axes are circulants C_N(offsets) (its demands use offsets, not masks):
    the page is written, and each axis's host graph is its whole circulant, N circuits per
    offset pair {s, N - s} and N / 2 for s = N / 2, times the multiplicity."""
    plan_path, circuits_path, out = tmp_path / "plan.json", tmp_path / "c.json", tmp_path / "r.html"
    fabric = str(FABRICS / ("nvl576-all-ocs.toml" if instance == "fig15-n512-L16" else "nvl576-all-ocs-serve576.toml"))
    for argv in (["solve", str(ROOT / "instances" / "stacked" / f"{instance}.toml"), "--method", "stacked",
                  "--json", str(plan_path)],
                 ["realize", str(plan_path), "--fabric", fabric, "--out", str(circuits_path)],
                 ["report", str(plan_path), "--circuits", str(circuits_path), "--out", str(out)]):
        result = runner.invoke(app, argv)
        assert result.exit_code == 0, result.output
    plan: dict[str, Any] = json.loads(plan_path.read_text())
    assert plan["construction"] == "stacked"
    page = _page(out)
    tables = {(a["data-mesh"], int(str(a["data-axis"]))): rows for a, rows in _tables(page, "host")}
    axes = [(m["name"], i, a) for m in plan["meshes"] for i, a in enumerate(m["axes"])]
    assert len(tables) == len(axes)
    for mesh, index, axis in axes:
        size, circ = axis["size"], axis["circulant"]
        pairs = {min(s, size - s) for s in circ["offsets"]}
        assert sum(circ["multiplicity"] * (1 if 2 * s == size else 2) for s in pairs) == circ["ports"]
        header, *body = tables[(mesh, index)]
        rows = [dict(zip(header, r, strict=True)) for r in body]
        assert sorted(int(r["generator"].rsplit(":", 1)[1]) for r in rows) == sorted(pairs)
        for row in rows:
            s = int(row["generator"].rsplit(":", 1)[1])
            assert row["kind"] == "circulant"
            assert int(row["circuits_drawn"]) == circ["multiplicity"] * (size // 2 if 2 * s == size else size)
    assert len(page.svgs) >= 2 + len(axes)  # the port budget and the fabric's picture beside the graphs


def test_report_decode(extra: dict[str, Path], full: Path) -> None:
    page = _page(full)
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


def test_report_faults(extra: dict[str, Path], full: Path) -> None:
    page = _page(full)
    s = FAULTS["summary"]
    assert page.summary["faults-kind"] == "circuit"
    assert _same(page.summary["faults-healthy-objective_s"], FAULTS["healthy"]["objective"])
    assert int(page.summary["faults-count"]) == s["count"] and int(page.summary["faults-stopped"]) == s["stopped"]
    assert page.summary["faults-worst"] == s["worst"]["id"]
    assert _same(page.summary["faults-worst-objective_s"], s["worst"]["objective"])
    assert _same(page.summary["faults-median-objective_s"], s["median"])
    [(_, rows)] = _tables(page, "faults")
    circuits: dict[str, Any] = json.loads(extra["circuits"].read_text())
    # The ranking by hand: objectives 1.5e-5 + k * 1.25e-6, k = i % 7; faults i = 0, 5, 10 stop a demand
    # and come first (k = 5, 3, 0); then k = 6 (i = 6, 13: ties in natural order), 5 (12), 4 (4, 11), 3 (3),
    # 2 (2, 9), 1 (1, 8), 0 (7).
    order = [5, 10, 0, 6, 13, 12, 4, 11, 3, 2, 9, 1, 8, 7]
    # Faults alike: same objective, same stopped demands, same fallback rows (here: as many rows as
    # i % 3), and the same generator of the failed circuit (circuit i of the circuits file).
    classes: dict[tuple[Any, ...], list[int]] = {}
    for i in order:
        fault = FAULTS["faults"][i]
        key = (fault["objective"], tuple(fault["stopped"]), len(fault["demands"]),
               circuits["circuits"][i]["generator"])
        classes.setdefault(key, []).append(i)
    expected = list(classes.values())[:10]
    header, body = rows[0], rows[1:]
    assert len(body) == len(expected)
    for rank, (row, members) in enumerate(zip(body, expected, strict=True), start=1):
        cells = dict(zip(header, row, strict=True))
        first = FAULTS["faults"][members[0]]
        circuit = circuits["circuits"][members[0]]
        assert int(cells["rank"]) == rank and int(cells["faults"]) == len(members)
        assert cells["id"] == first["id"] and _same(cells["objective_s"], first["objective"])
        assert _same(cells["slowdown"], first["objective"] / FAULTS["healthy"]["objective"])
        assert cells["stopped"] == (",".join(first["stopped"]) or "-")
        (a, pa), (b, pb) = circuit["a"], circuit["b"]
        assert cells["link"].startswith(f"rank {a} port {pa} - rank {b} port {pb}")
        assert cells["generator"].split()[0] == circuit["generator"]
        assert (cells["fallback"] == "-") == (not first["demands"])


def test_report_full_images_decode(full: Path) -> None:
    page = _page(full)
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


# -- the page as a browser shows it --------------------------------------------------


class _Elements(HTMLParser):
    """Every element outside SVG with its text and child count; every URL-bearing attribute."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[list[Any]] = []  # [tag, text, children]
        self.empty: list[str] = []
        self.urls: list[str] = []
        self._svg = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("src", "href", "action", "poster", "srcset", "data") and value:
                self.urls.append(value)
            if name == "style" and value and "url(" in value:
                self.urls.append(value)
        if self._svg or tag == "svg":
            self._svg += tag == "svg"
            if self.stack:
                self.stack[-1][2] += 1
            return
        if tag in ("meta", "br", "hr", "img", "link"):
            return
        if self.stack:
            self.stack[-1][2] += 1
        self.stack.append([tag, "", 0])

    def handle_endtag(self, tag: str) -> None:
        if self._svg:
            self._svg -= tag == "svg"
            return
        name, text, children = self.stack.pop()
        if name not in ("style",) and not text.strip() and not children:
            self.empty.append(name)

    def handle_data(self, data: str) -> None:
        if self.stack and not self._svg:
            self.stack[-1][1] += data


def test_report_no_empty_element_no_external_url(full: Path) -> None:
    text = full.read_text()
    found = _Elements()
    found.feed(text)
    found.close()
    assert found.empty == []
    assert found.urls == []
    assert "@import" not in text and "<script" not in text and "<link" not in text


def test_report_renders_in_headless_chromium(full: Path, tmp_path: Path) -> None:
    """A 1400 px screenshot of the whole deployment page: Chromium renders it with the network off
    (no proxy reachable), and the picture is a page, not a blank."""
    import shutil
    import subprocess

    from PIL import Image

    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium; .ci/run installs it)")
    out, png = full, tmp_path / "r.png"
    command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run", "--proxy-server=127.0.0.1:9",
               f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={png}", "--window-size=1400,3000",
               "--hide-scrollbars", out.as_uri()]
    done = subprocess.run(command, capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0 and png.exists(), done.stderr[-2000:]
    with Image.open(png) as image:
        assert image.size == (1400, 3000)
        grey = image.convert("L")
        colours = grey.getcolors(maxcolors=1 << 16)
        assert colours is not None and len(colours) > 16  # text, tables and figures, not one colour
        # the page's first 100 rows hold the title: dark pixels on the white page
        darkest = grey.crop((0, 0, 1400, 100)).getextrema()[0]
        assert isinstance(darkest, int) and darkest < 64
