"""Hostile inputs, round 4, category 4: sizes bounded at read time in every reader.

Files past a bound, given to every command that reads them: a JSON file one byte over
:data:`~ocsplan.limits.MAX_JSON_BYTES` (sparse: refused from its size, unread), a plan of more
demands than an instance may have, a circuits file of more circuits than
:data:`~ocsplan.limits.MAX_CIRCUITS` or a node ending more circuits than it has ports, a faults
file of more rows than ``report`` takes, an export directory whose ``index.json`` is too large.
Each is one line naming the file and the field, exit 2, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

from ocsplan.limits import MAX_CIRCUITS, MAX_JSON_BYTES, MAX_TOTAL_DEMANDS
from ocsplan.report.inputs import MAX_REPORT_FAULTS

__all__ = ["SIZE_CASES", "build_sizes"]


def _sparse(path: Path, size: int) -> None:
    """A file of ``size`` zero bytes that takes no disk (every reader refuses it from its size)."""
    with path.open("wb") as handle:
        handle.truncate(size)


def build_sizes(d: Path, files: dict[str, str]) -> None:
    """Category 4's files, beside :func:`tests.hostile.round4.build`'s (which this extends)."""
    huge = d / "huge.json"
    _sparse(huge, MAX_JSON_BYTES + 1)
    files["huge"] = str(huge)
    for name in ("x-huge-index", "ocs-huge-index"):  # an export directory (MSCCL, OCS) with a huge index.json
        (d / name).mkdir(exist_ok=True)
        _sparse(d / name / "index.json", MAX_JSON_BYTES + 1)
        files[name.replace("-", "_")] = str(d / name)
    plan = json.loads(Path(files["plan_json"]).read_text())
    mesh = plan["meshes"][0]
    for axis in mesh["axes"]:
        axis["demands"] = [dict(axis["demands"][0]) for _ in range(64)]
    copies = MAX_TOTAL_DEMANDS // (64 * len(mesh["axes"])) + 1
    plan["meshes"] = [dict(mesh, name=f"m{i}") for i in range(copies)]
    (d / "plan-many-demands.json").write_text(json.dumps(plan))
    files["plan_many_demands"] = str(d / "plan-many-demands.json")
    circuits = json.loads(Path(files["circuits_json"]).read_text())
    first = circuits["circuits"][0]
    many = dict(circuits, circuits=[first] * (MAX_CIRCUITS + 1))
    (d / "circuits-many.json").write_text(json.dumps(many))
    files["circuits_many"] = str(d / "circuits-many.json")
    wide = circuits["nodes"][0][:1] * (circuits["fabric"]["ports"] + 1)
    crowded = dict(circuits, nodes=[wide, *circuits["nodes"][1:]])
    (d / "circuits-crowded-node.json").write_text(json.dumps(crowded))
    files["circuits_crowded_node"] = str(d / "circuits-crowded-node.json")
    nodes = dict(circuits, nodes=[[]] * ((1 << 20) + 1))
    (d / "circuits-many-nodes.json").write_text(json.dumps(nodes))
    files["circuits_many_nodes"] = str(d / "circuits-many-nodes.json")
    faults = json.loads(Path(files["faults"]).read_text())
    faults["faults"] = [faults["faults"][0]] * (MAX_REPORT_FAULTS + 1)
    (d / "faults-many.json").write_text(json.dumps(faults))
    files["faults_many"] = str(d / "faults-many.json")


def _c(id: str, *argv: str, names: str, outputs: tuple[str, ...] = ()) -> tuple[str, tuple[str, ...], str,
                                                                                  tuple[str, ...]]:
    return id, argv, names, outputs


P, F, C, H = "{plan_json}", "{fabric_toml}", "{circuits_json}", "{huge}"
TOO_LARGE = f"larger than the limit of {MAX_JSON_BYTES >> 20} MiB"
MANY = "meshes: 1152 demands in all, the limit is 1024"
WIDE = "nodes[0]: 65 ports, more than fabric.ports = 64"
CIRCUITS = f"circuits: {MAX_CIRCUITS + 1} entries, the limit is {MAX_CIRCUITS}"


def _readers(file: str, names: str, tag: str, plan: bool) -> tuple[tuple[str, tuple[str, ...], str,
                                                                          tuple[str, ...]], ...]:
    """``file`` given as the plan (``plan``) or the circuits of every command that reads one."""
    if plan:
        return (
            _c(f"validate-plan-{tag}", "validate", C, "--plan", file, names=names),
            _c(f"faults-plan-{tag}", "faults", C, "--plan", file, "--json", "{dir}/f4s.json", names=names,
               outputs=("{dir}/f4s.json",)),
            _c(f"simulate-plan-{tag}", "simulate", file, "--fabric", F, "--json", "{dir}/s4s.json", names=names,
               outputs=("{dir}/s4s.json",)),
            _c(f"report-plan-{tag}", "report", file, "--out", "{dir}/r4s.html", names=names,
               outputs=("{dir}/r4s.html",)),
            _c(f"repair-plan-{tag}", "repair", C, "--plan", file, "--fabric", F, "--failed", "accelerator:3",
               "--out", "{dir}/rep4s.json", names=names, outputs=("{dir}/rep4s.json",)),
            _c(f"export-plan-{tag}", "export", file, "--out", "{dir}/x4s", names=names, outputs=("{dir}/x4s",)),
            _c(f"realize-plan-{tag}", "realize", file, "--fabric", F, "--out", "{dir}/c4s.json", names=names,
               outputs=("{dir}/c4s.json",)),
        )
    return (
        _c(f"validate-circuits-{tag}", "validate", file, names=names),
        _c(f"faults-circuits-{tag}", "faults", file, "--plan", P, "--json", "{dir}/f4s.json", names=names,
           outputs=("{dir}/f4s.json",)),
        _c(f"simulate-circuits-{tag}", "simulate", P, "--fabric", F, "--circuits", file, "--json", "{dir}/s4s.json",
           names=names, outputs=("{dir}/s4s.json",)),
        _c(f"report-circuits-{tag}", "report", P, "--circuits", file, "--out", "{dir}/r4s.html", names=names,
           outputs=("{dir}/r4s.html",)),
        _c(f"repair-circuits-{tag}", "repair", file, "--plan", P, "--fabric", F, "--failed", "accelerator:3",
           "--out", "{dir}/rep4s.json", names=names, outputs=("{dir}/rep4s.json",)),
        _c(f"export-circuits-{tag}", "export", P, "--circuits", file, "--out", "{dir}/x4s", names=names,
           outputs=("{dir}/x4s",)),
        _c(f"export-ocs-circuits-{tag}", "export", "--format", "ocs", file, "--out", "{dir}/o4s", names=names,
           outputs=("{dir}/o4s",)),
    )


# (id, argv, what the one line names, outputs that must not exist)
SIZE_CASES: tuple[tuple[str, tuple[str, ...], str, tuple[str, ...]], ...] = (
    *_readers(H, TOO_LARGE, "huge", plan=True),
    *_readers(H, TOO_LARGE, "huge", plan=False),
    *_readers("{plan_many_demands}", MANY, "many-demands", plan=True),
    *_readers("{circuits_many}", CIRCUITS, "many", plan=False),
    _c("validate-circuits-many-nodes", "validate", "{circuits_many_nodes}",
       names=f"nodes: {(1 << 20) + 1} entries, the limit is {1 << 20}"),
    _c("faults-circuits-many-nodes", "faults", "{circuits_many_nodes}", "--plan", P,
       names=f"nodes: {(1 << 20) + 1} entries"),
    _c("validate-circuits-crowded-node", "validate", "{circuits_crowded_node}", names=WIDE),
    _c("faults-circuits-crowded-node", "faults", "{circuits_crowded_node}", "--plan", P,
       names=WIDE),
    _c("simulate-circuits-crowded-node", "simulate", P, "--fabric", F, "--circuits", "{circuits_crowded_node}",
       names=WIDE),
    *(_c(f"report-{option}-huge", "report", P, f"--{option}", H, "--out", "{dir}/r4s.html", names=TOO_LARGE,
         outputs=("{dir}/r4s.html",)) for option in ("simulation", "faults", "decode")),
    _c("report-faults-many-rows", "report", P, "--faults", "{faults_many}", "--out", "{dir}/r4s.html",
       names=f"faults: {MAX_REPORT_FAULTS + 1} rows exceed the limit of {MAX_REPORT_FAULTS}",
       outputs=("{dir}/r4s.html",)),
    _c("export-check-huge-index", "export", "--check", "{x_huge_index}", names=f"index.json: {TOO_LARGE}"),
    _c("import-ocs-huge-index", "import-ocs", "{ocs_huge_index}", "--plan", P, "--fabric", F, "--out",
       "{dir}/imp4s.json", names=f"index.json: {TOO_LARGE}", outputs=("{dir}/imp4s.json",)),
)
