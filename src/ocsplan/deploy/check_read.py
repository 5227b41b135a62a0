"""The independent MSCCL checker's XML reader: the executor's limits (the checker's own copies), a bounded
parse into threadblocks of step tuples, and the limits re-derived from the file.

Part of :mod:`ocsplan.deploy.check` (which executes what this reads); like it, it imports nothing of
the writer (:mod:`ocsplan.deploy.msccl`). Hostile text is refused before or while parsing (see
:func:`_read`). A file laid out one tag per line, as the writers lay theirs out, has its step lines
decoded here and only its algo/gpu/tb tags parsed (:func:`_read_lines`, a fifth of the parse's
Python work); the layout is the reader's own rule, checked line by line, not the writer's code.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import dataclass
from operator import itemgetter

from ..errors import OcsplanError

__all__ = ["BUFFERS", "INT16", "MAX_CHANNELS", "MAX_TBS_PER_CHANNEL", "MAX_XML_ATTR_CHARS", "MAX_XML_DEPTH",
           "MSCCL_MAX_COUNT", "PROTOCOLS", "CheckError", "UnsafeXmlError"]

# the checker's own copies of the executor's limits (msccl-executor-nccl src/include/msccl/msccl_struct.h)
MSCCL_MAX_COUNT = 72  # a step's cnt must stay below it
MAX_CHANNELS = 32  # MAXCHANNELS (src/include/device.h)
MAX_TBS_PER_CHANNEL = 32  # MSCCL_MAX_NUM_THREAD_BLOCKS_PER_CHANNEL (msccl_struct.h)
INT16 = 32767  # srcOffset, dstOffset, dependentStep, step index: int16_t (msccl_struct.h)
PROTOCOLS = ("Simple", "LL", "LL128")  # the executor's protocols
BUFFERS = ("i", "o", "s")  # input, output, scratch
MAX_XML_DEPTH = 8  # element nesting (algo > gpu > tb > step is 4)
MAX_XML_ATTR_CHARS = 1024  # characters of one attribute value
_FEED = 1 << 16  # characters fed to the parser at a time



class CheckError(OcsplanError):
    """MSCCL XML that does not compute its collective on the axis graph."""


class UnsafeXmlError(OcsplanError):
    """Text refused before it is parsed or executed (a DTD, too deep, too long an attribute)."""


class _Reader:
    """An ``xml.etree`` parser target: keeps only the algo header, the first gpu's chunk counts and
    each threadblock's steps as tuples (no element tree), and enforces the bounds as elements open."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.path: list[str] = []
        self.algo: dict[str, str] | None = None
        self.gpu_attrs: list[dict[str, str]] = []
        self.gpus: list[list[_Tb]] = []
        self.steps: list[_Step] | None = None  # the open threadblock's
        self.signals: list[bool] = []
        self.parsed: dict[tuple[str, ...], tuple[_Step, bool]] = {}  # a step's values -> (step, signalled)

    def start(self, tag: str, attrib: dict[str, str]) -> None:
        path = self.path
        path.append(tag)
        steps = self.steps
        if tag == "step" and steps is not None and len(path) == 4:
            # the common case, inline: the ten attributes, s the step's index and the other nine
            # values those of a step _step already parsed and bounded
            if len(attrib) == len(_STEP_KEYS) and attrib.get("s") == str(len(steps)):
                try:
                    entry = self.parsed.get(_STEP_VALUES(attrib))
                except KeyError:
                    entry = None
                if entry is not None:
                    steps.append(entry[0])
                    self.signals.append(entry[1])
                    return
            self._step(attrib)
            return
        if len(path) > MAX_XML_DEPTH:
            raise UnsafeXmlError(f"{self.source}: <{tag[:40]}>: nested deeper than {MAX_XML_DEPTH} elements")
        if len(tag) > MAX_XML_ATTR_CHARS:
            raise UnsafeXmlError(f"{self.source}: <{tag[:40]}...>: element name of {len(tag)} "
                                 f"characters, the limit is {MAX_XML_ATTR_CHARS}")
        self._bounded(tag, attrib)
        if len(path) == 1:
            if tag != "algo":
                raise CheckError(f"{self.source}: root element {tag!r}, expected algo")
            self.algo = dict(attrib)
        elif len(path) == 2 and tag == "gpu":
            g = len(self.gpus)
            if _int(attrib, "id", self.source) != g:
                raise CheckError(f"{self.source}: gpu {g} has id {attrib.get('id')}")
            self.gpu_attrs.append(dict(attrib))
            self.gpus.append([])
        elif len(path) == 3 and tag == "tb" and path[1] == "gpu":
            tbs = self.gpus[-1]
            where = f"{self.source}: gpu {len(self.gpus) - 1} tb {len(tbs)}"
            self.steps, self.signals = [], []
            tbs.append(_Tb(_int(attrib, "send", where), _int(attrib, "recv", where), _int(attrib, "chan", where),
                           self.steps, self.signals))

    def _bounded(self, tag: str, attrib: dict[str, str]) -> None:
        for key, value in attrib.items():
            if len(value) > MAX_XML_ATTR_CHARS or len(key) > MAX_XML_ATTR_CHARS:
                raise UnsafeXmlError(f"{self.source}: {tag[:40]} attribute {key[:40]}: "
                                     f"{max(len(key), len(value))} characters, the limit is "
                                     f"{MAX_XML_ATTR_CHARS}")

    def _step(self, a: dict[str, str]) -> None:
        steps = self.steps
        assert steps is not None
        k = len(steps)
        try:
            step = (a["type"], a["srcbuf"], int(a["srcoff"]), a["dstbuf"], int(a["dstoff"]), int(a["cnt"]),
                    int(a["depid"]), int(a["deps"]))
            if int(a["s"]) != k:
                raise CheckError(f"{self._where()} step {k}: s={a['s']}")
            signal = a["hasdep"] == "1" or int(a["hasdep"]) == 1
            self.signals.append(signal)
        except (KeyError, ValueError):
            self._bounded("step", a)
            for key in _STEP_INTS:
                _int(a, key, f"{self._where()} step {k}")
            for key in ("type", "srcbuf", "dstbuf"):
                if key not in a:
                    raise CheckError(f"{self._where()} step {k}: attribute {key} missing") from None
            raise
        if sum(map(len, a.values())) > MAX_XML_ATTR_CHARS or len(a) > len(_STEP_KEYS):
            self._bounded("step", a)  # one value may be over the bound (names: see start)
        elif len(self.parsed) < _PARSED and len(a) == len(_STEP_KEYS):
            # steps repeat across ranks: the next with these values (all within the bound, all ten
            # attributes named) is taken from here in start, its s and hasdep's length checked there
            self.parsed[_STEP_VALUES(a)] = (step, signal)
        steps.append(step)

    def _where(self) -> str:
        return f"{self.source}: gpu {len(self.gpus) - 1} tb {len(self.gpus[-1]) - 1}"

    def end(self, tag: str) -> None:
        self.path.pop()
        if tag == "tb" and len(self.path) == 2:
            self.steps = None

    def close(self) -> None:
        return None


