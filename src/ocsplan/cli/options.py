"""Options several commands share, and the options renamed for one vocabulary (issue 42)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from ..limits import CONNECT_TIMEOUT_S  # not from executor: --help need not import asyncio

if TYPE_CHECKING:
    from ..realization.fabrics import FabricSpec

__all__ = ["DEFAULT_CONNECT_TIMEOUT", "FABRIC_HELP", "RENAMED", "SPRAY_HELP", "ConnectTimeoutOpt", "refuse_spray",
           "renamed", "renamed_as"]

T = TypeVar("T")

DEFAULT_CONNECT_TIMEOUT = CONNECT_TIMEOUT_S
ConnectTimeoutOpt = Annotated[float, typer.Option(
    "--connect-timeout", help="seconds a --scheduler may take to answer (and its first worker to join)")]

FABRIC_HELP = "fabric: a catalogue name (ocsplan fabrics: all-ocs, hybrid, ...) or a TOML file"

SPRAY_HELP = "EPS: spraying granularity over equal links: packet, message (default) or flit-K (K DL flits)"


def refuse_spray(spray: str | None, spec: FabricSpec, fabric: str) -> None:
    """``--spray`` given on an all-OCS fabric is refused (InstanceError naming it): no packet switch sprays."""
    from .checks import refuse_unused

    refuse_unused("--spray", spray is not None and all(level.technology == "ocs" for level in spec.levels),
                  f"on the optical fabric {fabric} (no packet switch to spray)")

# Options renamed for one vocabulary across commands (issue 42): (command, old) -> new. One name per
# quantity: --link-rate a per-port rate, --radix the accelerator's ports overriding a fabric's (--ports is
# an instance's L), --latency a lambda in seconds (--latency-preset a Table 9 preset), --csv a CSV of
# rows and --plot a figure. The old name stays one release, hidden from --help; it warns on stderr once
# the command has succeeded (a refused command prints its one line only).
RENAMED: dict[tuple[str, str], str] = {
    ("power", "--rate"): "--link-rate",  # as decode and pareto
    ("power", "--ports"): "--radix",
    ("decode", "--ports"): "--radix",
    ("pareto", "--ports"): "--radix",
    ("simulate", "--latency"): "--latency-preset",
    ("sweep", "--latency"): "--latency-preset",
    ("study", "--out"): "--csv",  # as compare, pareto and sweep
    ("pareto", "--png"): "--plot",  # as study
    ("sweep", "--png"): "--plot",
}


def renamed_as(command: str, old: str, old_value: T | None, new_value: T | None) -> tuple[T | None, str]:
    """The value of a renamed option and the name it was given under (the new one when neither was):
    the old name's value warns once the command succeeds; both names given is refused (InstanceError
    naming the old one)."""
    from ..errors import InstanceError
    from .app import warn_on_success

    new = RENAMED[(command, old)]
    if old_value is None:
        return new_value, new
    if new_value is not None:
        raise InstanceError(old, "", f"is the old name of {new}: give one of them")
    warn_on_success(f"warning: {command} {old} is now {new}; the old name goes in the next release")
    return old_value, old


def renamed(command: str, old: str, old_value: T | None, new_value: T | None) -> T | None:
    """:func:`renamed_as` without the name."""
    return renamed_as(command, old, old_value, new_value)[0]
