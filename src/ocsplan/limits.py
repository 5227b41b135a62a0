"""Size limits every reader applies at read time (README "Limits").

An input beyond a limit is refused with one line naming the file and the field
(exit status 2) before any work starts, so no input can make a command hang or
exhaust memory. The checks here are plain functions: each takes the value, a
``fail(field, message)`` factory for the caller's error type and the field name.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from itertools import accumulate

from .errors import OcsplanError

__all__ = [
    "CONNECT_TIMEOUT_S",
    "MAX_AXES",
    "MAX_BIT_TYPES",
    "MAX_CIRCUITS",
    "MAX_COLUMNAR_BYTES",
    "MAX_COLUMNAR_CIRCUITS",
    "MAX_CONNECT_TIMEOUT_S",
    "MAX_COUNT",
    "MAX_DEMANDS",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_JOBS",
    "MAX_JSON_BYTES",
    "MAX_LATENCY_S",
    "MAX_LINK_BPS",
    "MAX_MESHES",
    "MAX_MODEL_EXPERTS",
    "MAX_MODEL_FILE_BYTES",
    "MAX_MODEL_HIDDEN",
    "MAX_MODEL_LAYERS",
    "MAX_MODEL_VOCAB",
    "MAX_PAYLOAD",
    "MAX_PORTS",
    "MAX_ROUTE_ENTRIES",
    "MAX_ROUTE_EXPANSION",
    "MAX_SEED",
    "MAX_TIME_LIMIT_S",
    "MAX_TOTAL_DEMANDS",
    "MAX_TREE_ROUTE_RANKS",
    "MAX_WEIGHT",
    "MAX_WORLD",
    "MIN_LATENCY_S",
    "MIN_LINK_BPS",
    "Fail",
    "check_float",
    "check_int",
    "nesting_depth",
]

MAX_WORLD = 1 << 20  # accelerators (ranks) of an instance, plan, fabric or circuits file
MAX_PORTS = 4096  # ports per accelerator; also bounds every multiplicity
MAX_MESHES = 64  # meshes of one instance
MAX_AXES = 64  # axes of one mesh (sizes of one are allowed, so not just n)
MAX_DEMANDS = 64  # demands of one axis
MAX_TOTAL_DEMANDS = 1024  # demands of one instance (8 meshes x 2 axes x 64 demands: solve in 16 s, 125 MB)
MAX_BIT_TYPES = 512  # bit types of the partition search: the product over multi-axis meshes of their axis classes
MAX_TREE_ROUTE_RANKS = 1 << 12  # ranks of an axis with an explicit tree-route (5 s at 2^12, 35 s at 2^14)
MAX_PAYLOAD = 1 << 50  # bytes of one demand's buffer (1 PiB)
MAX_WEIGHT = 1e12  # calls per step of one demand
MIN_LATENCY_S, MAX_LATENCY_S = 1e-15, 1e3  # per-phase latency
MIN_LINK_BPS, MAX_LINK_BPS = 1.0, 1e18  # bytes per second of one circuit
MAX_COUNT = 10**6  # ``generate --count``
MAX_TIME_LIMIT_S = 1e7  # ``--time-limit`` (about 116 days)
MAX_DEPTH = 64  # nesting of tables / arrays / objects in any input file
MAX_FILE_BYTES = 256 << 20  # size of any input file
# a JSON file ocsplan reads back (plan, circuits, simulation, decode, faults, export index.json, OCS index,
# plan cache entry; a larger cache entry is made again): 32 MiB is 3.5 times the circuits of a full
# 1024-accelerator, 64-port fabric (32,768 circuits with their routing tables: about 9 MiB)
MAX_JSON_BYTES = 32 << 20
# circuits of one circuits file, in all (each node has at most the file's fabric.ports): twice the full
# 1024 x 64-port fabric's 32,768, about 18 MiB of JSON, within MAX_JSON_BYTES
MAX_CIRCUITS = 1 << 16
# a columnar circuits file (``ocsplan.circuits/2``, what a realization beyond the two limits above is written
# as): its size, its circuits, and its routing-table entries (a (peer, ports) pair of one node in one phase) and
# cells (a node in a phase), each in all over its routes, checked before any table is expanded. The realization
# at N = 65536 of scripts/bench_scale.py (1.4 M circuits, 38 M entries, 52 MiB) is within them. Run-length
# runs make cells cheap to state, so entries and cells are also bounded per character of the file: what a file
# expands to is paid for by its size (the bench instance: 0.3 - 0.73 entries and under 0.1 cells per character;
# a 45 KB file once stated 2^26 entries, 11 GiB and 3 minutes to read). 64 MiB keeps the worst file to parse
# (empty arrays) near /1's 830 MB per 32 MiB: about 1.7 GB.
MAX_COLUMNAR_BYTES = 64 << 20
MAX_COLUMNAR_CIRCUITS = 1 << 21
MAX_ROUTE_ENTRIES = 1 << 26
MAX_ROUTE_EXPANSION = 4  # routing-table entries, and cells, per character of a columnar circuits file
MAX_MODEL_FILE_BYTES = 1 << 20  # a model or accelerator file (config.json of the largest published: < 10 KiB)
MAX_SEED = (1 << 63) - 1  # every --seed: 0 .. 2^63 - 1
MAX_JOBS = 256  # every --jobs: local processes (or Dask workers with --scheduler local)
CONNECT_TIMEOUT_S = 10.0  # the default --connect-timeout (seconds a Dask scheduler may take to answer)
MAX_CONNECT_TIMEOUT_S = 3600.0  # every --connect-timeout (seconds a Dask scheduler may take to answer)

MAX_MODEL_LAYERS = 4096  # num_hidden_layers of a model file (the largest published is under 200)
MAX_MODEL_EXPERTS = 1 << 16  # routed (or shared) experts of a model (the largest published: 384)
MAX_MODEL_HIDDEN = 1 << 20  # hidden size, heads and head dims of a model
MAX_MODEL_VOCAB = 1 << 24  # vocabulary of a model (the largest published: about 262k)

Fail = Callable[[str, str], OcsplanError]


def check_int(value: object, fail: Fail, field: str, low: int, high: int) -> int:
    """``value`` as an int in [low, high] (bools, floats and strings refused)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise fail(field, f"expected an integer, got {_short(value)}")
    if not low <= value <= high:
        raise fail(field, f"must be between {low} and {high}, got {_short(value)}")
    return value


