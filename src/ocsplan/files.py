"""File helpers shared by every reader and writer.

Readers turn OS, encoding and syntax problems into one-line ocsplan errors.
Every file ocsplan writes (plans, circuits, reports, CSVs, figures, exported
models) goes through :func:`write_atomic` or :func:`write_atomic_with`: a
temporary file and a rename, so an interrupted or failed write never leaves a
half-written output. The writers live with what they write (e.g. the model
exports in ``planning/exact``), but none opens the target itself.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .errors import InstanceError, OcsplanError, PlanError

__all__ = ["read_json", "read_text", "read_toml", "toml_data", "write_atomic", "write_atomic_with"]


def read_text(path: str | Path, error: Callable[[str], OcsplanError]) -> str:
    """The file's UTF-8 text; ``error(message)`` builds the exception on failure."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise error(f"cannot read file: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise error("not a UTF-8 text file") from None


def toml_data(text: str, source: str) -> dict[str, Any]:
    """Parsed TOML; a syntax error names the file and the field ``toml``."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InstanceError(source, "toml", f"syntax error: {exc}") from None


def read_toml(path: str | Path) -> dict[str, Any]:
    """Parsed TOML file (input files: errors are InstanceError, exit status 2)."""
    source = str(path)
    return toml_data(read_text(path, lambda msg: InstanceError(source, "", msg)), source)


def read_json(text: str, source: str) -> dict[str, Any]:
    """A JSON object (output files read back: errors are PlanError, exit status 2)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PlanError(f"{source}: not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise PlanError(f"{source}: expected a JSON object")
    return data


def write_atomic_with(path: str | Path, write: Callable[[Path], object]) -> None:
    """Let ``write`` create the file at a temporary path next to ``path`` (with the same
    suffixes, for writers that choose the format by them), then rename it into place."""
    import tempfile  # imported on use: it is slow to import

    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix="".join(target.suffixes), dir=directory)
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        # mkstemp creates the file 0600: give it the mode a plain open() would (umask)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException:
        if tmp.exists():
            tmp.unlink()
        raise


def write_atomic(path: str | Path, data: str | bytes) -> None:
    """Write ``data`` (UTF-8 text, or bytes) to ``path``, never half-written."""

    def write(tmp: Path) -> None:
        if isinstance(data, bytes):
            tmp.write_bytes(data)
        else:
            with tmp.open("w", encoding="utf-8") as handle:
                handle.write(data)

    write_atomic_with(path, write)
