"""``python -m ocsplan ...`` in a fresh process without the interpreter's start-up (issue 37 goal 4).

A hostile-input case needs a process of its own: ``RLIMIT_AS``, a timeout that can kill it, its
exit status, and file descriptors 1 and 2 on real files. A subprocess gives all of that and
spends 0.4 s starting Python and importing ``ocsplan.cli``. Here one server per pytest worker
(this file run as a script, started with :mod:`subprocess`: single-threaded, and not the
xdist worker with its threads) imports :data:`PRELOAD` once; per case it forks a child that sets
the limit, the environment, the working directory and the descriptors the subprocess had, runs
what ``python -m ocsplan`` runs (:func:`runpy.run_module` with ``alter_sys``: the same ``argv``
and program name), and exits with the status the interpreter would (a ``SystemExit``'s code; an
uncaught exception's traceback on fd 2 and 1; 120 when the last flush of stdout fails).

The protocol (one JSON line per request on the server's stdin, replies on its stdout) uses only
the standard library: this file is also the server's ``__main__``.
"""

from __future__ import annotations

import importlib
import io
import json
import os
import resource
import runpy
import select
import signal
import subprocess
import sys
import tempfile
import threading
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

__all__ = ["ONE_THREAD", "PRELOAD", "Completed", "ForkServer"]

# ``ocsplan.cli`` and what the refusals import after it that needs no multiprocessing: typer's
# adapters and pydantic, rich's console, the plan table, the checks, the schemas and jsonschema, the
# workload and Simlette modules, then numpy and the numpy-using modules that the planning, deploy,
# report and export refusals import (182 and 28 to 168 of the 253 round-4 cases). None of them opens
# a file, registers an ``atexit`` function or starts a thread at import (the server checks it has one
# thread before each fork): OpenBLAS would start one per core at numpy's import, so the server
# imports with its thread pools held to one (:data:`ONE_THREAD` in the server's environment only;
# each child's ``os.environ`` is exactly the case's). multiprocessing stays out (it would take the
# server's ``__main__`` for ``__mp_main__``), and so does all that imports it or scipy. The server's
# address space is about 136 MB (a fresh interpreter's 20 MB, one that imports numpy with OpenBLAS's
# threads about 180 MB), the start of each child's 1 GiB of ``RLIMIT_AS``.
PRELOAD: tuple[str, ...] = (
    "ocsplan.cli", "typer._adapters", "ocsplan.cli.console", "ocsplan.cli.render", "ocsplan.planning.check_stacked",
    "ocsplan.schemas", "ocsplan.realization.fabric_check", "jsonschema", "importlib.metadata",
    "pydantic.plugin._loader", "ocsplan.workload.step", "ocsplan.workload.power", "ocsplan.simlette.simulate",
    "ocsplan.simlette.report", "ocsplan.simlette.runs",
    "numpy", "ocsplan.planning.check", "ocsplan.realization.plan_check", "ocsplan.deploy.check",
    "ocsplan.deploy.faults", "ocsplan.deploy.msccl", "ocsplan.plotting", "ocsplan.report.html",
    "ocsplan.report.provenance", "ocsplan.report.svg", "ocsplan.deploy.export", "ocsplan.report.inputs",
    "ocsplan.realization.validate", "ocsplan.planning.allocate", "ocsplan.planning.context",
    "ocsplan.planning.space",
)
# the BLAS and OpenMP thread pools of the server's imports: one thread, so none is started
ONE_THREAD: dict[str, str] = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


@dataclass(frozen=True)
class Completed:
    """A child's exit status (negative: killed by that signal), stdout (empty when sunk) and stderr."""

    returncode: int
    stdout: str
    stderr: str


