"""A fault of a circuit file and the log that collects a validation run's faults."""

from __future__ import annotations

from dataclasses import dataclass

from .circuits import Circuits

__all__ = ["Fault", "FaultLog"]


@dataclass(frozen=True)
class Fault:
    """One thing wrong with a circuit file."""

    message: str
    node: int | None = None
    port: int | None = None
    device: str | None = None

    def __str__(self) -> str:
        port = "-" if self.port is None else str(self.port)
        if self.node is not None:
            return f"node {self.node}, port {port}: {self.message}"
        if self.device is not None:
            return f"device {self.device}, port {port}: {self.message}"
        return self.message


class FaultLog:
    """The faults of one circuit file, in the order found; one instance per validation run."""

    def __init__(self, c: Circuits) -> None:
        self.c = c
        self.faults: list[Fault] = []
        self.world = c.plan.world
        self.n = self.world.bit_length() - 1

    def fault(self, message: str, node: int | None = None, port: int | None = None,
              device: str | None = None) -> None:
        self.faults.append(Fault(message, node, port, device))