def _read(text: str, source: str) -> _Reader:
    """Parse ``text`` refusing a DOCTYPE or ENTITY declaration (no entity expansion), nesting
    deeper than MAX_XML_DEPTH and names or attribute values over MAX_XML_ATTR_CHARS, as they are
    met; the parser is fed _FEED characters at a time and builds no tree. A file in the line layout
    the writers use is read by :func:`_read_lines` (the same result, a fifth of the Python work);
    anything else, and every fault, by the parser alone, so its refusals are the parser's."""
    if "<!" in text:  # one scan of a file that has neither
        for decl in ("<!DOCTYPE", "<!ENTITY"):
            if decl in text:
                raise UnsafeXmlError(f"{source}: {decl[2:]}: declarations are refused (MSCCL XML has none)")
    lined = _read_lines(text, source)
    return lined if lined is not None else _read_parsed(text, source)


def _read_parsed(text: str, source: str) -> _Reader:
    """:func:`_read` by the parser alone (after the declarations are refused)."""
    reader = _Reader(source)
    parser = ET.XMLParser(target=reader)
    try:
        for at in range(0, len(text), _FEED):
            parser.feed(text[at:at + _FEED])
        parser.close()
    except ET.ParseError as exc:
        raise CheckError(f"{source}: not XML ({exc})") from None
    if reader.algo is None:
        raise CheckError(f"{source}: not XML (no element)")
    return reader