def check_float(value: object, fail: Fail, field: str, low: float, high: float) -> float:
    """``value`` (int or float) as a finite float in [low, high]."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise fail(field, f"expected a number, got {_short(value)}")
    try:
        number = float(value)
    except OverflowError:
        raise fail(field, f"must be between {low:g} and {high:g}, got {_short(value)}") from None
    if not math.isfinite(number) or not low <= number <= high:
        raise fail(field, f"must be between {low:g} and {high:g}, got {_short(value)}")
    return number


def _short(value: object) -> str:
    """repr of a value, cut to one short line (a hostile value may be huge)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"an integer of {value.bit_length()} bits"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


_TOML_SKIP = re.compile(
    r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*'
)
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


# JSON in one pass: a string, or a run of neither brackets nor quotes; what is left is the brackets
# and the quotes no string closes (removed after: the brackets of stripping the strings, then the rest)
_JSON_NOT_BRACKET = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[^\[\]{}"]+')


def nesting_depth(text: str, toml: bool = False) -> int:
    """Deepest nesting of ``[]``/``{}`` outside strings (and TOML comments) of the text.

    Linear and non-recursive (regular expressions strip strings and everything but
    brackets), so it runs before a parser could recurse too deep.
    """
    if toml:
        brackets = _NOT_BRACKET.sub("", _TOML_SKIP.sub("", text))
    else:
        fast = _json_depth_fast(text)
        if fast is not None:
            return fast
        brackets = _JSON_NOT_BRACKET.sub("", text).replace('"', "")
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


# ASCII to "[" (opening), "]" (closing), '"' or nothing: the brackets and quotes of a JSON text
_JSON_SKELETON = str.maketrans({chr(i): None for i in range(128) if chr(i) not in '[]{}"'}
                               | {"{": "[", "}": "]"})


def _json_depth_fast(text: str) -> int | None:
    """:func:`nesting_depth` of a JSON text with no backslash, closed strings and balanced, shallow
    brackets (every file ocsplan writes), by string methods at C speed; None for any other text.

    With no backslash every quote opens or closes a string, so the even pieces between quotes are
    what lies outside strings. Balanced brackets are a forest whose height is the deepest nesting,
    and each ``replace("[]", "")`` removes exactly its leaves: the passes until nothing is left are
    the depth. A bracket unmatched, a character left (non-ASCII outside a string) or a text deeper
    than :data:`MAX_DEPTH` (the passes are bounded) is None: the general strip answers."""
    if "\\" in text:
        return None
    pieces = text.translate(_JSON_SKELETON).split('"')
    if not len(pieces) % 2:
        return None  # an unclosed quote
    brackets = "".join(pieces[::2])
    for passes in range(MAX_DEPTH + 2):
        if not brackets:
            return passes
        shorter = brackets.replace("[]", "")
        if len(shorter) == len(brackets):
            return None
        brackets = shorter
    return None
