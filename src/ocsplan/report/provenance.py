"""Where a page comes from: the ocsplan version, the date, and every input file with its SHA-256,
so a reader can tell which files a figure was drawn from and check them.

Pure: the CLI hashes the bytes it read and passes the date (``SOURCE_DATE_EPOCH`` when set,
as reproducible builds do, else today's UTC date: the one part of a page that changes
between runs on different days).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from html import escape

__all__ = ["Provenance", "Source", "page_date", "provenance_section", "source"]


@dataclass(frozen=True)
class Source:
    """One input: the option it came with, its name, size and SHA-256."""

    option: str
    name: str
    size: int
    sha256: str


@dataclass(frozen=True)
class Provenance:
    """The version, the date (ISO, UTC) and the inputs of a page."""

    version: str
    date: str
    sources: tuple[Source, ...]


def page_date(source_date_epoch: str | None) -> str:
    """The page's date: ``SOURCE_DATE_EPOCH`` (seconds, as reproducible builds set it) when it
    is an integer, else today, in UTC, ISO format."""
    import datetime as dt

    if source_date_epoch is not None and source_date_epoch.strip().isdigit():
        seconds = min(int(source_date_epoch.strip()), 253402300799)  # 9999-12-31T23:59:59Z at most
        return dt.datetime.fromtimestamp(seconds, dt.UTC).date().isoformat()
    return dt.datetime.now(dt.UTC).date().isoformat()


def source(option: str, name: str, data: bytes) -> Source:
    """The :class:`Source` of ``data`` read from ``name``."""
    return Source(option, name, len(data), hashlib.sha256(data).hexdigest())


def provenance_section(p: Provenance) -> str:
    """The page's last section: version, date, and a table of the inputs."""
    rows = "".join(f'<tr><td class="t">{escape(s.option)}</td><td class="t">{escape(s.name)}</td>'
                   f'<td data-value="{s.size}">{s.size:,}</td><td class="t"><code>{s.sha256}</code></td></tr>'
                   for s in p.sources)
    return (f"<h2>Provenance</h2><p>Written by ocsplan {escape(p.version)} on {escape(p.date)} from these files "
            "(SHA-256 of their bytes):</p>"
            '<table class="provenance"><tr><th data-key="option">input</th><th data-key="name">file</th>'
            '<th data-key="bytes">bytes</th><th data-key="sha256">SHA-256</th></tr>' + rows + "</table>")