# One line of the line layout: a whole start or end tag of algo, gpu or tb (double-quoted values), or
# nothing; a step line is '<step s="K" ' then a _STEP_REST.
_TAG_LINE = re.compile(r'<(?:algo|gpu|tb)(?: [A-Za-z_][A-Za-z0-9_]*="[^"]*")*>|</(?:algo|gpu|tb)>|')
_NUM = r'"(-?[0-9]{1,9})"'
_STEP_REST = re.compile(rf'type="([a-z]{{1,8}})" srcbuf="([a-z]{{1,8}})" srcoff={_NUM} dstbuf="([a-z]{{1,8}})" '
                        rf'dstoff={_NUM} cnt={_NUM} depid={_NUM} deps={_NUM} hasdep="([01])"/>')
_STEP_OPEN = '<step s="'


def _read_lines(text: str, source: str) -> _Reader | None:
    """:func:`_read`'s result for text in the line layout, or None (then the parser reads it all).

    Every line must be a whole tag (:data:`_TAG_LINE`, handed to the same parser and _Reader, which
    keep their bounds) or a step of a threadblock the parser has just opened, with its index s and
    the nine other attributes in the writers' order (:data:`_STEP_REST`, short ASCII values). Between
    whole tags a line starts in content, so such a step line is to the parser exactly the step element
    it reads: it is decoded here (its values looked up when an earlier line had them) instead of
    passing through expat and _Reader.start one element at a time. Any departure, and any error of the
    parser or the _Reader, returns None: the full parse then runs from the start and says what it says."""
    if not text.endswith("\n"):
        return None
    reader = _Reader(source)
    parser = ET.XMLParser(target=reader)
    known: dict[str, tuple[_Step, bool, int]] = {}  # a step line -> (step, hasdep="1", its index s)
    seen: dict[str, tuple[_Step, bool]] = {}  # a step line after its index -> (step, hasdep="1")
    opens: list[str] = []  # '<step s="k" ' for k = 0, 1, ...
    tags: list[str] = []  # tag lines not yet fed
    steps: list[_Step] = []  # the open threadblock's (k >= 0: its tag is fed)
    signals: list[bool] = []
    k = -1
    tag_line, get = _TAG_LINE.fullmatch, known.get
    pos, n = 0, len(text)
    try:
        while pos < n:
            cut = n if pos + _FEED >= n else text.rfind("\n", pos, pos + _FEED) + 1
            if cut <= pos:
                return None  # a line of _FEED characters or more: not the layout
            lines = text[pos:cut - 1].split("\n")
            pos = cut
            for line in lines:
                entry = get(line)
                if entry is not None and entry[2] == k:  # the common case: a step line met before
                    steps.append(entry[0])
                    signals.append(entry[1])
                    k += 1
                    continue
                if not line.startswith(_STEP_OPEN):
                    if tag_line(line) is None:
                        return None
                    tags.append(line)
                    k = -1
                    continue
                if k < 0:
                    if not tags or not tags[-1].startswith("<tb "):
                        return None
                    parser.feed("\n".join(tags) + "\n")
                    tags.clear()
                    opened = reader.steps
                    if opened is None or opened is steps or opened or len(reader.path) != 3:
                        return None  # the tb not reported yet, or not a gpu's threadblock
                    steps, signals, k = opened, reader.signals, 0
                step = _step_line(line, k, opens, seen)
                if step is None:
                    return None
                if len(known) < _PARSED:
                    known[line] = (*step, k)
                steps.append(step[0])
                signals.append(step[1])
                k += 1
        parser.feed("\n".join(tags) + "\n")
        parser.close()
    except (ET.ParseError, OcsplanError):
        return None
    return reader if reader.algo is not None else None


def _step_line(line: str, k: int, opens: list[str], seen: dict[str, tuple[_Step, bool]]) -> tuple[_Step, bool] | None:
    """A step line's (step, hasdep="1") if it is step ``k`` in the writers' layout, else None."""
    while len(opens) <= k:
        opens.append(f'{_STEP_OPEN}{len(opens)}" ')
    head = opens[k]
    if not line.startswith(head):
        return None
    rest = line[len(head):]
    entry = seen.get(rest)
    if entry is None:
        m = _STEP_REST.fullmatch(rest)
        if m is None:
            return None
        kind, srcbuf, srcoff, dstbuf, dstoff, cnt, depid, deps, hasdep = m.groups()
        entry = ((kind, srcbuf, int(srcoff), dstbuf, int(dstoff), int(cnt), int(depid), int(deps)), hasdep == "1")
        if len(seen) < _PARSED:
            seen[rest] = entry
    return entry




