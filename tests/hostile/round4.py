"""Hostile inputs, round 4 (issue 38): the new commands, the plan cache, every output.

Each case is an ``ocsplan`` command line, optionally with stdout redirected to a
placeholder path (``/dev/full``), whose documented answer is one line on stderr
naming the option, file or field, an exit status, no traceback, and no output
written. They run in subprocesses under ``RLIMIT_AS`` and a timeout
(``tests/hostile/test_round4.py`` and ``scripts/hostile_sweep.py``); the files
are those of :func:`tests.hostile.cases.build` plus :func:`build`'s.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ocsplan.realization.circuits import dumps_circuits
from ocsplan.realization.fabrics import load_fabric
from ocsplan.realization.realize import realize

from .cases import ROOT
from .cases import build as build_base
from .round4_apart import APART_CASES, build_apart
from .round4_export import EXPORT_CASES, build_export
from .round4_models import MODEL_CASES, build_models
from .round4_options import OPTION_CASES
from .round4_sizes import SIZE_CASES, build_sizes

__all__ = ["CASES4", "Case4", "build", "digests"]


@dataclass(frozen=True)
class Case4:
    """``argv`` with ``{name}`` placeholders; ``stdout`` a placeholder path stdout is opened on."""

    id: str
    argv: tuple[str, ...]
    status: int
    names: str  # the one line must contain this
    outputs: tuple[str, ...] = ()  # placeholders of paths that must not exist afterwards
    stdout: str = ""
    category: int = 0  # of issue 38's seven
    keep: tuple[str, ...] = ()  # placeholders of inputs whose bytes must not change; then ``names`` is a template

    def line(self, files: dict[str, str]) -> str:
        """What the one line must contain (``names`` with its placeholders filled when ``keep`` is given)."""
        return self.names.format(**files) if self.keep else self.names


def digests(case: Case4, files: dict[str, str]) -> dict[str, str]:
    """SHA-256 of each input ``case`` must leave as it was."""
    import hashlib

    return {p: hashlib.sha256(Path(p.format(**files)).read_bytes()).hexdigest() for p in case.keep}


def build(directory: Path) -> dict[str, str]:
    """The base files of round 1-3 plus round 4's: placeholder -> path."""
    files = build_base(directory)
    d = Path(directory)
    (d / "regular.txt").write_text("not a directory\n")
    files["regular"] = str(d / "regular.txt")
    # the base plan realized on a second fabric (64 ranks on the 1024-accelerator single-level OCS: the
    # round-1 circuits) and on the 576-accelerator two-level OCS, to be given with the other's --fabric
    from ocsplan.plan import load_plan

    plan = load_plan(files["plan_json"])
    other = realize(plan, load_fabric(ROOT / "simulate" / "fabrics" / "nvl576-all-ocs.toml"))
    (d / "circuits-nvl576.json").write_text(dumps_circuits(other))
    files["circuits_nvl576"] = str(d / "circuits-nvl576.json")
    _other_plan_files(d, files, plan)
    (d / "a-dir-link").unlink(missing_ok=True)
    (d / "a-dir-link").symlink_to(d / "a-dir")
    files["dir_link"] = str(d / "a-dir-link")
    build_sizes(d, files)
    build_models(d, files)
    build_apart(d, files)
    build_export(d, files)
    (d / "fifo-link").unlink(missing_ok=True)
    (d / "fifo-link").symlink_to(files["fifo"])
    files["fifo_link"] = str(d / "fifo-link")
    return files


