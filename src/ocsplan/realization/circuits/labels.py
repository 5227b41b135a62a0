"""How circuit files name a generator: mask bits, ``ring:<mask>``, ``circulant:A:N:stride:s``."""

from __future__ import annotations

from functools import lru_cache

from ...cayley import mask_to_str, str_to_mask
from ...plan import CIRCULANT as CIRCULANT_KIND
from ...plan import RING, generator_kind, host_kind

__all__ = ["CIRCULANT", "circulant_label", "generator_label", "parse_circulant", "parse_label", "shift"]


def generator_label(mask: int, kind: str, n: int) -> str:
    """How files name a generator: its kind's label prefix, then its mask bits (``ring:<mask>`` for a ring)."""
    return generator_kind(kind).label_prefix + mask_to_str(mask, n)


CIRCULANT = generator_kind(CIRCULANT_KIND).label_prefix
_RING = generator_kind(RING).label_prefix


def circulant_label(slot: int, size: int, stride: int, offset: int) -> str:
    return f"{CIRCULANT}{slot}:{size}:{stride}:{offset}"


def parse_circulant(label: str) -> tuple[int, int, int]:
    """(N, stride, s) of a circulant label; ValueError if it is not one."""
    if not label.startswith(CIRCULANT):
        raise ValueError(f"not a circulant label: {label!r}")
    parts = label[len(CIRCULANT):].split(":")
    if len(parts) != 4 or not all(p.isdigit() for p in parts):
        raise ValueError(f"not a circulant label: {label!r}")
    _, size, stride, offset = (int(p) for p in parts)
    if size < 2 or stride < 1 or not 0 < offset <= size // 2:
        raise ValueError(f"not a circulant label: {label!r}")
    return size, stride, offset


def shift(x: int, size: int, stride: int, delta: int) -> int:
    """The rank whose axis coordinate is x's plus ``delta`` (mod size), other coordinates kept."""
    c = (x // stride) % size
    return x + ((c + delta) % size - c) * stride


@lru_cache(maxsize=4096)
def parse_label(label: str) -> tuple[int, str]:
    """(mask, kind) of a generator label; ValueError if it is not one.

    A stacked plan's ``circulant:A:N:stride:s`` gives (s, "circulant"). Remembered: a realization
    names a handful of generators on each of its many circuits."""
    if label.startswith(CIRCULANT):
        return parse_circulant(label)[2], CIRCULANT_KIND
    ring = label.startswith(_RING)
    mask = str_to_mask(label[len(_RING):] if ring else label)
    if ring:
        return mask, RING
    return mask, host_kind(mask)
