"""The linear model both exact backends translate: integer variables, rows, an objective."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["Assignment", "LinearModel", "Row"]

Assignment = dict[int, int]


@dataclass(frozen=True)
class Row:
    """sum(coef * var) <sense> rhs, with sense one of "<=", ">=", "=="."""

    name: str
    terms: tuple[tuple[int, int], ...]
    sense: str
    rhs: int


@dataclass
class LinearModel:
    """Integer variables with bounds, linear rows, a linear objective (seconds)."""

    names: list[str] = field(default_factory=list)
    lower: list[int] = field(default_factory=list)
    upper: list[int] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    objective: dict[int, float] = field(default_factory=dict)

    def var(self, name: str, lower: int = 0, upper: int = 1) -> int:
        self.names.append(name)
        self.lower.append(lower)
        self.upper.append(upper)
        return len(self.names) - 1

    def add(
        self, name: str, terms: Mapping[int, int] | Sequence[tuple[int, int]], sense: str, rhs: int
    ) -> None:
        items = terms.items() if isinstance(terms, Mapping) else terms
        merged: dict[int, int] = {}
        for var, coef in items:
            merged[var] = merged.get(var, 0) + coef
        self.rows.append(Row(name, tuple((v, c) for v, c in merged.items() if c), sense, rhs))

    def value(self, assignment: Mapping[int, int]) -> float:
        return sum(c * assignment.get(v, 0) for v, c in self.objective.items())

    def violations(self, assignment: Mapping[int, int]) -> list[str]:
        """Rows and bounds the assignment breaks (empty: feasible)."""
        out = []
        for v, name in enumerate(self.names):
            x = assignment.get(v, 0)
            if not self.lower[v] <= x <= self.upper[v]:
                out.append(f"{name} = {x} outside [{self.lower[v]}, {self.upper[v]}]")
        for row in self.rows:
            lhs = sum(c * assignment.get(v, 0) for v, c in row.terms)
            ok = (
                lhs <= row.rhs
                if row.sense == "<="
                else lhs >= row.rhs
                if row.sense == ">="
                else lhs == row.rhs
            )
            if not ok:
                out.append(f"{row.name}: {lhs} {row.sense} {row.rhs} fails")
        return out
