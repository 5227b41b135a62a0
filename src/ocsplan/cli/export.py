"""Export command: a plan's schedules as MSCCL XML (and the independent check of an export), or a
circuits file as the files an OCS controller and a technician read (``--format ocs``)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import OcsplanError
from ..files import check_directory, read_text, write_directory
from ..limits import MAX_FILE_BYTES, MAX_JSON_BYTES
from ..units import format_bytes
from .app import app, emit_json, err, fail, handle_errors, out
from .checks import check_apart, check_outputs

if TYPE_CHECKING:
    from ..deploy import XmlCost

__all__ = ["MAX_EXPORT_ENTRIES", "ExportDirectory", "ExportError", "export_command"]

MAX_EXPORT_ENTRIES = 1 << 16  # entries of a directory given to --check (scanned lazily, refused above)
MAX_EXPORT_BYTES = 1 << 30  # the .xml and .json files of a directory given to --check, in all (megatron's: 200 MB)


class ExportError(OcsplanError):
    """An export directory that cannot be written or read."""


def _write_directory(target: Path, files: dict[str, str]) -> None:
    """All files into a temporary directory beside ``target``, then one rename: no partial directory."""

    def fill(tmp: Path) -> None:
        for name, text in sorted(files.items()):
            target = tmp / name
            target.parent.mkdir(parents=True, exist_ok=True)  # devices/ of an OCS export
            target.write_text(text, encoding="utf-8")

    write_directory(target, fill, ExportError)


def _size(entry: os.DirEntry[str]) -> int:
    """An entry's size (0 when it cannot be read: the reader names that file)."""
    try:
        return entry.stat().st_size
    except OSError:
        return 0


class ExportDirectory(Mapping[str, str]):
    """An export directory's ``.xml`` and ``.json`` files by name, each read when asked for."""

    def __init__(self, directory: Path) -> None:
        if not directory.is_dir():
            raise ExportError(f"{directory}: --check needs an export directory")
        self.directory = directory
        self.names: set[str] = set()
        total = 0
        try:
            with os.scandir(directory) as entries:
                for n, entry in enumerate(entries):
                    if n >= MAX_EXPORT_ENTRIES:
                        raise ExportError(f"{directory}: more than {MAX_EXPORT_ENTRIES} entries, the limit of an "
                                          "export directory")
                    if entry.name.endswith((".xml", ".json")):
                        self.names.add(entry.name)
                        total += _size(entry)
                        if total > MAX_EXPORT_BYTES:
                            raise ExportError(f"{directory}: its .xml and .json files exceed "
                                              f"{MAX_EXPORT_BYTES >> 20} MiB in all, the limit of an export directory")
        except OSError as exc:
            raise ExportError(f"{directory}: cannot read directory: {exc.strerror or exc}") from None

    def __getitem__(self, name: str) -> str:
        if name not in self.names:
            raise KeyError(name)
        path = self.directory / name
        limit = MAX_JSON_BYTES if name.endswith(".json") else MAX_FILE_BYTES  # index.json: the JSON bound
        return read_text(path, lambda message: ExportError(f"{path}: {message}"), limit)

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self.names))

    def __len__(self) -> int:
        return len(self.names)


@app.command("export")
@handle_errors
def export_command(
    plan_path: Annotated[Path | None, typer.Argument(
        metavar="PLAN", help="plan JSON (ocsplan solve --json); with --format ocs a circuits file "
                             "(ocsplan realize --out)")] = None,
    fmt: Annotated[str | None, typer.Option(
        "--format", help="msccl (collective schedules, the default) or ocs (cross-connects, cabling, host graphs)")
    ] = None,
    out_dir: Annotated[Path | None, typer.Option("--out", help="directory to create")] = None,
    protocol: Annotated[str | None, typer.Option(help="Simple, LL or LL128 (default Simple)")] = None,
    check: Annotated[Path | None, typer.Option("--check", help="check an export directory instead")] = None,
    max_steps: Annotated[int | None, typer.Option("--max-steps", help="steps per threadblock the executor was built "
                                                  "with (make MSCCL_MAX_NUM_STEPS=N; its own default is 64; "
                                                  "default 128)")] = None,
    quiet: Annotated[bool, typer.Option(help="no progress bar (there is none unless stderr is a terminal)")] = False,
    circuits: Annotated[Path | None, typer.Option("--circuits", help="circuits file of the plan (ocsplan realize): "
                                                  "index.json maps every threadblock to its ports")] = None,
) -> None:
    """Write MSCCL XML (one file per demand, and index.json) for a plan, or check such a directory."""
    from ..deploy import CheckError, MscclError, UnsafeXmlError
    from ..deploy.export import check_export, export_msccl

    try:
        _export(plan_path, fmt, out_dir, protocol, check, max_steps, check_export, export_msccl, quiet, circuits)
    except CheckError as exc:
        raise fail(f"check failed: {exc}", 1) from None
    except (MscclError, ExportError, UnsafeXmlError) as exc:
        raise fail(str(exc), 2) from None


MAX_EXECUTOR_STEPS = 32767  # msccl-executor-nccl: dependentStep is int16, so no build allows more steps


