"""Strict resolution: every table a task reads is a task, a declared external, or an error.

The planner never guesses. A read of ``<schema>.<name>`` is a dependency on the task
``<name>``; any other table must match a declared external pattern (the module's
``external_tables``, the CLI's ``--external`` or the file's ``-- sfn: external=...``),
otherwise the plan
fails naming the file, the line, the table and the closest task. A misspelled
``agg.daily_revnue`` therefore stops ``terraform plan`` instead of becoming a silent
"external source" that makes the DAG run in the wrong order.

Unqualified names resolve like Redshift's ``search_path``: the first schema in the
path where the name is a task or matches a declared pattern wins. ``$user`` stands
for the database user when it is known at plan time (``redshift.db_user``), and is
skipped otherwise. A name that a *wildcard* pattern of an earlier schema would take,
while a later schema has a task of that name, is ambiguous (the warehouse decides by
which tables exist, which the planner cannot know): the plan asks to qualify it.
"""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from sfn_patterns_cli.dag_aggregate.errors import TaskConfigError, UnresolvedTableError
from sfn_patterns_cli.dag_aggregate.sql_deps import Reference, TaskSpec

DEFAULT_SEARCH_PATH = ("$user", "public")
_WILDCARDS = "*?["


@dataclass(frozen=True)
class Rules:
    """What may be read besides tasks, and how unqualified names resolve."""

    external: tuple[str, ...] = ()
    search_path: tuple[str, ...] = DEFAULT_SEARCH_PATH
    user: str | None = None
    #: Where the caller declares external tables, named in the fix an error suggests:
    #: the CLI's ``--external`` flag, or the module's ``external_tables`` variable.
    declare_with: str = "--external"

    def declaration(self, pattern: str) -> str:
        """How the caller declares ``pattern`` external, as it would type it."""
        if self.declare_with == "external_tables":
            return f'external_tables = ["{pattern}"]'
        return f"{self.declare_with} '{pattern}'"

    def schemas(self) -> list[str]:
        """The search path with ``$user`` replaced by the user, or left out."""
        out = []
        for entry in self.search_path:
            schema = entry.strip().lower()
            if schema in ("$user", '"$user"'):
                if self.user:
                    out.append(self.user.lower())
                continue
            if schema and schema not in out:
                out.append(schema)
        return out


@dataclass(frozen=True)
class Resolution:
    """Per task: the tasks it reads (self-reads dropped) and the external tables it reads."""

    parents: dict[str, set[str]]
    external: dict[str, set[str]]
    tasks: dict[str, TaskSpec]


def _match(name: str, patterns: Iterable[str]) -> str | None:
    """The first pattern matching ``name`` (exact patterns before wildcards)."""
    ordered = sorted(patterns, key=lambda p: any(c in p for c in _WILDCARDS))
    for pattern in ordered:
        if fnmatch.fnmatchcase(name, pattern):
            return pattern
    return None


def _closest(name: str, tasks: Sequence[str], schema: str) -> str:
    close = difflib.get_close_matches(name, tasks, n=1, cutoff=0.6)
    if close:
        return f"did you mean {schema}.{close[0]}?"
    return "no task has a similar name"


