"""Typed, bounded field access shared by the file readers (instance, plan, circuits).

A reader walks parsed JSON or TOML through one :class:`Fields`: every value is
type-checked and bounded where it is read (``README`` "Limits"), and every
failure is one error naming the file and the field path, built by the reader's
own ``fail`` (so an instance reports an :class:`~ocsplan.errors.InstanceError`,
a plan a :class:`~ocsplan.errors.PlanError`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .limits import Fail, check_float, check_int

__all__ = ["Fields", "path"]


def path(where: str, key: str) -> str:
    """The dotted path of ``key`` inside ``where`` (``where`` empty: the top level)."""
    return f"{where}.{key}" if where else key


class Fields:
    """Field readers over one file; ``fail(field, message)`` builds the error."""

    def __init__(self, fail: Fail, top: str = "file") -> None:
        self.fail: Fail = fail
        self.top = top  # what the top-level object is called in messages

    def get(self, data: object, key: str, where: str) -> Any:
        if not isinstance(data, Mapping):
            raise self.fail(where or self.top, f"expected an object, got {type(data).__name__}")
        if key not in data:
            raise self.fail(path(where, key), "missing")
        return data[key]

    def items(self, data: object, key: str, where: str, most: int) -> list[Any]:
        """A list of at most ``most`` entries."""
        value = self.get(data, key, where)
        field = path(where, key)
        if not isinstance(value, list):
            raise self.fail(field, f"expected a list, got {type(value).__name__}")
        if len(value) > most:
            raise self.fail(field, f"{len(value)} entries, the limit is {most}")
        return value

    def integer(self, data: object, key: str, where: str, low: int, high: int) -> int:
        return check_int(self.get(data, key, where), self.fail, path(where, key), low, high)

    def number(self, data: object, key: str, where: str, low: float, high: float) -> float:
        return check_float(self.get(data, key, where), self.fail, path(where, key), low, high)

    def string(self, data: object, key: str, where: str) -> str:
        value = self.get(data, key, where)
        if not isinstance(value, str):
            raise self.fail(path(where, key), f"expected a string, got {type(value).__name__}")
        return value
