"""The decode plan cache: the planner's plan of each step demand, and its analytical prices.

Plans depend on the demand only (batch, split, the fabric's ports, latency and
rate), not on the context, so one plan serves every context of a sweep. A
:class:`PlanCache` holds them in memory (at most 512) and, with a directory, on
disk as ``<sha256 of the instance>.json`` with the analytical prices beside
them as ``<sha256 of instance and fabric>.times.json`` (files-layer
:class:`~ocsplan.files.CacheDir`). A damaged entry is made again. Pickled (to
a worker process), a cache keeps its directory and starts with empty memory.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ..errors import PlanError
from ..files import CacheDir
from ..instance import loads_instance
from ..plan import Plan, dumps_plan, loads_plan
from ..planning.registry import solve
from ..realization.fabrics import FabricSpec
from .pricing import Priced, price_planned

__all__ = ["MEMORY_PLANS", "PlanCache"]

MEMORY_PLANS = 512  # plans held in memory; the memory is emptied when full


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

    def plan(self, text: str) -> Plan:
        """The planner's plan of the instance ``text`` (``ocsplan.solve``)."""
        plan = self._memory.get(text)
        name = f"{hashlib.sha256(text.encode()).hexdigest()}.json"
        if plan is None and self.store is not None:
            found = self.store.get(name)
            if found is not None:
                try:
                    plan = loads_plan(found, str(self.store.path(name)))
                except PlanError:
                    plan = None  # a damaged cache entry is planned again
        if plan is None:
            plan = solve(loads_instance(text, "<workload>"))
        if self.store is not None and not self.store.has(name):
            self.store.put(name, dumps_plan(plan))
        if len(self._memory) >= MEMORY_PLANS:
            self._memory.clear()
        self._memory[text] = plan
        return plan

    def prices(self, text: str, spec: FabricSpec, network: str) -> Priced:
        """The plan of ``text`` priced on ``spec``; analytical prices are kept on disk beside the plan."""
        if network == "simlette" or self.store is None:  # OCS: one analytical model, whatever the EPS one
            return price_planned(self.plan(text), spec, network)
        name = f"{hashlib.sha256((text + repr(spec)).encode()).hexdigest()}.times.json"
        found = self.store.get(name)
        if found is not None:
            try:
                data = json.loads(found)
                times = {tuple(k.split("/", 1)): (str(v[0]), float(v[1])) for k, v in data.items()}
                return Priced({(a, b): v for (a, b), v in times.items()})
            except (ValueError, TypeError, IndexError, AttributeError):
                pass  # a damaged entry is priced again
        priced = price_planned(self.plan(text), spec, network)
        self.store.put(name, json.dumps({f"{r}/{a}": [sch, t] for (r, a), (sch, t) in sorted(priced.times.items())},
                                        sort_keys=True))
        return priced
