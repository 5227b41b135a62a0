"""The checks of a command's options every command shares, before any work starts: a value
parsed or refused on one line naming the option (exit 2), counts and time limits in range,
outputs writable, distinct and apart from the inputs, an option that cannot apply refused."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..errors import InstanceError
from ..files import check_output
from ..limits import MAX_TIME_LIMIT_S

__all__ = [
    "Paths",
    "check_apart",
    "check_count",
    "check_outputs",
    "check_suffix",
    "check_time_limit",
    "parse_option",
    "refuse_unused",
]


def parse_option(parse: Callable[[str], Any], text: str, option: str) -> Any:
    try:
        return parse(text)
    except ValueError as exc:
        raise InstanceError(option, "", str(exc)) from None


def check_time_limit(value: float | None, option: str = "--time-limit") -> None:
    """A time limit is finite, positive and at most :data:`~ocsplan.limits.MAX_TIME_LIMIT_S`."""
    if value is not None and not (math.isfinite(value) and 0 < value <= MAX_TIME_LIMIT_S):
        raise InstanceError(option, "", f"must be a number of seconds in (0, {MAX_TIME_LIMIT_S:g}], got {value}")


def check_count(value: int | None, option: str, low: int, high: int) -> None:
    if value is not None and not low <= value <= high:
        raise InstanceError(option, "", f"must be between {low} and {high}, got {value}")


Paths = Sequence[tuple[str | Path | None, str]]


def check_outputs(*targets: tuple[str | Path | None, str], inputs: Paths = ()) -> None:
    """Every output path (``-`` is stdout) writable and its own, before any work starts: two
    options naming one file (or both stdout) would overwrite or interleave each other, and an
    output that is one of the command's ``inputs`` (:func:`check_apart`) would replace what it reads."""
    import os
    import stat

    check_apart(targets, inputs)
    seen: dict[str, str] = {}
    for path, option in targets:
        if path is None:
            continue
        if str(path) != "-":
            check_output(path, option)
        key = "-" if str(path) == "-" else os.path.realpath(path)
        try:
            shared = key != "-" and stat.S_ISCHR(os.stat(key).st_mode)  # /dev/null may take both
        except OSError:
            shared = False
        if key in seen and not shared:
            where = "stdout" if key == "-" else str(path)
            raise InstanceError(option, "", f"{where} is also the output of {seen[key]}: give each output its own")
        seen[key] = option


def check_apart(outputs: Paths, inputs: Paths) -> None:
    """No output (a file, or a directory written whole) is an input of the command: the same file by
    any path (a symlink, a hard link) or a directory holding one. One line naming the output option and
    the input, exit 2, before anything is read or written. Inputs that are no file (a catalogue name,
    ``-``) and outputs that are character devices (``/dev/null``) are left alone."""
    import os
    import stat

    def same(a: str, b: str) -> bool:
        try:
            return os.path.samefile(a, b)
        except OSError:
            return False

    given = [(str(path), option) for path, option in inputs if path is not None and str(path) != "-"
             and os.path.exists(path)]
    for target, option in outputs:
        if target is None or str(target) == "-":
            continue
        try:
            if stat.S_ISCHR(os.stat(target).st_mode):
                continue
        except OSError:
            pass
        real = os.path.realpath(target)
        for path, source in given:
            if same(str(target), path) or real == os.path.realpath(path):
                raise InstanceError(option, "", f"{target} is also the input {source}: give the output another path")
            if os.path.realpath(path).startswith(real.rstrip(os.sep) + os.sep):
                raise InstanceError(option, "", f"{target} holds the input {source} ({path}): give the output "
                                                "another path")


def check_suffix(path: str | Path | None, option: str, suffixes: tuple[str, ...]) -> None:
    if path is not None and Path(path).suffix.lower() not in suffixes:
        raise InstanceError(option, "", f"{path}: unknown format (use {', '.join(suffixes)})")


def refuse_unused(option: str, given: bool, needs: str) -> None:
    """An option that cannot apply is refused, not ignored."""
    if given:
        raise InstanceError(option, "", f"has no effect {needs}")