def _other_plan_files(d: Path, files: dict[str, str], plan: object) -> None:
    """Files that belong to another plan (another instance of the same shape), and wrong-typed ones."""
    from ocsplan.deploy.faults import analyse_faults, report_to_dict
    from ocsplan.deploy.ocs import ocs_files
    from ocsplan.instance import loads_instance
    from ocsplan.plan import dumps_plan
    from ocsplan.planning.heuristic import plan_heuristic
    from ocsplan.simlette import dumps_report, simulate_plan
    from ocsplan.simlette.runs import SimOptions

    from .cases import INSTANCE

    fabric = load_fabric(d / "fabric.toml")
    other = plan_heuristic(loads_instance(INSTANCE.replace('name = "hostile"', 'name = "other"')
                                          .replace('payload = "64KiB"', 'payload = "1MiB"'), "other.toml"))
    realized = realize(other, fabric)
    texts = {
        "other-plan.json": dumps_plan(other),
        "other-circuits.json": dumps_circuits(realized),
        "other-sim.json": dumps_report(simulate_plan(other, fabric, SimOptions(mode="ideal"))),
        "other-faults.json": json.dumps(report_to_dict(analyse_faults(realized, other, "circuit"))),
    }
    base_faults = json.loads(texts["other-faults.json"])
    base_faults["kind"] = 5
    texts["faults-kind-int.json"] = json.dumps(base_faults)
    circuits = json.loads(dumps_circuits(realize(plan, fabric)))  # type: ignore[arg-type]
    circuits["plan"] = []
    texts["circuits-plan-list.json"] = json.dumps(circuits)
    circuits = json.loads(dumps_circuits(realize(plan, fabric)))  # type: ignore[arg-type]
    circuits["ports_used"] = "eight"
    texts["circuits-ports-str.json"] = json.dumps(circuits)
    circuits = json.loads(dumps_circuits(realize(plan, fabric)))  # type: ignore[arg-type]
    first, second = circuits["circuits"][0], circuits["circuits"][1]
    first["a"] = second["a"]  # two circuits on one port: validate rejects it
    texts["circuits-invalid.json"] = json.dumps(circuits)
    texts.update(_wrong_typed(dumps_circuits(realize(plan, fabric)),  # type: ignore[arg-type]
                              dumps_report(simulate_plan(plan, fabric, SimOptions(mode="ideal"))),  # type: ignore[arg-type]
                              json.dumps(report_to_dict(analyse_faults(realize(plan, fabric), plan, "circuit")))))  # type: ignore[arg-type]
    for name, text in texts.items():
        (d / name).write_text(text)
        files[name.removesuffix(".json").replace("-", "_")] = str(d / name)
    ocs = d / "ocs-export"  # the base circuits as an OCS controller's files (export --format ocs)
    for name, text in ocs_files(realize(plan, fabric)).items():  # type: ignore[arg-type]
        (ocs / name).parent.mkdir(parents=True, exist_ok=True)
        (ocs / name).write_text(text)
    files["ocs_export"] = str(ocs)


def _edit(text: str, edit: Callable[[dict[str, Any]], object]) -> str:
    data = json.loads(text)
    edit(data)
    return json.dumps(data)


def _set(path: tuple[str | int, ...], value: object) -> Callable[[dict[str, Any]], object]:
    def edit(data: dict[str, Any]) -> None:
        node: Any = data
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return edit