_Step = tuple[str, str, int, str, int, int, int, int]  # type srcbuf srcoff dstbuf dstoff cnt depid deps
_STEP_INTS = ("s", "srcoff", "dstoff", "cnt", "depid", "deps", "hasdep")
_STEP_VALUES = itemgetter("type", "srcbuf", "srcoff", "dstbuf", "dstoff", "cnt", "depid", "deps", "hasdep")
_PARSED = 1 << 16  # distinct steps remembered while parsing (the paper's 512-rank all-reduce has 33,186)
_STEP_KEYS = ("s", "type", "srcbuf", "srcoff", "dstbuf", "dstoff", "cnt", "depid", "deps", "hasdep")


@dataclass
class _Tb:
    send: int
    recv: int
    chan: int
    steps: list[_Step]
    signals: list[bool]  # hasdep="1": the executor raises this step's flag


def _int(attrib: dict[str, str], key: str, where: str) -> int:
    text = attrib.get(key)
    if text is None:
        raise CheckError(f"{where}: attribute {key} missing")
    try:
        return int(text)
    except ValueError:
        raise CheckError(f"{where}: attribute {key}={text!r} is not an integer") from None


def _parse(text: str, source: str) -> tuple[dict[str, str], list[dict[str, str]], list[list[_Tb]]]:
    """The algo's attributes, every gpu's attributes and every gpu's threadblocks."""
    reader = _read(text, source)
    algo = reader.algo
    assert algo is not None
    if len(reader.gpus) != _int(algo, "ngpus", source):
        raise CheckError(f"{source}: ngpus={algo.get('ngpus')} but {len(reader.gpus)} gpu elements")
    if not reader.gpus:
        raise CheckError(f"{source}: no gpu element")
    return algo, reader.gpu_attrs, reader.gpus


def _limits(algo: dict[str, str], gpu_attrs: list[dict[str, str]], gpus: list[list[_Tb]], source: str,
            protocol: str | None, max_steps: int) -> dict[str, int]:
    """The executor's limits, re-derived from the file: its protocol (the index's), every gpu's
    i/o/s chunk counts read, within the int16 offsets and the same on every gpu (returned), nchunksperloop
    covering them, at most MAX_TBS_PER_CHANNEL send and receive peers per channel and ``max_steps`` steps
    per threadblock (before any step is looked at)."""
    proto = algo.get("proto")
    if proto not in PROTOCOLS:
        raise CheckError(f"{source}: proto: {str(proto)[:40]!r}, the executor runs {', '.join(PROTOCOLS)}")
    if protocol is not None and proto != protocol:
        raise CheckError(f"{source}: proto: {proto}, the export's index.json says {protocol[:40]}")
    declared: dict[str, int] = {}
    for x, attrs in enumerate(gpu_attrs):
        counts = {name: _int(attrs, f"{name}_chunks", f"{source}: gpu {x}") for name in BUFFERS}
        for name, count in counts.items():
            if not 0 <= count <= INT16 + 1:
                raise CheckError(f"{source}: gpu {x}: {name}_chunks: {count}, the executor's int16 offsets allow "
                                 f"0..{INT16 + 1}")
        if x and counts != declared:
            raise CheckError(f"{source}: gpu {x}: chunks i/o/s {counts['i']}/{counts['o']}/{counts['s']}, gpu 0 "
                             f"declares {declared['i']}/{declared['o']}/{declared['s']} (one collective)")
        declared = counts
    loop = _int(algo, "nchunksperloop", source)
    if not max(declared["i"], declared["o"], 1) <= loop <= INT16 + 1:
        raise CheckError(f"{source}: nchunksperloop: {loop}, expected {max(declared['i'], declared['o'], 1)}.."
                         f"{INT16 + 1} (the buffers' chunks, int16 offsets)")
    for x, tbs in enumerate(gpus):
        per_channel: dict[tuple[str, int], int] = defaultdict(int)  # send / receive peers per channel
        for b, tb in enumerate(tbs):
            for role, peer in (("send", tb.send), ("receive", tb.recv)):
                per_channel[(role, tb.chan)] += peer != -1
                if per_channel[(role, tb.chan)] > MAX_TBS_PER_CHANNEL:
                    raise CheckError(f"{source}: gpu {x}: more than {MAX_TBS_PER_CHANNEL} {role} peers on channel "
                                     f"{tb.chan}, the executor's limit")
            if len(tb.steps) > max_steps:
                raise CheckError(f"{source}: gpu {x} tb {b}: {len(tb.steps)} steps, the export's limit is "
                                 f"{max_steps} (max_steps; the executor's step index is an int16)")
    return declared
