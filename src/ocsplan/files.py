"""File helpers shared by every reader and writer.

Readers turn OS, encoding and syntax problems into one-line ocsplan errors.
Every file ocsplan writes (plans, circuits, reports, CSVs, figures, exported
models) goes through :func:`write_atomic` or :func:`write_atomic_with`: a
temporary file and a rename, so an interrupted or failed write never leaves a
half-written output. An output that exists and is a character device or a FIFO
(``/dev/null``, ``/dev/stdout``, a pipe) is written in place, never renamed over;
sockets and block devices are refused. Inputs must be regular files (a FIFO, a
device or a directory is refused before any byte is read, so nothing blocks).
The writers live with what they write (e.g. the model exports in
``planning/exact``), but none opens the target itself.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import json
import math
import os
import stat
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from .errors import InstanceError, OcsplanError, PlanError
from .gcpause import paused_gc
from .limits import MAX_DEPTH, MAX_FILE_BYTES, MAX_JSON_BYTES, nesting_depth

__all__ = [
    "CacheDir",
    "check_directory",
    "check_output",
    "code_fingerprint",
    "read_head",
    "read_json",
    "read_json_file",
    "read_text",
    "read_toml",
    "toml_data",
    "write_atomic",
    "write_atomic_all",
    "write_atomic_with",
    "write_directory",
]


def _size(limit: int) -> str:
    return f"{limit >> 20} MiB" if limit % (1 << 20) == 0 else f"{limit} bytes"


def read_text(path: str | Path, error: Callable[[str], OcsplanError], limit: int = MAX_FILE_BYTES) -> str:
    """The file's UTF-8 text; ``error(message)`` builds the exception on failure.

    Files above ``limit`` bytes (:data:`~ocsplan.limits.MAX_FILE_BYTES` unless a reader sets a smaller
    one) are refused unread."""
    try:
        # O_NONBLOCK: opening a FIFO nobody writes to returns at once (and is refused below)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise error(f"cannot read file: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise error(f"not a regular file ({_kind(info.st_mode)})")
        if info.st_size > limit:
            raise error(f"larger than the limit of {_size(limit)}")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise error(f"cannot read file: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise error(f"larger than the limit of {_size(limit)}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise error("not a UTF-8 text file") from None
    return text[1:] if text.startswith("\ufeff") else text  # a UTF-8 byte-order mark is accepted


def read_head(path: str | Path, size: int) -> bytes:
    """The first ``size`` bytes of a regular file, to tell its format before reading it with its
    limit; b"" when it cannot be read or is no regular file (then :func:`read_text` says why)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return b""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return b""
        return os.read(fd, size)
    except OSError:
        return b""
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    kinds = [
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ]
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def _duplicates_refused(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicate key {key[:40]!r}")
        result[key] = value
    return result


def toml_data(text: str, source: str) -> dict[str, Any]:
    """Parsed TOML; a syntax error names the file and the field ``toml``.

    Nesting deeper than :data:`~ocsplan.limits.MAX_DEPTH` is refused before parsing."""
    depth = nesting_depth(text, toml=True)
    if depth > MAX_DEPTH:
        raise InstanceError(source, "toml", f"nested {depth} deep, the limit is {MAX_DEPTH}")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InstanceError(source, "toml", f"syntax error: {exc}") from None
    except (RecursionError, ValueError) as exc:  # e.g. an integer of more than 4300 digits
        raise InstanceError(source, "toml", f"unreadable value: {_first_line(exc)}") from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).splitlines()
    return text[0][:120] if text else type(exc).__name__


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:40]} is out of range")
    return value


def _no_constant(text: str) -> float:
    raise ValueError(f"{text} is not JSON")


def read_toml(path: str | Path) -> dict[str, Any]:
    """Parsed TOML file (input files: errors are InstanceError, exit status 2)."""
    source = str(path)
    return toml_data(read_text(path, lambda msg: InstanceError(source, "", msg)), source)


