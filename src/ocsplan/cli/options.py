"""Options several batch commands share (compare, study, sweep, pareto)."""

from __future__ import annotations

from typing import Annotated, TypeVar

import typer

from ..limits import CONNECT_TIMEOUT_S  # not from executor: --help need not import asyncio

__all__ = ["DEFAULT_CONNECT_TIMEOUT", "FABRIC_HELP", "RENAMED", "ConnectTimeoutOpt", "renamed"]

T = TypeVar("T")

DEFAULT_CONNECT_TIMEOUT = CONNECT_TIMEOUT_S
ConnectTimeoutOpt = Annotated[float, typer.Option(
    "--connect-timeout", help="seconds a --scheduler may take to answer (and its first worker to join)")]

FABRIC_HELP = "fabric: a catalogue name (ocsplan fabrics: all-ocs, hybrid, ...) or a TOML file"

# Options renamed for one vocabulary across commands (issue 42): (command, old) -> new. The old
# name stays one release, hidden from --help, and warns on stderr when used.
RENAMED: dict[tuple[str, str], str] = {
    ("power", "--rate"): "--link-rate",  # as decode and pareto
}


def renamed(command: str, old: str, old_value: T | None, new_value: T | None) -> T | None:
    """The value of a renamed option: the new name's, or the old name's with a warning on stderr;
    both given is refused (InstanceError naming the old one)."""
    from ..errors import InstanceError
    from .app import err

    new = RENAMED[(command, old)]
    if old_value is None:
        return new_value
    if new_value is not None:
        raise InstanceError(old, "", f"is the old name of {new}: give one of them")
    err.print(f"warning: {command} {old} is now {new}; the old name goes in the next release", markup=False)
    return old_value
