"""Read one task per SQL file and find the tables each task reads, with sqlglot.

Why a parser and not a regex: table names also appear in comments, string literals,
CTE names and aliases, and none of those is a read. sqlglot gives us real ``Table``
nodes, and positions for error messages.

File contract (see README.md in this package):

* ``<table>.sql`` holds one ``SELECT`` (optionally ``WITH ...``) and produces
  ``<schema>.<table>``; the planner wraps it in ``INSERT INTO``.
* Config: leading comment lines ``-- sfn: key=value ...`` and/or a sidecar
  ``<table>.json`` (sidecar wins). Keys: ``mode`` (``reload`` default | ``append``),
  ``wait`` (initial wait seconds before the first status poll, default from the
  renderer), ``timeout`` (seconds before the task fails, default from the renderer),
  ``duration`` (expected seconds, used by ``simulate`` when no durations file).
* Reads of ``<schema>.<other>`` where another file produces ``other`` are
  dependencies. Any other table (other schema, unknown name, unqualified name that is
  not a CTE) is an external source. Tables must be schema-qualified to count.
* A task reading its own table is not a cycle: in ``append`` mode it reads the rows
  present before its insert (a self-read is dropped from the graph). In ``reload``
  mode the table is emptied first, so a self-read is rejected as a mistake.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from sfn_patterns_cli.dag_aggregate.errors import (
    DuplicateTableError,
    SqlDirError,
    SqlParseError,
    TaskConfigError,
)

MODES = ("reload", "append")
DIALECT = "redshift"
_CONFIG_PREFIX = re.compile(r"^\s*--\s*sfn:(.*)$")
_TOKEN_POS = re.compile(r"from (\d+):(\d+)")
_NAME_OK = re.compile(r"^[a-z_][a-z0-9_]*$")


@dataclass(frozen=True)
class TaskSpec:
    """One aggregate task: the table it produces, its SELECT and what it reads."""

    name: str
    schema: str
    select_sql: str
    path: Path
    mode: str = "reload"
    wait_seconds: int | None = None
    timeout_seconds: int | None = None
    duration_seconds: float | None = None
    reads: frozenset[str] = field(default_factory=frozenset)

    @property
    def table(self) -> str:
        """The fully qualified table this task writes."""
        return f"{self.schema}.{self.name}"


def _position(sql: str, offset: int) -> tuple[int, int]:
    before = sql[:offset]
    return before.count("\n") + 1, offset - (before.rfind("\n") + 1) + 1


def parse_select(sql: str, path: Path) -> exp.Expression:
    """Parse one query, raising :class:`SqlParseError` with file, line and column."""
    try:
        statements = [s for s in sqlglot.parse(sql, read=DIALECT) if s is not None]
    except ParseError as err:
        first = err.errors[0] if err.errors else {}
        raise SqlParseError(
            path,
            int(first.get("line") or 1),
            int(first.get("col") or 1),
            str(first.get("description") or err),
        ) from None
    except TokenError as err:
        # sqlglot says "Missing ' from <line>:<offset>", the offset counting characters
        # from the start of the SQL, so derive line and column from the offset.
        found = _TOKEN_POS.search(str(err.__cause__ or ""))
        offset = int(found.group(2)) if found else (getattr(err, "start", 0) or 0)
        line, col = _position(sql, min(offset, len(sql)))
        raise SqlParseError(path, line, col, f"cannot tokenize ({err.__cause__})") from None
    if len(statements) != 1:
        raise SqlParseError(path, 1, 1, f"expected exactly one statement, found {len(statements)}")
    query = statements[0]
    if not isinstance(query, exp.Query):
        raise SqlParseError(
            path,
            1,
            1,
            f"expected a SELECT (the planner adds INSERT INTO), found {query.key.upper()}",
        )
    return query


def tables_read(query: exp.Expression) -> set[str]:
    """Qualified (``schema.table``) or bare names of real tables a query reads.

    CTE names are excluded when referenced unqualified; aliases, comments and string
    literals are not ``Table`` nodes in the first place. Names are lower-cased because
    Redshift folds identifiers to lower case.
    """
    cte_names = {cte.alias_or_name.lower() for cte in query.find_all(exp.CTE)}
    found: set[str] = set()
    for table in query.find_all(exp.Table):
        name = table.name.lower()
        if not name:
            continue  # e.g. a table function such as UNNEST(...)
        db = table.db.lower()
        if not db and name in cte_names:
            continue
        parts = [p for p in (table.catalog.lower(), db, name) if p]
        found.add(".".join(parts))
    return found


def _coerce(key: str, value: str, where: str) -> object:
    if key == "mode":
        if value not in MODES:
            raise TaskConfigError(f"{where}: mode must be one of {', '.join(MODES)}, got {value!r}")
        return value
    if key in ("wait", "timeout", "duration"):
        try:
            number = float(value)
        except ValueError:
            raise TaskConfigError(f"{where}: {key} must be a number, got {value!r}") from None
        if number < 0 or (key == "timeout" and number == 0):
            raise TaskConfigError(f"{where}: {key} must be positive, got {value!r}")
        return number if key == "duration" else int(number)
    raise TaskConfigError(f"{where}: unknown key {key!r} (known: mode, wait, timeout, duration)")


def parse_config(sql: str, path: Path) -> dict[str, object]:
    """Config from the leading ``-- sfn: k=v`` comment lines, then the JSON sidecar."""
    config: dict[str, object] = {}
    for lineno, line in enumerate(sql.splitlines(), start=1):
        stripped = line.strip()
        if not stripped:
            continue
        if not stripped.startswith("--"):
            break
        match = _CONFIG_PREFIX.match(line)
        if not match:
            continue
        for item in match.group(1).split():
            key, sep, value = item.partition("=")
            if not sep:
                raise TaskConfigError(f"{path}:{lineno}: expected key=value, got {item!r}")
            config[key] = _coerce(key, value, f"{path}:{lineno}")
    sidecar = path.with_suffix(".json")
    if sidecar.is_file():
        try:
            data = json.loads(sidecar.read_text())
        except json.JSONDecodeError as err:
            raise TaskConfigError(f"{sidecar}:{err.lineno}:{err.colno}: {err.msg}") from None
        if not isinstance(data, dict):
            raise TaskConfigError(f"{sidecar}: expected a JSON object")
        for key, value in data.items():
            config[key] = _coerce(key, str(value), str(sidecar))
    return config


def load_task(path: Path, schema: str) -> TaskSpec:
    """Read and parse one ``<table>.sql`` file into a :class:`TaskSpec`."""
    name = path.stem.lower()
    if not _NAME_OK.match(name):
        raise SqlDirError(
            f"{path}: file name must be a plain table name ([a-z_][a-z0-9_]*), got {path.stem!r}"
        )
    sql = path.read_text(encoding="utf-8")
    if not sql.strip():
        raise SqlParseError(path, 1, 1, "file is empty")
    query = parse_select(sql, path)
    config = parse_config(sql, path)
    reads = tables_read(query)
    own = f"{schema}.{name}"
    if own in reads and config.get("mode", "reload") == "reload":
        raise TaskConfigError(
            f"{path}: reads its own table {own} in reload mode, where the table is emptied "
            "before the insert; use '-- sfn: mode=append' or read another table"
        )
    return TaskSpec(
        name=name,
        schema=schema,
        select_sql=sql.strip().rstrip(";").rstrip(),
        path=path,
        mode=str(config.get("mode", "reload")),
        wait_seconds=config.get("wait"),  # type: ignore[arg-type]
        timeout_seconds=config.get("timeout"),  # type: ignore[arg-type]
        duration_seconds=config.get("duration"),  # type: ignore[arg-type]
        reads=frozenset(reads),
    )


def load_tasks(sql_dir: Path, schema: str = "agg") -> dict[str, TaskSpec]:
    """Load every ``*.sql`` in ``sql_dir`` (not recursive), keyed by table name."""
    sql_dir = Path(sql_dir)
    if not sql_dir.exists():
        raise SqlDirError(f"SQL directory {sql_dir} does not exist")
    if not sql_dir.is_dir():
        raise SqlDirError(f"{sql_dir} is not a directory")
    paths = sorted(p for p in sql_dir.iterdir() if p.suffix.lower() == ".sql" and p.is_file())
    if not paths:
        raise SqlDirError(f"SQL directory {sql_dir} holds no *.sql files (one task per file)")
    schema = schema.lower()
    tasks: dict[str, TaskSpec] = {}
    for path in paths:
        task = load_task(path, schema)
        if task.name in tasks:
            raise DuplicateTableError(task.table, tasks[task.name].path, path)
        tasks[task.name] = task
    return tasks


def dependencies(tasks: dict[str, TaskSpec]) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Split each task's reads into task dependencies and external sources.

    Returns ``(parents, external)``: ``parents[t]`` are the tasks ``t`` reads (self-reads
    dropped), ``external[t]`` the qualified tables no task produces.
    """
    parents: dict[str, set[str]] = {}
    external: dict[str, set[str]] = {}
    for name, task in tasks.items():
        prefix = task.schema + "."
        deps: set[str] = set()
        ext: set[str] = set()
        for table in task.reads:
            bare = table[len(prefix) :] if table.startswith(prefix) else None
            if bare is not None and "." not in bare and bare in tasks:
                if bare != name:
                    deps.add(bare)
            else:
                ext.add(table)
        parents[name] = deps
        external[name] = ext
    return parents, external