class _Resolver:
    def __init__(self, tasks: Mapping[str, TaskSpec], schema: str, rules: Rules) -> None:
        self.tasks = tasks
        self.names = sorted(tasks)
        self.schema = schema
        self.rules = rules
        self.search = rules.schemas()

    def resolve(self, task: TaskSpec, ref: Reference) -> tuple[str, str]:
        """``("task", name)`` or ``("external", table)``; raises UnresolvedTableError."""
        patterns = (*self.rules.external, *task.external)
        parts = ref.parts
        if len(parts) == 1:
            return self._unqualified(task, ref, patterns)
        table = ".".join(parts)
        if len(parts) == 2 and parts[0] == self.schema and parts[1] in self.tasks:
            return "task", parts[1]
        if _match(table, patterns):
            return "external", table
        if len(parts) == 2 and parts[0] == self.schema:
            hint = _closest(parts[1], self.names, self.schema)
            raise self._error(
                task,
                ref,
                table,
                f"no task produces {table} ({hint}); if another job writes it, declare it "
                f"with {self.rules.declaration(table)} or '-- sfn: external={table}'",
            )
        hint = _closest(parts[-1], self.names, self.schema)
        raise self._error(
            task,
            ref,
            table,
            f"{table} is not a declared external table; declare it "
            f"({self.rules.declaration(parts[-2] + '.*')} or '-- sfn: external={table}'), "
            f"or if you meant a task: {hint}",
        )

    def _unqualified(
        self, task: TaskSpec, ref: Reference, patterns: Sequence[str]
    ) -> tuple[str, str]:
        name = ref.parts[0]
        for position, schema in enumerate(self.search):
            candidate = f"{schema}.{name}"
            if schema == self.schema and name in self.tasks:
                return "task", name
            pattern = _match(candidate, patterns)
            if pattern is None:
                continue
            later = self.search[position + 1 :]
            if self.schema in later and name in self.tasks and pattern != candidate:
                raise self._error(
                    task,
                    ref,
                    name,
                    f"ambiguous: {name} resolves to {candidate} (pattern {pattern!r}) on the "
                    f"search path before the task {self.schema}.{name}; qualify it",
                )
            return "external", candidate
        path = ", ".join(self.rules.search_path) or "(empty)"
        if name in self.tasks:
            hint = f"did you mean the task {self.schema}.{name}? qualify it"
        else:
            hint = _closest(name, self.names, self.schema)
        raise self._error(
            task,
            ref,
            name,
            f"unqualified table {name} is not found on the search path ({path}): no task and "
            f"no declared external table matches; {hint}",
        )

    def _error(self, task: TaskSpec, ref: Reference, table: str, detail: str) -> Exception:
        return UnresolvedTableError(task.path, ref.line, table, detail)


def resolve(tasks: Mapping[str, TaskSpec], rules: Rules | None = None) -> Resolution:
    """Resolve every reference of every task; the first unresolved one fails the plan.

    Also rejects a ``reload`` task that reads its own table (it would read the table
    it just emptied); an ``append`` task may (it sees the rows before its insert).
    """
    rules = rules or Rules()
    if not tasks:
        return Resolution({}, {}, {})
    schema = next(iter(tasks.values())).schema
    resolver = _Resolver(tasks, schema, rules)
    parents: dict[str, set[str]] = {}
    external: dict[str, set[str]] = {}
    resolved: dict[str, TaskSpec] = {}
    errors: list[UnresolvedTableError] = []
    for name in sorted(tasks):
        task = tasks[name]
        deps: set[str] = set()
        ext: set[str] = set()
        reads: set[str] = set()
        for ref in sorted(task.references, key=lambda r: r.line):
            try:
                kind, value = resolver.resolve(task, ref)
            except UnresolvedTableError as err:
                errors.append(err)
                continue
            if kind == "task":
                reads.add(f"{schema}.{value}")
                if value == name:
                    if task.mode == "reload":
                        raise TaskConfigError(
                            f"{task.path}:{ref.line}: reads its own table {task.table} in "
                            "reload mode, where the table is emptied before the insert; use "
                            "'-- sfn: mode=append' or read another table"
                        )
                    continue
                deps.add(value)
            else:
                reads.add(value)
                ext.add(value)
        parents[name] = deps
        external[name] = ext
        resolved[name] = replace(task, reads=frozenset(reads))
    if errors:
        first = errors[0]
        raise UnresolvedTableError(
            first.path,
            first.line,
            first.table,
            first.detail,
            more=[f"{e.path.name}:{e.line} {e.table}" for e in errors[1:]],
        )
    return Resolution(parents, external, resolved)