def read_json(text: str, source: str, limit: int = MAX_JSON_BYTES) -> dict[str, Any]:
    """A JSON object (output files read back: errors are PlanError, exit status 2).

    The project's bounded JSON reader: at most ``limit`` characters, :data:`~ocsplan.limits.MAX_JSON_BYTES`
    unless a reader sets another (a longer text is refused unparsed; the columnar circuits files of
    :mod:`ocsplan.realization.circuits.columnar` are the one larger format), nesting within
    :data:`~ocsplan.limits.MAX_DEPTH`, finite numbers, no duplicate key."""
    if len(text) > limit:
        raise PlanError(f"{source}: larger than the limit of {_size(limit)} of a JSON file")
    depth = nesting_depth(text)
    if depth > MAX_DEPTH:
        raise PlanError(f"{source}: nested {depth} deep, the limit is {MAX_DEPTH}")
    try:
        with paused_gc(keep=True):  # a circuits file is a million small containers: no collection pass per 700
            data = json.loads(
                text, parse_float=_finite, parse_constant=_no_constant, object_pairs_hook=_duplicates_refused
            )
    except json.JSONDecodeError as exc:
        raise PlanError(f"{source}: not JSON: {exc}") from None
    except (RecursionError, ValueError) as exc:  # Infinity, 1e999, 5000 digits, a duplicate key
        raise PlanError(f"{source}: not JSON: {_first_line(exc)}") from None
    if not isinstance(data, dict):
        raise PlanError(f"{source}: expected a JSON object")
    return data


def read_json_file(path: str | Path, error: Callable[[str], OcsplanError] | None = None) -> dict[str, Any]:
    """The JSON object of a file ocsplan wrote (plan, circuits, simulation, faults, export index, cache
    entry), read with :func:`read_text` bounded by :data:`~ocsplan.limits.MAX_JSON_BYTES` (a larger
    file is refused unread) and parsed by :func:`read_json`; ``error`` builds a read failure's
    exception (a :class:`PlanError` naming the path unless given)."""
    source = str(path)
    fail = error if error is not None else (lambda message: PlanError(f"{source}: {message}"))
    return read_json(read_text(path, fail, MAX_JSON_BYTES), source)


def check_output(path: str | Path, option: str) -> None:
    """Refuse an output path that cannot be written, before any work starts.

    A directory, a missing parent or a parent that is a file is one line naming
    the option (an :class:`InstanceError`, exit status 2)."""
    target = Path(path)
    parent = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise InstanceError(option, "", f"{path} is a directory")
    refused = _refused_special(target)
    if refused:
        raise InstanceError(option, "", f"{path} is {refused}: refused")
    if not parent.exists():
        raise InstanceError(option, "", f"{path}: directory {parent} does not exist")
    if not parent.is_dir():
        raise InstanceError(option, "", f"{path}: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InstanceError(option, "", f"{path}: directory {parent} is not writable")


def _umask() -> int:
    mask = os.umask(0o22)
    os.umask(mask)
    return mask


def write_atomic_with(path: str | Path, write: Callable[[Path], object]) -> None:
    """Let ``write`` create the file at a temporary path next to ``path`` (with the same
    suffixes, for writers that choose the format by them), then rename it into place.

    The file gets mode 0666 minus the umask, like any file the user creates; an OS
    error is one line naming the path."""
    import tempfile  # imported on use: it is slow to import

    target = Path(path)
    if _special(target):
        _write_in_place(target, write)
        return
    directory = target.parent if str(target.parent) else Path(".")
    try:
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix="".join(target.suffixes), dir=directory)
    except OSError as exc:
        raise InstanceError(str(path), "", f"cannot write: {exc.strerror or exc}") from None
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException as exc:
        if tmp.exists():
            tmp.unlink()
        if isinstance(exc, OSError):
            raise InstanceError(str(path), "", f"cannot write: {exc.strerror or exc}") from None
        raise


def _special(target: Path) -> bool:
    """The path exists (symlinks followed) and is neither a regular file nor a directory."""
    try:
        mode = target.stat().st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _refused_special(target: Path) -> str:
    """Why an existing output may not be written at all: a socket or a block device (a disk)."""
    try:
        mode = target.stat().st_mode
    except OSError:
        return ""
    return _kind(mode) if stat.S_ISSOCK(mode) or stat.S_ISBLK(mode) else ""


