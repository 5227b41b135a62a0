"""Hostile inputs for every command (issue 13), as data: the files are made by :func:`build`.

Each case is an ``ocsplan`` command line whose documented answer is one line on
stderr naming the file and field (or the option) and an exit status (2: bad
input, 3: infeasible), with no output file written. ``tests/hostile`` runs them;
``scripts/hostile_sweep.py`` runs them in subprocesses under a memory limit and
counts the ones that break the contract.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from ocsplan.instance import loads_instance
from ocsplan.plan import dumps_plan
from ocsplan.planning.heuristic import plan_heuristic
from ocsplan.realization.circuits import dumps_circuits
from ocsplan.realization.fabrics import load_fabric
from ocsplan.realization.realize import realize

__all__ = ["CASES", "HEAVY", "Case", "build"]

ROOT = Path(__file__).resolve().parent.parent.parent

INSTANCE = """name = "hostile"
[fabric]
world = 64
ports = 8
latency = "0.52us"
link = "400Gb/s"
[[mesh]]
name = "m"
shape = [8, 8]
axes = [
  { collective = "all-reduce", payload = "4KiB" },
  { collective = "all-gather", payload = "64KiB" },
]
"""


@dataclass(frozen=True)
class Case:
    """``argv`` with ``{name}`` placeholders for the files of :func:`build`."""

    id: str
    argv: tuple[str, ...]
    status: int
    names: str  # the one line must contain this (file, field or option)
    outputs: tuple[str, ...] = ()  # placeholders of paths that must not exist afterwards


def _deep(depth: int, json_text: bool) -> str:
    inner = "[" * depth + "]" * depth
    return json.dumps({"schema": "x", "deep": 0}).replace("0}", inner + "}") if json_text else f"a = {inner}\n"


def _tree_route_plan(plan_text: str) -> str:
    """The base plan widened to 2^13 ranks on one axis that runs tree-route (limit 2^12)."""

    def pad(x: object) -> object:
        if isinstance(x, str) and len(x) == 6 and set(x) <= {"0", "1"}:
            return "0" * 7 + x
        if isinstance(x, list):
            return [pad(y) for y in x]
        if isinstance(x, dict):
            return {k: pad(v) for k, v in x.items()}
        return x

    data = pad(json.loads(plan_text))
    assert isinstance(data, dict)
    data["world"] = 8192
    data["meshes"][0]["shape"] = [8192, 1]
    data["meshes"][0]["bits"] = [list(range(12, -1, -1)), []]
    data["meshes"][0]["axes"][0]["demands"][0]["schedule"] = "tree-route"
    return json.dumps(data)


def build(directory: Path) -> dict[str, str]:
    """Write the base and hostile files into ``directory``; placeholder -> path."""
    d = Path(directory)
    files: dict[str, str] = {"dir": str(d), "out": str(d / "out"), "missing": str(d / "missing" / "x.json"),
                             "under_file": str(d / "instance.toml" / "x.json")}

    def put(name: str, text: str | bytes) -> None:
        path = d / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        files[name.replace(".", "_").replace("-", "_")] = str(path)

    put("instance.toml", INSTANCE)
    instance = loads_instance(INSTANCE, "instance.toml")
    plan = plan_heuristic(instance)
    plan_text = dumps_plan(plan)
    put("plan.json", plan_text)
    put("plan-tree-route-big.json", _tree_route_plan(plan_text))
    fabric_text = (ROOT / "simulate" / "fabrics" / "ocs-single.toml").read_text()
    put("fabric.toml", fabric_text)
    put("eps.toml", (ROOT / "simulate" / "fabrics" / "eps-single.toml").read_text())
    circuits = realize(plan, load_fabric(d / "fabric.toml"))
    circuits_text = dumps_circuits(circuits)
    put("circuits.json", circuits_text)
    (d / "a-dir").mkdir(exist_ok=True)
    files["a_dir"] = str(d / "a-dir")
    (d / "empty-dir").mkdir(exist_ok=True)
    files["empty_dir"] = str(d / "empty-dir")

    # instances
    sub = INSTANCE.replace
    put("world70.toml", sub("world = 64", f"world = {2**70}").replace("shape = [8, 8]", f"shape = [{2**35}, {2**35}]"))
    put("ports1e9.toml", sub("ports = 8", "ports = 1000000000"))
    # an explicit tree-route on 2^13 ranks: priced per rank on every shape (limit 2^12)
    put("tree-route-big.toml", sub("world = 64", "world = 8192").replace("shape = [8, 8]", "shape = [8192, 1]")
        .replace('{ collective = "all-reduce", payload = "4KiB" }',
                 '{ collective = "all-to-all", payload = "4KiB", schedule = "tree-route" }'))
    # 2^14 ranks on one 14-bit axis at 4096 ports: ~4.8M (layer, fold) rows for the exact models
    put("exact-huge.toml", sub("world = 64", "world = 16384").replace("ports = 8", "ports = 4096")
        .replace("shape = [8, 8]", "shape = [16384, 1]"))
    put("ports2e63.toml", sub("ports = 8", f"ports = {2**63}"))
    put("world-inf.toml", sub("world = 64", "world = inf"))
    put("payload-big.toml", sub('payload = "4KiB"', f"payload = {10**400}"))
    put("payload-1e400.toml", sub('payload = "4KiB"', 'payload = "1e400B"'))
    put("weight-huge.toml", sub('payload = "4KiB"', 'payload = "1TiB", weight = 1e308'))
    put("deep.toml", INSTANCE + _deep(3000, False))
    put("latency0.toml", sub('latency = "0.52us"', 'latency = "0us"'))
    put("link-tiny.toml", sub('link = "400Gb/s"', 'link = "1e-300B/s"'))
    put("axes100.toml", sub("shape = [8, 8]", "shape = [" + ", ".join(["1"] * 98 + ["8", "8"]) + "]"))
    put("binary.toml", b"\xff\xfe\x00name")

    # plans
    data = json.loads(plan_text)

    def plan_variant(name: str, edit: object) -> None:
        variant = json.loads(plan_text)
        assert callable(edit)
        edit(variant)
        put(name, json.dumps(variant))

    plan_variant("plan-mult1e9.json", lambda p: p["generators"][-1].update(multiplicity=10**9))
    plan_variant("plan-mult1e9-ports.json",
                 lambda p: (p["generators"][-1].update(multiplicity=10**9), p.update(ports=10**9)))
    plan_variant("plan-world70.json", lambda p: p.update(world=2**70))
    plan_variant("plan-objective.json", lambda p: p.update(objective_s=p["objective_s"] / 2))
    plan_variant("plan-schedule.json", lambda p: p["meshes"][0]["axes"][0]["demands"][0].update(schedule="bogus"))
    plan_variant("plan-mask.json", lambda p: p["generators"][0].update(mask="1" + p["generators"][0]["mask"]))
    plan_variant("plan-ports-str.json", lambda p: p.update(ports="8"))
    put("plan-inf.json", plan_text.replace(f'"world": {data["world"]}', '"world": Infinity'))
    put("plan-bigint.json", plan_text.replace(f'"world": {data["world"]}', f'"world": {10**400}'))
    put("plan-deep.json", _deep(3000, True))
    put("plan-list.json", "[]")
    put("plan-truncated.json", plan_text[: len(plan_text) // 2])

    # circuits
    def circuits_variant(name: str, edit: object) -> None:
        variant = json.loads(circuits_text)
        assert callable(edit)
        edit(variant)
        put(name, json.dumps(variant))

    circuits_variant("circ-domain0.json", lambda c: c["fabric"]["wiring"].update(domain=0))
    circuits_variant("circ-world70.json", lambda c: c["plan"].update(world=2**70))
    circuits_variant("circ-mult1e9.json", lambda c: c["generators"][0].update(multiplicity=10**9))
    circuits_variant("circ-mask.json", lambda c: c["generators"][0].update(generator="1" * 80))
    circuits_variant("circ-schema.json", lambda c: c.update(schema="ocsplan.circuits/9"))
    circuits_variant("circ-float.json", lambda c: c["plan"].update(world=64.5))
    put("circ-deep.json", _deep(3000, True))
    put("circ-empty.json", "{}")

    # fabrics
    put("fab-acc70.toml", fabric_text.replace("accelerators = 1024", f"accelerators = {2**70}"))
    put("fab-radix1e9.toml", fabric_text.replace("radix = 1024", "radix = 1000000000"))
    put("fab-ports1e6.toml", fabric_text.replace("ports = 64", "ports = 1000000"))
    put("fab-link0.toml", fabric_text.replace('link = "400Gb/s"', 'link = "0Gb/s"'))
    put("fab-deep.toml", fabric_text + _deep(3000, False))

    # study files
    put("foreign.csv", "name,age\nalice,3\n")

    # round 3 (issue 24): files that are not files, strict formats
    fifo = d / "fifo"
    if not fifo.exists():
        os.mkfifo(fifo)  # nobody ever writes to it or reads from it
    files["fifo"] = str(fifo)
    files["full"] = "/dev/full"  # ENOSPC on every write
    (d / "loop-a").unlink(missing_ok=True)
    (d / "loop-b").unlink(missing_ok=True)
    (d / "loop-a").symlink_to(d / "loop-b")
    (d / "loop-b").symlink_to(d / "loop-a")
    files["loop"] = str(d / "loop-a")
    put("plan-dupkey.json", '{"schema": "x", ' + plan_text.lstrip().removeprefix("{"))
    put("circuits-dupkey.json", '{"schema": "x", ' + circuits_text.lstrip().removeprefix("{"))
    model_fifo = d / "model-fifo.toml"
    if not model_fifo.exists():
        os.mkfifo(model_fifo)
    files["model_fifo"] = str(model_fifo)

    # round 3 (issue 24) 3: unknown keys in the project's own formats, each one letter off a known key
    put("inst-payloads.toml", sub('payload = "4KiB"', 'payloads = "4KiB"'))
    put("inst-port.toml", sub("ports = 8", "port = 8"))
    put("inst-meshes.toml", sub("[[mesh]]", "[[meshes]]"))
    put("inst-shapes.toml", sub("shape = [8, 8]", "shapes = [8, 8]"))
    plan_variant("plan-portz.json", lambda p: p.update(portz=8))
    plan_variant("plan-payload-byte.json",
                 lambda p: p["meshes"][0]["axes"][0]["demands"][0].update(payload_byte=4096))
    plan_variant("plan-gen-multiplicty.json", lambda p: p["generators"][0].update(multiplicty=1))
    plan_variant("plan-topolgy.json", lambda p: p["meshes"][0]["axes"][1].update(topolgy="cube"))
    circuits_variant("circ-notez.json", lambda c: c.update(notez=[]))
    circuits_variant("circ-domian.json", lambda c: c["fabric"]["wiring"].update(domian=1))
    circuits_variant("circ-route-bitz.json", lambda c: c["routes"][0].update(bitz=[]))
    circuits_variant("circ-installed-levelz.json", lambda c: c["counts"]["installed"].update(levelz=[]))
    put("fab-acelerators.toml", fabric_text.replace("accelerators = 1024", "acelerators = 1024"))
    put("fab-radixx.toml", fabric_text.replace("radix = 1024", "radixx = 1024"))
    put("fab-latency-cabel.toml", fabric_text.replace('latency = "nominal"', 'latency = { cabel = "5ns" }'))
    put("fab-racks-sise.toml", fabric_text + "\n[racks]\nsise = 8\n")
    models = ROOT / "src" / "ocsplan" / "workload" / "data"
    model_text = (models / "models" / "megatron-5t.toml").read_text()
    put("model-layer.toml", model_text.replace("num_hidden_layers =", "num_hidden_layer ="))
    put("model-expertz.toml", model_text.replace("num_local_experts =", "num_local_expert ="))
    acc_text = (models / "accelerators" / "rx00.toml").read_text()
    put("acc-peak-flop.toml", acc_text.replace("peak_flops =", "peak_flop ="))
    put("acc-eficiency.toml", acc_text.replace("efficiency = 0.36", "eficiency = 0.36"))
    return files


def _c(id: str, *argv: str, status: int = 2, names: str = "", outputs: tuple[str, ...] = ()) -> Case:
    return Case(id, argv, status, names, outputs)


P, F, C, INST = "{plan_json}", "{fabric_toml}", "{circuits_json}", "{instance_toml}"
J = "{dir}/out.json"

CASES: tuple[Case, ...] = (
    # solve
    _c("solve-world-2^70", "solve", "{world70_toml}", names="fabric.world"),
    _c("solve-ports-1e9", "solve", "{ports1e9_toml}", names="fabric.ports"),
    _c("solve-ports-2^63", "solve", "{ports2e63_toml}", "--method", "cpsat", names="fabric.ports"),
    _c("solve-tree-route-big", "solve", "{tree_route_big_toml}", names="mesh[0].axes[0].schedule"),
    _c("solve-exact-too-big", "solve", "{exact_huge_toml}", "--method", "milp", "--json", J,
       names="mesh[0].shape[0]", outputs=(J,)),
    _c("solve-world-inf", "solve", "{world_inf_toml}", names="fabric.world"),
    _c("solve-payload-10^400", "solve", "{payload_big_toml}", "--json", J, names="payload", outputs=(J,)),
    _c("solve-payload-1e400B", "solve", "{payload_1e400_toml}", names="payload"),
    _c("solve-weight-1e308", "solve", "{weight_huge_toml}", "--json", J, names="weight", outputs=(J,)),
    _c("solve-deep-toml", "solve", "{deep_toml}", names="toml"),
    _c("solve-latency-0", "solve", "{latency0_toml}", names="fabric.latency"),
    _c("solve-link-tiny", "solve", "{link_tiny_toml}", names="fabric.link"),
    _c("solve-100-axes", "solve", "{axes100_toml}", names="shape"),
    _c("solve-binary", "solve", "{binary_toml}", names="UTF-8"),
    _c("solve-missing-file", "solve", "{dir}/nope.toml", names="nope.toml"),
    _c("solve-method-bogus", "solve", INST, "--method", "bogus", names="--method"),
    _c("solve-time-limit-neg", "solve", INST, "--method", "cpsat", "--time-limit", "-1", names="--time-limit"),
    _c("solve-time-limit-nan", "solve", INST, "--method", "milp", "--time-limit", "nan", names="--time-limit"),
    _c("solve-time-limit-inf", "solve", INST, "--method", "cpsat", "--time-limit", "inf", names="--time-limit"),
    _c("solve-workers-neg", "solve", INST, "--method", "cpsat", "--workers", "-3", names="--workers"),
    _c("solve-time-limit-stacked", "solve", INST, "--method", "stacked", "--time-limit", "5", names="--time-limit"),
    _c("solve-time-limit-heuristic-neg", "solve", INST, "--time-limit", "-1", names="--time-limit"),
    _c("solve-workers-heuristic", "solve", INST, "--workers", "2", names="--workers"),
    _c("solve-circuits-no-realize", "solve", INST, "--circuits", J, names="--circuits", outputs=(J,)),
    _c("solve-placement-no-realize", "solve", INST, "--placement", "bits", names="--placement"),
    _c("solve-json-dir", "solve", INST, "--json", "{a_dir}", names="--json"),
    _c("solve-json-missing-parent", "solve", INST, "--json", "{missing}", names="--json"),
    _c("solve-json-under-file", "solve", INST, "--json", "{under_file}", names="--json"),
    _c("solve-export-xyz", "solve", INST, "--method", "cpsat", "--export", "{dir}/m.xyz", names="--export",
       outputs=("{dir}/m.xyz",)),
    _c("solve-export-heuristic", "solve", INST, "--export", "{dir}/m.lp", names="--export", outputs=("{dir}/m.lp",)),
    _c("solve-export-dir", "solve", INST, "--method", "milp", "--export", "{a_dir}", names="--export"),
    _c("solve-extra-arg", "solve", INST, "extra", names="extra"),
    _c("solve-unknown-option", "solve", INST, "--bogus", names="--bogus"),
    _c("solve-realize-bad-fabric", "solve", INST, "--realize", "{fab_deep_toml}", "--json", J, names="fab-deep",
       outputs=(J,)),
    # schedules
    _c("schedules-collective-bogus", "schedules", "--bits", "3", "--collective", "bogus", names="--collective"),
    _c("schedules-profile-letters", "schedules", "--bits", "4", "--profile", "a,b", names="--profile"),
    _c("schedules-profile-and-folds", "schedules", "--bits", "4", "--profile", "2,2", "--folds", "1100",
       names="--folds"),
    _c("schedules-bits-99", "schedules", "--bits", "99", names="--bits"),
    _c("schedules-bits-abc", "schedules", "--bits", "abc", names="--bits"),
    _c("schedules-payload-1e400", "schedules", "--bits", "3", "--payload", "1e400B", names="--payload"),
    _c("schedules-payload-0", "schedules", "--bits", "3", "--payload", "0", names="--payload"),
    _c("schedules-latency-neg", "schedules", "--bits", "3", "--latency", "-1us", names="--latency"),
    _c("schedules-link-0", "schedules", "--bits", "3", "--link", "0", names="--link"),
    _c("schedules-folds-length", "schedules", "--bits", "4", "--folds", "11", names="--folds"),
    _c("schedules-extra-arg", "schedules", "--bits", "3", "extra", names="extra"),
    # frontier
    _c("frontier-bits-0", "frontier", "--bits", "0", names="--bits"),
    _c("frontier-bits-99", "frontier", "--bits", "99", names="--bits"),
    _c("frontier-bits-neg", "frontier", "--bits", "-1", names="--bits"),
    _c("frontier-bits-abc", "frontier", "--bits", "abc", names="--bits"),
    _c("frontier-missing-bits", "frontier", names="--bits"),
    _c("frontier-max-degree-neg", "frontier", "--bits", "3", "--max-degree", "-1", names="--max-degree"),
    _c("frontier-max-degree-0", "frontier", "--bits", "3", "--max-degree", "0", names="--max-degree"),
    _c("frontier-max-degree-huge", "frontier", "--bits", "3", "--max-degree", str(10**30), names="--max-degree"),
    _c("frontier-extra-arg", "frontier", "--bits", "3", "x", names="x"),
    _c("frontier-unknown-option", "frontier", "--bits", "3", "--bogus", names="--bogus"),
    # compare
    _c("compare-methods-bogus", "compare", INST, "--methods", "bogus", names="--methods"),
    _c("compare-time-limit-neg", "compare", INST, "--time-limit", "-1", names="--time-limit"),
    _c("compare-workers-0", "compare", INST, "--workers", "0", names="--workers"),
    _c("compare-time-limit-heuristic", "compare", INST, "--methods", "heuristic", "--time-limit", "3",
       names="--time-limit"),
    _c("compare-csv-dir", "compare", INST, "--methods", "heuristic", "--csv", "{a_dir}", names="--csv"),
    _c("compare-csv-missing-parent", "compare", INST, "--methods", "heuristic", "--csv", "{missing}", names="--csv"),
    _c("compare-csv-foreign", "compare", INST, "--methods", "heuristic", "--csv", "{foreign_csv}",
       names="foreign.csv"),
    _c("compare-deep", "compare", "{deep_toml}", "--methods", "heuristic", names="toml"),
    _c("compare-world70", "compare", "{world70_toml}", "--methods", "heuristic", names="fabric.world"),
    _c("compare-missing-file", "compare", "{dir}/nope.toml", "--methods", "heuristic", names="nope.toml"),
    _c("compare-no-args", "compare", names="instances"),
    # generate
    _c("generate-count-1e12", "generate", "--family", "random", "--out", "{out}", "--count", str(10**12),
       names="--count", outputs=("{out}",)),
    _c("generate-count-neg", "generate", "--family", "random", "--out", "{out}", "--count", "-1", names="--count",
       outputs=("{out}",)),
    _c("generate-count-abc", "generate", "--family", "random", "--out", "{out}", "--count", "abc",
       names="--count", outputs=("{out}",)),
    _c("generate-family-bogus", "generate", "--family", "bogus", "--out", "{out}", names="--family",
       outputs=("{out}",)),
    _c("generate-min-bits-1", "generate", "--family", "random", "--out", "{out}", "--min-bits", "1",
       names="--min-bits", outputs=("{out}",)),
    _c("generate-max-bits-99", "generate", "--family", "random", "--out", "{out}", "--max-bits", "99",
       names="--min-bits", outputs=("{out}",)),
    _c("generate-out-file", "generate", "--family", "random", "--out", INST, names="--out"),
    _c("generate-out-under-file", "generate", "--family", "random", "--out", "{under_file}", names="--out"),
    _c("generate-seed-abc", "generate", "--family", "random", "--out", "{out}", "--seed", "abc", names="--seed",
       outputs=("{out}",)),
    _c("generate-extra-arg", "generate", "--family", "random", "--out", "{out}", "extra", names="extra",
       outputs=("{out}",)),
    # study
    _c("study-plot-xyz", "study", INST, "--out", "{dir}/s.csv", "--plot", "{dir}/p.xyz", names="--plot",
       outputs=("{dir}/s.csv", "{dir}/p.xyz")),
    _c("study-out-dir", "study", INST, "--out", "{a_dir}", names="--out"),
    _c("study-out-foreign", "study", INST, "--out", "{foreign_csv}", "--methods", "heuristic", names="foreign.csv"),
    _c("study-time-limit-nan", "study", INST, "--out", "{dir}/s.csv", "--time-limit", "nan", names="--time-limit",
       outputs=("{dir}/s.csv",)),
    _c("study-workers-0", "study", INST, "--out", "{dir}/s.csv", "--workers", "0", names="--workers",
       outputs=("{dir}/s.csv",)),
    _c("study-jobs-0", "study", INST, "--out", "{dir}/s.csv", "--jobs", "0", names="--jobs", outputs=("{dir}/s.csv",)),
    _c("study-jobs-1e6", "study", INST, "--out", "{dir}/s.csv", "--jobs", "1000000", names="--jobs",
       outputs=("{dir}/s.csv",)),
    _c("study-methods-bogus", "study", INST, "--out", "{dir}/s.csv", "--methods", "bogus", names="--methods",
       outputs=("{dir}/s.csv",)),
    _c("study-no-files", "study", "{empty_dir}", "--out", "{dir}/s.csv", names="PATHS", outputs=("{dir}/s.csv",)),
    _c("study-bad-instance", "study", "{world70_toml}", "--out", "{dir}/s.csv", "--methods", "heuristic",
       names="fabric.world", outputs=("{dir}/s.csv",)),
    _c("study-out-missing-parent", "study", INST, "--out", "{missing}", names="--out"),
    # realize
    _c("realize-mult-1e9", "realize", "{plan_mult1e9_json}", "--fabric", F, "--out", J, names="multiplicity",
       outputs=(J,)),
    _c("realize-mult-1e9-ports", "realize", "{plan_mult1e9_ports_json}", "--fabric", F, names="ports"),
    _c("realize-world-2^70", "realize", "{plan_world70_json}", "--fabric", F, names="world"),
    _c("realize-tree-route-big", "realize", "{plan_tree_route_big_json}", "--fabric", F, "--out", J,
       names="demands[0].schedule", outputs=(J,)),
    _c("realize-objective", "realize", "{plan_objective_json}", "--fabric", F, "--out", J, names="objective",
       outputs=(J,)),
    _c("realize-out-dir", "realize", P, "--fabric", F, "--out", "{a_dir}", names="--out"),
    _c("realize-out-missing-parent", "realize", P, "--fabric", F, "--out", "{missing}", names="--out"),
    _c("realize-placement-bogus", "realize", P, "--fabric", F, "--placement", "bogus", "--out", J,
       names="--placement", outputs=(J,)),
    _c("realize-fabric-deep", "realize", P, "--fabric", "{fab_deep_toml}", names="fab-deep"),
    _c("realize-fabric-acc70", "realize", P, "--fabric", "{fab_acc70_toml}", names="accelerators"),
    _c("realize-fabric-radix1e9", "realize", P, "--fabric", "{fab_radix1e9_toml}", names="radix"),
    _c("realize-fabric-eps", "realize", P, "--fabric", "{eps_toml}", "--out", J, status=3, names="infeasible",
       outputs=(J,)),
    _c("realize-plan-inf", "realize", "{plan_inf_json}", "--fabric", F, names="plan-inf"),
    _c("realize-plan-truncated", "realize", "{plan_truncated_json}", "--fabric", F, names="plan-truncated"),
    # validate
    _c("validate-domain-0", "validate", "{circ_domain0_json}", names="domain"),
    _c("validate-plan-schedule", "validate", C, "--plan", "{plan_schedule_json}", names="bogus"),
    _c("validate-plan-mask", "validate", C, "--plan", "{plan_mask_json}", names="mask"),
    _c("validate-plan-objective", "validate", C, "--plan", "{plan_objective_json}", names="objective"),
    _c("validate-circ-deep", "validate", "{circ_deep_json}", names="circ-deep"),
    _c("validate-circ-world70", "validate", "{circ_world70_json}", names="world"),
    _c("validate-circ-mult1e9", "validate", "{circ_mult1e9_json}", names="multiplicity"),
    _c("validate-circ-mask", "validate", "{circ_mask_json}", names="circ-mask"),
    _c("validate-circ-schema", "validate", "{circ_schema_json}", names="schema"),
    _c("validate-circ-float", "validate", "{circ_float_json}", names="circ-float"),
    _c("validate-circ-empty", "validate", "{circ_empty_json}", names="schema"),
    _c("validate-fabric-deep", "validate", C, "--fabric", "{fab_deep_toml}", names="fab-deep"),
    _c("validate-plan-list", "validate", C, "--plan", "{plan_list_json}", names="plan-list"),
    # simulate
    _c("simulate-unknown-schedule", "simulate", "{plan_schedule_json}", "--fabric", F, names="bogus"),
    _c("simulate-demand-7", "simulate", P, "--fabric", F, "--demand", "7", names="--demand"),
    _c("simulate-demand-junk", "simulate", P, "--fabric", F, "--demand", "x:y", names="--demand"),
    _c("simulate-mode-bogus", "simulate", P, "--fabric", F, "--mode", "bogus", names="--mode"),
    _c("simulate-json-dir", "simulate", P, "--fabric", F, "--json", "{a_dir}", names="--json"),
    _c("simulate-mult-1e9", "simulate", "{plan_mult1e9_json}", "--fabric", F, names="multiplicity"),
    _c("simulate-ideal-mult-1e9", "simulate", "{plan_mult1e9_ports_json}", "--fabric", F, "--mode", "ideal",
       "--json", J, names="ports", outputs=(J,)),
    _c("simulate-placement-with-circuits", "simulate", P, "--fabric", F, "--circuits", C, "--placement", "bits",
       names="--placement"),
    _c("simulate-buffer-0", "simulate", P, "--fabric", F, "--buffer", "0", names="--buffer"),
    _c("simulate-latency-bogus", "simulate", P, "--fabric", F, "--latency", "bogus", names="--latency"),
    _c("simulate-objective", "simulate", "{plan_objective_json}", "--fabric", F, "--json", J, names="objective",
       outputs=(J,)),
    _c("simulate-fabric-ports1e6", "simulate", P, "--fabric", "{fab_ports1e6_toml}", names="ports"),
    _c("simulate-ideal-buffer", "simulate", P, "--fabric", F, "--mode", "ideal", "--buffer", "4KiB",
       names="--buffer"),
    _c("simulate-fabric-link0", "simulate", P, "--fabric", "{fab_link0_toml}", names="link"),
    # sweep
    _c("sweep-png-xyz", "sweep", P, "--fabric", F, "--csv", "{dir}/s.csv", "--png", "{dir}/p.xyz", names="--png",
       outputs=("{dir}/s.csv", "{dir}/p.xyz")),
    _c("sweep-csv-dir", "sweep", P, "--fabric", F, "--csv", "{a_dir}", names="--csv"),
    _c("sweep-csv-missing-parent", "sweep", P, "--fabric", F, "--csv", "{missing}", names="--csv"),
    _c("sweep-payloads-1e400", "sweep", P, "--fabric", F, "--csv", "{dir}/s.csv", "--payloads", "1KiB:1e400B",
       names="--payloads", outputs=("{dir}/s.csv",)),
    _c("sweep-payloads-reversed", "sweep", P, "--fabric", F, "--csv", "{dir}/s.csv", "--payloads", "2KiB:1KiB",
       names="--payloads", outputs=("{dir}/s.csv",)),
    _c("sweep-schedules-bogus", "sweep", P, "--fabric", F, "--csv", "{dir}/s.csv", "--schedules", "bogus",
       names="bogus", outputs=("{dir}/s.csv",)),
    _c("sweep-mode-bogus", "sweep", P, "--fabric", F, "--csv", "{dir}/s.csv", "--mode", "bogus", names="--mode",
       outputs=("{dir}/s.csv",)),
    _c("sweep-mult-1e9", "sweep", "{plan_mult1e9_json}", "--fabric", F, "--csv", "{dir}/s.csv",
       names="multiplicity", outputs=("{dir}/s.csv",)),
    _c("sweep-demand-7", "sweep", P, "--fabric", F, "--csv", "{dir}/s.csv", "--demand", "7", names="--demand",
       outputs=("{dir}/s.csv",)),
    _c("sweep-objective", "sweep", "{plan_objective_json}", "--fabric", F, "--csv", "{dir}/s.csv",
       names="objective", outputs=("{dir}/s.csv",)),
    _c("sweep-missing-csv", "sweep", P, "--fabric", F, names="--csv"),
    # round 3 (issue 24) 1: outputs that are not regular files; 2: inputs that are not; 3: strict JSON
    _c("solve-json-full", "solve", INST, "--json", "{full}", names="/dev/full"),
    _c("solve-json-fifo-unread", "solve", INST, "--json", "{fifo}", names="FIFO nobody reads"),
    _c("realize-out-full", "realize", P, "--fabric", F, "--out", "{full}", names="/dev/full"),
    _c("simulate-json-full", "simulate", P, "--fabric", F, "--json", "{full}", names="/dev/full"),
    _c("sweep-csv-full", "sweep", P, "--fabric", F, "--csv", "{full}", names="/dev/full"),
    _c("solve-fifo", "solve", "{fifo}", names="not a regular file (a FIFO)"),
    _c("solve-dir", "solve", "{a_dir}", names="a directory"),
    _c("solve-loop", "solve", "{loop}", names="loop-a"),
    _c("solve-dev-zero", "solve", "/dev/zero", names="a character device"),
    _c("realize-plan-fifo", "realize", "{fifo}", "--fabric", F, "--out", "{dir}/c.json", names="FIFO",
       outputs=("{dir}/c.json",)),
    _c("realize-fabric-fifo", "realize", P, "--fabric", "{fifo}", "--out", "{dir}/c.json", names="FIFO",
       outputs=("{dir}/c.json",)),
    _c("validate-fifo", "validate", "{fifo}", names="FIFO"),
    _c("validate-plan-fifo", "validate", C, "--plan", "{fifo}", names="FIFO"),
    _c("simulate-plan-urandom", "simulate", "/dev/urandom", "--fabric", F, names="a character device"),
    _c("simulate-circuits-fifo", "simulate", P, "--fabric", F, "--circuits", "{fifo}", names="FIFO"),
    _c("sweep-plan-fifo", "sweep", "{fifo}", "--fabric", F, "--csv", "{dir}/s.csv", names="FIFO",
       outputs=("{dir}/s.csv",)),
    _c("workload-model-fifo", "workload", "{model_fifo}", "--split", "1,64,8,8", "--world", "64", names="FIFO"),
    _c("decode-fabric-fifo", "decode", "megatron-5t", "--fabric", "{fifo}", names="FIFO"),
    _c("power-fabric-fifo", "power", "{fifo}", names="FIFO"),
    _c("study-fifo", "study", "{fifo}", "--out", "{dir}/st.csv", names="fifo", outputs=("{dir}/st.csv",)),
    _c("realize-plan-dupkey", "realize", "{plan_dupkey_json}", "--fabric", F, "--out", "{dir}/c.json",
       names="duplicate key 'schema'", outputs=("{dir}/c.json",)),
    _c("validate-circuits-dupkey", "validate", "{circuits_dupkey_json}", names="duplicate key 'schema'"),
    # round 3 (issue 24) 4: every numeric option bounded, one message form
    _c("generate-seed-negative", "generate", "--family", "helix", "--out", "{dir}/g", "--seed", "-1", names="--seed",
       outputs=("{dir}/g",)),
    _c("generate-seed-2^63", "generate", "--family", "helix", "--out", "{dir}/g", "--seed", str(2**63),
       names="--seed", outputs=("{dir}/g",)),
    _c("circulant-seed-negative", "circulant", "--size", "72", "--degree", "4", "--seed", "-5", names="--seed"),
    _c("solve-stacked-seed-negative", "solve", INST, "--method", "stacked", "--seed", "-1", names="--seed"),
    _c("schedules-bits-0", "schedules", "--bits", "0", names="--bits"),
    _c("compare-jobs-1e5", "compare", INST, "--methods", "heuristic", "--jobs", "100000", names="--jobs"),
    _c("compare-methods-twice", "compare", INST, "--methods", "heuristic,heuristic", names="--methods"),
    _c("study-jobs-1e5", "study", INST, "--out", "{dir}/st.csv", "--methods", "heuristic", "--jobs", "100000",
       names="--jobs", outputs=("{dir}/st.csv",)),
    _c("study-methods-twice", "study", INST, "--out", "{dir}/st.csv", "--methods", "cpsat,heuristic,cpsat",
       names="--methods", outputs=("{dir}/st.csv",)),
    _c("sweep-jobs-1e5", "sweep", P, "--fabric", F, "--csv", "{dir}/s.csv", "--jobs", "100000", names="--jobs",
       outputs=("{dir}/s.csv",)),
    _c("workload-ports-1e8", "workload", "megatron-5t", "--split", "4,128,64,8", "--ports", "100000000",
       names="--ports"),
    _c("power-ports-1e8", "power", F, "--ports", "100000000", names="--ports"),
    _c("pareto-jobs-1e5", "pareto", "megatron-5t", "--contexts", "5M", "--batches", "1", "--fabrics", F,
       "--jobs", "100000", names="--jobs"),
    _c("pareto-png-xyz", "pareto", "megatron-5t", "--contexts", "5M", "--batches", "1", "--fabrics", F,
       "--png", "{dir}/p.xyz", names="--png", outputs=("{dir}/p.xyz",)),
    # round 3 (issue 24) 3: unknown keys refused with the nearest known key (docs/hostile.md "Strict keys")
    _c("solve-key-payloads", "solve", "{inst_payloads_toml}", "--json", J, names="did you mean 'payload'?",
       outputs=(J,)),
    _c("solve-key-port", "solve", "{inst_port_toml}", names="fabric.port: unknown key (did you mean 'ports'?)"),
    _c("compare-key-meshes", "compare", "{inst_meshes_toml}", "--methods", "heuristic",
       names="meshes: unknown key (did you mean 'mesh'?)"),
    _c("study-key-shapes", "study", "{inst_shapes_toml}", "--out", "{dir}/st.csv", "--methods", "heuristic",
       names="did you mean 'shape'?", outputs=("{dir}/st.csv",)),
    _c("realize-key-portz", "realize", "{plan_portz_json}", "--fabric", F, "--out", "{dir}/c.json",
       names="portz: unknown key (did you mean 'ports'?)", outputs=("{dir}/c.json",)),
    _c("simulate-key-payload-byte", "simulate", "{plan_payload_byte_json}", "--fabric", F,
       names="meshes[0].axes[0].demands[0].payload_byte: unknown key (did you mean 'payload_bytes'?)"),
    _c("sweep-key-multiplicty", "sweep", "{plan_gen_multiplicty_json}", "--fabric", F, "--csv", "{dir}/s.csv",
       names="generators[0].multiplicty: unknown key (did you mean 'multiplicity'?)", outputs=("{dir}/s.csv",)),
    _c("validate-plan-key-topolgy", "validate", C, "--plan", "{plan_topolgy_json}",
       names="meshes[0].axes[1].topolgy: unknown key (did you mean 'topology'?)"),
    _c("validate-key-notez", "validate", "{circ_notez_json}", names="notez: unknown key (did you mean 'notes'?)"),
    _c("validate-key-domian", "validate", "{circ_domian_json}",
       names="fabric.wiring.domian: unknown key (did you mean 'domain'?)"),
    _c("simulate-circuits-key-bitz", "simulate", P, "--fabric", F, "--circuits", "{circ_route_bitz_json}",
       names="routes[0].bitz: unknown key (did you mean 'bits'?)"),
    _c("validate-key-levelz", "validate", "{circ_installed_levelz_json}",
       names="counts.installed.levelz: unknown key (did you mean 'levels'?)"),
    _c("realize-fabric-key-acelerators", "realize", P, "--fabric", "{fab_acelerators_toml}", "--out", "{dir}/c.json",
       names="acelerators: unknown key (did you mean 'accelerators'?)", outputs=("{dir}/c.json",)),
    _c("simulate-fabric-key-radixx", "simulate", P, "--fabric", "{fab_radixx_toml}",
       names="level[0].radixx: unknown key (did you mean 'radix'?)"),
    _c("power-fabric-key-cabel", "power", "{fab_latency_cabel_toml}",
       names="latency.cabel: unknown key (did you mean 'cable'?)"),
    _c("decode-fabric-key-sise", "decode", "megatron-5t", "--fabric", "{fab_racks_sise_toml}",
       names="racks.sise: unknown key (did you mean 'size'?)"),
    _c("splits-model-key-layer", "splits", "{model_layer_toml}",
       names="num_hidden_layer: unknown key (did you mean 'num_hidden_layers'?)"),
    _c("workload-model-key-expert", "workload", "{model_expertz_toml}", "--split", "4,128,64,8",
       names="num_local_expert: unknown key (did you mean 'num_local_experts'?)"),
    _c("pareto-model-key-layer", "pareto", "{model_layer_toml}", "--contexts", "5M", "--batches", "1",
       "--fabrics", F, names="did you mean 'num_hidden_layers'?"),
    _c("workload-acc-key-peak-flop", "workload", "megatron-5t", "--split", "4,128,64,8", "--accelerator",
       "{acc_peak_flop_toml}", names="peak_flop: unknown key (did you mean 'peak_flops'?)"),
    _c("decode-acc-key-eficiency", "decode", "megatron-5t", "--fabric", F, "--accelerator", "{acc_eficiency_toml}",
       names="compute_efficiency[1].eficiency: unknown key (did you mean 'efficiency'?)"),
    _c("power-acc-key-peak-flop", "power", F, "--accelerator", "{acc_peak_flop_toml}",
       names="did you mean 'peak_flops'?"),
    # round 3 (issue 24) 5: Dask scheduler addresses; unreachable ones are 127.0.0.1 on a closed port ONLY
    _c("compare-scheduler-malformed", "compare", INST, "--methods", "heuristic", "--scheduler", "tcp://",
       names="--scheduler: malformed address"),
    _c("study-scheduler-no-port", "study", INST, "--out", "{dir}/st.csv", "--scheduler", "127.0.0.1",
       names="--scheduler: malformed address", outputs=("{dir}/st.csv",)),
    _c("sweep-scheduler-port-0", "sweep", P, "--fabric", F, "--csv", "{dir}/s.csv", "--scheduler",
       "tcp://127.0.0.1:0", names="--scheduler: port must be between 1 and 65535", outputs=("{dir}/s.csv",)),
    _c("pareto-scheduler-http", "pareto", "megatron-5t", "--contexts", "5M", "--batches", "1", "--fabrics", F,
       "--scheduler", "http://127.0.0.1:8786", names="--scheduler: unknown protocol 'http'"),
    _c("compare-scheduler-closed", "compare", INST, "--methods", "heuristic", "--scheduler", "tcp://127.0.0.1:1",
       "--connect-timeout", "3", status=1, names="cannot connect within --connect-timeout 3 s"),
    _c("study-scheduler-closed", "study", INST, "--out", "{dir}/st.csv", "--methods", "heuristic", "--scheduler",
       "tcp://127.0.0.1:1", status=1, names="--scheduler tcp://127.0.0.1:1: cannot connect",
       outputs=("{dir}/st.csv",)),
    _c("sweep-scheduler-closed", "sweep", P, "--fabric", F, "--csv", "{dir}/s.csv", "--scheduler",
       "127.0.0.1:1", "--connect-timeout", "2", status=1, names="cannot connect", outputs=("{dir}/s.csv",)),
    _c("pareto-scheduler-closed", "pareto", "megatron-5t", "--contexts", "5M", "--batches", "1", "--fabrics", F,
       "--scheduler", "tcp://127.0.0.1:1", "--csv", "{dir}/p.csv", status=1, names="cannot connect",
       outputs=("{dir}/p.csv",)),
    _c("study-connect-timeout-0", "study", INST, "--out", "{dir}/st.csv", "--connect-timeout", "0",
       names="--connect-timeout", outputs=("{dir}/st.csv",)),
    _c("compare-connect-timeout-nan", "compare", INST, "--methods", "heuristic", "--connect-timeout", "nan",
       names="--connect-timeout"),
    _c("sweep-connect-timeout-huge", "sweep", P, "--fabric", F, "--csv", "{dir}/s.csv", "--connect-timeout", "1e9",
       names="--connect-timeout", outputs=("{dir}/s.csv",)),
)

# the cases that hung or exhausted memory before issue 13: run in a process of their own under RLIMIT_AS
HEAVY = frozenset({
    "solve-world-2^70", "solve-ports-1e9", "solve-ports-2^63", "generate-count-1e12", "realize-mult-1e9",
    "realize-mult-1e9-ports", "simulate-mult-1e9", "simulate-ideal-mult-1e9", "sweep-mult-1e9",
})
