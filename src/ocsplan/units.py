"""Quantities written with units: sizes, times, rates ("4KiB", "0.52us", "400Gb/s") and the
workload files' token counts, FLOPs, FLOP/s and watts ("5M", "7GFLOP", "50PFLOP/s", "1.7kW").

One parser (:class:`Quantity`) reads them all; each kind names its units and its messages.
Tokens: K = 10^3, M = 10^6, G = 10^9 and Ki = 2^10, Mi = 2^20 (the paper's "5M" context
is 5 x 10^6 tokens, "32K" in its figures is read as given).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "FLOPS",
    "FLOP_RATE",
    "MAX_TOKENS",
    "POWER",
    "RATE",
    "SIZE",
    "TIME",
    "TOKENS",
    "Quantity",
    "byte_family",
    "format_byte_column",
    "format_bytes",
    "format_count",
    "format_power",
    "format_rate",
    "format_time",
    "parse_bytes",
    "parse_flop_rate",
    "parse_flops",
    "parse_power",
    "parse_rate",
    "parse_time",
    "parse_tokens",
]

MAX_TOKENS = 10**9  # documented limit on a context length

_NUMBER = r"([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)"
_PATTERN = re.compile(r"^\s*" + _NUMBER + r"\s*([A-Za-zµ/]*)\s*$")

_SIZE = {
    "": 1, "B": 1, "kB": 10**3, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
    "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40,
}
_TIME = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
# bits per second on the left, bytes per second on the right
_RATE = {
    "b/s": 1 / 8, "kb/s": 1e3 / 8, "Kb/s": 1e3 / 8, "Mb/s": 1e6 / 8, "Gb/s": 1e9 / 8,
    "Tb/s": 1e12 / 8, "bps": 1 / 8, "kbps": 1e3 / 8, "Mbps": 1e6 / 8, "Gbps": 1e9 / 8,
    "Tbps": 1e12 / 8,
    "B/s": 1.0, "kB/s": 1e3, "KB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9, "TB/s": 1e12,
}
_COUNT = {"": 1, "K": 10**3, "k": 10**3, "M": 10**6, "G": 10**9, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30}
_FLOP = {"FLOP": 1.0, "kFLOP": 1e3, "MFLOP": 1e6, "GFLOP": 1e9, "TFLOP": 1e12, "PFLOP": 1e15}
_POWER = {"W": 1.0, "kW": 1e3, "MW": 1e6}


def _float(value: int | float) -> float:
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"number of {int(value).bit_length()} bits is out of range") from None


@dataclass(frozen=True)
class Quantity:
    """What one kind of value may be written as, and how its errors read.

    ``units`` maps a unit to its scale; ``default`` is the unit of a bare number.
    The messages are templates over ``noun``, ``example``, ``hint``, ``value``
    (the value as given, ``repr``) and ``unit``.
    """

    noun: str
    units: Mapping[str, float]
    default: str
    example: str
    hint: str
    not_a_value: str  # a bool
    wrong_type: str  # neither a number nor a string
    malformed: str
    unknown: str

    def parse(self, value: object) -> float:
        """The value in base units (bytes, seconds, B/s, FLOPs, watts, tokens); finite and > 0."""
        if isinstance(value, bool):
            raise ValueError(self._say(self.not_a_value, value))
        if isinstance(value, int | float):
            number, unit = _float(value), self.default
        elif isinstance(value, str):
            match = _PATTERN.match(value)
            if not match:
                raise ValueError(self._say(self.malformed, value))
            number, unit = float(match.group(1)), match.group(2)
        else:
            raise ValueError(self._say(self.wrong_type, value))
        scale = self.units.get(unit)
        if scale is None:
            raise ValueError(self._say(self.unknown, value, unit))
        result = number * scale
        if not math.isfinite(result) or result <= 0:
            raise ValueError(f"{self.noun} must be positive, got {value!r}")
        return result

    def _say(self, template: str, value: object, unit: str = "") -> str:
        return template.format(noun=self.noun, example=self.example, hint=self.hint, value=repr(value),
                               unit=repr(unit))


def _network(noun: str, units: Mapping[str, float], default: str, example: str, hint: str) -> Quantity:
    """The wording of the instance and fabric files' quantities."""
    return Quantity(noun, units, default, example, hint, "expected a {noun}, got {value}",
                    'expected a {noun} such as "{example}", got {value}', "malformed value {value}",
                    "unknown {noun} unit {unit} in {value} (use {hint})")


def _workload(noun: str, units: Mapping[str, float], default: str, example: str) -> Quantity:
    """The wording of the model and accelerator files' quantities."""
    hint = ", ".join(k for k in units if k)
    return Quantity(noun, units, default, example, hint, "expected {noun} such as {example!r}, got {value}",
                    "expected {noun} such as {example!r}, got {value}", "malformed {noun} {value} (e.g. {example!r})",
                    "unknown unit {unit} in {value} (use {hint})")


