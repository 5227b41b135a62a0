"""A deployment directory's contents, from a model to a report (issue 39): ``ocsplan deploy``.

Pure: every stage is the library function its own command calls (``decode`` for the split and
the steps, the decode plan cache for the plan, ``realize``, ``validate``, ``export``, its check,
``faults``, ``report``); this module only chains them and names the files. Consistent by
construction: the instance is the one ``decode`` planned for the chosen split on the fabric, the
plan is that plan, and every other file is derived from it. The CLI writes the files atomically.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..decode.cache import PlanCache
from ..decode.ranking import best_step
from ..decode.step import decode_step, plan_for
from ..decode.technology import StepDemand
from ..errors import InstanceError, OcsplanError
from ..plan import Plan, dumps_plan, loads_plan
from ..realization.circuits import Circuits, dumps_circuits
from ..realization.fabric_check import fabric_faults
from ..realization.fabrics import FabricSpec
from ..realization.realize import realize
from ..realization.validate import validate
from ..workload.accelerator import Accelerator
from ..workload.demand import Precision
from ..workload.model import Model
from ..workload.splits import Split, check_split
from ..workload.step import Step, step_to_dict
from .check import XmlCost
from .export import check_export, export_msccl
from .faults import FaultReport, analyse_faults, report_to_dict
from .ocs import ocs_files

__all__ = ["DEFAULT_FAULTS", "DEFAULT_TIME_LIMIT", "MANIFEST", "SCHEMA", "Deployment", "ExactCheck",
           "build_deployment", "check_fabric", "exact_check", "manifest_text"]

SCHEMA = "ocsplan.deploy/1"
MANIFEST = "manifest.json"
MSCCL_DIR = "msccl"
OCS_DIR = "ocs"
DEFAULT_FAULTS = 2048  # circuit faults analysed in full up to this many; a sample of as many beyond
DEFAULT_TIME_LIMIT = 30.0  # seconds for the exact check of the deployed plan (CP-SAT); 0 skips it


class DeployError(OcsplanError):
    """A stage whose output the next stage refuses (a circuits file validate rejects, an MSCCL
    file its checker rejects): a bug, never expected."""


@dataclass(frozen=True)
class ExactCheck:
    """The exact check of the deployed (heuristic) plan: CP-SAT on the same instance within
    ``time_limit`` seconds. ``bound_s`` is the proven lower bound on sum w*T (None: none proven),
    ``gap`` the deployed plan's relative gap to it, ``objective_s`` the best plan CP-SAT holds
    (never worse than the heuristic, which seeds it). ``status`` is the solver's (optimal,
    feasible, infeasible, unknown), or ``skipped`` with ``reason``."""

    time_limit: float
    status: str
    bound_s: float | None = None
    gap: float | None = None
    objective_s: float | None = None
    reason: str = ""

    def to_dict(self) -> dict[str, object]:
        return {"method": "cpsat", "time_limit_s": self.time_limit, "status": self.status,
                "bound_s": self.bound_s, "gap": self.gap, "objective_s": self.objective_s,
                "reason": self.reason}


def exact_check(instance_text: str, plan: Plan, time_limit: float) -> ExactCheck:
    """Prove (or bound) the deployed plan's optimality with CP-SAT in ``time_limit`` seconds.

    The plan stays the heuristic's (the one decode priced); the check only states its gap
    (``Plan.gap`` of the plan with CP-SAT's bound). An instance the exact models refuse (too many
    candidates) or a limit that runs out before a model is built is ``skipped`` with the reason."""
    from dataclasses import replace

    from ..instance import loads_instance
    from ..planning.exact import plan_cpsat

    if time_limit <= 0:
        return ExactCheck(0.0, "skipped", reason="--time-limit 0")
    try:
        exact = plan_cpsat(loads_instance(instance_text, "instance.toml"), time_limit=time_limit, workers=1)
    except OcsplanError as exc:
        return ExactCheck(time_limit, "skipped", reason=str(exc))
    bound = exact.bound_s
    gap = None if bound is None else replace(plan, bound_s=bound).gap
    return ExactCheck(time_limit, exact.status, bound, gap, exact.objective_s)


@dataclass(frozen=True)
class Deployment:
    """Everything ``ocsplan deploy`` writes, and what its summary prints."""

    step: Step  # decode on the fabric
    baseline: Step  # decode on the baseline fabric at the same split
    timed: int  # splits ranked to choose the split: timed, or ruled out by a lower bound (0: given)
    plan: Plan
    circuits: Circuits
    faults: FaultReport
    msccl: dict[str, XmlCost]  # checked MSCCL file -> its (h, v)
    exact: ExactCheck
    files: dict[str, str] = field(default_factory=dict)  # path in the directory -> text (no manifest)
    notes: tuple[str, ...] = ()


def check_fabric(spec: FabricSpec, option: str = "--fabric") -> None:
    """Deploy realizes circuits: every level of the fabric is OCS."""
    kinds = [level.technology for level in spec.levels]
    if any(kind != "ocs" for kind in kinds):
        raise InstanceError(option, "", f"{spec.name} has {'/'.join(kinds)} levels: deploy realizes circuits on "
                                        f"an all-OCS fabric (ocsplan fabrics lists them)")


def _json(data: Mapping[str, Any]) -> str:
    return json.dumps(data, indent=1) + "\n"


def build_deployment(model: Model, acc: Accelerator, spec: FabricSpec, baseline: FabricSpec, world: int,
                     batch: int, context: int, precision: Precision, split: Split | None = None, *,
                     faults: int | None = None, progress: Callable[[int, int], None] | None = None,
                     date: str = "", time_limit: float = DEFAULT_TIME_LIMIT) -> Deployment:
    """The deployment of ``model`` on ``spec``: the best split (``split`` None, as ``decode --split
    auto``) or the given one, its plan, circuits, MSCCL files, decode steps and faults, and the
    report page. ``faults``: circuit faults analysed (default all up to :data:`DEFAULT_FAULTS`,
    else a sample of as many, seed 0); ``date`` is the report's provenance date; ``time_limit``
    the seconds of the exact check (:func:`exact_check`, 0 skips it)."""
    from .. import __version__
    from ..report import build_report
    from ..report.inputs import check_decode, check_faults
    from ..report.provenance import Provenance, source

    check_fabric(spec)
    cache = PlanCache()
    if split is None:
        choice = best_step(model, acc, spec, world, batch, context, precision=precision, cache=cache,
                           progress=progress)
        step, timed = choice.best, choice.fitting
    else:
        check_split(model, world, split)
        step = decode_step(model, acc, spec, world, split, batch, context, precision=precision, cache=cache)
        timed = 0
    chosen = step.split
    instance = StepDemand(model, world, chosen, batch, precision).planned_text(spec)
    plan = plan_for(model, spec, world, chosen, batch, precision, cache)  # the plan decode priced
    exact = exact_check(instance, plan, time_limit)
    circuits = realize(plan, spec, "contiguous")
    found = fabric_faults(circuits, spec) + validate(circuits, plan)
    if found:
        raise DeployError(f"validate: {len(found)} fault(s) in the realized circuits, the first: {found[0]}")
    xml = export_msccl(plan, circuits=circuits)  # the index maps threadblocks to the circuits' ports
    msccl = check_export(xml, MSCCL_DIR)
    other = decode_step(model, acc, baseline, world, chosen, batch, context, precision=precision, cache=cache)
    count = len(circuits.circuits)
    sample = None if (faults is None and count <= DEFAULT_FAULTS) else min(count, faults or DEFAULT_FAULTS)
    report = analyse_faults(circuits, plan, "circuit", None if sample == count else sample, 0)

    plan_text = dumps_plan(plan)
    plan_read = loads_plan(plan_text)  # the plan as report reads plan.json: the page is the one it makes
    circuits_text = dumps_circuits(circuits)
    steps = [("decode-fabric.json", step), ("decode-baseline.json", other)]
    decodes = [(name, step_to_dict(s)) for name, s in steps]
    faults_data = report_to_dict(report)
    check_decode(decodes, plan_read, "deploy")
    check_faults(faults_data, plan_read, "deploy", "faults.json")
    texts = {"instance.toml": instance, "plan.json": plan_text, "circuits.json": circuits_text,
             **{name: _json(data) for name, data in decodes}, "faults.json": _json(faults_data)}
    # the inputs as `ocsplan report` names them, so the page is the one report makes of these files
    inputs = [("PLAN", "plan.json"), ("--circuits", "circuits.json"), *(("--decode", n) for n, _ in decodes),
              ("--faults", "faults.json")]
    provenance = Provenance(__version__, date, tuple(source(option, name, texts[name].encode("utf-8"))
                                                     for option, name in inputs))
    page = build_report(plan_read, None, circuits=circuits, decode=steps, faults=report,
                        provenance=provenance)
    files = {**texts,
             **{f"{MSCCL_DIR}/{name}": text for name, text in xml.items()},
             **{f"{OCS_DIR}/{name}": text for name, text in ocs_files(circuits).items()}, "report.html": page}
    notes = () if not report.sampled else (f"faults.json: {report.summary.count} of {count} circuit faults, "
                                           f"sampled (seed 0)",)
    return Deployment(step, other, timed, plan, circuits, report, msccl, exact, files, notes)


def _schema(path: str, text: str) -> str | None:
    """The format a file declares (its JSON ``schema`` field), or None."""
    if not path.endswith(".json"):
        return None
    value = json.loads(text).get("schema")
    return value if isinstance(value, str) else None


def manifest_text(d: Deployment, inputs: Mapping[str, object]) -> str:
    """``manifest.json`` (schema ``ocsplan.deploy/1``): the inputs, the chosen split, the checks,
    and every file with its schema and SHA-256."""
    from .. import __version__

    s = d.step.split
    entries = [{"path": path, "schema": _schema(path, text), "bytes": len(text.encode()),
                "sha256": hashlib.sha256(text.encode()).hexdigest()} for path, text in sorted(d.files.items())]
    return _json({
        "schema": SCHEMA,
        "ocsplan": __version__,
        "inputs": dict(inputs),
        "split": {"kvp": s.kvp, "tpa": s.tpa, "ep": s.ep, "tpe": s.tpe},
        "splits_timed": d.timed,
        "exact": d.exact.to_dict(),
        "checks": {"validate": "ok", "msccl": f"{len(d.msccl)} file(s) checked",
                   "faults": f"{d.faults.summary.count} circuit fault(s){' sampled' if d.faults.sampled else ''}"},
        "notes": list(d.notes),
        "files": entries,
    })