def _wrong_typed(circuits: str, simulation: str, faults: str) -> dict[str, str]:
    """Category 3: the base plan's own circuits, simulation and faults files, one field wrong-typed or
    belonging to another plan each (file name -> text)."""
    out = {"sim.json": simulation, "faults.json": faults}
    Edits = tuple[tuple[str, tuple[str | int, ...], object], ...]
    circuit_edits: Edits = (
        ("circuits-str", ("circuits",), "x"), ("circuit-a-str", ("circuits", 0, "a"), "zero"),
        ("generators-dict", ("generators",), {}), ("plan-world-str", ("plan", "world"), "64"),
        ("plan-instance-other", ("plan", "instance"), "other"), ("plan-world-128", ("plan", "world"), 128),
        ("nodes-null", ("nodes",), None), ("fabric-str", ("fabric",), "ocs-single"),
        ("counts-list", ("counts",), []), ("routes-int", ("routes",), 5), ("placement-list", ("placement",), []),
        ("devices-str", ("devices",), "d"), ("schema-int", ("schema",), 1),
    )
    for name, path, value in circuit_edits:
        out[f"c-{name}.json"] = _edit(circuits, _set(path, value))
    out["c-plan-objective-other.json"] = _edit(circuits, lambda c: c["plan"].update(
        objective_s=c["plan"]["objective_s"] * 2))
    simulation_edits: Edits = (
        ("demands-dict", ("demands",), {}), ("simulated-str", ("demands", 0, "simulated_s"), "fast"),
        ("plan-int", ("plan",), 5), ("payload-str", ("demands", 0, "payload_bytes"), "4KiB"),
        ("mesh-other", ("demands", 0, "mesh"), "z"), ("axis-9", ("demands", 1, "axis"), 9),
        ("payload-other", ("demands", 0, "payload_bytes"), 8192), ("schema-faults", ("schema",), "ocsplan.faults/1"),
    )
    for name, path, value in simulation_edits:
        out[f"s-{name}.json"] = _edit(simulation, _set(path, value))
    out["s-one-demand.json"] = _edit(simulation, lambda s: s["demands"].pop())
    out["s-nan.json"] = simulation.replace('"simulated_s": ', '"simulated_s": NaN, "x": ', 1)
    faults_edits: Edits = (
        ("healthy-str", ("healthy",), "fine"), ("faults-dict", ("faults",), {}),
        ("healthy-other", ("healthy", "objective"), 1.0), ("axis-str", ("faults", 0, "demands", 0, "axis"), "0"),
        ("sampled-str", ("sampled",), "no"), ("stopped-str", ("faults", 0, "stopped"), "none"),
        ("demand-other-mesh", ("faults", 0, "demands", 0, "mesh"), "z"),
        ("objective-neg", ("faults", 0, "objective"), -1),
    )
    for name, path, value in faults_edits:
        out[f"f-{name}.json"] = _edit(faults, _set(path, value))
    out["f-nan.json"] = faults.replace('"objective": ', '"objective": NaN, "x": ', 1)
    return out


def _c(id: str, *argv: str, status: int = 2, names: str = "", outputs: tuple[str, ...] = (),
       stdout: str = "") -> Case4:
    return Case4(id, argv, status, names, outputs, stdout)


P, F, C, INST = "{plan_json}", "{fabric_toml}", "{circuits_json}", "{instance_toml}"
FABRICS = str(ROOT / "simulate" / "fabrics")
REPAIR = ("repair", "{circuits_nvl576}", "--plan", P, "--fabric", FABRICS + "/nvl576-all-ocs.toml", "--failed",
          "accelerator:3")
PARETO = ("pareto", "megatron-5t", "--contexts", "5M", "--batches", "1", "--fabrics", F)
# a circuits file given to each command that reads one, with that command's outputs (none may be written)
TAKES_CIRCUITS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "faults": (("faults", "{c}", "--plan", P, "--json", "{dir}/f4c.json"), ("{dir}/f4c.json",)),
    "simulate": (("simulate", P, "--fabric", F, "--mode", "ideal", "--circuits", "{c}", "--json", "{dir}/s4c.json"),
                 ("{dir}/s4c.json",)),
    "report": (("report", P, "--circuits", "{c}", "--out", "{dir}/r4c.html"), ("{dir}/r4c.html",)),
    "repair": (("repair", "{c}", "--plan", P, "--fabric", F, "--failed", "accelerator:3", "--out", "{dir}/rep4c.json",
                "--diff", "{dir}/diff4c.json"), ("{dir}/rep4c.json", "{dir}/diff4c.json")),
    "export": (("export", P, "--circuits", "{c}", "--out", "{dir}/x4c"), ("{dir}/x4c",)),
}
# category 3: (circuits file made by round4._wrong_typed, what the one line names, the commands given it)
WRONG_CIRCUITS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("c-circuits-str", "circuits: malformed", ("faults", "simulate")),
    ("c-circuit-a-str", "circuits.0.a: malformed", ("report", "repair")),
    ("c-generators-dict", "generators: malformed", ("simulate", "report", "repair", "export")),
    ("c-plan-world-str", "plan.world: malformed", ("export", "faults")),
    ("c-plan-instance-other", "plan.instance: realizes 'other'", ("simulate", "export", "report")),
    ("c-plan-world-128", "not a mask of 7 bits", ("faults", "report")),
    ("c-nodes-null", "nodes: malformed", ("repair", "export")),
    ("c-fabric-str", "fabric: malformed", ("simulate", "faults")),
    ("c-counts-list", "counts: malformed", ("report",)),
    ("c-routes-int", "routes: malformed", ("faults",)),
    ("c-placement-list", "placement: malformed", ("repair",)),
    ("c-devices-str", "devices: malformed", ("simulate",)),
    ("c-schema-int", "schema: expected 'ocsplan.circuits/1'", ("report",)),
    ("c-plan-objective-other", "plan.objective_s: realizes 'hostile'",
     ("simulate", "report", "repair", "export", "faults")),
)


