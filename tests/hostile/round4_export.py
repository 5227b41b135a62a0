"""Hostile inputs, round 4, category 1: ``export --check`` is a checker that re-derives every limit.

The base plan's MSCCL export with one change each: a chunk count of a gpu other than gpu 0, an
offset outside the declared chunks or the int16 offsets, a protocol the executor does not run,
``nchunksperloop`` past the buffers, more steps in a threadblock than ``max_steps``, a dependency
out of range or on an unsignalled step, an ``index.json`` with an unknown key, a fraction of
100,000 digits, ``max_steps`` past the int16 step index, a file name with a directory. Each is one
line naming the file and the field: ``check failed`` (exit 1) for a file the executor would not
run as the index says, exit 2 for input refused before any execution."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["EXPORT_CASES", "build_export"]

XML = "m.0.0.xml"


def _gpu(text: str, gpu: int, attr: str, value: object) -> str:
    head = re.search(rf'<gpu id="{gpu}" [^>]*>', text)
    assert head is not None
    return text.replace(head.group(0), re.sub(rf'{attr}="[^"]*"', f'{attr}="{value}"', head.group(0)), 1)


def _once(old: str, new: str) -> Callable[[str], str]:
    def edit(text: str) -> str:
        assert old in text, old
        return text.replace(old, new, 1)
    return edit


NOP = '<step s="{k}" type="nop" srcbuf="i" srcoff="-1" dstbuf="o" dstoff="-1" cnt="0" depid="-1" deps="-1" hasdep="0"/>'
# name -> (edit of m.0.0.xml, what the one line names)
XML_EDITS: dict[str, tuple[Callable[[str], str], str]] = {
    "gpu1-i-chunks-1e9": (lambda t: _gpu(t, 1, "i_chunks", 10**9), "gpu 1: i_chunks: 1000000000, the executor's "
                                                                   "int16 offsets allow 0..32768"),
    "gpu5-s-chunks-negative": (lambda t: _gpu(t, 5, "s_chunks", -1), "gpu 5: s_chunks: -1"),
    "gpu3-o-chunks-text": (lambda t: _gpu(t, 3, "o_chunks", "zz"), "gpu 3: attribute o_chunks='zz' is not an integer"),
    "gpu7-i-chunks-other": (lambda t: _gpu(t, 7, "i_chunks", 1), "gpu 7: chunks i/o/s 1/2/0, gpu 0 declares 2/2/0"),
    "srcoff-past-chunks": (_once('srcoff="1" dstbuf="o" dstoff="1" cnt="1" depid="-1"',
                                 'srcoff="7" dstbuf="o" dstoff="1" cnt="1" depid="-1"'),
                           "srcoff: chunks 7..7 of i, which declares 2 (i_chunks)"),
    "srcoff-2^40": (_once('srcoff="1"', f'srcoff="{2**40}"'), f"srcoff: chunks {2**40}..{2**40} of i"),
    "dstoff-negative": (_once('dstoff="1"', 'dstoff="-2"'), "dstoff: chunks -2..-2 of o"),
    "proto-bogus": (_once('proto="Simple"', 'proto="Bogus"'), "proto: 'Bogus', the executor runs Simple, LL, LL128"),
    "proto-not-the-index": (_once('proto="Simple"', 'proto="LL"'), "proto: LL, the export's index.json says Simple"),
    "nchunksperloop-1e9": (_once('nchunksperloop="2"', f'nchunksperloop="{10**9}"'),
                           "nchunksperloop: 1000000000, expected 2..32768"),
    "nchannels-40": (_once('nchannels="1"', 'nchannels="40"'), "nchannels: 40, the executor allows 1..32"),
    "steps-past-max-steps": (_once("</tb>", "".join(NOP.format(k=k) for k in range(2, 200)) + "</tb>"),
                             "gpu 0 tb 0: 200 steps, the export's limit is 128"),
    "depid-out-of-range": (_once('depid="4" deps="8"', 'depid="99" deps="8"'), "depid/deps: (99, 8) names no step"),
    "deps-2^40": (_once('depid="4" deps="8"', f'depid="4" deps="{2**40}"'), f"depid/deps: (4, {2**40}) names no step"),
    "hasdep-0-on-a-waited-step": (_once('deps="-1" hasdep="1"', 'deps="-1" hasdep="0"'),
                                  "which the executor never signals"),
    "srcbuf-unknown": (_once('type="s" srcbuf="o"', 'type="s" srcbuf="z"'),
                       "srcbuf/srcoff: o[0], its send (gpu 0 tb 1 step 0) reads z[0]"),
}
# name -> (edit of index.json, what the one line names)
INDEX_EDITS: dict[str, tuple[Callable[[dict[str, Any]], object], str]] = {
    "v-bytes-100000-digits": (lambda d: d["demands"][0].update(v_bytes="1/" + "9" * 100000),
                              "demands[0].v_bytes: 100002 characters, the limit is 64"),
    "chunk-bytes-5000-digits": (lambda d: d["demands"][0].update(chunk_bytes="9" * 5000),
                                "demands[0].chunk_bytes: 5000 characters, the limit is 64"),
    "v-bytes-negative": (lambda d: d["demands"][0].update(v_bytes="-4096"),
                         "demands.0.v_bytes: '-4096' does not match"),
    "max-steps-1e9": (lambda d: d.update(max_steps=10**9), "max_steps: 1000000000, the executor's step index is an "
                                                          "int16 (at most 32767)"),
    "protocol-bogus": (lambda d: d.update(protocol="Bogus"), "protocol: 'Bogus' is not one of"),
    "unknown-key": (lambda d: d.update(zzz=1), "('zzz' was unexpected)"),
    "file-with-a-directory": (lambda d: d["demands"][0].update(file="../plan.json"), "demands.0.file: '../plan.json'"),
    "h-negative": (lambda d: d["demands"][0].update(h=-1), "demands.0.h: -1 is less than the minimum of 0"),
    "groups-text": (lambda d: d["demands"][0].update(groups="all"), "demands.0.groups: 'all' is not of type 'array'"),
}


def build_export(d: Path, files: dict[str, str]) -> None:
    """The base plan's export (``x-base``) and one directory per edit (``x-<name>``)."""
    from ocsplan.deploy.export import export_msccl
    from ocsplan.plan import load_plan

    base = export_msccl(load_plan(files["plan_json"]), "Simple", 128)
    assert XML in base, sorted(base)

    def put(name: str, texts: dict[str, str]) -> None:
        folder = d / f"x-{name}"
        folder.mkdir(exist_ok=True)
        for file, text in texts.items():
            (folder / file).write_text(text)
        files[f"x_{name}".replace("-", "_").replace("^", "")] = str(folder)

    put("base", base)
    for name, (edit, _) in XML_EDITS.items():
        put(name, {**base, XML: edit(base[XML])})
    for name, (change, _) in INDEX_EDITS.items():
        index = json.loads(base["index.json"])
        change(index)
        put(name, {**base, "index.json": json.dumps(index)})


def _check(name: str, names: str, file: str) -> tuple[str, tuple[str, ...], int, str]:
    """``export --check`` of the edited directory: ``check failed``, the file and the field named."""
    where = f"x-{name}/{file}: " if names.startswith(("gpu", "proto", "nchunks", "nchannels", "demands", "max_steps",
                                                      "protocol")) else ""
    return (f"export-check-{name}", ("export", "--check", "{x_" + name.replace("-", "_").replace("^", "") + "}"), 1,
            where + names)


# (id, argv, status, what the one line names)
EXPORT_CASES: tuple[tuple[str, tuple[str, ...], int, str], ...] = (
    *(_check(name, names, XML) for name, (_, names) in XML_EDITS.items()),
    *(_check(name, names, "index.json") for name, (_, names) in INDEX_EDITS.items()),
)
