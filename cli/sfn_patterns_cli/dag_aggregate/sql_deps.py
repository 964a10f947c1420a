"""Read one task per SQL file and find the tables each task references, with sqlglot.

Why a parser and not a regex: table names also appear in comments, string literals,
CTE names and aliases, and none of those is a read. sqlglot gives real ``Table``
nodes, with line numbers for error messages. What a reference *means* (a task, a
declared external table, or an error) is decided by :mod:`.resolve`.

File contract (see README.md in this package):

* ``<table>.sql`` holds one ``SELECT`` (optionally ``WITH ...``) and produces
  ``<schema>.<table>``; the planner wraps it in ``INSERT INTO``.
* Config: leading comment lines ``-- sfn: key=value ...`` and/or a sidecar
  ``<table>.json`` (sidecar wins). Keys: ``mode`` (``reload`` default | ``append``),
  ``wait`` (initial wait seconds before the first status poll), ``timeout``
  (seconds before the task fails), ``duration`` (expected seconds: priority and
  ``simulate``), ``tags`` (comma list, for ``tag:`` selection) and ``external``
  (comma list of table patterns this file may read, e.g. ``raw.*``).

Parsing is the slow part (about a millisecond per file), so :func:`load_tasks`
takes the parse result of an unchanged file from a :class:`ParseCache` and parses
the others in parallel processes. The parse result depends on the SQL text alone.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from sfn_patterns_cli.dag_aggregate.errors import (
    DuplicateTableError,
    SqlDirError,
    SqlParseError,
    TaskConfigError,
)

if TYPE_CHECKING:
    from sqlglot import exp

    from sfn_patterns_cli.dag_aggregate.parse_cache import ParseCache

MODES = ("reload", "append")
DIALECT = "redshift"
KEYS = ("mode", "wait", "timeout", "duration", "tags", "external")
_CONFIG_PREFIX = re.compile(r"^\s*--\s*sfn:(.*)$")
_TOKEN_POS = re.compile(r"from (\d+):(\d+)")
_NAME_OK = re.compile(r"^[a-z_][a-z0-9_]*$")
_TAG_OK = re.compile(r"^[A-Za-z0-9_.-]+$")
_PATTERN_OK = re.compile(r"^[a-z0-9_$*?\[\]-]+(\.[a-z0-9_$*?\[\]-]+){1,2}$")
PARALLEL_MIN_FILES = 64  # below this, worker start-up costs more than it saves


class Reference(NamedTuple):
    """A table named in a FROM/JOIN: its lower-cased parts as written, first line seen."""

    parts: tuple[str, ...]
    line: int

    @property
    def name(self) -> str:
        """The dotted name as written (``raw.events``, ``daily_events``)."""
        return ".".join(self.parts)


@dataclass(frozen=True)
class TaskSpec:
    """One aggregate task: the table it produces, its SELECT and what it references."""

    name: str
    schema: str
    select_sql: str
    path: Path
    mode: str = "reload"
    wait_seconds: int | None = None
    timeout_seconds: int | None = None
    duration_seconds: float | None = None
    tags: tuple[str, ...] = ()
    external: tuple[str, ...] = ()  # table patterns declared in this file
    references: tuple[Reference, ...] = ()
    reads: frozenset[str] = field(default_factory=frozenset)  # resolved names

    @property
    def table(self) -> str:
        """The fully qualified table this task writes."""
        return f"{self.schema}.{self.name}"


# --- parsing (the cached part) ------------------------------------------------------------


def _position(sql: str, offset: int) -> tuple[int, int]:
    before = sql[:offset]
    return before.count("\n") + 1, offset - (before.rfind("\n") + 1) + 1


def _parse_query(sql: str) -> exp.Expression:
    """Parse one query; raises ``_ParseFailure(line, column, detail)``."""
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import ParseError, TokenError

    try:
        statements = [s for s in sqlglot.parse(sql, read=DIALECT) if s is not None]
    except ParseError as err:
        first = err.errors[0] if err.errors else {}
        raise _ParseFailure(
            int(first.get("line") or 1),
            int(first.get("col") or 1),
            _syntax_message(str(first.get("description") or err), first.get("highlight")),
        ) from None
    except TokenError as err:
        # sqlglot says "Missing ' from <line>:<offset>", the offset counting characters
        # from the start of the SQL, so derive line and column from the offset.
        found = _TOKEN_POS.search(str(err.__cause__ or ""))
        offset = int(found.group(2)) if found else (getattr(err, "start", 0) or 0)
        line, col = _position(sql, min(offset, len(sql)))
        raise _ParseFailure(line, col, f"cannot tokenize ({err.__cause__})") from None
    if len(statements) != 1:
        raise _ParseFailure(1, 1, f"expected exactly one statement, found {len(statements)}")
    query = statements[0]
    if not isinstance(query, exp.Query):
        raise _ParseFailure(
            1, 1, f"expected a SELECT (the planner adds INSERT INTO), found {query.key.upper()}"
        )
    return query


# sqlglot names the expression it could not complete by its Python class
# ("Required keyword: 'this' missing for <class 'sqlglot.expressions.query.Where'>"):
# the user wrote SQL, so the message says it in SQL's words.
_MISSING = re.compile(r"Required keyword: '\w+' missing for <class '[\w.]*?(\w+)'>")
_CLASS = re.compile(r"<class '[\w.]*?(\w+)'>")
_SQL_WORDS = {
    "Where": "WHERE clause",
    "Having": "HAVING clause",
    "Qualify": "QUALIFY clause",
    "Join": "JOIN",
    "Group": "GROUP BY",
    "Order": "ORDER BY",
    "Select": "SELECT list",
    "From": "FROM clause",
    "Case": "CASE expression",
    "If": "CASE branch",
    "Cast": "CAST",
    "In": "IN list",
    "Between": "BETWEEN",
    "Window": "window (OVER)",
    "EQ": "comparison",
    "NEQ": "comparison",
    "GT": "comparison",
    "GTE": "comparison",
    "LT": "comparison",
    "LTE": "comparison",
    "And": "AND",
    "Or": "OR",
    "Not": "NOT",
    "Like": "LIKE",
}


def _sql_words(class_name: str) -> str:
    return _SQL_WORDS.get(class_name, class_name.upper())


def _syntax_message(description: str, highlight: object) -> str:
    """The parser's error in the words of the SQL the user wrote."""
    near = f" {str(highlight)!r}" if highlight else ""
    missing = _MISSING.fullmatch(description.strip())
    if missing:
        return f"incomplete {_sql_words(missing.group(1))}: nothing valid follows{near}"
    if description.startswith("Invalid expression / Unexpected token"):
        return (
            f"unexpected{near or ' token'} "
            "(a misspelled keyword, or a missing comma or operator before it?)"
        )
    description = _CLASS.sub(lambda found: _sql_words(found.group(1)), description)
    return f"{description} near{near}" if near else description


