"""Quantities the workload files add to ``ocsplan.units``: tokens, FLOPs, FLOP/s, watts.

Tokens: K = 10^3, M = 10^6, G = 10^9 and Ki = 2^10, Mi = 2^20 (the paper's
"5M" context is 5 x 10^6 tokens, "32K" in its figures is read as given).
"""

from __future__ import annotations

import math
import re

__all__ = [
    "MAX_TOKENS",
    "format_count",
    "parse_flop_rate",
    "parse_flops",
    "parse_power",
    "parse_tokens",
]

MAX_TOKENS = 10**9  # documented limit on a context length

_PATTERN = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z/]*)\s*$")
_COUNT = {"": 1, "K": 10**3, "k": 10**3, "M": 10**6, "G": 10**9, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30}
_FLOP = {"FLOP": 1.0, "kFLOP": 1e3, "MFLOP": 1e6, "GFLOP": 1e9, "TFLOP": 1e12, "PFLOP": 1e15}
_POWER = {"W": 1.0, "kW": 1e3, "MW": 1e6}


def _number(value: object, units: dict[str, float] | dict[str, int], what: str, example: str,
            default_unit: str = "") -> float:
    if isinstance(value, bool):
        raise ValueError(f"expected {what} such as {example!r}, got {value!r}")
    if isinstance(value, int | float):
        number, unit = float(value), default_unit
    elif isinstance(value, str):
        match = _PATTERN.match(value)
        if not match:
            raise ValueError(f"malformed {what} {value!r} (e.g. {example!r})")
        number, unit = float(match.group(1)), match.group(2)
    else:
        raise ValueError(f"expected {what} such as {example!r}, got {value!r}")
    scale = units.get(unit)
    if scale is None:
        raise ValueError(f"unknown unit {unit!r} in {value!r} (use {', '.join(k for k in units if k)})")
    result = number * scale
    if not math.isfinite(result) or result <= 0:
        raise ValueError(f"{what} must be positive, got {value!r}")
    return result


def parse_tokens(value: object) -> int:
    """Token count from ``5M``, ``32Ki``, ``128`` (whole, 1 .. MAX_TOKENS)."""
    result = _number(value, _COUNT, "token count", "5M")
    if abs(result - round(result)) > 1e-9 * result:
        raise ValueError(f"token count must be whole, got {value!r}")
    if result > MAX_TOKENS:
        raise ValueError(f"token count {value!r} exceeds the limit of {MAX_TOKENS}")
    return round(result)


def parse_flops(value: object) -> float:
    """FLOPs from a number or ``7GFLOP``."""
    return _number(value, _FLOP, "FLOP count", "7GFLOP", "FLOP")


def parse_flop_rate(value: object) -> float:
    """FLOP/s from a number or ``50PFLOP/s``."""
    if isinstance(value, str) and value.strip().endswith("/s"):
        value = value.strip()[:-2]
    return _number(value, _FLOP, "FLOP rate", "50PFLOP/s", "FLOP")


def parse_power(value: object) -> float:
    """Watts from a number or ``2631W``, ``1.7kW``."""
    return _number(value, _POWER, "power", "2631W", "W")


def format_count(value: float) -> str:
    """Compact count: 5.00T, 207B, 5.7B, 51.2k."""
    for unit, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if value >= scale:
            return f"{value / scale:.3g}{unit}"
    return f"{value:g}"
