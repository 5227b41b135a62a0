"""The decode plan cache: the planner's plan of each step demand, and its analytical prices.

Native (EPS and hybrid) analytical prices are kept the same way
(:meth:`PlanCache.native_prices`), keyed by everything they are computed from.

Plans depend on the demand only (batch, split, the fabric's ports, latency and
rate), not on the context, so one plan serves every context of a sweep. A
:class:`PlanCache` holds them in memory (at most 512) and, with a directory, on
disk as ``<sha256 of the instance>.json`` with the analytical prices beside
them as ``<sha256 of instance and fabric>.times.json`` (files-layer
:class:`~ocsplan.files.CacheDir`). Pickled (to a worker process), a cache keeps
its directory and starts with empty memory. What the planner is asked to plan is
remembered across caches in the process (at most 512 texts): the heuristic is
deterministic, so two sweeps, or a sweep and a reference loop, plan each text once.

Trust model: the directory is untrusted input. Every entry is
``{"schema": "ocsplan.cache-entry/1", "key": <sha256 of what it was made from>,
"code": <fingerprint of the ocsplan sources>, "body": ...}``, read with the
project's bounded JSON reader (size, depth, duplicate keys, non-finite numbers).
An entry whose key or code differs (foreign, or made by other code), that is
damaged, wrong-typed or non-finite, or whose plan does not pass the plan checker
against its instance, is made again and renamed over; one that is not a regular
file (a FIFO, a device) is refused naming it (``CacheDir``).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..errors import OcsplanError
from ..files import CacheDir, code_fingerprint, read_json
from ..instance import loads_instance
from ..plan import Plan, dumps_plan, loads_plan
from ..planning.check import require_valid
from ..planning.registry import solve
from ..realization.fabrics import FabricSpec
from .pricing import Priced, price_planned

__all__ = ["ENTRY_SCHEMA", "MEMORY_PLANS", "PlanCache"]

ENTRY_SCHEMA = "ocsplan.cache-entry/1"

MEMORY_PLANS = 512  # plans held in memory; the memory is emptied when full


@lru_cache(maxsize=MEMORY_PLANS)
def _solved(text: str) -> Plan:
    """``ocsplan.solve`` of the instance ``text``, remembered in this process across caches: the
    heuristic is deterministic, so the plan another cache made of the same text (another sweep's, a
    reference loop's) is the plan planning again gives (but its ``solve_seconds``, as from disk)."""
    return solve(loads_instance(text, "<workload>"))


class PlanCache:
    """Plans by instance text, in memory and (with ``directory``) on disk."""

    def __init__(self, directory: Path | None = None) -> None:
        self.store = CacheDir.create(directory) if directory is not None else None
        self._memory: dict[str, Plan] = {}

    @property
    def directory(self) -> Path | None:
        return self.store.directory if self.store is not None else None

    def __reduce__(self) -> tuple[Any, ...]:
        return (PlanCache, (self.directory,))

    def clear_memory(self) -> None:
        """Forget the plans held in memory (the disk entries stay)."""
        self._memory.clear()

    def _get(self, name: str, key: str) -> Any:
        """The body of the entry ``name`` if it is sound and was made from ``key`` by this code, else None."""
        assert self.store is not None
        found = self.store.get(name)
        if found is None:
            return None
        try:
            entry = read_json(found, str(self.store.path(name)))
        except OcsplanError:
            return None
        if set(entry) != {"schema", "key", "code", "body"} or entry["schema"] != ENTRY_SCHEMA:
            return None
        if entry["key"] != key or entry["code"] != code_fingerprint():
            return None
        return entry["body"]

    def _put(self, name: str, key: str, body: object) -> None:
        assert self.store is not None
        self.store.put(name, json.dumps({"schema": ENTRY_SCHEMA, "key": key, "code": code_fingerprint(),
                                         "body": body}, sort_keys=True))

    def plan(self, text: str) -> Plan:
        """The planner's plan of the instance ``text`` (``ocsplan.solve``)."""
        plan = self._memory.get(text)
        key = hashlib.sha256(text.encode()).hexdigest()
        name = f"{key}.json"
        if plan is None and self.store is not None:
            body = self._get(name, key)
            if isinstance(body, dict):
                try:
                    found = loads_plan(json.dumps(body), str(self.store.path(name)))
                    require_valid(found, str(self.store.path(name)), loads_instance(text, "<workload>"))
                    plan = found
                except (OcsplanError, ValueError, TypeError):
                    plan = None  # a damaged or foreign entry is planned again
            if plan is None:
                plan = _solved(text)
                self._put(name, key, json.loads(dumps_plan(plan)))
        if plan is None:
            plan = _solved(text)
        if len(self._memory) >= MEMORY_PLANS:
            self._memory.clear()
        self._memory[text] = plan
        return plan

    def prices(self, text: str, spec: FabricSpec, network: str) -> Priced:
        """The plan of ``text`` priced on ``spec``; analytical prices are kept on disk beside the plan."""
        if network == "simlette" or self.store is None:  # OCS: one analytical model, whatever the EPS one
            return price_planned(self.plan(text), spec, network)
        key = hashlib.sha256((text + repr(spec)).encode()).hexdigest()
        name = f"{key}.times.json"
        times = _times(self._get(name, key))
        if times is not None:
            return Priced(times)
        priced = price_planned(self.plan(text), spec, network)
        self._put(name, key, _body(priced))
        return priced

    def native_prices(self, what: str, network: str, price: Callable[[], Priced]) -> Priced:
        """``price()``: native schedules' prices (EPS, hybrid), which carry no plan and no notes.

        ``what`` names everything they depend on (technology, instance text, demand rows,
        fabric); analytical prices are kept on disk under its hash and the network's name,
        simulated ones (and any without a directory) are priced each time (Simlette's own
        memo keeps them in memory)."""
        if network == "simlette" or self.store is None:
            return price()
        key = hashlib.sha256(f"native\n{network}\n{what}".encode()).hexdigest()
        name = f"{key}.times.json"
        times = _times(self._get(name, key))
        if times is not None:
            return Priced(times)
        priced = price()
        if priced.plan is not None or priced.notes:
            raise ValueError("native_prices keeps times only: a price with a plan or notes is not native")
        self._put(name, key, _body(priced))
        return priced


def _body(priced: Priced) -> dict[str, list[object]]:
    """The entry body of ``priced.times``: ``{"region/axis": [schedule, seconds]}`` (floats round-trip exactly)."""
    return {f"{r}/{a}": [sch, t] for (r, a), (sch, t) in sorted(priced.times.items())}


def _times(body: object) -> dict[tuple[str, str], tuple[str, float]] | None:
    """Analytical prices from a cache entry's body: ``{"region/axis": [schedule, seconds]}``, every
    time finite and non-negative; None if anything else."""
    if not isinstance(body, dict):
        return None
    out: dict[tuple[str, str], tuple[str, float]] = {}
    for key, value in body.items():
        region, slash, axis = key.partition("/")
        if not slash or not isinstance(value, list) or len(value) != 2:
            return None
        schedule, seconds = value
        if (not isinstance(schedule, str) or isinstance(seconds, bool) or not isinstance(seconds, int | float)
                or not math.isfinite(seconds) or seconds < 0):
            return None
        out[(region, axis)] = (schedule, float(seconds))
    return out
