"""Parsing of sizes, times and rates written with units ("4KiB", "0.52us", "400Gb/s")."""

from __future__ import annotations

import math
import re

__all__ = ["format_bytes", "format_time", "parse_bytes", "parse_rate", "parse_time"]

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


def _float(value: int | float) -> float:
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"number of {int(value).bit_length()} bits is out of range") from None


def _split(text: str) -> tuple[float, str]:
    match = _PATTERN.match(text)
    if not match:
        raise ValueError(f"malformed value {text!r}")
    return float(match.group(1)), match.group(2)


def parse_bytes(value: object) -> int:
    """Bytes from an int or a string such as "4KiB", "32 kB", "66B"; must be > 0."""
    if isinstance(value, bool):
        raise ValueError(f"expected a size, got {value!r}")
    if isinstance(value, int):
        number, unit = _float(value), ""
    elif isinstance(value, float):
        number, unit = value, ""
    elif isinstance(value, str):
        number, unit = _split(value)
    else:
        raise ValueError(f"expected a size such as \"4KiB\", got {value!r}")
    scale = _SIZE.get(unit)
    if scale is None:
        raise ValueError(f"unknown size unit {unit!r} in {value!r} (use B, kB, MB, KiB, MiB)")
    result = number * scale
    if not math.isfinite(result) or result <= 0:
        raise ValueError(f"size must be positive, got {value!r}")
    if abs(result - round(result)) > 1e-9 * max(1.0, result):
        raise ValueError(f"size must be a whole number of bytes, got {value!r}")
    return round(result)


def parse_time(value: object) -> float:
    """Seconds from a number (seconds) or a string such as "0.52us"; must be > 0."""
    if isinstance(value, bool):
        raise ValueError(f"expected a time, got {value!r}")
    if isinstance(value, int | float):
        number, unit = _float(value), "s"
    elif isinstance(value, str):
        number, unit = _split(value)
    else:
        raise ValueError(f"expected a time such as \"0.52us\", got {value!r}")
    scale = _TIME.get(unit)
    if scale is None:
        raise ValueError(f"unknown time unit {unit!r} in {value!r} (use s, ms, us, ns)")
    result = number * scale
    if not math.isfinite(result) or result <= 0:
        raise ValueError(f"time must be positive, got {value!r}")
    return result


def parse_rate(value: object) -> float:
    """Bytes per second from a number (B/s) or a string such as "400Gb/s" or "50GB/s"."""
    if isinstance(value, bool):
        raise ValueError(f"expected a rate, got {value!r}")
    if isinstance(value, int | float):
        number, unit = _float(value), "B/s"
    elif isinstance(value, str):
        number, unit = _split(value)
    else:
        raise ValueError(f"expected a rate such as \"400Gb/s\", got {value!r}")
    scale = _RATE.get(unit)
    if scale is None:
        raise ValueError(f"unknown rate unit {unit!r} in {value!r} (use Gb/s or GB/s)")
    result = number * scale
    if not math.isfinite(result) or result <= 0:
        raise ValueError(f"rate must be positive, got {value!r}")
    return result


def format_bytes(nbytes: float) -> str:
    """Human-readable size with binary prefixes where exact ("4KiB"), else decimal."""
    n = float(nbytes)
    for unit, binary in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= binary and n % binary == 0:
            return f"{int(n // binary)}{unit}"
    for unit, decimal in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= decimal:
            return f"{n / decimal:.4g}{unit}"
    return f"{n:.4g}B"


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
