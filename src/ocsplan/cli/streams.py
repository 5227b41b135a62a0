"""The CLI's output streams without rich: writes that name a stream that cannot take them, and
the stream a console prints to (:mod:`ocsplan.cli.console` builds the rich consoles on it)."""

from __future__ import annotations

import os
import re
import sys
from typing import IO, Any

from ..errors import InstanceError

__all__ = ["PIPED_WIDTH", "Stream", "write_stdout", "write_stream"]

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


class Stream:
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