def _write_in_place(target: Path, write: Callable[[Path], object]) -> None:
    """An output that is a character device or a FIFO (``/dev/null``, ``/dev/stdout``, a pipe)
    is written in place, never replaced: ``write`` fills a temporary file elsewhere, whose bytes
    then go to the device. A FIFO nobody reads, ENOSPC (``/dev/full``) or EPIPE is one line."""
    import tempfile

    refused = _refused_special(target)
    if refused:
        raise InstanceError(str(target), "", f"is {refused}: refused")
    with tempfile.TemporaryDirectory(prefix="ocsplan-") as scratch:
        tmp = Path(scratch) / f"out{''.join(target.suffixes)}"
        write(tmp)
        data = tmp.read_bytes()
    try:
        fd = os.open(target, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as exc:
        reason = "a FIFO nobody reads" if exc.errno == errno.ENXIO else exc.strerror or str(exc)
        raise InstanceError(str(target), "", f"cannot write: {reason}") from None
    try:
        os.set_blocking(fd, True)  # opened non-blocking only so that a FIFO nobody reads fails at once
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    except OSError as exc:
        raise InstanceError(str(target), "", f"cannot write: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def write_atomic_all(items: Sequence[tuple[str | Path, str | bytes]]) -> None:
    """Write several outputs of one command: all or none.

    Every regular target is first written to a temporary file beside it; then the character
    devices and FIFOs are written in place; only when all of that succeeded are the temporary
    files renamed into place. A failure anywhere (a full device, a FIFO nobody reads, a full
    disk) removes the temporary files and leaves every target as it was (a device or FIFO
    written before the failure cannot be taken back, so they come after the files are staged)."""
    import tempfile

    staged: list[tuple[Path, Path]] = []
    special: list[tuple[Path, bytes]] = []
    try:
        for path, data in items:
            target = Path(path)
            raw = data.encode("utf-8") if isinstance(data, str) else data
            if _special(target):
                special.append((target, raw))
                continue
            directory = target.parent if str(target.parent) else Path(".")
            try:
                fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix="".join(target.suffixes),
                                            dir=directory)
            except OSError as exc:
                raise InstanceError(str(path), "", f"cannot write: {exc.strerror or exc}") from None
            tmp = Path(name)
            staged.append((tmp, target))
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(raw)
                os.chmod(tmp, 0o666 & ~_umask())
            except OSError as exc:
                raise InstanceError(str(path), "", f"cannot write: {exc.strerror or exc}") from None
        for target, raw in special:
            _write_in_place(target, functools.partial(_put_bytes, raw))
        for tmp, target in staged:
            try:
                os.replace(tmp, target)
            except OSError as exc:
                raise InstanceError(str(target), "", f"cannot write: {exc.strerror or exc}") from None
    finally:
        for tmp, _ in staged:
            if tmp.exists():
                tmp.unlink()


def _put_bytes(data: bytes, path: Path) -> None:
    path.write_bytes(data)


def write_atomic(path: str | Path, data: str | bytes) -> None:
    """Write ``data`` (UTF-8 text, or bytes) to ``path``, never half-written."""

    def write(tmp: Path) -> None:
        if isinstance(data, bytes):
            tmp.write_bytes(data)
        else:
            with tmp.open("w", encoding="utf-8") as handle:
                handle.write(data)

    write_atomic_with(path, write)


def check_directory(target: str | Path, error: Callable[[str], OcsplanError], replace: bool = False,
                    option: str = "--out") -> None:
    """``target`` can become a directory :func:`write_directory` writes: it is missing or an empty
    directory (or any directory, with ``replace``), in an existing directory; else ``error``."""
    path = Path(target)
    if path.exists() and not path.is_dir():
        raise error(f"{path}: {option} exists and is not a directory")
    if not replace and path.is_dir() and any(path.iterdir()):
        raise error(f"{path}: {option} is a non-empty directory")
    parent = path.absolute().parent
    if not parent.is_dir():
        raise error(f"{path}: {option} parent {parent} is not a directory")


def write_directory(target: str | Path, fill: Callable[[Path], object], error: Callable[[str], OcsplanError],
                    replace: bool = False, option: str = "--out") -> None:
    """Let ``fill`` write a whole directory at a temporary path beside ``target``, then rename it
    into place: no partial directory, whatever fails. An existing non-empty ``target`` is refused
    (``error``) unless ``replace``; it is then removed only once the new one is in place."""
    import shutil
    import tempfile

    path = Path(target)
    check_directory(path, error, replace, option)
    full = path.is_dir() and any(path.iterdir())
    parent = path.absolute().parent
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=parent))
    except OSError as exc:
        raise error(f"{path}: cannot write: {exc.strerror or exc}") from None
    old = None
    try:
        fill(tmp)
        os.chmod(tmp, 0o777 & ~_umask())
        if full:
            old = Path(tempfile.mkdtemp(prefix=f".{path.name}.old.", dir=parent))
            os.replace(path, old / path.name)
        elif path.is_dir():
            path.rmdir()
        os.replace(tmp, path)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if old is not None and (old / path.name).exists() and not path.exists():
            os.replace(old / path.name, path)  # the old directory back in place
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        if isinstance(exc, OSError):
            raise error(f"{path}: cannot write: {exc.strerror or exc}") from None
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


