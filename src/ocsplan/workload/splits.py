"""Helix splits (KVP, TPA, EP, TPE) of N accelerators (paper App. B.6).

KVP x TPA = EP x TPE = N, all powers of two, TPA divides the KV heads, EP the
experts and TPE the expert width. A dense model has EP = 1.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InstanceError
from .model import Model

__all__ = ["MAX_WORLD", "Split", "check_split", "check_world", "parse_split", "valid_splits"]

MAX_WORLD = 1 << 16


@dataclass(frozen=True, order=True)
class Split:
    kvp: int
    tpa: int
    ep: int
    tpe: int

    def __str__(self) -> str:
        return f"{self.kvp},{self.tpa},{self.ep},{self.tpe}"

    @property
    def label(self) -> str:
        return f"KVP{self.kvp} TPA{self.tpa} EP{self.ep} TPE{self.tpe}"


def _pow2(value: int) -> bool:
    return value >= 1 and value & (value - 1) == 0


def check_world(world: int, option: str = "world") -> int:
    """N must be a power of two in 2 .. MAX_WORLD."""
    if not _pow2(world) or not 2 <= world <= MAX_WORLD:
        raise InstanceError(option, "", f"must be a power of two in 2..{MAX_WORLD}, got {world}")
    return world


def _problem(model: Model, world: int, s: Split) -> str | None:
    for label, value in (("KVP", s.kvp), ("TPA", s.tpa), ("EP", s.ep), ("TPE", s.tpe)):
        if not _pow2(value):
            return f"{label}={value} is not a power of two"
    if s.kvp * s.tpa != world:
        return f"KVP*TPA = {s.kvp * s.tpa}, world is {world}"
    if s.ep * s.tpe != world:
        return f"EP*TPE = {s.ep * s.tpe}, world is {world}"
    if model.mla is not None and model.heads % s.tpa:
        return f"TPA={s.tpa} does not divide num_attention_heads={model.heads} (MLA: heads split, latent replicated)"
    if model.kv_heads % s.tpa:
        return f"TPA={s.tpa} does not divide num_key_value_heads={model.kv_heads}"
    if not model.moe and s.ep != 1:
        return f"EP={s.ep} on a dense model (EP must be 1)"
    if model.experts % s.ep:
        return f"EP={s.ep} does not divide the {model.experts} experts"
    if model.width % s.tpe:
        return f"TPE={s.tpe} does not divide the expert width {model.width}"
    if model.shared_width % s.tpe:
        return f"TPE={s.tpe} does not divide the shared-expert width {model.shared_width}"
    if model.dense_layers and model.dense_width % s.tpe:
        return f"TPE={s.tpe} does not divide the dense FFN width {model.dense_width}"
    return None


def check_split(model: Model, world: int, split: Split) -> Split:
    """The split, or an InstanceError naming the broken rule (field ``split``)."""
    problem = _problem(model, world, split)
    if problem:
        raise InstanceError("split", "", problem)
    return split


def parse_split(text: str) -> Split:
    """``KVP,TPA,EP,TPE`` such as ``4,128,64,8``."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 4 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise InstanceError("split", "", f"expected four positive integers KVP,TPA,EP,TPE, got {text!r}")
    kvp, tpa, ep, tpe = (int(p) for p in parts)
    return Split(kvp, tpa, ep, tpe)


def valid_splits(model: Model, world: int) -> list[Split]:
    """Every valid split, sorted as (KVP, TPA, EP, TPE) tuples."""
    check_world(world)
    powers = [1 << b for b in range(world.bit_length())]
    out = []
    for tpa in powers:
        for ep in powers:
            s = Split(world // tpa, tpa, ep, world // ep)
            if _problem(model, world, s) is None:
                out.append(s)
    return sorted(out)
