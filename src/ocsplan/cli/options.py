"""Options several batch commands share (compare, study, sweep, pareto)."""

from __future__ import annotations

from typing import Annotated

import typer

from ..limits import CONNECT_TIMEOUT_S  # not from executor: --help need not import asyncio

__all__ = ["DEFAULT_CONNECT_TIMEOUT", "FABRIC_HELP", "ConnectTimeoutOpt"]

DEFAULT_CONNECT_TIMEOUT = CONNECT_TIMEOUT_S
ConnectTimeoutOpt = Annotated[float, typer.Option(
    "--connect-timeout", help="seconds a --scheduler may take to answer (and its first worker to join)")]

FABRIC_HELP = "fabric: a catalogue name (ocsplan fabrics: all-ocs, hybrid, ...) or a TOML file"