class ForkServer:
    """The client side: one server process, started here, shut down by :meth:`close`."""

    def __init__(self, src: str, preload: Sequence[str] = PRELOAD) -> None:
        env = dict(os.environ, PYTHONPATH=src, **ONE_THREAD)  # the children get the environment of each request
        self._proc = subprocess.Popen([sys.executable, __file__, *preload], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, env=env, cwd="/")
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._requests = self._proc.stdin
        self._replies = self._proc.stdout
        ready = self._reply(120)
        if ready.get("ready") is not True:
            raise RuntimeError(f"fork server did not start: {ready}")

    def run(self, argv: Sequence[str], *, cwd: str, env: dict[str, str], limit: int, timeout: float,
            stdout: str | None = None) -> Completed:
        """``python -m ocsplan *argv``: stdout on the file ``stdout`` (truncated) or captured."""
        return self._start({"argv": list(argv)}, cwd, env, limit, timeout, stdout)

    def call(self, target: str, *, cwd: str, env: dict[str, str], limit: int, timeout: float) -> Completed:
        """``module:function`` called with no argument in a child, as ``python -c`` would run it."""
        return self._start({"call": target}, cwd, env, limit, timeout, None)

    def _start(self, what: dict[str, Any], cwd: str, env: dict[str, str], limit: int, timeout: float,
               stdout: str | None) -> Completed:
        with tempfile.TemporaryDirectory(prefix="forked-") as scratch:
            out = stdout if stdout is not None else os.path.join(scratch, "stdout")
            err = os.path.join(scratch, "stderr")
            request = {**what, "cwd": cwd, "env": env, "limit": limit, "timeout": timeout, "stdout": out,
                       "stderr": err}
            self._requests.write(json.dumps(request).encode() + b"\n")
            self._requests.flush()
            reply = self._reply(timeout + 60)  # the server kills the child at ``timeout``
            if "error" in reply:
                raise RuntimeError(f"fork server: {reply['error']}")
            # as subprocess.run(text=True) reads a pipe: the locale's encoding, universal newlines
            text_err = Path(err).read_text() if os.path.exists(err) else ""
            text_out = Path(out).read_text() if stdout is None and os.path.exists(out) else ""
        if reply.get("timeout"):
            raise subprocess.TimeoutExpired(["ocsplan", *what.get("argv", [what.get("call")])], timeout,
                                            text_out, text_err)
        return Completed(int(reply["status"]), text_out, text_err)

    def _reply(self, timeout: float) -> dict[str, Any]:
        ready, _, _ = select.select([self._replies], [], [], timeout)
        line = self._replies.readline() if ready else b""
        if not line:
            raise RuntimeError("fork server: no reply (it died or hung)")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def close(self) -> None:
        """End the server (end of file on its stdin) and reap it; no process is left behind."""
        self._requests.close()
        try:
            self._proc.wait(30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._replies.close()


# -- the server and its children ---------------------------------------------------------------------------


def _serve(preload: Sequence[str]) -> None:
    """Import ``preload``, then fork one child per request line and reply with its status."""
    sys.path[0] = os.getcwd()  # not this file's folder: the imports find what ``python -m`` finds
    for name in preload:
        importlib.import_module(name)
    threads = len(os.listdir("/proc/self/task"))
    if threads != 1 or threading.active_count() != 1:
        _send({"ready": False, "threads": threads})
        return
    _send({"ready": True})
    for line in sys.stdin.buffer:
        request = json.loads(line)
        threads = len(os.listdir("/proc/self/task"))
        if threads != 1:  # a fork with other threads may copy a lock one of them holds
            _send({"error": f"the server has {threads} threads"})
            continue
        pid = os.fork()
        if pid == 0:
            try:
                _child(request)
            finally:
                os._exit(70)  # not reached: _child exits
        _send(_wait(pid, float(request["timeout"])))


def _send(reply: dict[str, Any]) -> None:
    os.write(1, json.dumps(reply).encode() + b"\n")


def _wait(pid: int, timeout: float) -> dict[str, Any]:
    """The child's status as ``subprocess`` gives it; killed (``SIGKILL``) after ``timeout`` seconds."""
    handle = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([handle], [], [], timeout)
        if not ready:
            os.kill(pid, signal.SIGKILL)  # not reaped yet: the pid is still the child's
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(handle)
    return {"status": os.waitstatus_to_exitcode(status), "timeout": not ready}


def _child(request: dict[str, Any]) -> None:
    """In the fork: the subprocess's set-up, the run, and the interpreter's exit."""
    _descriptors(request["stdout"], request["stderr"])
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    limit = int(request["limit"])
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    sys.path[0] = request["cwd"] if "argv" in request else ""  # the working directory, as -m and -c put it
    code = 0
    interrupted = False
    try:
        if "argv" in request:
            sys.argv = ["-m", *request["argv"]]  # runpy puts the path of ocsplan/__main__.py first
            sys.orig_argv = [sys.executable, "-m", "ocsplan", *request["argv"]]
            runpy.run_module("ocsplan", run_name="__main__", alter_sys=True)
        else:
            module, function = str(request["call"]).split(":")
            sys.argv = ["-c"]
            getattr(importlib.import_module(module), function)()
    except SystemExit as exc:
        code = _exit_code(exc)
    except KeyboardInterrupt as exc:
        sys.excepthook(type(exc), exc, exc.__traceback__)
        interrupted = True
    except BaseException as exc:  # as the interpreter: the traceback on stderr, status 1
        sys.excepthook(type(exc), exc, exc.__traceback__)
        code = 1
    os._exit(_finish(code, interrupted))


def _descriptors(stdout: str, stderr: str) -> None:
    """fd 0 on ``/dev/null`` (an xdist worker's), 1 and 2 on the files, every other one closed (as
    ``close_fds``); ``sys.std*`` rebuilt on them as the interpreter builds them at start-up."""
    for fd, path, flags in ((0, os.devnull, os.O_RDONLY), (1, stdout, os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                            (2, stderr, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
        opened = os.open(path, flags, 0o666)
        os.dup2(opened, fd)
        os.close(opened)
    os.closerange(3, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    streams = {"stdin": _stdio(0, sys.stdout), "stdout": _stdio(1, sys.stdout), "stderr": _stdio(2, sys.stderr)}
    for name, stream in streams.items():
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def _stdio(fd: int, like: TextIO) -> io.TextIOWrapper:
    """As CPython's ``create_stdio``: buffered, line-buffered on a terminal and for stderr."""
    reading = fd == 0
    buffer = open(fd, "rb" if reading else "wb", closefd=False)  # noqa: SIM115 (the stream outlives this)
    buffer.raw.name = f"<{('stdin', 'stdout', 'stderr')[fd]}>"  # type: ignore[attr-defined]
    line_buffering = not reading and (os.isatty(fd) or fd == 2)
    stream = io.TextIOWrapper(buffer, encoding=like.encoding, errors="backslashreplace" if fd == 2 else like.errors,
                              newline="\n", line_buffering=line_buffering)
    stream.mode = "r" if reading else "w"  # type: ignore[misc]
    return stream


def _exit_code(exc: SystemExit) -> int:
    """As the interpreter ends on an uncaught ``SystemExit``: None 0, an int itself, else printed and 1."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


def _finish(code: int, interrupted: bool) -> int:
    """The interpreter's finalization: non-daemon threads joined, ``atexit``, the last flush of
    stdout and stderr (a failure: "Exception ignored" and status 120)."""
    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join()
    import atexit

    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
    except Exception as exc:
        print(f"Exception ignored in: {sys.stdout!r}", file=sys.stderr)
        traceback.print_exception(type(exc), exc, None, file=sys.stderr)
        code = 120
    try:
        sys.stderr.flush()
    except Exception:
        code = 120
    if interrupted:  # as the interpreter does: end by the signal itself
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    return code & 0xFF


if __name__ == "__main__":
    _serve(sys.argv[1:])
