"""Study results and their CSV cache: one row per (instance, method), keyed by instance content hash
and a fingerprint of the planner code, so a rerun solves only what changed."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from filelock import FileLock

from ..errors import InstanceError
from ..files import code_fingerprint, read_text, write_atomic
from ..instance import Instance, instance_document
from ..plan import Plan
from ..planning.registry import EXACT_METHODS

__all__ = [
    "CSV_COLUMNS",
    "EXACT_METHODS",
    "TOLERANCE",
    "Result",
    "code_fingerprint",
    "demand_rows",
    "dumps_compare_json",
    "dumps_demand_rows",
    "dumps_results",
    "dumps_study_json",
    "instance_digest",
    "lock_path",
    "read_results",
    "read_study",
    "study_lock",
    "table_rows",
    "update_results",
    "write_results",
]



# relative tolerance under which two objectives count as equal
TOLERANCE = 1e-6


@dataclass(frozen=True)
class Result:
    """One method's answer on one instance (``error`` set when it failed)."""

    instance: str
    path: str
    digest: str
    n: int
    meshes: int
    demands: int
    ports: int
    method: str
    status: str
    objective_s: float | None
    bound_s: float | None
    seconds: float
    ports_used: int | None
    time_limit: float | None
    error: str = ""
    code: str = ""  # fingerprint of the planner code that produced the row
    source: str = ""  # the planner whose plan this is (Plan.source): "heuristic" for a returned seed


CSV_COLUMNS = (
    "instance",
    "n",
    "meshes",
    "demands",
    "L",
    "method",
    "status",
    "source",
    "objective_s",
    "bound_s",
    "gap",
    "bound_gap",
    "seconds",
    "ports_used",
    "time_limit",
    "flag",
    "better",
    "hash",
    "code",
    "path",
    "error",
)


