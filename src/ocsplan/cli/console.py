"""The CLI's consoles: rich consoles on stdout and stderr that honour ``COLUMNS`` and never
end a line with spaces, and the progress bar of long commands (shown on a terminal only)."""

from __future__ import annotations

import os
import re
import sys
from types import TracebackType
from typing import IO, Any, cast

from rich.console import Console, ConsoleDimensions

from ..errors import InstanceError

__all__ = ["PIPED_WIDTH", "Bar", "StreamConsole", "write_stdout", "write_stream"]

# Width when the stream is not a terminal and COLUMNS is unset: wide enough for the plan table.
PIPED_WIDTH = 200

_TRAILING = re.compile(r"[ \t]+(?=\n)")


def write_stream(stream: IO[str], text: str, name: str) -> None:
    """Write and flush ``text``; a stream that cannot take it (``> /dev/full``, a closed pipe)
    is one line naming it (an :class:`InstanceError`, exit 2), not a traceback.

    The failed stream is pointed at ``/dev/null`` so that the interpreter's last flush of
    what is still buffered does not print a second message."""
    try:
        if text:
            stream.write(text)
        stream.flush()
    except OSError as exc:
        _silence(stream)
        raise InstanceError(name, "", f"cannot write: {exc.strerror or exc}") from None


def write_stdout(text: str) -> None:
    """``text`` on stdout, as :func:`write_stream`."""
    write_stream(sys.stdout, text, "stdout")


def _silence(stream: IO[str]) -> None:
    try:
        fd = stream.fileno()
    except (OSError, ValueError):  # not a file (pytest's capture, CliRunner): nothing to silence
        return
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, fd)
    os.close(null)


class _Stream:
    """sys.stdout or sys.stderr as they are at each write (pytest and CliRunner swap them),
    with the spaces rich pads a table's title and caption lines with removed."""

    def __init__(self, stderr: bool) -> None:
        self._stderr = stderr

    @property
    def target(self) -> IO[str]:
        return sys.stderr if self._stderr else sys.stdout

    def write(self, text: str) -> int:
        write_stream(self.target, _TRAILING.sub("", text), "stderr" if self._stderr else "stdout")
        return len(text)

    def flush(self) -> None:
        write_stream(self.target, "", "stderr" if self._stderr else "stdout")

    def isatty(self) -> bool:
        return self.target.isatty()

    def __getattr__(self, name: str) -> Any:  # encoding, fileno, ...: the stream's own
        return getattr(self.target, name)


class StreamConsole(Console):
    """A console on stdout (or stderr): a terminal's own width; piped, ``COLUMNS`` if set,
    else :data:`PIPED_WIDTH`. Read at each print, so a ``COLUMNS`` set later counts."""

    def __init__(self, *, stderr: bool = False, **options: Any) -> None:
        super().__init__(file=cast(IO[str], _Stream(stderr)), highlight=False, emoji=False, **options)

    @property
    def size(self) -> ConsoleDimensions:
        found = super().size
        if self.is_terminal or os.environ.get("COLUMNS", "").isdigit():
            return found
        return ConsoleDimensions(PIPED_WIDTH, found.height)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        width, height = new_size
        self._width, self._height = width, height


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