def _export(plan_path: Path | None, fmt: str | None, out_dir: Path | None, protocol: str | None, check: Path | None,
            max_steps: int | None, check_export: Callable[[Mapping[str, str], str], dict[str, XmlCost]],
            export_msccl: Callable[..., dict[str, str]], quiet: bool = False, circuits: Path | None = None) -> None:
    if check is not None:
        given = (("PLAN", plan_path), ("--format", fmt), ("--out", out_dir), ("--protocol", protocol),
                 ("--max-steps", max_steps), ("--circuits", circuits))
        for option, value in given:
            if value is not None:
                raise fail(f"{option}: has no effect with --check (it reads the directory's own index)", 2)
        costs = check_export(ExportDirectory(check), str(check))
        for name, cost in sorted(costs.items()):
            out.print(f"{name}: ok, h={cost.h}, v={float(cost.v):.6g} bytes per link", markup=False)
        out.print(f"{check}: {len(costs)} schedule(s) checked", markup=False)
        return
    fmt = "msccl" if fmt is None else fmt
    if fmt not in ("msccl", "ocs"):
        raise fail(f"--format {fmt!r}: expected msccl or ocs", 2)
    if fmt == "ocs":
        _export_ocs(plan_path, out_dir, protocol, max_steps, circuits)
        return
    if plan_path is None or out_dir is None:
        raise fail("ocsplan export: give PLAN and --out DIR, or --check DIR", 2)
    from ..plan import load_plan
    from ..planning.check import require_valid
    from .console import Bar

    protocol = "Simple" if protocol is None else protocol
    max_steps = 128 if max_steps is None else max_steps
    check_apart(((out_dir, "--out"),), ((plan_path, "PLAN"), (circuits, "--circuits")))
    plan = load_plan(plan_path)
    require_valid(plan, str(plan_path))
    if not 1 <= max_steps <= MAX_EXECUTOR_STEPS:
        raise fail(f"--max-steps {max_steps}: must be between 1 and {MAX_EXECUTOR_STEPS} (the executor's step "
                   "index is an int16)", 2)
    wiring = None
    if circuits is not None:
        from ..realization.circuits import load_circuits

        wiring = load_circuits(circuits)
    with Bar(err.console, "export (msccl)", quiet=quiet) as bar:
        files = export_msccl(plan, protocol, max_steps, progress=bar.update, circuits=wiring,
                             circuits_source=f"--circuits {circuits}")
    size = sum(len(text.encode()) for text in files.values())
    if size > 1 << 26:  # say so before a long write (megatron's export is about 190 MB)
        err.print(f"writing {format_bytes(size)} to {out_dir}", markup=False)
    _write_directory(out_dir, files)
    out.print(f"{out_dir}: {len(files) - 1} MSCCL file(s) and index.json, {format_bytes(size)}", markup=False)


def _export_ocs(circuits_path: Path | None, out_dir: Path | None, protocol: str | None, max_steps: int | None,
                circuits: Path | None) -> None:
    """``--format ocs``: the circuits file as devices/<id>.csv, cross-connects.json, cabling.csv,
    one GraphML per axis and index.json (:mod:`ocsplan.deploy.ocs`)."""
    for option, given in (("--protocol", protocol), ("--max-steps", max_steps), ("--circuits", circuits)):
        if given is not None:
            raise fail(f"{option}: has no effect with --format ocs (the positional is the circuits file)", 2)
    if circuits_path is None or out_dir is None:
        raise fail("ocsplan export --format ocs: give CIRCUITS and --out DIR", 2)
    from ..deploy.ocs import ocs_files
    from ..realization.circuits import load_circuits

    check_apart(((out_dir, "--out"),), ((circuits_path, "CIRCUITS"),))
    check_directory(out_dir, ExportError)
    files = ocs_files(load_circuits(circuits_path))
    _write_directory(out_dir, files)
    index = json.loads(files["index.json"])
    counts = index["counts"]
    out.print(f"{out_dir}: {counts['devices']} OCS device(s), {counts['cross_connects']} cross-connect(s), "
              f"{counts['cables']} cable(s), {len(index['graphs'])} host graph(s)", markup=False)


@app.command("import-ocs")
@handle_errors
def import_ocs_command(
    directory: Annotated[Path, typer.Argument(metavar="DIR", help="an OCS export (ocsplan export --format ocs)")],
    plan_path: Annotated[Path, typer.Option("--plan", help="the plan the exported circuits realize")],
    fabric: Annotated[str, typer.Option("--fabric", help="the fabric they were realized on: a catalogue name or "
                                                         "a TOML file")],
    out_path: Annotated[str, typer.Option("--out", help="write the rebuilt circuits JSON to PATH, or -")],
) -> None:
    """Rebuild a circuits file from an OCS export's cross-connects and cabling (the round trip)."""
    from ..deploy.ocs_import import import_ocs
    from ..errors import InstanceError
    from ..plan import load_plan
    from ..planning.check import require_valid
    from ..realization.circuits import dumps_circuits
    from ..realization.fabric_check import fabric_faults
    from ..realization.fabrics import load_fabric
    from ..realization.validate import validate

    check_outputs((out_path, "--out"), inputs=((plan_path, "--plan"), (fabric, "--fabric")))
    plan = load_plan(plan_path)
    require_valid(plan, str(plan_path))
    spec = load_fabric(fabric, "--fabric")
    circuits = import_ocs(directory, plan, spec)
    # a file realized without routing tables (the simulator's) is checked without the plan's schedules
    found = fabric_faults(circuits, spec) + validate(circuits, plan if circuits.routes else None)
    if found:
        raise InstanceError(str(directory), "", f"the rebuilt circuits fail ocsplan validate ({len(found)} "
                                                f"fault(s)), the first: {str(found[0])[:160]}")
    text = dumps_circuits(circuits)
    if out_path != "-":
        out.print(f"{out_path}: {len(circuits.circuits)} circuits on {len(circuits.devices)} OCS devices, "
                  f"rebuilt from {directory} (valid against {plan_path} and {fabric})", markup=False)
    emit_json(text, out_path)