def _wrong_circuits() -> tuple[Case4, ...]:
    cases = []
    for name, names, commands in WRONG_CIRCUITS:
        for command in commands:
            argv, outputs = TAKES_CIRCUITS[command]
            placeholder = "{" + name.replace("-", "_") + "}"
            cases.append(_c(f"{command}-{name}", *(a.replace("{c}", placeholder) for a in argv), names=names,
                            outputs=outputs))
    return tuple(cases)


def _reports(option: str, files: tuple[tuple[str, str], ...]) -> tuple[Case4, ...]:
    """``report PLAN OPTION FILE`` for each (file, the field and message after the file's name); no page
    written."""
    return tuple(_c(f"report-{option.removeprefix('--')}-{name}", "report", P, option,
                    "{" + name.replace("-", "_") + "}", "--out", "{dir}/r4s.html",
                    names=f"{name.removesuffix('-json')}.json: {names}", outputs=("{dir}/r4s.html",))
                 for name, names in files)


SIMULATIONS = (
    ("s-demands-dict", "demands: {} is not of type 'array'"),
    ("s-simulated-str", "demands.0.simulated_s: 'fast' is not of type 'number'"),
    ("s-plan-int", "plan: 5 is not of type 'string'"),
    ("s-payload-str", "demands.0.payload_bytes: '4KiB' is not of type 'integer'"),
    ("s-mesh-other", "demands[0]: the plan has no demand z[0].0"),
    ("s-axis-9", "demands[1]: the plan has no demand m[9].0"),
    ("s-payload-other", "demands[0]: all-reduce of 8192 B, the plan's demand is all-reduce of 4096 B"),
    ("s-schema-faults", "schema: expected 'ocsplan.simulation/1', got 'ocsplan.faults/1'"),
    ("s-one-demand", "demands: 1 rows, the plan has 2 demands"),
    ("s-nan", "not JSON: NaN"),
    ("circuits-json", "schema: expected 'ocsplan.simulation/1', got 'ocsplan.circuits/1'"),
)
FAULTS = (
    ("f-healthy-str", "healthy: 'fine' is not of type 'object'"),
    ("f-faults-dict", "faults: {} is not of type 'array'"),
    ("f-healthy-other", "healthy.objective: 1.0 is not the plan's objective"),
    ("f-axis-str", "faults.0.demands.0.axis: '0' is not of type 'integer'"),
    ("f-sampled-str", "sampled: 'no' is not of type 'boolean'"),
    ("f-stopped-str", "faults.0.stopped: 'none' is not of type 'array'"),
    ("f-demand-other-mesh", "faults[0].demands[0]: the plan has no demand z[0].0"),
    ("f-objective-neg", "faults.0.objective: -1 is less than the minimum of 0"),
    ("f-nan", "not JSON: NaN"),
    ("other-sim", "schema: expected 'ocsplan.faults/1', got 'ocsplan.simulation/1'"),
)
# another plan (the base instance renamed, another payload) given with the base plan's files
OTHER_PLAN = "{other_plan}"


def _group(category: int, *cases: Case4) -> tuple[Case4, ...]:
    """``cases`` of one category of issue 38 (1-7)."""
    return tuple(replace(case, category=category) for case in cases)


