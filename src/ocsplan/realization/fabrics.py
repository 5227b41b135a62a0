"""Physical fabric files: devices, racks, latency budget.

The catalogue ships as package data (``realization/data/fabrics/*.toml``, copied to
``simulate/fabrics/`` in a checkout); every command taking a fabric accepts a path or a
short name (:func:`fabric_names`): the file's stem, or the stem without its
``nvl576-`` prefix (``all-ocs`` = ``nvl576-all-ocs``).

One format serves the realizer (which circuits go through which OCS device
ports) and Simlette (per-hop latency, EPS queues). See README "Fabric files".

Per-hop latency follows the paper's Table 9 decomposition (App. C.6): a hop
through one EPS switch costs endpoint + protocol + 2 cables + switch = 810 ns in
every preset; replacing the switch by an OCS pass-through (10 ns) gives the
0.52 us per-phase latency of the nominal budget.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import InstanceError
from ..fields import unknown_keys
from ..files import read_toml, toml_data
from ..limits import (
    MAX_LATENCY_S,
    MAX_LINK_BPS,
    MAX_PORTS,
    MAX_WORLD,
    MIN_LATENCY_S,
    MIN_LINK_BPS,
    check_float,
    check_int,
)
from ..units import parse_rate, parse_time

__all__ = [
    "LATENCY_PRESETS",
    "FabricSpec",
    "LatencyBudget",
    "Level",
    "Overrides",
    "fabric_catalogue",
    "fabric_names",
    "load_fabric",
    "override_fabric",
    "parse_fabric",
]


@dataclass(frozen=True)
class LatencyBudget:
    """Per-hop latency components in seconds (paper §5.3, Table 9)."""

    endpoint: float  # accelerator side: SM->L2, L2->SM, MMU and TLB, both ends
    protocol: float  # scale-up port TX and RX, credit handling
    cable: float  # propagation per cable (accelerator<->device, device<->device)
    eps_switch: float  # EPS pin to pin: RX + core + TX
    ocs_switch: float  # OCS optical pass-through

    def hop(self, eps: int = 0, ocs: int = 0, cables: int | None = None) -> float:
        """Latency of one accelerator-to-accelerator hop through the given devices."""
        if cables is None:
            cables = eps + ocs + 1
        return self.endpoint + self.protocol + cables * self.cable + eps * self.eps_switch + ocs * self.ocs_switch


def _budget(switch_core: float, mmu_tlb: float) -> LatencyBudget:
    ns = 1e-9
    return LatencyBudget(
        endpoint=(70 + 70 + mmu_tlb) * ns,
        protocol=(30 + 70) * ns,
        cable=10 * ns,
        eps_switch=(70 + switch_core + 30) * ns,
        ocs_switch=10 * ns,
    )


SWITCH_RXTX = 100e-9  # EPS pin to pin minus its core: RX 70 ns + TX 30 ns (Table 9)

# Table 9: switch core 100/200/400 ns; MMU + TLB = 550 - switch total.
LATENCY_PRESETS: dict[str, LatencyBudget] = {
    "low": _budget(100, 350),
    "nominal": _budget(200, 250),
    "high": _budget(400, 50),
}


@dataclass(frozen=True)
class Level:
    """One switching level: devices of ``radix`` ports, ``down`` towards the level
    below (accelerators for level 1) and ``up`` towards the level above."""

    technology: str  # "ocs" or "eps"
    radix: int
    down: int
    up: int = 0


@dataclass(frozen=True)
class FabricSpec:
    """A physical scale-up fabric: accelerators with ports, racks, one or two levels."""

    name: str
    accelerators: int
    ports: int
    link: float  # bytes per second per port
    levels: tuple[Level, ...]
    latency: LatencyBudget
    rack_size: int  # accelerators under one set of level-1 devices (= accelerators if one level)
    serving_racks: int  # racks that carry the plan, from rack 0; the rest are spare
    description: str = ""
    source: str = ""

    @property
    def two_level(self) -> bool:
        return len(self.levels) == 2

    @property
    def racks(self) -> int:
        return self.accelerators // self.rack_size

    @property
    def serving(self) -> int:
        return self.serving_racks * self.rack_size


MAX_RADIX = 1 << 16  # ports of one switching device

_TOP = {"name", "description", "accelerators", "ports", "link", "latency", "racks", "level"}


def _fail(source: str) -> Callable[[str, str], InstanceError]:
    return lambda field, message: InstanceError(source, field, message)


def _integer(source: str, value: object, field: str, low: int = 1, high: int = MAX_RADIX) -> int:
    return check_int(value, _fail(source), field, low, high)


def parse_fabric(data: Mapping[str, Any], source: str = "<fabric>") -> FabricSpec:
    """Validate parsed TOML data of a fabric file."""
    fail = _fail(source)
    unknown_keys(data, _TOP, fail)
    for key in ("accelerators", "ports", "link", "level"):
        if key not in data:
            raise fail(key, "missing")
    name = data.get("name", Path(source).stem)
    accelerators = _integer(source, data["accelerators"], "accelerators", 2, MAX_WORLD)
    ports = _integer(source, data["ports"], "ports", 1, MAX_PORTS)
    try:
        link = parse_rate(data["link"])
    except ValueError as exc:
        raise fail("link", str(exc)) from None
    if not MIN_LINK_BPS <= link <= MAX_LINK_BPS:
        raise fail("link", f"must be between {MIN_LINK_BPS:g} and {MAX_LINK_BPS:g} B/s")
    latency = _parse_latency(data.get("latency", "nominal"), source)
    levels = _parse_levels(data["level"], source)
    rack_size, serving = _parse_racks(data.get("racks", {}), levels, accelerators, source)
    return FabricSpec(
        name=str(name),
        accelerators=accelerators,
        ports=ports,
        link=link,
        levels=tuple(levels),
        latency=latency,
        rack_size=rack_size,
        serving_racks=serving,
        description=str(data.get("description", "")),
        source=source,
    )


def _parse_latency(raw: object, source: str) -> LatencyBudget:
    """A preset name, or a table of Table 9 terms over a preset."""
    fail = _fail(source)
    if isinstance(raw, str):
        if raw not in LATENCY_PRESETS:
            raise fail("latency", f"unknown preset {raw!r} (use {', '.join(LATENCY_PRESETS)})")
        return LATENCY_PRESETS[raw]
    if not isinstance(raw, Mapping):
        raise fail("latency", f"expected a preset name or a table, got {raw!r}")
    unknown_keys(raw, ("preset", "endpoint", "protocol", "cable", "eps_switch", "ocs_switch"), fail, "latency")
    preset = raw.get("preset", "nominal")
    if preset not in LATENCY_PRESETS:
        raise fail("latency.preset", f"unknown preset {preset!r}")
    base = LATENCY_PRESETS[preset]
    values = {}
    for key in ("endpoint", "protocol", "cable", "eps_switch", "ocs_switch"):
        if key in raw:
            try:
                values[key] = parse_time(raw[key])
            except ValueError as exc:
                raise fail(f"latency.{key}", str(exc)) from None
            if values[key] > MAX_LATENCY_S:
                raise fail(f"latency.{key}", f"must be at most {MAX_LATENCY_S:g} s")
        else:
            values[key] = getattr(base, key)
    return LatencyBudget(**values)


def _parse_levels(raw: object, source: str) -> list[Level]:
    """One or two [[level]] tables."""
    fail = _fail(source)
    if not isinstance(raw, list) or not 1 <= len(raw) <= 2:
        raise fail("level", "expected one or two [[level]] tables")
    levels = []
    for idx, table in enumerate(raw):
        where = f"level[{idx}]"
        if not isinstance(table, Mapping):
            raise fail(where, "expected a table")
        unknown_keys(table, ("technology", "radix", "down", "up"), fail, where)
        tech = table.get("technology")
        if tech not in ("ocs", "eps"):
            raise fail(f"{where}.technology", f"expected \"ocs\" or \"eps\", got {tech!r}")
        radix = _integer(source, table.get("radix"), f"{where}.radix", 2)
        down = _integer(source, table.get("down", radix), f"{where}.down")
        up = _integer(source, table.get("up", 0), f"{where}.up", 0)
        if down + up > radix:
            raise fail(where, f"down {down} + up {up} exceed the radix {radix}")
        levels.append(Level(tech, radix, down, up))
    return levels


def _parse_racks(racks: object, levels: list[Level], accelerators: int, source: str) -> tuple[int, int]:
    """(rack size, serving racks); a two-level fabric must give the rack size."""
    fail = _fail(source)
    if not isinstance(racks, Mapping):
        raise fail("racks", "expected a table")
    unknown_keys(racks, ("size", "serving"), fail, "racks")
    if len(levels) == 2:
        if "size" not in racks:
            raise fail("racks.size", "missing (a two-level fabric groups accelerators in racks)")
        if levels[0].up == 0:
            raise fail("level[0].up", "a two-level fabric needs uplinks on level 1")
    rack_size = _integer(source, racks.get("size", accelerators), "racks.size", 1, accelerators)
    if accelerators % rack_size:
        raise fail("racks.size", f"{rack_size} does not divide {accelerators} accelerators")
    serving = _integer(source, racks.get("serving", accelerators // rack_size), "racks.serving", 1, accelerators)
    if serving > accelerators // rack_size:
        raise fail("racks.serving", f"{serving} racks but only {accelerators // rack_size} exist")
    return rack_size, serving


CATALOGUE_PREFIX = "nvl576-"  # a catalogue file's short name drops it: all-ocs = nvl576-all-ocs


def _shipped() -> Any:
    return resources.files("ocsplan.realization").joinpath("data").joinpath("fabrics")


def fabric_catalogue() -> dict[str, str]:
    """Every name of a shipped fabric to its file stem: the stem itself and the stem without
    :data:`CATALOGUE_PREFIX` (``nvl576-all-ocs`` and ``all-ocs``), by name."""
    stems = sorted(p.name[:-5] for p in _shipped().iterdir() if p.name.endswith(".toml"))
    names = {stem: stem for stem in stems}
    for stem in stems:
        short = stem.removeprefix(CATALOGUE_PREFIX)
        if short != stem and short not in names:
            names[short] = stem
    return dict(sorted(names.items()))


def fabric_names() -> list[str]:
    """The short name of each shipped fabric (one per file), in file order."""
    return sorted({stem: stem.removeprefix(CATALOGUE_PREFIX) for stem in fabric_catalogue().values()}.values())


def load_fabric(spec: str | Path, option: str = "") -> FabricSpec:
    """A fabric by path (a ``.toml`` name, a name with a ``/``, anything that exists) or by catalogue name
    (:func:`fabric_catalogue`); errors name file and field, an unknown name names ``option``
    (the command-line option that gave it) and lists the known names."""
    text = str(spec)
    path = Path(text)
    if path.suffix == ".toml" or "/" in text or os.path.lexists(text):  # a FIFO or a directory is refused there
        return parse_fabric(read_toml(path), text)
    stem = fabric_catalogue().get(text)
    if stem is None:
        raise InstanceError(option or text, "", f"unknown fabric {text!r} (catalogue: {', '.join(fabric_names())}; "
                                                f"or a .toml path)")
    where = f"fabrics/{stem}.toml"
    return parse_fabric(toml_data(_shipped().joinpath(f"{stem}.toml").read_text(encoding="utf-8"), where), where)


@dataclass(frozen=True)
class Overrides:
    """Command-line overrides of a fabric file (App. E sweeps); None keeps the file's value.

    ``switch_core``: EPS switch-core latency; the 810 ns switch hop stays constant, so
    the endpoint (MMU + TLB) gives or takes the difference (App. E "switch latency
    attribution"). ``accelerator``: egress + ingress latency = endpoint + protocol
    (490 ns nominal); the endpoint takes the change, the switch hop grows or shrinks with it.
    Applied in that order, so both given values hold."""

    link: float | None = None  # bytes per second per port
    ports: int | None = None  # ports per accelerator (= rails of a rail-optimized fabric)
    switch_core: float | None = None  # seconds
    accelerator: float | None = None  # seconds

    @property
    def empty(self) -> bool:
        return self == Overrides()


def override_fabric(spec: FabricSpec, over: Overrides) -> FabricSpec:
    """``spec`` with the overrides applied, each validated like the fabric file field it replaces."""
    def fail(field: str, message: str) -> InstanceError:
        return InstanceError(field, "", message)

    result = spec
    if over.link is not None:
        link = check_float(over.link, fail, "--link-rate", MIN_LINK_BPS, MAX_LINK_BPS)
        result = replace(result, link=link)
    if over.ports is not None:
        ports = check_int(over.ports, fail, "--radix", 1, MAX_PORTS)
        result = replace(result, ports=ports)
    budget = result.latency
    if over.switch_core is not None:
        core = check_float(over.switch_core, fail, "--switch-latency", MIN_LATENCY_S, MAX_LATENCY_S)
        eps_switch = SWITCH_RXTX + core
        endpoint = budget.endpoint - (eps_switch - budget.eps_switch)
        if endpoint < 0:
            raise fail("--switch-latency", f"{core * 1e9:g} ns leaves a negative endpoint latency (the switch "
                                           f"hop of {budget.hop(eps=1) * 1e9:g} ns stays constant)")
        budget = replace(budget, endpoint=endpoint, eps_switch=eps_switch)
    if over.accelerator is not None:
        total = check_float(over.accelerator, fail, "--accelerator-latency", MIN_LATENCY_S, MAX_LATENCY_S)
        if total < budget.protocol:
            raise fail("--accelerator-latency", f"{total * 1e9:g} ns is below the {budget.protocol * 1e9:g} ns "
                                                f"of the port protocol it includes")
        budget = replace(budget, endpoint=total - budget.protocol)
    return replace(result, latency=budget)
