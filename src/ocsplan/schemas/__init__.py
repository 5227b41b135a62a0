"""JSON Schemas (draft 2020-12) of the JSON files ocsplan writes, shipped as package data.

``<name>.json`` per format: ``plan-1`` is ``ocsplan.plan/1``, ``circuits-1`` is
``ocsplan.circuits/1`` and so on. Reading package data is not file I/O of user files: the
schemas are part of the program, like its catalogue data.
"""

from __future__ import annotations

import json
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
    validator = jsonschema.Draft202012Validator(schema(name))
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is None:
        return None
    field = ".".join(str(p) for p in error.absolute_path) or "schema"
    return field, " ".join(error.message.split())[:160]
