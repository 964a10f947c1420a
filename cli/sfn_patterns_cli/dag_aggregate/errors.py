"""Typed planner errors.

Every error the planner raises for bad input derives from :class:`PlanError`, so the
CLI can turn exactly these into a one-line message and exit status 2, while real bugs
still surface with a traceback.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


class PlanError(ValueError):
    """Bad planner input; the message says what is wrong and where to fix it."""


class SqlDirError(PlanError):
    """The SQL directory is missing, not a directory, or holds no ``*.sql`` files."""


class SqlParseError(PlanError):
    """A SQL file does not parse; carries the file and 1-based line/column."""

    def __init__(self, path: Path, line: int, column: int, detail: str) -> None:
        self.path = path
        self.line = line
        self.column = column
        self.detail = detail
        super().__init__(f"{path}:{line}:{column}: invalid SQL: {detail}")


class UnresolvedTableError(PlanError):
    """A task reads a table that is neither a task nor a declared external table.

    One line: file, line, table, why, and what to do (the closest task name, or the
    declaration that would allow it); ``more`` lists further unresolved reads.
    """

    def __init__(
        self, path: Path, line: int, table: str, detail: str, more: Sequence[str] = ()
    ) -> None:
        self.path = path
        self.line = line
        self.table = table
        self.detail = detail
        self.more = list(more)
        message = f"{path}:{line}: unresolved table {table}: {detail}"
        if self.more:
            shown = ", ".join(self.more[:3]) + (" ..." if len(self.more) > 3 else "")
            message += f" (and {len(self.more)} more unresolved: {shown})"
        super().__init__(message)


class TaskConfigError(PlanError):
    """A ``-- sfn:`` config comment (or sidecar) holds an unknown key or a bad value."""


class DuplicateTableError(PlanError):
    """Two SQL files would produce the same table."""

    def __init__(self, table: str, first: Path, second: Path) -> None:
        self.table = table
        self.files = (first, second)
        super().__init__(
            f"duplicate table {table}: produced by both {first} and {second}; "
            "rename one file (each <table>.sql produces <schema>.<table>)"
        )


class CycleError(PlanError):
    """The tasks' reads form a cycle, so no execution order exists."""

    def __init__(self, cycle: Sequence[str]) -> None:
        self.cycle = list(cycle)
        path = " -> ".join([*self.cycle, self.cycle[0]])
        super().__init__(
            f"cycle: {path} (x -> y means y reads the table x produces); break one of these reads"
        )


class RenderError(PlanError):
    """The state machine cannot be rendered with the given options."""