SIZE = _network("size", _SIZE, "", "4KiB", "B, kB, MB, KiB, MiB")
TIME = _network("time", _TIME, "s", "0.52us", "s, ms, us, ns")
RATE = _network("rate", _RATE, "B/s", "400Gb/s", "Gb/s or GB/s")
TOKENS = _workload("token count", _COUNT, "", "5M")
FLOPS = _workload("FLOP count", _FLOP, "FLOP", "7GFLOP")
FLOP_RATE = _workload("FLOP rate", _FLOP, "FLOP", "50PFLOP/s")
POWER = _workload("power", _POWER, "W", "2631W")


def parse_bytes(value: object) -> int:
    """Bytes from an int or a string such as "4KiB", "32 kB", "66B"; must be > 0."""
    result = SIZE.parse(value)
    if abs(result - round(result)) > 1e-9 * max(1.0, result):
        raise ValueError(f"size must be a whole number of bytes, got {value!r}")
    return round(result)


def parse_time(value: object) -> float:
    """Seconds from a number (seconds) or a string such as "0.52us"; must be > 0."""
    return TIME.parse(value)


def parse_rate(value: object) -> float:
    """Bytes per second from a number (B/s) or a string such as "400Gb/s" or "50GB/s"."""
    return RATE.parse(value)


def parse_tokens(value: object) -> int:
    """Token count from ``5M``, ``32Ki``, ``128`` (whole, 1 .. MAX_TOKENS)."""
    result = TOKENS.parse(value)
    if abs(result - round(result)) > 1e-9 * result:
        raise ValueError(f"token count must be whole, got {value!r}")
    if result > MAX_TOKENS:
        raise ValueError(f"token count {value!r} exceeds the limit of {MAX_TOKENS}")
    return round(result)


def parse_flops(value: object) -> float:
    """FLOPs from a number or ``7GFLOP``."""
    return FLOPS.parse(value)


def parse_flop_rate(value: object) -> float:
    """FLOP/s from a number or ``50PFLOP/s``."""
    if isinstance(value, str) and value.strip().endswith("/s"):
        value = value.strip()[:-2]
    return FLOP_RATE.parse(value)


def parse_power(value: object) -> float:
    """Watts from a number or ``2631W``, ``1.7kW``."""
    return POWER.parse(value)


_BINARY = (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10))
_DECIMAL = (("GB", 1e9), ("MB", 1e6), ("kB", 1e3))


def format_bytes(nbytes: float, family: str | None = None) -> str:
    """Human-readable size. ``family`` binary (KiB, MiB, GiB) or decimal (kB, MB, GB) writes every
    size in that family, four significant digits where not exact ("3.5KiB", "7.812KiB"); without it a
    lone size takes binary prefixes where exact ("4KiB"), else decimal ("32kB")."""
    n = float(nbytes)
    if family is None:
        for unit, binary in _BINARY:
            if n >= binary and n % binary == 0:
                return f"{int(n // binary)}{unit}"
        family = "decimal"
    for unit, scale in _BINARY if family == "binary" else _DECIMAL:
        if n >= scale:
            return f"{n / scale:.4g}{unit}"
    return f"{n:.4g}B"


def byte_family(sizes: Iterable[float]) -> str:
    """The prefix family of a column of sizes: decimal when more of them are whole kB, MB or GB than
    whole KiB, MiB or GiB (a user's "8kB" payload and what it derives), else binary."""
    binary = decimal = 0
    for n in sizes:
        binary += n >= 2**10 and n % 2**10 == 0
        decimal += n >= 1e3 and n % 1e3 == 0
    return "decimal" if decimal > binary else "binary"


def format_byte_column(sizes: Sequence[float]) -> list[str]:
    """Each size of one table column, all in the column's :func:`byte_family`."""
    family = byte_family(sizes)
    return [format_bytes(n, family) for n in sizes]


def format_time(seconds: float) -> str:
    """Time in the most readable unit (us for decode collectives)."""
    if seconds == 0:
        return "0"
    if seconds < 1e-6:
        return f"{seconds * 1e9:.3g} ns"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.4g} us"
    if seconds < 1:
        return f"{seconds * 1e3:.4g} ms"
    return f"{seconds:.4g} s"


def format_power(watts: float) -> str:
    """Power in W, kW or MW to four significant digits ("1.488 MW")."""
    for unit, scale in (("MW", 1e6), ("kW", 1e3)):
        if abs(watts) >= scale:
            return f"{watts / scale:.4g} {unit}"
    return f"{watts:.4g} W"


def format_rate(bytes_per_s: float) -> str:
    """A link rate in bits per second ("400 Gb/s", "14.4 Tb/s"), as networks are sold."""
    bits = bytes_per_s * 8
    for unit, scale in (("Pb/s", 1e15), ("Tb/s", 1e12), ("Gb/s", 1e9), ("Mb/s", 1e6)):
        if abs(bits) >= scale:
            return f"{bits / scale:.4g} {unit}"
    return f"{bits:.4g} b/s"


def format_count(value: float) -> str:
    """Compact count: 5.00T, 207B, 5.7B, 51.2k."""
    for unit, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if value >= scale:
            return f"{value / scale:.3g}{unit}"
    return f"{value:g}"