CASES4: tuple[Case4, ...] = (
    *_group(2,  # outputs: stdout on a full device is one line naming stdout, for every kind of writer
        _c("schema-stdout-full", "schema", "plan-1", stdout="{full}", names="stdout: cannot write"),
        _c("schema-list-stdout-full", "schema", stdout="{full}", names="stdout: cannot write"),
        _c("solve-stdout-full", "solve", INST, stdout="{full}", names="stdout: cannot write"),
        _c("solve-json-stdout-full", "solve", INST, "--json", "{dir}/p4.json", stdout="{full}",
           names="stdout: cannot write"),
        _c("schedules-stdout-full", "schedules", "--bits", "4", "--collective", "all-reduce",
           stdout="{full}", names="stdout: cannot write"),
        _c("validate-stdout-full", "validate", C, stdout="{full}", names="stdout: cannot write"),
    ),
    *_group(5,  # the plan cache directory: anything but a directory (or a place to make one) is one line, exit 2
        _c("pareto-cache-regular-file", *PARETO, "--cache", "{regular}", names="--cache"),
        _c("pareto-cache-fifo", *PARETO, "--cache", "{fifo}", names="--cache"),
        _c("pareto-cache-symlink-loop", *PARETO, "--cache", "{loop}", names="--cache"),
        _c("pareto-cache-under-a-file", *PARETO, "--cache", "{regular}/cache", names="--cache"),
        _c("pareto-cache-device", *PARETO, "--cache", "/dev/null", names="--cache"),
        _c("pareto-cache-symlink-to-file", *PARETO, "--cache", "{plan_symlink}", names="--cache: "),
        _c("pareto-cache-symlink-to-fifo", *PARETO, "--cache", "{fifo_link}", names="is a FIFO, not a directory"),
        _c("pareto-cache-under-a-fifo", *PARETO, "--cache", "{fifo}/cache", names="--cache: "),
        _c("pareto-cache-is-model", "pareto", "{model}", "--contexts", "5M", "--batches", "1", "--fabrics", F,
           "--cache", "{model}", names="is a file, not a directory"),
    ),
    *_group(3,  # files that belong to another fabric or cannot apply
        _c("simulate-circuits-on-eps", "simulate", P, "--fabric", "{eps_toml}", "--circuits", C,
           names="--circuits: has no effect on the electronic fabric"),
        _c("simulate-circuits-other-fabric", "simulate", P, "--fabric", F, "--circuits", "{circuits_nvl576}",
           names="--circuits: "),
        _c("simulate-circuits-other-fabric-json", "simulate", P, "--fabric", F, "--circuits", "{circuits_nvl576}",
           "--json", "{dir}/sim4.json", names="realized on nvl576-all-ocs", outputs=("{dir}/sim4.json",)),
    ),
    *_group(6,  # numeric options, one rule: --seed 0..2^63-1, --sample 1..20000, --accept-rate only where it counts
        _c("faults-sample-0", "faults", C, "--plan", P, "--sample", "0", names="--sample"),
        _c("faults-sample-1e9", "faults", C, "--plan", P, "--sample", "1000000000", names="--sample"),
        _c("faults-seed-negative", "faults", C, "--plan", P, "--sample", "3", "--seed", "-1", names="--seed"),
        _c("faults-seed-2^63", "faults", C, "--plan", P, "--sample", "3", "--seed", str(2**63), names="--seed"),
        _c("faults-seed-2^64-json", "faults", C, "--plan", P, "--sample", "3", "--seed", str(2**64), "--json",
           "{dir}/f4.json", names="--seed", outputs=("{dir}/f4.json",)),
        _c("solve-seed-2^63", "solve", INST, "--method", "stacked", "--seed", str(2**63), names="--seed"),
        _c("circulant-seed-negative", "circulant", "--size", "64", "--degree", "4", "--seed", "-1", names="--seed"),
        _c("decode-accept-rate-without-tokens", "decode", "megatron-5t", "--fabric", F, "--split", "4,128,64,8",
           "--accept-rate", "0.5", names="--accept-rate: 0.5 needs --tokens-per-step above 1"),
        _c("decode-accept-rate-nan", "decode", "megatron-5t", "--fabric", F, "--split", "4,128,64,8",
           "--tokens-per-step", "2", "--accept-rate", "nan", names="--accept-rate"),
        _c("decode-accept-rate-zero", "decode", "megatron-5t", "--fabric", F, "--split", "4,128,64,8",
           "--tokens-per-step", "2", "--accept-rate", "0", names="--accept-rate"),
        _c("workload-accept-rate-has-no-effect", "workload", "megatron-5t", "--split", "4,128,64,8",
           "--tokens-per-step", "2", "--accept-rate", "0.5", names="--accept-rate: has no effect on the demand table"),
        _c("workload-tokens-per-step-0", "workload", "megatron-5t", "--split", "4,128,64,8", "--tokens-per-step", "0",
           names="--tokens-per-step"),
    ),
    *_group(3,  # files that belong to another plan, wrong-typed fields
        _c("report-circuits-other-plan", "report", P, "--circuits", "{other_circuits}", "--out", "{dir}/r4.html",
           names="--circuits: ", outputs=("{dir}/r4.html",)),
        _c("report-simulation-other-plan", "report", P, "--simulation", "{other_sim}", "--out", "{dir}/r4.html",
           names="--simulation: ", outputs=("{dir}/r4.html",)),
        _c("report-faults-other-plan", "report", P, "--faults", "{other_faults}", "--out", "{dir}/r4.html",
           names="--faults: ", outputs=("{dir}/r4.html",)),
        _c("report-faults-kind-int", "report", P, "--faults", "{faults_kind_int}", "--out", "{dir}/r4.html",
           names="kind", outputs=("{dir}/r4.html",)),
        _c("report-circuits-plan-list", "report", P, "--circuits", "{circuits_plan_list}", "--out", "{dir}/r4.html",
           names="--circuits: ", outputs=("{dir}/r4.html",)),
        _c("report-decode-other-deployment", "report", P, "--decode", "{other_sim}", "--out", "{dir}/r4.html",
           names="--decode: ", outputs=("{dir}/r4.html",)),
        _c("faults-circuits-of-other-plan", "faults", "{other_circuits}", "--plan", P, names="--plan"),
        _c("faults-circuits-validate-rejects", "faults", "{circuits_invalid}", "--plan", P,
           names="found by ocsplan validate"),
        _c("faults-circuits-ports-str", "faults", "{circuits_ports_str}", "--plan", P, names="ports_used"),
        _c("faults-circuits-plan-list", "faults", "{circuits_plan_list}", "--plan", P, names="plan"),
        _c("simulate-circuits-of-other-plan", "simulate", P, "--fabric", F, "--circuits", "{other_circuits}",
           names="other"),
        _c("repair-circuits-of-other-plan", "repair", "{other_circuits}", "--plan", P, "--fabric", F, "--failed",
           "accelerator:3", "--out", "{dir}/rep4.json", names="--plan", outputs=("{dir}/rep4.json",)),
    ),
    *_group(3, *_wrong_circuits(), *_reports("--simulation", SIMULATIONS), *_reports("--faults", FAULTS)),
    *_group(3,  # a plan given with the base plan's circuits, export, simulation
        _c("import-ocs-other-plan", "import-ocs", "{ocs_export}", "--plan", OTHER_PLAN, "--fabric", F, "--out",
           "{dir}/imp4.json", names="plan.instance: the export has hostile, --plan has other",
           outputs=("{dir}/imp4.json",)),
        _c("import-ocs-other-fabric", "import-ocs", "{ocs_export}", "--plan", P, "--fabric", "{eps_toml}", "--out",
           "{dir}/imp4.json", names="fabric.name: the export has ocs-single", outputs=("{dir}/imp4.json",)),
        _c("faults-other-plan", "faults", C, "--plan", OTHER_PLAN, names="circuits.json does not belong"),
        _c("simulate-other-plan", "simulate", OTHER_PLAN, "--fabric", F, "--circuits", C, names="--circuits: "),
        _c("export-other-plan", "export", OTHER_PLAN, "--circuits", C, "--out", "{dir}/x4o",
           names="--circuits ", outputs=("{dir}/x4o",)),
        _c("repair-other-plan", "repair", C, "--plan", OTHER_PLAN, "--fabric", F, "--failed", "accelerator:3",
           "--out", "{dir}/rep4o.json", names="--plan ", outputs=("{dir}/rep4o.json",)),
        _c("report-other-plan-circuits", "report", OTHER_PLAN, "--circuits", C, "--out", "{dir}/r4o.html",
           names="--circuits: ", outputs=("{dir}/r4o.html",)),
        _c("report-other-plan-simulation", "report", OTHER_PLAN, "--simulation", "{sim}", "--out", "{dir}/r4o.html",
           names="--simulation: ", outputs=("{dir}/r4o.html",)),
        _c("report-other-plan-faults", "report", OTHER_PLAN, "--faults", "{faults}", "--out", "{dir}/r4o.html",
           names="--faults: ", outputs=("{dir}/r4o.html",)),
    ),
    *_group(2,  # outputs, all of them: two options on one file, both on stdout, a second output that fails
        _c("repair-out-equals-diff", *REPAIR, "--out", "{dir}/rep.json", "--diff", "{dir}/rep.json",
           names="--diff: ", outputs=("{dir}/rep.json",)),
        _c("repair-out-and-diff-on-stdout", *REPAIR, "--out", "-", "--diff", "-", names="--diff: stdout is also"),
        _c("repair-diff-full-device", *REPAIR, "--out", "{dir}/rep.json", "--diff", "{full}", names="/dev/full",
           outputs=("{dir}/rep.json",)),
        _c("repair-diff-fifo-unread", *REPAIR, "--out", "{dir}/rep.json", "--diff", "{fifo}",
           names="FIFO nobody reads", outputs=("{dir}/rep.json",)),
        _c("solve-json-symlink-to-dir", "solve", INST, "--json", "{dir_link}", names="--json"),
        _c("pareto-csv-equals-png", *PARETO, "--csv", "{dir}/p.csv", "--png", "{dir}/p.csv", names="--png",
           outputs=("{dir}/p.csv",)),
        _c("compare-csv-equals-demands", "compare", INST, "--methods", "heuristic", "--csv", "{dir}/c.csv",
           "--demands", "{dir}/c.csv", names="is also the output of", outputs=("{dir}/c.csv",)),
    ),
    *_group(1,  # export --check is a checker: options that cannot apply to it refused; executor limits on export
        _c("export-check-with-out", "export", "--check", "{dir}", "--out", "{dir}/x", names="--out: has no effect"),
        _c("export-check-with-plan", "export", P, "--check", "{dir}", names="PLAN: has no effect"),
        _c("export-check-with-max-steps", "export", "--check", "{dir}", "--max-steps", "10", names="--max-steps"),
        _c("export-check-with-protocol", "export", "--check", "{dir}", "--protocol", "LL", names="--protocol"),
        _c("export-check-with-format", "export", "--check", "{dir}", "--format", "msccl", names="--format"),
        _c("export-max-steps-over-int16", "export", P, "--out", "{dir}/x4", "--max-steps", "40000",
           names="--max-steps 40000: must be between 1 and 32767", outputs=("{dir}/x4",)),
    ),
    *_group(4, *(_c(id, *argv, names=names, outputs=outputs) for id, argv, names, outputs in SIZE_CASES)),
    *_group(7, *(_c(id, *argv, names=names, outputs=outputs) for id, argv, names, outputs in MODEL_CASES)),
    *_group(2, *(replace(_c(id, *argv, names=names), keep=keep) for id, argv, names, keep in APART_CASES)),
    *_group(6, *(_c(id, *argv, names=names, outputs=outputs) for id, argv, names, outputs in OPTION_CASES)),
    *_group(1, *(_c(id, *argv, status=status, names=names) for id, argv, status, names in EXPORT_CASES)),
)
