"""The OCS export read back (deploy/ocs_import.py): the rebuilt circuits file is the original,
byte for byte, and validate accepts it; a directory whose files disagree is refused in one line
naming the file and the field. The expected value of every round trip is the circuits file the
realizer (or the repair) wrote, never the importer's own output."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from ocsplan.deploy.ocs import ocs_files
from ocsplan.deploy.ocs_import import import_ocs
from ocsplan.deploy.repair import repair
from ocsplan.errors import PlanError
from ocsplan.instance import load_instance
from ocsplan.plan import Plan
from ocsplan.planning.heuristic import plan_heuristic
from ocsplan.planning.stacked import plan_stacked
from ocsplan.realization.circuits import Circuits, dumps_circuits
from ocsplan.realization.fabrics import FabricSpec, load_fabric
from ocsplan.realization.realize import realize
from ocsplan.realization.validate import validate

from .conftest import INSTANCES, instance_path


def _write(circuits: Circuits, directory: Path) -> Path:
    for name, text in ocs_files(circuits).items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text(text, encoding="utf-8")
    return directory


def _plan(name: str) -> Plan:
    return plan_heuristic(load_instance(instance_path(name)))


def _case(name: str) -> tuple[Plan, FabricSpec, Circuits]:
    """(plan, fabric, circuits) of the named case."""
    if name == "stacked":
        plan = plan_stacked(load_instance(INSTANCES / "stacked" / "n576-8x72.toml"))
        spec = load_fabric("nvl576-all-ocs-serve576")
        return plan, spec, realize(plan, spec)
    instance, fabric, *how = name.split("/")
    plan, spec = _plan(instance), load_fabric(fabric)
    if how == ["repaired"]:
        return plan, spec, repair(realize(plan, spec), spec, [17]).circuits
    if how == ["bits"]:
        return plan, spec, realize(plan, spec, "bits")
    if how == ["unrouted"]:
        return plan, spec, realize(plan, spec, routing=False)
    return plan, spec, realize(plan, spec)


CASES = ["paper-multimesh-n256/ocs-single", "paper-multimesh-n256/nvl576-all-ocs",
         "paper-multimesh-n256/nvl576-all-ocs/repaired", "paper-multimesh-n256/ocs-single/repaired",
         "paper-multimesh-n256/nvl576-all-ocs/bits", "paper-multimesh-n256/nvl576-all-ocs/unrouted",
         "paper-table7-ring-single/ocs-single", "megatron-5t-n512-b1/nvl576-all-ocs", "stacked"]


@pytest.mark.parametrize("name", CASES)
def test_round_trip_is_the_original(name: str, tmp_path: Path) -> None:
    plan, spec, circuits = _case(name)
    rebuilt = import_ocs(_write(circuits, tmp_path), plan, spec)
    assert dumps_circuits(rebuilt) == dumps_circuits(circuits)
    assert validate(rebuilt, plan if circuits.routes else None) == []  # without tables the plan's are missing


def test_the_repaired_round_trip_keeps_the_moved_rank(tmp_path: Path) -> None:
    plan, spec, circuits = _case("paper-multimesh-n256/nvl576-all-ocs/repaired")
    rebuilt = import_ocs(_write(circuits, tmp_path), plan, spec)
    assert 17 not in rebuilt.placement.accelerator  # rank 17 left accelerator 17 for a spare (>= 256)
    assert rebuilt.placement.accelerator[17] >= 256 and rebuilt.placement.method == "repaired"


@pytest.fixture(scope="module")
def paper_two() -> tuple[Plan, FabricSpec, Circuits]:
    return _case("paper-multimesh-n256/nvl576-all-ocs")


def _edit_csv(path: Path, edit: Callable[[list[list[str]]], None]) -> None:
    rows = list(csv.reader(io.StringIO(path.read_text())))
    edit(rows)
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    path.write_text(buffer.getvalue())


def _edit_json(path: Path, edit: Callable[[dict[str, object]], None]) -> None:
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))


def _drop_first_pair(data: dict[str, object]) -> None:
    devices = data["devices"]
    assert isinstance(devices, list)
    devices[0]["cross_connects"].pop(0)


def _swap_ranks(rows: list[list[str]]) -> None:
    """The ranks of the a ends of the first two circuits swapped: rank 0 then runs on two accelerators."""
    rank, kind = rows[0].index("a_rank"), rows[0].index("a_kind")
    first, second = [r for r in rows[1:] if r[kind] == "accelerator" and r[rank] in ("0", "1")][:2]
    first[rank], second[rank] = second[rank], first[rank]


def _bad_rack(rows: list[list[str]]) -> None:
    rows[1][rows[0].index("a_rack")] = "9"


def _bad_port(rows: list[list[str]]) -> None:
    rows[1][rows[0].index("a_port")] = "30"


BAD: dict[str, tuple[Callable[[Path], object], str]] = {  # case: (edit of the directory, file and field named)
    "json drops a cross-connect": (lambda d: _edit_json(d / "cross-connects.json", _drop_first_pair),
                                   "devices/L1.k00.r00.csv: cross-connects"),
    "cabling swaps two ranks": (lambda d: _edit_csv(d / "cabling.csv", _swap_ranks), "_rank: rank"),
    "cabling names the wrong rack": (lambda d: _edit_csv(d / "cabling.csv", _bad_rack), "cabling.csv: cable 0.a_rack"),
    "cabling names a port without a peer": (lambda d: _edit_csv(d / "cabling.csv", _bad_port), "cabling.csv"),
    "a device file too many": (lambda d: (d / "devices" / "L9.k00.r00.csv").write_text("in_port,out_port\n"),
                               "devices/L9.k00.r00.csv"),
    "index of another world": (lambda d: _edit_json(d / "index.json", lambda i: i.update(schema="x")),
                               "index.json: schema"),
    "no cabling": (lambda d: (d / "cabling.csv").unlink(), "cabling.csv: cannot read"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_disagreeing_files_refused(case: str, paper_two: tuple[Plan, FabricSpec, Circuits], tmp_path: Path) -> None:
    plan, spec, circuits = paper_two
    edit, named = BAD[case]
    directory = _write(circuits, tmp_path)
    edit(directory)
    with pytest.raises(PlanError) as info:
        import_ocs(directory, plan, spec)
    message = str(info.value)
    assert "\n" not in message and named in message, message


def test_another_plan_or_fabric_refused(paper_two: tuple[Plan, FabricSpec, Circuits], tmp_path: Path) -> None:
    plan, spec, circuits = paper_two
    directory = _write(circuits, tmp_path)
    with pytest.raises(PlanError, match=r"index\.json: plan\.instance: the export has paper-multimesh-n256"):
        import_ocs(directory, _plan("paper-table7-ring-single"), spec)
    with pytest.raises(PlanError, match=r"index\.json: fabric\.name: the export has nvl576-all-ocs"):
        import_ocs(directory, plan, load_fabric("nvl576-all-ocs-serve576"))