class _ParseFailure(Exception):
    def __init__(self, line: int, column: int, detail: str) -> None:
        super().__init__(detail)
        self.line, self.column, self.detail = line, column, detail


def _is_cte_reference(table: exp.Table) -> bool:
    """Whether an unqualified name refers to a CTE visible where it is used.

    Walks up from the table: a query's WITH is visible in its body and in nested
    subqueries; inside CTE number i of a WITH, only CTEs 0..i-1 are (and i itself
    when the WITH is RECURSIVE). A CTE of one subquery is invisible to another.
    """
    from sqlglot import exp

    name = table.name.lower()
    child: exp.Expression = table
    node = table.parent
    while node is not None:
        if isinstance(node, exp.With):
            ctes = list(node.expressions)
            index = next((i for i, cte in enumerate(ctes) if cte is child), len(ctes))
            visible = ctes[: index + 1] if node.args.get("recursive") else ctes[:index]
            if any(cte.alias_or_name.lower() == name for cte in visible):
                return True
        else:
            # The argument is "with_" in sqlglot >= 26, "with" before.
            with_ = node.args.get("with_") or node.args.get("with")
            if (
                isinstance(with_, exp.With)
                and with_ is not child
                and any(cte.alias_or_name.lower() == name for cte in with_.expressions)
            ):
                return True
        child, node = node, node.parent
    return False