def instance_digest(instance: Instance) -> str:
    """Content hash of an instance: of its data as canonical JSON, so neither the input file's
    formatting nor the TOML writer's (tomli-w's version) counts."""
    text = json.dumps(instance_document(instance), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _fmt(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def dumps_results(results: Sequence[Result]) -> str:
    """CSV text of results (columns :data:`CSV_COLUMNS`)."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in table_rows(results):
        writer.writerow({k: _fmt(row[k]) for k in CSV_COLUMNS})
    return buf.getvalue()


def write_results(results: Sequence[Result], path: str | Path) -> None:
    """Write exactly ``results`` (``compare --csv``); a file that is not a study CSV is refused."""
    _check_study_file(path)
    write_atomic(path, dumps_results(results))


def lock_path(path: str | Path) -> Path:
    """The lock file of a study CSV: ``.NAME.lock`` beside it (the CSV itself is replaced on
    every write, so the lock lives in a file that stays put)."""
    target = Path(path)
    return target.with_name(f".{target.name}.lock")


@contextmanager
def study_lock(path: str | Path) -> Iterator[None]:
    """Exclusive lock of the study CSV at ``path``: two studies on one ``--out`` take turns.

    :class:`filelock.FileLock` (``flock`` on POSIX, ``msvcrt.locking`` on Windows) on
    :func:`lock_path`; the operating system releases it when the process ends, so a killed
    study leaves no stale lock, only the empty lock file."""
    try:
        lock = FileLock(lock_path(path))
        lock.acquire()
    except OSError as exc:
        raise InstanceError(str(path), "", f"cannot lock: {exc.strerror or exc}") from None
    try:
        yield
    finally:
        lock.release()


def update_results(results: Sequence[Result], path: str | Path) -> None:
    """Merge ``results`` into the study CSV at ``path`` under :func:`study_lock`.

    Rows are keyed by (instance hash, method): this run's rows replace their
    keys, every other row of every earlier or concurrent run is kept (first, in
    file order); this run's rows follow in the order given, so the file does not
    depend on the order in which rows finished."""
    with study_lock(path):
        mine = {(r.digest, r.method) for r in results}
        kept = [r for r in read_study(path)[0] if (r.digest, r.method) not in mine]
        write_atomic(path, dumps_results([*kept, *results]))


def _num(text: str) -> float | None:
    return float(text) if text not in ("", None) else None


def _check_study_file(path: str | Path) -> None:
    target = Path(path)
    if target.is_file():
        try:
            with target.open(encoding="utf-8", newline="") as handle:
                first = handle.readline()
        except (OSError, UnicodeDecodeError):
            first = ""
        if first.rstrip("\r\n") != ",".join(CSV_COLUMNS):
            raise InstanceError(str(path), "header", "not a study CSV; refusing to overwrite it")


def read_results(path: str | Path) -> list[Result]:
    """Results from a study CSV (the cache); a missing file gives none."""
    return read_study(path)[0]


def read_study(path: str | Path) -> tuple[list[Result], int]:
    """(results, incomplete rows dropped) of a study CSV; a missing file gives none.

    A file cut off mid-row (an interrupted write by another tool, a full disk)
    keeps its complete rows; the cut-off last line is dropped and counted. A file
    whose header is not a study's is refused (exit status 2): it is not ours."""
    target = Path(path)
    if not target.exists():
        return [], 0
    text = read_text(target, lambda msg: InstanceError(str(path), "", msg))
    if not text:
        return [], 0
    header, _, body = text.partition("\n")
    if header.rstrip("\r") != ",".join(CSV_COLUMNS):
        raise InstanceError(str(path), "header", "not a study CSV (columns differ); refusing to use or overwrite it")
    dropped = 0
    if body and not body.endswith("\n"):
        body = body[: body.rfind("\n") + 1]
        dropped = 1
    out = []
    for line, row in enumerate(csv.DictReader(io.StringIO(body), fieldnames=CSV_COLUMNS), start=2):
        try:
            if None in row or any(row[k] is None for k in CSV_COLUMNS):
                raise ValueError(f"{len(row)} fields, expected {len(CSV_COLUMNS)}")
            limit = _num(row["time_limit"])
            used = _num(row["ports_used"])
            out.append(
                Result(
                    instance=row["instance"],
                    path=row["path"],
                    digest=row["hash"],
                    n=int(row["n"]),
                    meshes=int(row["meshes"]),
                    demands=int(row["demands"]),
                    ports=int(row["L"]),
                    method=row["method"],
                    status=row["status"],
                    objective_s=_num(row["objective_s"]),
                    bound_s=_num(row["bound_s"]),
                    seconds=float(row["seconds"]),
                    ports_used=None if used is None else int(used),
                    time_limit=limit,
                    error=row.get("error", "") or "",
                    code=row.get("code", "") or "",
                    source=row.get("source", "") or "",
                )
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise InstanceError(str(path), f"line {line}", f"not a study row: {exc}") from None
    return out, dropped


def _optimum(rows: Sequence[Result]) -> float | None:
    proven = [r.objective_s for r in rows if r.status == "optimal" and r.objective_s is not None]
    return min(proven) if proven else None


def _best_bound(rows: Sequence[Result]) -> float | None:
    bounds = [r.bound_s for r in rows if r.bound_s is not None]
    return max(bounds) if bounds else None


def _flag(row: Result, peers: Sequence[Result], optimum: float | None) -> str:
    if row.objective_s is None:
        return ""
    flags = []
    if optimum is not None and row.objective_s > optimum * (1 + TOLERANCE):
        flags.append("worse than proven optimum")
    if row.status == "optimal":
        better = [p for p in peers if p.objective_s is not None and p.objective_s < row.objective_s * (1 - TOLERANCE)]
        if better:
            flags.append(f"claims optimal but {better[0].method} is better")
    return "; ".join(flags)


def _better(row: Result, peers: Sequence[Result]) -> str:
    """"best" if no other method of the instance found a smaller objective, "tie" if
    another found the same (within TOLERANCE), else empty."""
    if row.objective_s is None:
        return ""
    others = [p.objective_s for p in peers if p is not row and p.method != row.method and p.objective_s is not None]
    if any(o < row.objective_s * (1 - TOLERANCE) for o in others):
        return ""
    if any(o <= row.objective_s * (1 + TOLERANCE) for o in others):
        return "tie"
    return "best" if others else ""


def table_rows(results: Sequence[Result]) -> list[dict[str, Any]]:
    """CSV rows: results plus L, gap (to the proven optimum, at least 0), bound_gap, flag,
    better (the method with the smallest objective on the instance), and below_optimum
    (not a column: the objective beat the proven optimum, so the gap 0 is a clamp)."""
    by_instance: dict[str, list[Result]] = {}
    for r in results:
        by_instance.setdefault(r.digest, []).append(r)
    rows = []
    for r in results:
        peers = by_instance[r.digest]
        optimum = _optimum(peers)
        bound = _best_bound(peers)
        obj = r.objective_s
        raw = None if obj is None or optimum is None or optimum <= 0 else (obj - optimum) / optimum
        gap = None if raw is None else max(0.0, raw)
        bound_gap = None if obj is None or bound is None or bound <= 0 else max(0.0, (obj - bound) / bound)
        rows.append(
            {
                "instance": r.instance,
                "n": r.n,
                "meshes": r.meshes,
                "demands": r.demands,
                "L": r.ports,
                "method": r.method,
                "status": r.status,
                "source": r.source,
                "objective_s": obj,
                "bound_s": r.bound_s,
                "gap": gap,
                "bound_gap": bound_gap,
                "seconds": r.seconds,
                "ports_used": r.ports_used,
                "time_limit": r.time_limit,
                "flag": _flag(r, peers, optimum),
                "better": _better(r, peers),
                "hash": r.digest,
                "code": r.code,
                "path": r.path,
                "error": r.error,
                # below a proven optimum by more than TOLERANCE (a solver's own optimality
                # tolerance, e.g. HiGHS's relative MIP gap): the gap is clamped to 0 and the
                # optimum's row is flagged; not a CSV column
                "below_optimum": raw is not None and raw < -TOLERANCE,
            }
        )
    return rows


# -- per-demand comparison (compare --demands) ----------------------------------------------


def demand_rows(instance: Instance, plans: Mapping[str, Plan]) -> list[dict[str, Any]]:
    """One row per demand of ``instance``: each method's schedule, phases and time, and
    ``better``: the method with the smallest time (``tie`` within TOLERANCE)."""
    methods = list(plans)
    rows = []
    for m, i, k, demand in instance.demands():
        row: dict[str, Any] = {
            "instance": instance.name, "mesh": instance.meshes[m].name, "axis": i, "demand": k,
            "collective": demand.collective, "payload_bytes": demand.payload, "weight": demand.weight,
        }
        times: dict[str, float] = {}
        for method in methods:
            d = plans[method].meshes[m].axes[i].demands[k]
            row[f"{method}_schedule"] = d.schedule
            row[f"{method}_phases"] = d.phases
            row[f"{method}_time_s"] = d.time_s
            times[method] = d.time_s
        best = min(times.values(), default=0.0)
        winners = [x for x, t in times.items() if t <= best * (1 + TOLERANCE)]
        row["better"] = "" if not times else winners[0] if len(winners) == 1 else "tie"
        rows.append(row)
    return rows


def dumps_demand_rows(rows: Sequence[Mapping[str, Any]]) -> str:
    """CSV text of :func:`demand_rows` (columns from the first row; methods may differ per instance)."""
    columns: list[str] = []
    for row in rows:
        columns.extend(c for c in row if c not in columns)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({c: _fmt(row.get(c)) for c in columns})
    return buf.getvalue()


# -- machine-readable rows (study --json, compare --json) -----------------------------------


def _json_rows(results: Sequence[Result]) -> list[dict[str, Any]]:
    """:func:`table_rows` with the CSV's columns in its order; absent values (and a
    non-finite number, which JSON cannot carry) are ``null``."""
    return [{k: _finite(row[k]) for k in CSV_COLUMNS} for row in table_rows(results)]


def _finite(value: Any) -> Any:
    return None if isinstance(value, float) and not math.isfinite(value) else value


def _dumps(value: Mapping[str, Any]) -> str:
    return json.dumps(value, indent=1, allow_nan=False) + "\n"


def dumps_study_json(results: Sequence[Result], instances: int) -> str:
    """``ocsplan.study/1`` JSON: the study's rows (the CSV's columns, numbers as numbers)."""
    return _dumps({"schema": "ocsplan.study/1", "instances": instances, "rows": _json_rows(results)})


def dumps_compare_json(results: Sequence[Result], demands: Sequence[Mapping[str, Any]] | None = None,
                       resilience: Sequence[Mapping[str, Any]] | None = None) -> str:
    """``ocsplan.compare/1`` JSON: one row per (instance, method) as in ``compare --csv``, and,
    when the per-demand comparison ran (``--demands``), its rows under ``demands``; with
    ``--resilience`` each plan's worst single circuit fault under ``resilience``."""
    value: dict[str, Any] = {"schema": "ocsplan.compare/1", "rows": _json_rows(results)}
    if demands is not None:
        value["demands"] = [{k: _finite(v) for k, v in row.items()} for row in demands]
    if resilience is not None:
        value["resilience"] = [{k: _finite(v) for k, v in row.items()} for row in resilience]
    return _dumps(value)
