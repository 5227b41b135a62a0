"""The typer app, its consoles and the error contract every command shares.

Exit status: 0 success, 1 other ocsplan errors, 2 bad input (file and field
named on one line), 3 infeasible."""

from __future__ import annotations

import functools
import gc
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import typer
from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError
from typer.core import TyperGroup
from typer.exceptions import Abort

from ..errors import InfeasibleError, InstanceError, OcsplanError, PlanError
from ..files import write_atomic
from .streams import write_stdout

if TYPE_CHECKING:
    from .console import StreamConsole

__all__ = [
    "LazyConsole",
    "app",
    "emit_json",
    "err",
    "fail",
    "handle_errors",
    "main",
    "out",
    "warn_on_success",
]


class _OneLineErrors(TyperGroup):
    """Usage errors (unknown option, ``--count abc``, an extra argument) as one line, exit 2.

    Typer draws a multi-line box; the contract is one line naming the option."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True, windows_expand_args: bool = True,
             **extra: Any) -> Any:
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False,
                                windows_expand_args=windows_expand_args, **extra)
        except NoArgsIsHelpError as exc:
            if exc.ctx is not None:
                typer.echo(exc.ctx.get_help())
            code = 2
        except ClickException as exc:
            where = exc.ctx.command_path if isinstance(exc, UsageError) and exc.ctx is not None else "ocsplan"
            text = " ".join(exc.format_message().split())
            err.print(f"{where}: {text}", markup=False, soft_wrap=True)
            code = 2
        except Abort:
            code = 130
        except MemoryError:  # past the commands' own handler (handle_errors)
            code = -1  # reported below, once the except block has let go of the traceback and what it holds
        if code == -1:
            err.print(f"ocsplan: {OUT_OF_MEMORY}", markup=False, soft_wrap=True)
            code = 2
        if not standalone_mode:
            return code
        sys.exit(code if isinstance(code, int) else 0)


app = typer.Typer(
    cls=_OneLineErrors,
    add_completion=True,  # ocsplan --install-completion (bash, zsh, fish, PowerShell)
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain click help: rich's help formatter costs 0.1 s of start-up
    help="Plan workload-static OCS scale-up fabrics for LLM inference decode.",
)


class LazyConsole:
    """The :class:`~ocsplan.cli.console.StreamConsole` on stdout (or stderr), built by the first
    print: ``ocsplan --help`` does not import rich."""

    def __init__(self, *, stderr: bool = False) -> None:
        self._stderr = stderr
        self._console: StreamConsole | None = None

    @property
    def console(self) -> StreamConsole:
        """The console itself (a progress bar draws on it)."""
        if self._console is None:
            from .console import StreamConsole

            self._console = StreamConsole(stderr=self._stderr)
        return self._console

    def print(self, *objects: Any, **options: Any) -> None:
        """As :meth:`StreamConsole.print <ocsplan.cli.console.StreamConsole.print>`."""
        self.console.print(*objects, **options)


# A terminal keeps its own width; piped, COLUMNS or 200 (wide enough for the plan table); no trailing spaces.
out = LazyConsole()


err = LazyConsole(stderr=True)


F = TypeVar("F", bound=Callable[..., Any])


def fail(message: str, code: int) -> typer.Exit:
    err.print(message, markup=False, soft_wrap=True)
    return typer.Exit(code)


_WARNINGS: list[str] = []


def warn_on_success(message: str) -> None:
    """A line for stderr once the command has succeeded (an old option name): a refused command keeps
    the contract of one line, its error."""
    _WARNINGS.append(message)


# inputs within every limit whose data outgrow the process (an address-space limit, a small machine)
OUT_OF_MEMORY = ("out of memory: the inputs need more memory than this process may use (README \"Limits\" "
                 "gives what a file at each limit takes)")


def handle_errors(func: F) -> F:
    """Map ocsplan errors to one line on stderr and the documented exit status; on success the
    :func:`warn_on_success` lines follow on stderr."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        _WARNINGS.clear()
        try:
            result = func(*args, **kwargs)
            for line in _WARNINGS:
                err.print(line, markup=False, soft_wrap=True)
            return result
        except (InstanceError, PlanError) as exc:
            raise fail(str(exc), 2) from None
        except InfeasibleError as exc:
            raise fail(f"infeasible: {exc}", 3) from None
        except OcsplanError as exc:
            raise fail(f"error: {exc}", 1) from None
        except MemoryError:
            pass  # reported below, once the except block has let go of the traceback and what it holds
        raise fail(OUT_OF_MEMORY, 2)

    return wrapper  # type: ignore[return-value]


def emit_json(text: str, target: str | None) -> None:
    """Write JSON to a path (atomically) or to stdout for ``-``."""
    if target is None:
        return
    if target == "-":
        write_stdout(text)
    else:
        write_atomic(target, text)


def main() -> None:
    """Console entry point."""
    try:
        app()
    finally:
        # The process ends: the interpreter's last collections would walk every object the
        # command kept (a simulation's set-up is ~10^6), a quarter of a second of ``ocsplan
        # simulate``. Frozen, they are skipped; reference counting still frees what is not in
        # a cycle, and the operating system takes back the rest.
        gc.freeze()


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            text = version("ocsplan")
        except PackageNotFoundError:  # a source tree without an install
            from .. import __version__ as text
        out.print(f"ocsplan {text}", markup=False, highlight=False)
        raise typer.Exit(0)


@app.callback()
def _root(
    show_version: bool = typer.Option(False, "--version", is_eager=True, callback=_print_version,
                                      help="Print the version and exit."),
) -> None:
    """Plan workload-static OCS scale-up fabrics for LLM inference decode."""
