"""Instance files: one deployment's fabric and the collective demands of its meshes.

The reader validates everything and reports the first problem as
``file: field: message`` (an :class:`InstanceError`), so the CLI can print one
line and exit with status 2.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import InstanceError
from .fields import unknown_keys
from .files import read_toml, toml_data, write_atomic
from .limits import (
    MAX_AXES,
    MAX_BIT_TYPES,
    MAX_DEMANDS,
    MAX_LATENCY_S,
    MAX_LINK_BPS,
    MAX_MESHES,
    MAX_PAYLOAD,
    MAX_PORTS,
    MAX_TOTAL_DEMANDS,
    MAX_TREE_ROUTE_RANKS,
    MAX_WEIGHT,
    MAX_WORLD,
    MIN_LATENCY_S,
    MIN_LINK_BPS,
)
from .schedules import COLLECTIVES, SCHEDULES
from .units import parse_bytes, parse_rate, parse_time

__all__ = [
    "Axis",
    "Budget",
    "Demand",
    "Instance",
    "Mesh",
    "dumps_instance",
    "instance_document",
    "load_instance",
    "loads_instance",
    "parse_instance",
    "require_shared_host",
    "shared_host_problem",
    "write_instances",
]


@dataclass(frozen=True)
class Demand:
    """One collective an axis runs: payload (buffer size sigma) and calls per step."""

    collective: str
    payload: int
    weight: float = 1.0
    schedule: str = "auto"


@dataclass(frozen=True)
class Axis:
    """A mesh axis of ``size`` ranks and its demands (a power of two for the
    shared-host planners; any size for ``--method stacked``)."""

    size: int
    demands: tuple[Demand, ...] = ()

    @property
    def bits(self) -> int:
        return self.size.bit_length() - 1


@dataclass(frozen=True)
class Mesh:
    """A device mesh over all accelerators; its axes partition the rank bits."""

    name: str
    shape: tuple[int, ...]
    axes: tuple[Axis, ...]

    @property
    def bit_classes(self) -> tuple[tuple[int, ...], ...]:
        """The axes whose bits the partition search tells apart: each axis with demands, and
        the axes without demands as one class (their bits are interchangeable); () when the
        mesh has fewer than two classes or no demand (its partition is then fixed)."""
        active = [(i,) for i, ax in enumerate(self.axes) if ax.demands]
        idle = tuple(i for i, ax in enumerate(self.axes) if not ax.demands)
        classes = tuple(active) + ((idle,) if idle else ())
        return classes if len(self.axes) >= 2 and len(classes) >= 2 and active else ()


@dataclass(frozen=True)
class Budget:
    """Accelerator count, ports per accelerator, per-phase latency and link rate."""

    world: int
    ports: int
    latency: float  # seconds per phase (lambda)
    link: float  # bytes per second of one circuit (R)

    @property
    def n(self) -> int:
        return self.world.bit_length() - 1


@dataclass(frozen=True)
class Instance:
    """A deployment: its port budget (the file's ``[fabric]`` table) and meshes.

    ``source`` names the file it came from.
    """

    name: str
    budget: Budget
    meshes: tuple[Mesh, ...]
    description: str = ""
    source: str = ""

    @property
    def n(self) -> int:
        return self.budget.n

    def demands(self) -> list[tuple[int, int, int, Demand]]:
        """All demands as (mesh index, axis index, demand index, demand)."""
        return [
            (m, i, k, d)
            for m, mesh in enumerate(self.meshes)
            for i, axis in enumerate(mesh.axes)
            for k, d in enumerate(axis.demands)
        ]


_TOP_KEYS = {"name", "description", "fabric", "mesh"}
_FABRIC_KEYS = {"world", "ports", "latency", "link"}
_MESH_KEYS = {"name", "shape", "axes"}
_DEMAND_KEYS = {"collective", "payload", "weight", "schedule"}
_AXIS_KEYS = _DEMAND_KEYS | {"demands"}


def _big(value: int) -> str:
    """An integer for a message: huge ones by their size only."""
    return f"an integer of {value.bit_length()} bits" if value.bit_length() > 64 else str(value)


def _is_power_of_two(value: int) -> bool:
    return value >= 1 and value & (value - 1) == 0


class _Reader:
    """Walks the parsed TOML, raising InstanceError with the field path."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, field: str, message: str) -> InstanceError:
        return InstanceError(self.source, field, message)

    def table(self, value: object, field: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(field, f"expected a table, got {value!r}")
        return value

    def keys(self, table: Mapping[str, Any], allowed: set[str], field: str) -> None:
        """Refuse an unknown key, naming the nearest allowed one."""
        unknown_keys(table, allowed, self.fail, field)

    def integer(self, value: object, field: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(field, f"expected an integer, got {value!r}")
        return value

    def convert(self, parse: Any, value: object, field: str) -> Any:
        try:
            return parse(value)
        except ValueError as exc:
            raise self.fail(field, str(exc)) from None

    def budget(self, value: object) -> Budget:
        table = self.table(value, "fabric")
        self.keys(table, _FABRIC_KEYS, "fabric")
        for key in sorted(_FABRIC_KEYS):
            if key not in table:
                raise self.fail(f"fabric.{key}", "missing")
        world = self.integer(table["world"], "fabric.world")
        if world < 2 or world > MAX_WORLD:
            raise self.fail("fabric.world", f"must be in 2..{MAX_WORLD} (2^20), got {_big(world)}")
        ports = self.integer(table["ports"], "fabric.ports")
        if not 1 <= ports <= MAX_PORTS:
            raise self.fail("fabric.ports", f"must be in 1..{MAX_PORTS}, got {_big(ports)}")
        latency = self.convert(parse_time, table["latency"], "fabric.latency")
        if not MIN_LATENCY_S <= latency <= MAX_LATENCY_S:
            raise self.fail(
                "fabric.latency", f"must be between {MIN_LATENCY_S:g} s and {MAX_LATENCY_S:g} s"
            )
        link = self.convert(parse_rate, table["link"], "fabric.link")
        if not MIN_LINK_BPS <= link <= MAX_LINK_BPS:
            raise self.fail(
                "fabric.link", f"must be between {MIN_LINK_BPS:g} and {MAX_LINK_BPS:g} B/s"
            )
        return Budget(world=world, ports=ports, latency=latency, link=link)

    def demand(self, table: Mapping[str, Any], field: str) -> Demand | None:
        if "collective" not in table:
            raise self.fail(f"{field}.collective", "missing")
        collective = table["collective"]
        if collective == "none":
            extra = set(table) - {"collective"}
            if extra:
                raise self.fail(f"{field}.{min(extra)}", "not allowed with collective = \"none\"")
            return None
        if collective not in COLLECTIVES:
            raise self.fail(
                f"{field}.collective",
                f"unknown collective {collective!r} (use {', '.join((*COLLECTIVES, 'none'))})",
            )
        if "payload" not in table:
            raise self.fail(f"{field}.payload", "missing")
        payload = self.convert(parse_bytes, table["payload"], f"{field}.payload")
        if payload > MAX_PAYLOAD:
            raise self.fail(f"{field}.payload", f"must be at most {MAX_PAYLOAD} bytes (1 PiB)")
        weight_raw = table.get("weight", 1)
        if isinstance(weight_raw, bool) or not isinstance(weight_raw, int | float):
            raise self.fail(f"{field}.weight", f"expected a number, got {weight_raw!r}")
        if isinstance(weight_raw, int) and weight_raw > MAX_WEIGHT:
            raise self.fail(f"{field}.weight", f"must be at most {MAX_WEIGHT:g}, got {_big(weight_raw)}")
        if not weight_raw > 0 or weight_raw != weight_raw or weight_raw > MAX_WEIGHT:
            raise self.fail(f"{field}.weight", f"must be positive and at most {MAX_WEIGHT:g}, got {weight_raw!r}")
        schedule = table.get("schedule", "auto")
        if not isinstance(schedule, str):
            raise self.fail(f"{field}.schedule", f"expected a name, got {schedule!r}")
        if schedule != "auto":
            known = SCHEDULES.get(schedule)
            if known is None:
                raise self.fail(
                    f"{field}.schedule",
                    f"unknown schedule {schedule!r} (known: {', '.join(sorted(SCHEDULES))})",
                )
            if known.collective != collective:
                raise self.fail(
                    f"{field}.schedule",
                    f"{schedule!r} is an {known.collective} schedule, not {collective}",
                )
        return Demand(collective, payload, float(weight_raw), schedule)

    def axis(self, value: object, size: int, field: str) -> Axis:
        table = self.table(value, field)
        self.keys(table, _AXIS_KEYS, field)
        demands: list[Demand] = []
        if "demands" in table:
            clash = set(table) & _DEMAND_KEYS
            if clash:
                raise self.fail(f"{field}.{min(clash)}", "give either demands = [...] or one demand")
            raw = table["demands"]
            if not isinstance(raw, list):
                raise self.fail(f"{field}.demands", f"expected a list, got {raw!r}")
            if len(raw) > MAX_DEMANDS:
                raise self.fail(f"{field}.demands", f"{len(raw)} demands, the limit is {MAX_DEMANDS}")
            for k, item in enumerate(raw):
                where = f"{field}.demands[{k}]"
                sub = self.table(item, where)
                self.keys(sub, _DEMAND_KEYS, where)
                demand = self.demand(sub, where)
                if demand is not None:
                    self.routable(demand, size, where)
                    demands.append(demand)
        elif table:
            demand = self.demand(table, field)
            if demand is not None:
                self.routable(demand, size, field)
                demands.append(demand)
        return Axis(size=size, demands=tuple(demands))

    def routable(self, demand: Demand, size: int, field: str) -> None:
        """An explicit tree-route is priced from its per-rank routes on every shape tried:
        bounded to axes of at most :data:`MAX_TREE_ROUTE_RANKS` ranks."""
        if demand.schedule == "tree-route" and size > MAX_TREE_ROUTE_RANKS:
            raise self.fail(f"{field}.schedule", f"tree-route is limited to axes of at most"
                            f" {MAX_TREE_ROUTE_RANKS} ranks (this one has {size}): use schedule = \"auto\"")

    def mesh(self, value: object, index: int, world: int) -> Mesh:
        field = f"mesh[{index}]"
        table = self.table(value, field)
        self.keys(table, _MESH_KEYS, field)
        name = table.get("name", f"mesh{index}")
        if not isinstance(name, str) or not name:
            raise self.fail(f"{field}.name", f"expected a non-empty string, got {name!r}")
        if "shape" not in table:
            raise self.fail(f"{field}.shape", "missing")
        shape_raw = table["shape"]
        if not isinstance(shape_raw, list) or not shape_raw:
            raise self.fail(f"{field}.shape", f"expected a list of sizes, got {shape_raw!r}")
        if len(shape_raw) > MAX_AXES:
            raise self.fail(f"{field}.shape", f"{len(shape_raw)} axes, the limit is {MAX_AXES}")
        shape: list[int] = []
        for j, size in enumerate(shape_raw):
            size = self.integer(size, f"{field}.shape[{j}]")
            if not 1 <= size <= world:
                raise self.fail(f"{field}.shape[{j}]", f"must be in 1..{world}, got {_big(size)}")
            shape.append(size)
        product = 1
        for size in shape:
            product *= size
        if product != world:
            raise self.fail(
                f"{field}.shape",
                f"product {' x '.join(map(str, shape))} = {product} != world {world}",
            )
        axes_raw = table.get("axes", [{} for _ in shape])
        if not isinstance(axes_raw, list):
            raise self.fail(f"{field}.axes", f"expected a list, got {axes_raw!r}")
        if len(axes_raw) != len(shape):
            raise self.fail(
                f"{field}.axes", f"{len(axes_raw)} axes for a shape of {len(shape)} dimensions"
            )
        axes = tuple(
            self.axis(item, shape[j], f"{field}.axes[{j}]") for j, item in enumerate(axes_raw)
        )
        return Mesh(name=name, shape=tuple(shape), axes=axes)

    def instance(self, data: Mapping[str, Any]) -> Instance:
        self.keys(data, _TOP_KEYS, "")
        name = data.get("name", Path(self.source).stem or "instance")
        if not isinstance(name, str) or not name:
            raise self.fail("name", f"expected a non-empty string, got {name!r}")
        description = data.get("description", "")
        if not isinstance(description, str):
            raise self.fail("description", f"expected a string, got {description!r}")
        if "fabric" not in data:
            raise self.fail("fabric", "missing")
        fabric = self.budget(data["fabric"])
        meshes_raw = data.get("mesh")
        if not isinstance(meshes_raw, list) or not meshes_raw:
            raise self.fail("mesh", "expected at least one [[mesh]] table")
        if len(meshes_raw) > MAX_MESHES:
            raise self.fail("mesh", f"{len(meshes_raw)} meshes, the limit is {MAX_MESHES}")
        meshes = tuple(self.mesh(item, m, fabric.world) for m, item in enumerate(meshes_raw))
        self.search_bounds(meshes)
        seen: set[str] = set()
        for m, mesh in enumerate(meshes):
            if mesh.name in seen:
                raise self.fail(f"mesh[{m}].name", f"duplicate mesh name {mesh.name!r}")
            seen.add(mesh.name)
        return Instance(name, fabric, meshes, description, self.source)


    def search_bounds(self, meshes: tuple[Mesh, ...]) -> None:
        """Bounds on what the planners enumerate: all demands together, and the bit types of the
        partition search (one class per multi-axis mesh: the product of their class counts)."""
        demands = sum(len(ax.demands) for mesh in meshes for ax in mesh.axes)
        if demands > MAX_TOTAL_DEMANDS:
            raise self.fail("mesh", f"{demands} demands in all, the limit is {MAX_TOTAL_DEMANDS}")
        types = math.prod(len(mesh.bit_classes) for mesh in meshes if mesh.bit_classes)
        if types > MAX_BIT_TYPES:
            raise self.fail("mesh", f"{types} bit types (the product of the axis classes of the multi-axis meshes "
                                    f"that have demands), the limit is {MAX_BIT_TYPES}")


def shared_host_problem(instance: Instance) -> InstanceError | None:
    """Why the shared-host planners (heuristic, cpsat, milp) cannot take ``instance``.

    Their base host graph is the cube over binary rank labels: the world and every
    axis must be powers of two and the ports must hold the n cube generators. The
    reader accepts any sizes (``--method stacked`` needs no more), so these checks
    live here; the message names the field, as a reader error would.
    """
    source = instance.source or instance.name
    world = instance.budget.world
    if not _is_power_of_two(world):
        return InstanceError(source, "fabric.world", f"world {world} is not a power of two: use --method stacked")
    for m, mesh in enumerate(instance.meshes):
        for j, size in enumerate(mesh.shape):
            if not _is_power_of_two(size):
                return InstanceError(
                    source, f"mesh[{m}].shape[{j}]", f"axis size {size} is not a power of two: use --method stacked"
                )
    n, ports = instance.n, instance.budget.ports
    if ports < n:
        return InstanceError(source, "fabric.ports", f"{ports} ports cannot hold the base cube of {n} generators")
    return None


def require_shared_host(instance: Instance) -> None:
    """Raise :func:`shared_host_problem`'s error, if any."""
    problem = shared_host_problem(instance)
    if problem is not None:
        raise problem


def parse_instance(data: Mapping[str, Any], source: str = "<instance>") -> Instance:
    """Validate parsed TOML data and build an :class:`Instance`."""
    return _Reader(source).instance(data)


def loads_instance(text: str, source: str = "<instance>") -> Instance:
    """Parse instance TOML text."""
    return parse_instance(toml_data(text, source), source)


def load_instance(path: str | Path) -> Instance:
    """Read and validate an instance file."""
    return parse_instance(read_toml(path), str(path))


def _number(value: float) -> int | float:
    """A whole float as an integer (``weight = 128``, not ``128.0``); other numbers as they are."""
    return int(value) if isinstance(value, float) and value.is_integer() and abs(value) < 2**53 else value


def _format_time(seconds: float) -> str:
    return f"{seconds * 1e6:.12g}us"


def _format_rate(bps: float) -> str:
    return f"{bps * 8 / 1e9:.12g}Gb/s"


def instance_document(instance: Instance) -> dict[str, Any]:
    """The instance as the data of its TOML file (what :func:`dumps_instance` writes and
    :func:`parse_instance` reads): times and rates as unit strings, an idle axis as
    ``{collective = "none"}``."""
    fab = instance.budget
    doc: dict[str, Any] = {"name": instance.name}
    if instance.description:
        doc["description"] = instance.description
    doc["fabric"] = {"world": fab.world, "ports": fab.ports, "latency": _format_time(fab.latency),
                     "link": _format_rate(fab.link)}
    meshes = []
    for mesh in instance.meshes:
        axes: list[dict[str, Any]] = []
        for axis in mesh.axes:
            if not axis.demands:
                axes.append({"collective": "none"})
                continue
            demands = []
            for d in axis.demands:
                item: dict[str, Any] = {"collective": d.collective, "payload": d.payload, "weight": _number(d.weight)}
                if d.schedule != "auto":
                    item["schedule"] = d.schedule
                demands.append(item)
            axes.append({"demands": demands})
        meshes.append({"name": mesh.name, "shape": list(mesh.shape), "axes": axes})
    doc["mesh"] = meshes
    return doc


def dumps_instance(instance: Instance) -> str:
    """TOML text (written by tomli-w) that :func:`loads_instance` reads back to an equal instance."""
    import tomli_w

    return tomli_w.dumps(instance_document(instance))


def write_instances(instances: list[Instance], out: str | Path) -> list[Path]:
    """Write each instance to ``out/<name>.toml`` (created with its parents; each written atomically
    after its text is read back to validate)."""
    directory = Path(out)
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for inst in instances:
        text = dumps_instance(inst)
        path = directory / f"{inst.name}.toml"
        loads_instance(text, str(path))
        write_atomic(path, text)
        paths.append(path)
    return paths
