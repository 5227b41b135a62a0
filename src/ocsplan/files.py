"""File helpers shared by every reader and writer: the only place that touches the disk.

Readers turn OS, encoding and syntax problems into one-line ocsplan errors;
:func:`write_atomic` writes through a temporary file and a rename, so an
interrupted or failed write never leaves a half-written output.
"""

from __future__ import annotations

import json
import os
import tempfile
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .errors import InstanceError, OcsplanError, PlanError

__all__ = ["read_json", "read_text", "read_toml", "toml_data", "write_atomic"]


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


def write_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file and a rename (never half-written)."""
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
