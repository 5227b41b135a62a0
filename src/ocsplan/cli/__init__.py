"""Command line: thin commands over the library, rich tables on the terminal.

``app`` holds the typer app and the error contract; each command group is a
module of its own and registers on import; ``render`` builds the tables.
"""

from __future__ import annotations

from .app import app, main

# Each import registers its commands; this order is the order of `ocsplan --help`.
# isort: off
from . import plan, studies, realize, simulate, workload, report, export, faults, deploy  # noqa: F401
# isort: on

__all__ = ["app", "main"]
