"""The CLI's consoles: rich consoles on stdout and stderr that honour ``COLUMNS`` and never
end a line with spaces, and the progress bar of long commands (shown on a terminal only).

Imported by the first print (``app.out`` and ``app.err`` build their console then): ``ocsplan
--help`` does not import rich."""

from __future__ import annotations

import os
import re
from types import TracebackType
from typing import IO, Any, cast

from rich.console import Console, ConsoleDimensions

from .streams import PIPED_WIDTH, Stream

__all__ = ["PIPED_WIDTH", "Bar", "StreamConsole", "fit_table"]


class StreamConsole(Console):
    """A console on stdout (or stderr): a terminal's own width; piped, ``COLUMNS`` if set,
    else :data:`PIPED_WIDTH`. Read at each print, so a ``COLUMNS`` set later counts (rich would
    keep the ``COLUMNS`` and ``LINES`` of the moment the console is built)."""

    def __init__(self, *, stderr: bool = False, **options: Any) -> None:
        super().__init__(file=cast(IO[str], Stream(stderr)), highlight=False, emoji=False, **options)
        if "width" not in options and "height" not in options:
            self._width = self._height = None  # COLUMNS and LINES are read by size, at each print

    def print(self, *objects: Any, **options: Any) -> None:
        """As rich prints, with every table fitted to the width first (:func:`fit_table`)."""
        from rich.table import Table

        for item in objects:
            if isinstance(item, Table):
                fit_table(self, item)
        super().print(*objects, **options)

    @property
    def size(self) -> ConsoleDimensions:
        columns, lines = os.environ.get("COLUMNS", ""), os.environ.get("LINES", "")
        if self._width is None and self._height is None and columns.isdigit() and lines.isdigit():
            found = ConsoleDimensions(int(columns) - self.legacy_windows, int(lines))  # as rich (a dumb terminal too)
        else:
            found = super().size
        if self.is_terminal or columns.isdigit():
            return found
        return ConsoleDimensions(PIPED_WIDTH, found.height)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        width, height = new_size
        self._width, self._height = width, height


def fit_table(console: Console, table: Any) -> None:
    """A table wider than the console keeps every number whole and every word legible: the
    box loses its vertical rules, text columns fold onto more lines (never "…"), and numeric
    columns and short tokens keep their width (:data:`_ATOM`). Numbers are rarely wider than ten characters, so the
    80-column tables of solve, decode, pareto and faults stay whole."""
    from rich import box
    from rich.measure import Measurement

    wide = console.options.update_width(1 << 16)  # measured unclamped: its natural width
    if Measurement.get(console, wide, table).maximum <= console.width:
        return
    table.box = box.SIMPLE_HEAD
    table.show_edge = False
    table.pad_edge = False
    table.collapse_padding = True
    # Every column gets a fixed width: numbers their widest cell; short tokens (ids, splits, names)
    # theirs while the width allows, the narrowest first; the other columns share what is left in
    # proportion to their widest cell, at least _FOLDED characters each, and fold.
    cells = [[str(cell) for cell in column.cells if str(cell)] for column in table.columns]
    heads = [max(map(len, str(column.header).replace("/", "/ ").split()), default=1) for column in table.columns]
    widest = [max(max(map(len, c), default=1), min(h, _HEAD)) for c, h in zip(cells, heads, strict=True)]
    numeric = [bool(c) and all(_NUMBER.match(x) for x in c) for c in cells]
    width = {i: widest[i] for i, n in enumerate(numeric) if n}
    spare = console.width - 2 * (len(table.columns) - 1) - sum(width.values())
    rest = [i for i in range(len(cells)) if i not in width]
    spare -= _FOLDED * len(rest)
    tokens = sorted((widest[i], i) for i in rest
                    if cells[i] and all(len(x) <= _ATOM and not _SPACE.search(x) for x in cells[i]))
    for w, i in tokens:
        if w - _FOLDED <= spare:
            spare -= max(0, w - _FOLDED)
            width[i] = max(w, _FOLDED)
    folded = [i for i in rest if i not in width]
    wanted = sum(max(0, widest[i] - _FOLDED) for i in folded) or 1
    for i in folded:
        width[i] = _FOLDED + max(0, spare) * max(0, widest[i] - _FOLDED) // wanted
    for i, column in enumerate(table.columns):
        column.overflow = "fold"
        column.width = width[i]
        column.min_width = None
        if isinstance(column.header, str) and len(column.header) > width[i]:
            column.header = column.header.replace("/", "/ ")  # "tokens/s/user" wraps at its slashes


_FOLDED = 4  # the least a folded column keeps
_HEAD = 6  # a header word up to this long is not folded (a column is at least as wide)
_ATOM = 12  # a cell without spaces up to this long (an id, a split "4,128,64,8") is not folded
_SPACE = re.compile(r"\s")
# a number with an optional unit ("4KiB", "1.695 us", "36.1%", "17/18", "x1.23"): never split
_NUMBER = re.compile(r"^[x~<>=+-]?[\d./]+(?:e[+-]?\d+)?\s?[A-Za-z%/]{0,8}$")


class Bar:
    """A progress bar on stderr for a long command: shown only when stderr is a terminal and
    ``quiet`` is off, so pipes and CI logs stay clean. ``update(done, total)`` or ``advance()``."""

    def __init__(self, console: Console, description: str, total: int | None = None, *, quiet: bool = False) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        # a terminal that can move the cursor (not TERM=dumb): else rich would print every frame
        self.shown = not quiet and console.is_terminal and console.is_interactive
        self._progress = Progress(TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(),
                                  TimeElapsedColumn(), console=console, transient=True, disable=not self.shown)
        self._task = self._progress.add_task(description, total=total)

    def __enter__(self) -> Bar:
        self._progress.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._progress.stop()

    def update(self, done: int, total: int | None = None, description: str | None = None) -> None:
        """``done`` of ``total`` units (``None``: total unchanged)."""
        fields: dict[str, Any] = {"completed": done}
        if total is not None:
            fields["total"] = total
        if description is not None:
            fields["description"] = description
        self._progress.update(self._task, **fields)

    def advance(self, step: int = 1, description: str | None = None) -> None:
        if description is not None:
            self._progress.update(self._task, description=description)
        self._progress.advance(self._task, step)