@cache
def code_fingerprint() -> str:
    """Hash of the package's Python sources: a cached row is reused, and a Dask worker
    accepted, only if the code that produced it is the code here."""
    digest = hashlib.sha256()
    root = Path(__file__).resolve().parent  # the whole ocsplan package
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


@dataclass(frozen=True)
class CacheDir:
    """A directory of cache entries by file name (e.g. the decode plan cache).

    Untrusted input: an entry that is missing, unreadable, larger than
    :data:`~ocsplan.limits.MAX_JSON_BYTES` or not UTF-8 reads as None (the caller
    makes it again and the new entry is renamed over it); an entry that is not a regular file
    (a FIFO, a device, a directory, a symlink loop) is refused naming it, never read nor
    written. Entries are written atomically. :meth:`create` makes the directory, and refuses a
    path that cannot be one (a file, a FIFO, a symlink loop, a path under a file) naming ``option``.
    """

    directory: Path

    @classmethod
    def create(cls, directory: Path, option: str = "--cache") -> CacheDir:
        path = Path(directory)
        try:
            info = path.stat()
        except FileNotFoundError:
            info = None
        except OSError as exc:  # a symlink loop, a path under a file
            raise InstanceError(option, "", f"{directory}: {exc.strerror or exc}") from None
        if info is not None and not stat.S_ISDIR(info.st_mode):
            what = "a file" if stat.S_ISREG(info.st_mode) else _kind(info.st_mode)
            raise InstanceError(option, "", f"{directory} is {what}, not a directory")
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InstanceError(option, "", f"{directory}: cannot make the directory: {exc.strerror or exc}") from None
        if not os.access(path, os.R_OK | os.W_OK | os.X_OK):
            raise InstanceError(option, "", f"{directory}: directory is not readable and writable")
        return cls(path)

    def path(self, name: str) -> Path:
        return self.directory / name

    def _checked(self, name: str) -> os.stat_result | None:
        """The entry's status (None when missing); an entry that is not a regular file is refused."""
        path = self.path(name)
        try:
            info = path.stat()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise InstanceError(str(path), "", f"cache entry: {exc.strerror or exc}") from None
        if not stat.S_ISREG(info.st_mode):
            raise InstanceError(str(path), "", f"cache entry is {_kind(info.st_mode)}, not a regular file: refused")
        return info

    def has(self, name: str) -> bool:
        return self._checked(name) is not None

    def get(self, name: str) -> str | None:
        """The entry's text, or None when it is missing, too large or unreadable."""
        if self._checked(name) is None:
            return None
        try:
            return read_text(self.path(name), lambda msg: InstanceError(name, "", msg), MAX_JSON_BYTES)
        except InstanceError:
            return None

    def put(self, name: str, text: str) -> None:
        self._checked(name)
        write_atomic(self.path(name), text)
