"""The typer app, its consoles and the error contract every command shares.

Exit status: 0 success, 1 other ocsplan errors, 2 bad input (file and field
named on one line), 3 infeasible."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import typer
from rich.console import Console

from ..errors import InfeasibleError, InstanceError, OcsplanError, PlanError
from ..files import write_atomic

__all__ = ["app", "emit_json", "err", "fail", "handle_errors", "main", "out", "parse_option"]


app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain click help: rich's help formatter costs 0.1 s of start-up
    help="Plan workload-static OCS scale-up fabrics for LLM inference decode.",
)


# Wide enough for the plan table when piped; a terminal keeps its own width.
out = Console(highlight=False, width=None if sys.stdout.isatty() else 200)


err = Console(stderr=True, highlight=False, width=None if sys.stderr.isatty() else 200)


F = TypeVar("F", bound=Callable[..., Any])


def fail(message: str, code: int) -> typer.Exit:
    err.print(message, markup=False, soft_wrap=True)
    return typer.Exit(code)


def handle_errors(func: F) -> F:
    """Map ocsplan errors to one line on stderr and the documented exit status."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (InstanceError, PlanError) as exc:
            raise fail(str(exc), 2) from None
        except InfeasibleError as exc:
            raise fail(f"infeasible: {exc}", 3) from None
        except OcsplanError as exc:
            raise fail(f"error: {exc}", 1) from None

    return wrapper  # type: ignore[return-value]


def parse_option(parse: Callable[[str], Any], text: str, option: str) -> Any:
    try:
        return parse(text)
    except ValueError as exc:
        raise InstanceError(option, "", str(exc)) from None


def emit_json(text: str, target: str | None) -> None:
    """Write JSON to a path (atomically) or to stdout for ``-``."""
    if target is None:
        return
    if target == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        write_atomic(target, text)


def main() -> None:
    """Console entry point."""
    app()
