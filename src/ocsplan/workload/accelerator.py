"""Accelerator files: peak FP4 throughput, HBM, ports, launch cost, power, efficiencies.

``data/accelerators/{b200,rx00}.toml`` ship the paper's Table 11 devices. The
two efficiency tables are step functions of (upper bound, efficiency) pairs as
in Calculon: eta_F on a kernel's FLOPs, eta_D on the HBM traffic of a kernel,
counted in bytes (``efficiency_size = "bytes"``, App. B.3 as printed) or in
elements (``"elements"``; the shipped files, see README). Bounds must
increase, efficiencies lie in (0, 1], the last entry has no bound.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import InstanceError
from ..fields import unknown_keys
from ..files import toml_data
from ..units import parse_bytes, parse_flop_rate, parse_flops, parse_power, parse_rate, parse_time
from .model import read_document

__all__ = ["Accelerator", "StepTable", "accelerator_catalogue", "load_accelerator", "parse_accelerator"]

_MAX_STEPS = 64
_KEYS = {"name", "description", "peak_flops", "hbm_bandwidth", "hbm_capacity", "ports", "link",
         "launch", "power", "efficiency_size", "memory_efficiency", "compute_efficiency"}


@dataclass(frozen=True)
class StepTable:
    """eta(x) = efficiencies[i] for the first bound >= x; the last efficiency above all bounds."""

    bounds: tuple[float, ...]
    efficiencies: tuple[float, ...]  # one more than bounds

    def __call__(self, size: float) -> float:
        return self.efficiencies[bisect.bisect_left(self.bounds, size)]


@dataclass(frozen=True)
class Accelerator:
    name: str
    peak_flops: float  # FP4 FLOP/s (P)
    hbm_bandwidth: float  # B/s (M)
    hbm_capacity: int  # bytes
    ports: int
    link: float  # B/s per port, unidirectional
    launch: float  # s per execution window (t_l)
    power: float  # W per XPU, host share included
    memory_efficiency: StepTable
    compute_efficiency: StepTable
    efficiency_size: str = "bytes"  # or "elements"
    description: str = ""
    source: str = ""


def _table(raw: object, field: str, source: str, parse: Callable[[object], float]) -> StepTable:
    def fail(where: str, message: str) -> InstanceError:
        return InstanceError(source, where, message)

    if not isinstance(raw, list) or not raw:
        raise fail(field, "expected a list of { up_to, efficiency } tables")
    if len(raw) > _MAX_STEPS:
        raise fail(field, f"{len(raw)} steps exceed the limit of {_MAX_STEPS}")
    bounds: list[float] = []
    effs: list[float] = []
    for i, step in enumerate(raw):
        where = f"{field}[{i}]"
        if not isinstance(step, Mapping):
            raise fail(where, "expected a table { up_to, efficiency }")
        unknown_keys(step, ("up_to", "efficiency"), fail, where)
        eff = step.get("efficiency")
        if isinstance(eff, bool) or not isinstance(eff, int | float) or not 0 < eff <= 1:
            raise fail(f"{where}.efficiency", f"must lie in (0, 1], got {eff!r}")
        effs.append(float(eff))
        last = i == len(raw) - 1
        if "up_to" not in step:
            if not last:
                raise fail(f"{where}.up_to", "missing (only the last step has no bound)")
            continue
        if last:
            raise fail(f"{where}.up_to", "the last step has no bound (it covers everything above)")
        try:
            bound = parse(step["up_to"])
        except ValueError as exc:
            raise fail(f"{where}.up_to", str(exc)) from None
        if bounds and bound <= bounds[-1]:
            raise fail(f"{where}.up_to", f"bounds must increase, {bound:g} after {bounds[-1]:g}")
        bounds.append(bound)
    return StepTable(tuple(bounds), tuple(effs))


def _size_bound(value: object) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        if not value > 0:
            raise ValueError(f"bound must be positive, got {value!r}")
        return float(value)
    return float(parse_bytes(value))


def parse_accelerator(data: Mapping[str, Any], source: str = "<accelerator>", name: str = "") -> Accelerator:
    """Validate an accelerator table (errors name file and field)."""

    def fail(field: str, message: str) -> InstanceError:
        return InstanceError(source, field, message)

    unknown_keys(data, _KEYS, fail)
    for key in sorted(_KEYS - {"name", "description", "efficiency_size"}):
        if key not in data:
            raise fail(key, "missing")

    def get(key: str, parse: Callable[[object], Any]) -> Any:
        try:
            return parse(data[key])
        except ValueError as exc:
            raise fail(key, str(exc)) from None

    ports = data["ports"]
    if isinstance(ports, bool) or not isinstance(ports, int) or not 1 <= ports <= 4096:
        raise fail("ports", f"expected an integer in 1..4096, got {ports!r}")
    size = data.get("efficiency_size", "bytes")
    if size not in ("bytes", "elements"):
        raise fail("efficiency_size", f"expected \"bytes\" or \"elements\", got {size!r}")
    return Accelerator(
        name=str(data.get("name", name or Path(source).stem)),
        peak_flops=get("peak_flops", parse_flop_rate),
        hbm_bandwidth=get("hbm_bandwidth", parse_rate),
        hbm_capacity=get("hbm_capacity", parse_bytes),
        ports=ports,
        link=get("link", parse_rate),
        launch=get("launch", parse_time),
        power=get("power", parse_power),
        memory_efficiency=_table(data["memory_efficiency"], "memory_efficiency", source, _size_bound),
        compute_efficiency=_table(data["compute_efficiency"], "compute_efficiency", source, parse_flops),
        efficiency_size=size,
        description=str(data.get("description", "")),
        source=source,
    )


def accelerator_catalogue() -> list[str]:
    folder = resources.files("ocsplan.workload").joinpath("data").joinpath("accelerators")
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml"))


def load_accelerator(spec: str | Path) -> Accelerator:
    """A catalogue name (b200, rx00) or a TOML path."""
    text = str(spec)
    path = Path(text)
    if path.suffix == ".toml" or path.is_file():
        return parse_accelerator(read_document(path, text), text, path.stem)
    names = accelerator_catalogue()
    if text not in names:
        raise InstanceError(text, "accelerator", f"unknown accelerator (catalogue: {', '.join(names)}; "
                                                 f"or a .toml path)")
    where = f"accelerators/{text}.toml"
    shipped = resources.files("ocsplan.workload").joinpath("data").joinpath("accelerators").joinpath(f"{text}.toml")
    return parse_accelerator(toml_data(shipped.read_text(encoding="utf-8"), where), where, text)
