"""Hostile inputs, round 4, category 2 (outputs, all of them): an output path that is an input.

Every command that writes a file is given one of its own inputs as the output: by the same
path, through a symlink or a hard link, or as a directory holding it (``deploy --force``
would replace it). Each is refused in one line naming the output option and the input, exit
2, before anything is read or written; the input's bytes stay as they were."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from .cases import ROOT

__all__ = ["APART_CASES", "build_apart"]


def build_apart(d: Path, files: dict[str, str]) -> None:
    """A model TOML, a plan and circuits named ``.html`` (report's output suffix), a symlink and a
    hard link to the plan, a directory holding a model and a fabric."""
    model = ROOT / "src" / "ocsplan" / "workload" / "data" / "models" / "megatron-5t.toml"
    shutil.copyfile(model, d / "model.toml")
    files["model"] = str(d / "model.toml")
    for name, source in (("plan.html", "plan_json"), ("circuits.html", "circuits_json")):
        shutil.copyfile(files[source], d / name)
        files[name.replace(".", "_")] = str(d / name)
    for name, make in (("plan-symlink.json", os.symlink), ("plan-hardlink.json", os.link)):
        (d / name).unlink(missing_ok=True)
        make(files["plan_json"], d / name)
        files[name.removesuffix(".json").replace("-", "_")] = str(d / name)
    holder = d / "holder"
    holder.mkdir(exist_ok=True)
    shutil.copyfile(model, holder / "model.toml")
    shutil.copyfile(files["fabric_toml"], holder / "fabric.toml")
    files["holder"] = str(holder)
    files["holder_model"] = str(holder / "model.toml")
    files["holder_fabric"] = str(holder / "fabric.toml")


P, F, C, INST, M = "{plan_json}", "{fabric_toml}", "{circuits_json}", "{instance_toml}", "{model}"
SPLIT = ("--split", "4,128,64,8")
REPAIR = ("repair", C, "--plan", P, "--fabric", F, "--failed", "accelerator:3")
SAME = "is also the input"
# (id, argv, what the one line names, inputs whose bytes must not change)
APART_CASES: tuple[tuple[str, tuple[str, ...], str, tuple[str, ...]], ...] = (
    ("solve-json-is-instance", ("solve", INST, "--json", INST), f"--json: {INST} {SAME} INSTANCE", (INST,)),
    ("solve-circuits-is-fabric", ("solve", INST, "--realize", F, "--circuits", F), f"--circuits: {F} {SAME} --realize",
     (F, INST)),
    ("compare-csv-is-instance", ("compare", INST, "--methods", "heuristic", "--csv", INST), f"--csv: {INST} {SAME}",
     (INST,)),
    ("study-out-is-instance", ("study", INST, "--out", INST, "--methods", "heuristic"), f"--out: {INST} {SAME} PATHS",
     (INST,)),
    ("realize-out-is-plan", ("realize", P, "--fabric", F, "--out", P), f"--out: {P} {SAME} PLAN", (P,)),
    ("realize-out-is-plan-symlink", ("realize", P, "--fabric", F, "--out", "{plan_symlink}"), f"{SAME} PLAN", (P,)),
    ("realize-out-is-plan-hardlink", ("realize", P, "--fabric", F, "--out", "{plan_hardlink}"), f"{SAME} PLAN",
     (P,)),
    ("realize-out-is-fabric", ("realize", P, "--fabric", F, "--out", F), f"--out: {F} {SAME} --fabric", (F,)),
    ("simulate-json-is-plan", ("simulate", P, "--fabric", F, "--json", P), f"--json: {P} {SAME} PLAN", (P,)),
    ("simulate-json-is-circuits", ("simulate", P, "--fabric", F, "--circuits", C, "--json", C),
     f"--json: {C} {SAME} --circuits", (C,)),
    ("sweep-csv-is-plan", ("sweep", P, "--fabric", F, "--csv", P), f"--csv: {P} {SAME} PLAN", (P,)),
    ("faults-json-is-circuits", ("faults", C, "--plan", P, "--json", C), f"--json: {C} {SAME} CIRCUITS", (C,)),
    ("faults-json-is-plan", ("faults", C, "--plan", P, "--json", "{plan_symlink}"), f"{SAME} --plan", (P,)),
    ("repair-out-is-circuits", (*REPAIR, "--out", C), f"--out: {C} {SAME} CIRCUITS", (C,)),
    ("repair-diff-is-plan", (*REPAIR, "--out", "{dir}/rep4a.json", "--diff", P), f"--diff: {P} {SAME} --plan",
     (P,)),
    ("repair-diff-dir-is-circuits", (*REPAIR, "--out", "{dir}/rep4a.json", "--diff-dir", C),
     f"--diff-dir: {C} {SAME} CIRCUITS", (C,)),
    ("report-out-is-plan", ("report", "{plan_html}", "--out", "{plan_html}"), f"{SAME} PLAN", ("{plan_html}",)),
    ("report-out-is-circuits", ("report", P, "--circuits", "{circuits_html}", "--out", "{circuits_html}"),
     f"{SAME} --circuits", ("{circuits_html}",)),
    ("export-out-is-plan", ("export", P, "--out", P), f"--out: {P} {SAME} PLAN", (P,)),
    ("export-out-holds-plan", ("export", P, "--out", "{dir}"), "--out: {dir} holds the input PLAN", (P,)),
    ("export-ocs-out-is-circuits", ("export", "--format", "ocs", C, "--out", C), f"--out: {C} {SAME} CIRCUITS",
     (C,)),
    ("import-ocs-out-is-plan", ("import-ocs", "{ocs_export}", "--plan", P, "--fabric", F, "--out", P),
     f"--out: {P} {SAME} --plan", (P,)),
    ("import-ocs-out-is-fabric", ("import-ocs", "{ocs_export}", "--plan", P, "--fabric", F, "--out", F),
     f"--out: {F} {SAME} --fabric", (F,)),
    ("workload-emit-is-model", ("workload", M, *SPLIT, "--emit", M), f"--emit: {M} {SAME} MODEL", (M,)),
    ("decode-json-is-fabric", ("decode", M, "--fabric", F, *SPLIT, "--json", F), f"--json: {F} {SAME} --fabric",
     (F, M)),
    ("pareto-csv-is-model", ("pareto", M, "--contexts", "5M", "--batches", "1", "--fabrics", F, "--csv", M),
     f"--csv: {M} {SAME} MODEL", (M,)),
    ("deploy-force-out-holds-model", ("deploy", "{holder_model}", "--fabric", "{holder_fabric}", "--out",
                                      "{holder}", "--force"), "--out: {holder} holds the input MODEL",
     ("{holder_model}", "{holder_fabric}")),
)
