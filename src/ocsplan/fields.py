"""Typed, bounded, strict field access shared by the file readers (instance, plan, circuits,
fabric, accelerator, model TOML).

A reader walks parsed JSON or TOML through one :class:`Fields`: every value is
type-checked and bounded where it is read (``README`` "Limits"), and every
failure is one error naming the file and the field path, built by the reader's
own ``fail`` (so an instance reports an :class:`~ocsplan.errors.InstanceError`,
a plan a :class:`~ocsplan.errors.PlanError`).

The project's own formats are strict (docs/hostile.md "Strict keys"): a key the
reader does not know is refused with the nearest known one (:func:`unknown_keys`,
:func:`strict_tree`), so a typo never silently falls back to a default.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Mapping
from typing import Any, Union

from .limits import Fail, check_float, check_int

__all__ = ["Fields", "KeySpec", "path", "strict_tree", "unknown_keys"]

# the keys of one object: key -> the spec of its value (None: any value, a KeySpec: an
# object, a one-tuple (KeySpec,): a list of objects)
KeySpec = Mapping[str, Union["KeySpec", tuple["KeySpec"], None]]


def path(where: str, key: str) -> str:
    """The dotted path of ``key`` inside ``where`` (``where`` empty: the top level)."""
    return f"{where}.{key}" if where else key


def unknown_keys(data: Mapping[str, Any], known: Collection[str], fail: Fail, where: str = "") -> None:
    """Refuse the first key of ``data`` (in file order) that is not in ``known``,
    naming the nearest known key (``difflib``) or, if none is near, all of them."""
    for key in data:
        if key in known:
            continue
        name = str(key)
        close = difflib.get_close_matches(name, sorted(known), n=1)
        hint = f"did you mean {close[0]!r}?" if close else f"known keys: {', '.join(sorted(known))}"
        raise fail(path(where, name[:40]), f"unknown key ({hint})")


def strict_tree(data: object, spec: KeySpec, fail: Fail, where: str = "") -> None:
    """:func:`unknown_keys` over nested objects: every object ``spec`` describes, and every
    object of the lists it marks with a one-tuple. Values of the wrong type are left to
    the reader (which names them better); iterative, so depth costs no stack."""
    stack: list[tuple[object, KeySpec, str]] = [(data, spec, where)]
    while stack:
        value, keys, here = stack.pop()
        if not isinstance(value, Mapping):
            continue
        unknown_keys(value, keys, fail, here)
        for key, sub in reversed(list(keys.items())):
            if key not in value or sub is None:
                continue
            child = value[key]
            if isinstance(sub, tuple):
                if isinstance(child, list):
                    items = [(item, sub[0], f"{path(here, key)}[{i}]") for i, item in enumerate(child)]
                    stack.extend(reversed(items))
            else:
                stack.append((child, sub, path(here, key)))


class Fields:
    """Field readers over one file; ``fail(field, message)`` builds the error."""

    def __init__(self, fail: Fail, top: str = "file") -> None:
        self.fail: Fail = fail
        self.top = top  # what the top-level object is called in messages

    def strict(self, data: object, known: Collection[str], where: str = "") -> None:
        """Refuse keys of the object ``data`` not in ``known`` (:func:`unknown_keys`)."""
        if isinstance(data, Mapping):
            unknown_keys(data, known, self.fail, where)

    def tree(self, data: object, spec: KeySpec, where: str = "") -> None:
        """Refuse unknown keys anywhere ``spec`` describes (:func:`strict_tree`)."""
        strict_tree(data, spec, self.fail, where)

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
