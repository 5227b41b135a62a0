"""JSON Schemas (draft 2020-12) of the JSON files ocsplan writes, shipped as package data.

``<name>.json`` per format: ``plan-1`` is ``ocsplan.plan/1``, ``circuits-1`` is
``ocsplan.circuits/1`` and so on. Reading package data is not file I/O of user files: the
schemas are part of the program, like its catalogue data.
"""

from __future__ import annotations

import itertools
import json
from functools import cache
from importlib import resources
from typing import Any

from ..errors import InstanceError

__all__ = ["first_error", "schema", "schema_names", "schema_text"]


def schema_names() -> list[str]:
    """Every shipped schema's name, sorted."""
    return sorted(p.name.removesuffix(".json") for p in resources.files(__name__).iterdir()
                  if p.name.endswith(".json"))


def schema_text(name: str) -> str:
    """The schema file's text; InstanceError naming the known ones if there is no such schema."""
    names = schema_names()
    if name not in names:
        raise InstanceError("schema", "NAME", f"unknown schema {name!r} (known: {', '.join(names)})")
    return resources.files(__name__).joinpath(f"{name}.json").read_text(encoding="utf-8")


def schema(name: str) -> dict[str, Any]:
    """The schema as a JSON object."""
    value: dict[str, Any] = json.loads(schema_text(name))
    return value


def first_error(data: object, name: str) -> tuple[str, str] | None:
    """(field path, message) of the most relevant error of ``data`` under the schema ``name``,
    or None when it is valid: what a reader names when a file is malformed."""
    import jsonschema

    want = schema(name).get("properties", {}).get("schema", {}).get("const")
    if want is not None and isinstance(data, dict) and data.get("schema") != want:  # another format's file
        return "schema", f"expected {want!r}, got {str(data.get('schema'))[:80]!r}"
    error = jsonschema.exceptions.best_match(_validator(name).iter_errors(data))
    if error is None:
        return None
    field = ".".join(str(p) for p in error.absolute_path) or "schema"
    return field, " ".join(error.message.split())[:160]


@cache
def _validator(name: str) -> Any:
    """Draft 2020-12 with ``items`` and ``properties`` that skip the children :func:`_clean` proves
    valid: they yield the same errors in the same order (a skipped child would have yielded none), so
    ``best_match`` picks the same error, without jsonschema's per-node cost on the valid bulk of a file
    (a malformed circuits file of 256 ranks: about a second per read before)."""
    import jsonschema

    base = jsonschema.Draft202012Validator
    stock = base.VALIDATORS["items"]

    def items(validator: Any, sub: Any, instance: Any, parent: dict[str, Any]) -> Any:
        if not isinstance(instance, list) or "prefixItems" in parent or sub is False:
            yield from stock(validator, sub, instance, parent)
            return
        if _plain(sub, instance):
            return
        for index, item in enumerate(instance):
            if not _clean(sub, item):
                yield from validator.descend(instance=item, schema=sub, path=index)

    def properties(validator: Any, subs: dict[str, Any], instance: Any, parent: dict[str, Any]) -> Any:
        if not isinstance(instance, dict):
            return
        for key, sub in subs.items():
            if key in instance and not _clean(sub, instance[key]):
                yield from validator.descend(instance[key], sub, path=key, schema_path=key)

    kind = jsonschema.validators.extend(base, {"items": items, "properties": properties})
    return kind(schema(name))


_ANNOTATIONS = frozenset({"title", "description", "$comment"})
_TYPES: dict[str, frozenset[type]] = {"integer": frozenset({int}), "number": frozenset({int, float}),
                                      "string": frozenset({str}), "null": frozenset({type(None)}),
                                      "boolean": frozenset({bool}), "array": frozenset({list})}


def _plain(sub: Any, values: list[Any]) -> bool:
    """True if ``sub`` asks only for types (no objects) and items, and every one of ``values`` meets
    it: types compared by exact type (a bool is no integer), nested lists checked a level at a time
    on their items chained together, at C speed; False when in doubt."""
    while True:
        if not isinstance(sub, dict) or not sub.keys() <= _PLAIN or "type" not in sub:
            return False
        kinds = [sub["type"]] if isinstance(sub["type"], str) else sub["type"]
        allowed: set[type] = set()
        for kind in kinds:
            if kind not in _TYPES:
                return False
            allowed |= _TYPES[kind]
        if not set(map(type, values)) <= allowed:
            return False
        if "items" not in sub or list not in allowed:
            return True
        values = list(itertools.chain.from_iterable(v for v in values if type(v) is list))
        sub = sub["items"]


_PLAIN = _ANNOTATIONS | {"type", "items"}


def _is(kind: str, value: object) -> bool:
    """``value`` is certainly of the JSON Schema type ``kind`` (False when in doubt)."""
    if kind == "integer":
        return ((isinstance(value, int) and not isinstance(value, bool))
                or (isinstance(value, float) and value.is_integer()))
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "string":
        return isinstance(value, str)
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    if kind == "null":
        return value is None
    return kind == "boolean" and isinstance(value, bool)


def _clean(sub: Any, value: Any) -> bool:
    """True only if ``value`` certainly meets the (sub)schema ``sub``: a few plain keywords are
    decided here, any other one answers False and leaves the verdict to jsonschema."""
    if sub is True:
        return True
    if not isinstance(sub, dict):
        return False
    for key, arg in sub.items():
        if key == "type":
            if not any(_is(kind, value) for kind in ([arg] if isinstance(arg, str) else arg)):
                return False
        elif key == "properties":
            if isinstance(value, dict) and not all(k not in value or _clean(s, value[k]) for k, s in arg.items()):
                return False
        elif key == "required":
            if isinstance(value, dict) and not all(k in value for k in arg):
                return False
        elif key == "items":
            if isinstance(value, list) and ("prefixItems" in sub
                                            or not (_plain(arg, value) or all(_clean(arg, x) for x in value))):
                return False
        elif key == "additionalProperties":
            if isinstance(value, dict):
                if "patternProperties" in sub:
                    return False
                named = sub.get("properties", {})
                if not all(_clean(arg, x) for k, x in value.items() if k not in named):
                    return False
        elif key == "minimum":
            if (isinstance(value, (int, float)) and not isinstance(value, bool)
                    and not (isinstance(arg, (int, float)) and value >= arg)):
                return False
        elif key not in _ANNOTATIONS:
            return False
    return True
