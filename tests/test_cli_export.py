"""CLI: export PLAN --out DIR, export --check DIR (round trip, refusals, no partial directory)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ocsplan.cli import app
from ocsplan.plan import write_plan
from ocsplan.units import format_bytes

from .realize_cases import small_plan

runner = CliRunner()


@pytest.fixture
def plan(tmp_path: Path) -> Path:
    path = tmp_path / "plan.json"
    write_plan(small_plan(), path)
    return path


def test_export_then_check(plan: Path, tmp_path: Path) -> None:
    out = tmp_path / "msccl"
    result = runner.invoke(app, ["export", str(plan), "--out", str(out), "--max-steps", "4096"])
    assert result.exit_code == 0, result.output
    index = json.loads((out / "index.json").read_text())
    assert index["schema"] == "ocsplan.export-index/1"
    on_disk = sum(p.stat().st_size for p in out.iterdir())  # the size the message states, as written
    assert result.stdout.rstrip().endswith(f"and index.json, {format_bytes(on_disk)}")
    for d in index["demands"]:
        assert (out / d["file"]).is_file()
        accelerators = sorted(a for group in d["groups"] for a in group)
        assert accelerators == list(range(index["world"]))
    result = runner.invoke(app, ["export", "--check", str(out)])
    assert result.exit_code == 0, result.output
    assert f"{len(index['demands'])} schedule(s) checked" in result.stdout


def test_check_catches_an_edited_file(plan: Path, tmp_path: Path) -> None:
    out = tmp_path / "msccl"
    assert runner.invoke(app, ["export", str(plan), "--out", str(out), "--max-steps", "4096"]).exit_code == 0
    first = json.loads((out / "index.json").read_text())["demands"][0]["file"]
    text = (out / first).read_text()
    (out / first).write_text(text.replace('type="s"', 'type="nop"', 1))
    result = runner.invoke(app, ["export", "--check", str(out)])
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1 and first in result.stderr


def test_out_is_a_file_refused(plan: Path, tmp_path: Path) -> None:
    out = tmp_path / "taken"
    out.write_text("x")
    result = runner.invoke(app, ["export", str(plan), "--out", str(out)])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "not a directory" in result.stderr
    assert out.read_text() == "x"


def test_refusal_leaves_no_directory(plan: Path, tmp_path: Path) -> None:
    out = tmp_path / "msccl"
    result = runner.invoke(app, ["export", str(plan), "--out", str(out), "--max-steps", "1"])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "MSCCL_MAX_NUM_STEPS" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.json"]


# Hostile inputs for --check (issue 36 goal 5): each refused with exit status 2 in one line naming the
# file, no traceback, within the limits docs/export.md states.

BILLION_LAUGHS = ('<?xml version="1.0"?>\n<!DOCTYPE lolz [\n <!ENTITY lol "lol">\n'
                  + "".join(f' <!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">\n'
                            for i in range(1, 10))
                  + ']>\n<algo name="&lol9;"/>\n')
HOSTILE_XML: dict[str, tuple[bytes, str]] = {  # case: (file content, words the one line must hold)
    "billion-laughs": (BILLION_LAUGHS.encode(), "DOCTYPE"),
    "entity-only": (b'<!ENTITY x "y"><algo/>', "ENTITY"),
    "deep-nesting": (b"<algo>" + b"<a>" * 1_000_000, "nested deeper than 8"),
    "long-attribute": (b'<algo name="' + b"x" * 1_000_000 + b'"/>', "1000000 characters, the limit is 1024"),
    "long-attribute-name": (b"<algo " + b"x" * 1_000_000 + b'="1"/>', "the limit is 1024"),
    "non-utf8": (b'<algo name="\xff\xfe"/>', "not a UTF-8 text file"),
}


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    base = tmp_path_factory.mktemp("exported")
    write_plan(small_plan(), base / "plan.json")
    out = base / "msccl"
    result = runner.invoke(app, ["export", str(base / "plan.json"), "--out", str(out), "--max-steps", "4096"])
    assert result.exit_code == 0, result.output
    return out, json.loads((out / "index.json").read_text())["demands"][0]["file"]


def _copy(exported: tuple[Path, str], tmp_path: Path) -> tuple[Path, Path]:
    out, first = exported
    target = tmp_path / "copy"
    target.mkdir()
    for p in out.iterdir():
        (target / p.name).write_bytes(p.read_bytes())
    return target, target / first


def _refused(target: Path, named: str, words: str) -> None:
    result = runner.invoke(app, ["export", "--check", str(target)])
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    lines = [x for x in result.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and named in lines[0] and words in lines[0], lines
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("case", sorted(HOSTILE_XML))
def test_hostile_xml_refused(case: str, exported: tuple[Path, str], tmp_path: Path) -> None:
    target, victim = _copy(exported, tmp_path)
    content, words = HOSTILE_XML[case]
    victim.write_bytes(content)
    _refused(target, victim.name, words)


def test_billion_laughs_refused_fast_in_a_bounded_process(exported: tuple[Path, str], tmp_path: Path) -> None:
    import resource
    import subprocess
    import sys

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    target, victim = _copy(exported, tmp_path)
    victim.write_text(BILLION_LAUGHS)
    root = Path(__file__).resolve().parent.parent
    proc = subprocess.run([sys.executable, "-m", "ocsplan", "export", "--check", str(target)], capture_output=True,
                          text=True, timeout=60, env=dict(os.environ, PYTHONPATH=str(root / "src")),
                          preexec_fn=limit)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and victim.name in proc.stderr, proc.stderr


def test_deeply_nested_index_refused(exported: tuple[Path, str], tmp_path: Path) -> None:
    target, _ = _copy(exported, tmp_path)
    (target / "index.json").write_text("[" * 100_000 + "]" * 100_000)
    _refused(target, "index.json", "nested")


def test_crowded_directory_refused(exported: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """10^5 files would take seconds to create: the limit is a constant, tested just above a smaller one."""
    from ocsplan.cli import export

    assert export.MAX_EXPORT_ENTRIES == 1 << 16
    monkeypatch.setattr(export, "MAX_EXPORT_ENTRIES", 64)
    target, _ = _copy(exported, tmp_path)
    for i in range(64):
        (target / f"junk{i}.xml").write_text("")
    _refused(target, str(target), "more than 64 entries")


def test_unlisted_files_are_not_read(exported: tuple[Path, str], tmp_path: Path) -> None:
    target, _ = _copy(exported, tmp_path)
    (target / "stray.xml").write_bytes(b"\xff" * 10)  # not listed by index.json: never opened
    assert runner.invoke(app, ["export", "--check", str(target)]).exit_code == 0


def _p2_plan_and_circuits(tmp_path: Path) -> tuple[Path, Path]:
    """A plan with a demand of multiplicity 2 (bruck-parallel all-to-all on 4 ranks) and its circuits on a
    two-level fabric with 12 ports per accelerator."""
    from ocsplan.instance import loads_instance
    from ocsplan.planning.heuristic import plan_heuristic
    from ocsplan.realization.circuits import write_circuits
    from ocsplan.realization.shared_host import realize_shared_host

    from .realize_cases import SMALL_FABRIC, SMALL_INSTANCE, small_fabric

    text = (SMALL_INSTANCE.replace("ports = 8", "ports = 12").replace("[8, 8]", "[4, 16]")
            .replace('"all-reduce"', '"all-to-all"'))
    plan = plan_heuristic(loads_instance(text, "p2.toml"))
    assert max(d.multiplicity for m in plan.meshes for a in m.axes for d in a.demands) == 2
    fabric = small_fabric(SMALL_FABRIC.replace("ports = 8", "ports = 12").replace("up = 8", "up = 12")
                          .replace("down = 8", "down = 12").replace("radix = 24", "radix = 36")
                          .replace("radix = 16", "radix = 24"))
    plan_path, circuits_path = tmp_path / "p2.plan.json", tmp_path / "p2.circ.json"
    write_plan(plan, plan_path)
    write_circuits(realize_shared_host(plan, fabric), circuits_path)
    return plan_path, circuits_path


def test_export_with_circuits_maps_threadblocks_to_ports(tmp_path: Path) -> None:
    """Every (group, local rank, threadblock) of index.json names a port of the rank's accelerator whose
    circuit, in the circuits file read as plain JSON, reaches the threadblock's peer at the named peer
    port; the p = 2 channels to one peer use two different circuits."""
    import xml.etree.ElementTree as ET

    plan_path, circuits_path = _p2_plan_and_circuits(tmp_path)
    out = tmp_path / "msccl"
    result = runner.invoke(app, ["export", str(plan_path), "--circuits", str(circuits_path), "--out", str(out),
                                 "--max-steps", "4096"])
    assert result.exit_code == 0, result.output
    index = json.loads((out / "index.json").read_text())
    assert index["schema"] == "ocsplan.export-index/2"
    raw = json.loads(circuits_path.read_text())
    wired = {(x, port): (peer, peer_port) for x, node in enumerate(raw["nodes"]) for port, peer, peer_port, _ in node}
    channels = 0
    for d in index["demands"]:
        root = ET.parse(out / d["file"]).getroot()
        assert root.get("nchannels") == str(d["multiplicity"])
        for g, group in enumerate(d["groups"]):
            for r, gpu in enumerate(root.findall("gpu")):
                x = group[r]
                assert d["accelerators"][g][r] == raw["placement"]["accelerator"][x]
                used: dict[int, set[int]] = {}
                for b, tb in enumerate(gpu.findall("tb")):
                    port, peer_port = d["ports"][g][r][b]
                    peer = int(tb.get("send", "")) if tb.get("send") != "-1" else int(tb.get("recv", ""))
                    if peer == -1:
                        assert (port, peer_port) == (-1, -1)
                        continue
                    assert wired[(x, port)] == (group[peer], peer_port)
                    used.setdefault(peer, set()).add(port)
                    channels = max(channels, int(tb.get("chan", "")) + 1)
                for peer, ports in used.items():  # send and receive share a circuit; each channel its own
                    assert len(ports) == d["multiplicity"], (peer, ports)
    assert channels == 2
    result = runner.invoke(app, ["export", "--check", str(out)])
    assert result.exit_code == 0, result.output


def test_export_with_circuits_of_another_plan_refused(plan: Path, tmp_path: Path) -> None:
    _, circuits_path = _p2_plan_and_circuits(tmp_path)
    result = runner.invoke(app, ["export", str(plan), "--circuits", str(circuits_path), "--out",
                                 str(tmp_path / "x"), "--max-steps", "4096"])
    assert result.exit_code == 2
    # same instance name and world, other ports: refused before any file, by the circuits' plan reference
    assert result.output.startswith(f"--circuits {circuits_path}: plan.ports: realizes 'small-n64' (64 ranks, "
                                    "ports 12), not 'small-n64' (64 ranks, ports 8)")
    assert len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "x").exists()