def references(query: exp.Expression) -> list[Reference]:
    """Real tables a query reads (CTE references left out), each with its first line.

    Names are lower-cased because Redshift folds identifiers to lower case; aliases,
    comments and string literals are not ``Table`` nodes in the first place.
    """
    from sqlglot import exp

    found: dict[tuple[str, ...], int] = {}
    for table in query.find_all(exp.Table):
        name = table.name.lower()
        if not name:
            continue  # a table function such as UNNEST(...)
        db = table.db.lower()
        if not db and _is_cte_reference(table):
            continue
        parts = tuple(p for p in (table.catalog.lower(), db, name) if p)
        ident = table.this
        line = int(ident.meta.get("line") or 1) if isinstance(ident, exp.Expression) else 1
        found[parts] = min(line, found.get(parts, line))
    return [Reference(parts, line) for parts, line in sorted(found.items())]


def parse_sql(sql: str) -> dict[str, Any]:
    """The cacheable parse result of one file's text (JSON-serialisable).

    ``{"refs": [[part, ..., line], ...]}`` or ``{"error": [line, column, detail]}``.
    """
    try:
        query = _parse_query(sql)
    except _ParseFailure as failure:
        return {"error": [failure.line, failure.column, failure.detail]}
    return {"refs": [[*ref.parts, ref.line] for ref in references(query)]}


def _parse_chunk(texts: list[str]) -> list[dict[str, Any]]:
    return [parse_sql(text) for text in texts]


def default_workers() -> int:
    """CPUs this process may use (the affinity mask where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def parse_many(texts: Sequence[str], workers: int | None = None) -> list[dict[str, Any]]:
    """:func:`parse_sql` of each text, in order, on up to ``workers`` processes."""
    workers = default_workers() if workers is None else max(1, workers)
    if workers == 1 or len(texts) < PARALLEL_MIN_FILES:
        return _parse_chunk(list(texts))
    import multiprocessing

    import sqlglot  # noqa: F401  (imported once here, inherited by forked workers)

    size = max(16, -(-len(texts) // (workers * 4)))
    chunks = [list(texts[i : i + size]) for i in range(0, len(texts), size)]
    context = (
        multiprocessing.get_context("fork")
        if "fork" in multiprocessing.get_all_start_methods() and sys.platform == "linux"
        else None
    )
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        return [result for chunk in pool.map(_parse_chunk, chunks) for result in chunk]


# --- configuration (cheap, never cached: the sidecar is another file) ---------------------


def _split_list(value: object, key: str, where: str) -> tuple[str, ...]:
    items = value if isinstance(value, list) else str(value).split(",")
    out = tuple(str(item).strip() for item in items if str(item).strip())
    check = _TAG_OK if key == "tags" else _PATTERN_OK
    for item in out:
        probe = item if key == "tags" else item.lower()
        if not check.match(probe):
            what = (
                "a tag is letters, digits, _ . -"
                if key == "tags"
                else "a pattern is schema.table or db.schema.table, with * ? [] wildcards"
            )
            raise TaskConfigError(f"{where}: bad {key} entry {item!r} ({what})")
    return tuple(i if key == "tags" else i.lower() for i in out)


def _coerce(key: str, value: object, where: str) -> object:
    if key == "mode":
        if value not in MODES:
            raise TaskConfigError(f"{where}: mode must be one of {', '.join(MODES)}, got {value!r}")
        return value
    if key in ("wait", "timeout", "duration"):
        try:
            number = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise TaskConfigError(f"{where}: {key} must be a number, got {value!r}") from None
        if number < 0 or (key == "timeout" and number == 0):
            raise TaskConfigError(f"{where}: {key} must be positive, got {value!r}")
        return number if key == "duration" else int(number)
    if key in ("tags", "external"):
        return _split_list(value, key, where)
    raise TaskConfigError(f"{where}: unknown key {key!r} (known: {', '.join(KEYS)})")


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
            raw = value if isinstance(value, list) and key in ("tags", "external") else str(value)
            config[key] = _coerce(key, raw, str(sidecar))
    return config


# --- the directory ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SqlFile:
    """One ``*.sql`` file's name, text and content hash (the parse cache's key)."""

    path: Path
    text: str
    sha256: str


def sql_files(sql_dir: Path) -> list[SqlFile]:
    """Every ``*.sql`` in ``sql_dir`` (not recursive), sorted, read and hashed."""
    sql_dir = Path(sql_dir)
    if not sql_dir.exists():
        raise SqlDirError(f"SQL directory {sql_dir} does not exist")
    if not sql_dir.is_dir():
        raise SqlDirError(f"{sql_dir} is not a directory")
    paths = sorted(p for p in sql_dir.iterdir() if p.suffix.lower() == ".sql" and p.is_file())
    if not paths:
        raise SqlDirError(f"SQL directory {sql_dir} holds no *.sql files (one task per file)")
    files = []
    for path in paths:
        data = path.read_bytes()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as err:
            raise SqlParseError(path, 1, 1, f"not UTF-8 ({err.reason})") from None
        files.append(SqlFile(path, text, hashlib.sha256(data).hexdigest()))
    return files


def _parsed(
    files: Sequence[SqlFile], cache: ParseCache | None, workers: int | None
) -> Iterator[dict[str, Any]]:
    """Each file's parse result: from the cache, else parsed (in parallel) and cached."""
    results: list[dict[str, Any] | None] = [
        cache.get(f.sha256) if cache is not None else None for f in files
    ]
    missing = [i for i, r in enumerate(results) if r is None]
    if missing:
        fresh = parse_many([files[i].text for i in missing], workers)
        for i, result in zip(missing, fresh):
            results[i] = result
            if cache is not None:
                cache.put(files[i].sha256, result)
    if cache is not None:
        cache.save(keep={f.sha256 for f in files})
    for result in results:
        assert result is not None
        yield result


def build_task(file: SqlFile, parsed: dict[str, Any], schema: str) -> TaskSpec:
    """A :class:`TaskSpec` from a file, its parse result and its config."""
    path = file.path
    name = path.stem.lower()
    if not _NAME_OK.match(name):
        raise SqlDirError(
            f"{path}: file name must be a plain table name ([a-z_][a-z0-9_]*), got {path.stem!r}"
        )
    if not file.text.strip():
        raise SqlParseError(path, 1, 1, "file is empty")
    if "error" in parsed:
        line, column, detail = parsed["error"]
        raise SqlParseError(path, int(line), int(column), str(detail))
    config = parse_config(file.text, path)
    refs = tuple(Reference(tuple(r[:-1]), int(r[-1])) for r in parsed["refs"])
    return TaskSpec(
        name=name,
        schema=schema,
        select_sql=file.text.strip().rstrip(";").rstrip(),
        path=path,
        mode=str(config.get("mode", "reload")),
        wait_seconds=config.get("wait"),  # type: ignore[arg-type]
        timeout_seconds=config.get("timeout"),  # type: ignore[arg-type]
        duration_seconds=config.get("duration"),  # type: ignore[arg-type]
        tags=tuple(config.get("tags", ())),  # type: ignore[arg-type]
        external=tuple(config.get("external", ())),  # type: ignore[arg-type]
        references=refs,
        reads=frozenset(r.name for r in refs),
    )


def load_tasks(
    sql_dir: Path,
    schema: str = "agg",
    *,
    cache: ParseCache | None = None,
    workers: int | None = None,
) -> dict[str, TaskSpec]:
    """Load every ``*.sql`` in ``sql_dir`` (not recursive), keyed by table name.

    References are as written (``reads`` holds their dotted names); :mod:`.resolve`
    turns them into dependencies and external sources.
    """
    schema = schema.lower()
    files = sql_files(sql_dir)
    tasks: dict[str, TaskSpec] = {}
    for file, parsed in zip(files, _parsed(files, cache, workers)):
        task = build_task(file, parsed, schema)
        if task.name in tasks:
            raise DuplicateTableError(task.table, tasks[task.name].path, file.path)
        tasks[task.name] = task
    return tasks
