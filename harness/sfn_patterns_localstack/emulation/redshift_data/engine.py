"""The warehouse behind the Redshift Data API provider: statements run on DuckDB.

This module knows nothing about LocalStack, so the statement life cycle can be
reasoned about (and debugged) on its own; :mod:`.provider`
turns requests into calls here and :class:`DataApiError` into API errors.

A :class:`Warehouse` keeps one DuckDB database per target (account, region,
workgroup or cluster, database) and runs every statement on a bounded pool of
worker threads, each statement on its own DuckDB cursor (DuckDB's unit of
concurrency) inside its own transaction. The statement and the sub-statements
of a batch pass through the Data API's states: SUBMITTED (queued), PICKED,
STARTED, then FINISHED, FAILED or ABORTED.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import re
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import duckdb

SUBMITTED, PICKED, STARTED = "SUBMITTED", "PICKED", "STARTED"
FINISHED, FAILED, ABORTED = "FINISHED", "FAILED", "ABORTED"
TERMINAL = frozenset({FINISHED, FAILED, ABORTED})

# Redshift allows 500 active (queued or running) statements; past that the
# Data API answers ActiveStatementsExceededException.
MAX_ACTIVE_STATEMENTS = 500
# Statements that run at once; the rest wait, SUBMITTED, like a WLM queue.
DEFAULT_WORKERS = 16
# Records per GetStatementResult page (the real API pages at 100 MB).
PAGE_ROWS = 1000
# Finished statements kept for Describe/GetStatementResult (the real API keeps
# 24 hours); the oldest are forgotten first, so a long session stays bounded.
MAX_KEPT_STATEMENTS = 5000
MAX_BATCH_STATEMENTS = 40

# `/* sfnp:sleep=2.5 */` or `-- sfnp:sleep=2.5`, only inside comments.
_SLEEP_HINT = re.compile(r"sfnp:sleep\s*=\s*(\d+(?:\.\d+)?)")

# DuckDB statement types whose result is a result set the caller can fetch.
_RESULT_SET_TYPES = frozenset(
    {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN, duckdb.StatementType.CALL}
)
# DuckDB statement types whose result is the number of rows they changed.
_COUNT_TYPES = frozenset(
    {
        duckdb.StatementType.INSERT,
        duckdb.StatementType.UPDATE,
        duckdb.StatementType.DELETE,
        duckdb.StatementType.COPY,
        duckdb.StatementType.MERGE_INTO,
    }
)

_WIDE = "wide integer"
_INT64 = range(-(2**63), 2**63)

# DuckDB type id -> (Redshift type name, typed field of the Data API). Types not
# listed are returned as text, as Redshift returns SUPER, dates and times.
_TYPES: dict[str, tuple[str, str]] = {
    "boolean": ("bool", "booleanValue"),
    "tinyint": ("int2", "longValue"),
    "utinyint": ("int2", "longValue"),
    "smallint": ("int2", "longValue"),
    "usmallint": ("int4", "longValue"),
    "integer": ("int4", "longValue"),
    "uinteger": ("int8", "longValue"),
    "bigint": ("int8", "longValue"),
    # DuckDB sums integers into 128-bit integers where Redshift gives BIGINT: such
    # a column is int8/longValue when every value fits, else numeric/stringValue.
    "hugeint": ("int8", _WIDE),
    "ubigint": ("int8", _WIDE),
    "uhugeint": ("int8", _WIDE),
    "float": ("float4", "doubleValue"),
    "double": ("float8", "doubleValue"),
    "decimal": ("numeric", "stringValue"),
    "varchar": ("varchar", "stringValue"),
    "blob": ("varbyte", "blobValue"),
    "date": ("date", "stringValue"),
    "time": ("time", "stringValue"),
    "time with time zone": ("timetz", "stringValue"),
    "timestamp": ("timestamp", "stringValue"),
    "timestamp_s": ("timestamp", "stringValue"),
    "timestamp_ms": ("timestamp", "stringValue"),
    "timestamp_ns": ("timestamp", "stringValue"),
    "timestamp with time zone": ("timestamptz", "stringValue"),
    "uuid": ("varchar", "stringValue"),
}
_SIGNED = frozenset({"int2", "int4", "int8", "float4", "float8", "numeric"})


class DataApiError(Exception):
    """A request the Data API refuses; ``code`` is the API's exception name."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class _Aborted(Exception):
    """Raised inside a worker when CancelStatement stopped its statement."""


def _now() -> datetime:
    return datetime.now(tz=UTC)


def sleep_hint(sql: str) -> float:
    """Seconds a statement stays STARTED before it runs, from ``sfnp:sleep=N`` comments.

    Only comments count (DuckDB's tokenizer finds them), so a string literal that
    happens to contain the text changes nothing. Several hints add up.
    """
    try:
        tokens = duckdb.tokenize(sql)
    except duckdb.Error:
        return 0.0
    total = 0.0
    for index, (start, kind) in enumerate(tokens):
        if kind != duckdb.token_type.comment:
            continue
        end = tokens[index + 1][0] if index + 1 < len(tokens) else len(sql)
        total += sum(float(m.group(1)) for m in _SLEEP_HINT.finditer(sql[start:end]))
    return total


def bind_named_parameters(sql: str, names: Iterable[str]) -> str:
    """Rewrite the Data API's ``:name`` placeholders as DuckDB's ``$name``.

    Only names the request supplies are rewritten, and only where DuckDB's
    tokenizer sees an operator ``:`` directly followed by that name: casts
    (``::``), string literals, comments and list slices are left alone.
    """
    wanted = set(names)
    if not wanted:
        return sql
    tokens = duckdb.tokenize(sql)
    chars = list(sql)
    for index in range(len(tokens) - 1):
        start, kind = tokens[index]
        name_start, _name_kind = tokens[index + 1]
        if kind != duckdb.token_type.operator or sql[start] != ":" or name_start != start + 1:
            continue
        if start > 0 and sql[start - 1] == ":":
            continue
        name_end = tokens[index + 2][0] if index + 2 < len(tokens) else len(sql)
        if sql[name_start:name_end].rstrip() in wanted:
            chars[start] = "$"
    return "".join(chars)


@dataclass
class Target:
    """Where a statement runs: one DuckDB database per key."""

    account: str
    region: str
    database: str
    cluster_identifier: str | None = None
    workgroup_name: str | None = None

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        """Statements with the same key share tables."""
        kind = "workgroup" if self.workgroup_name else "cluster"
        name = self.workgroup_name or self.cluster_identifier or ""
        return (self.account, self.region, kind, name, self.database)


@dataclass
class Result:
    """The result set of a statement: column metadata and typed records."""

    columns: list[dict[str, Any]]
    records: list[list[dict[str, Any]]]


@dataclass
class SubStatement:
    """One SQL string of a request: the only one of ExecuteStatement, one of a batch."""

    id: str
    sql: str
    created_at: datetime
    status: str = SUBMITTED
    updated_at: datetime | None = None
    started_at: float | None = None
    ended_at: float | None = None
    error: str | None = None
    has_result_set: bool = False
    result_rows: int = -1
    result_size: int = -1
    redshift_query_id: int = 0
    result: Result | None = None

    def set_status(self, status: str) -> None:
        """Record a state change and when it happened."""
        self.status = status
        self.updated_at = _now()
        if status == STARTED and self.started_at is None:
            self.started_at = time.monotonic()
        if status in TERMINAL:
            self.ended_at = time.monotonic()

    @property
    def duration_ns(self) -> int:
        """Nanoseconds between STARTED and the end; -1 (null) while unfinished."""
        if self.ended_at is None:
            return -1
        return int((self.ended_at - (self.started_at or self.ended_at)) * 1e9)


@dataclass
class Statement:
    """A submitted request: ExecuteStatement (one sub-statement) or BatchExecuteStatement."""

    id: str
    target: Target
    subs: list[SubStatement]
    is_batch: bool
    created_at: datetime
    parameters: list[dict[str, str]] = field(default_factory=list)
    statement_name: str | None = None
    secret_arn: str | None = None
    db_user: str | None = None
    with_event: bool = False
    status: str = SUBMITTED
    updated_at: datetime | None = None
    error: str | None = None
    redshift_pid: int = 0
    cancel: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    cursor: duckdb.DuckDBPyConnection | None = None
    ended_reported: bool = False
    client_token: str | None = None

    def set_status(self, status: str) -> None:
        """Record a state change of the whole request."""
        self.status = status
        self.updated_at = _now()

    @property
    def query_string(self) -> str:
        """The SQL as DescribeStatement shows it (a batch shows its statements joined)."""
        return "; ".join(sub.sql for sub in self.subs) if self.is_batch else self.subs[0].sql


class _Database:
    """One DuckDB database, named like the Redshift database, default schema ``public``."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.quoted = '"' + name.replace('"', '""') + '"'
        self.lock = threading.Lock()
        self.connection = duckdb.connect(":memory:")
        # Attaching under the database's own name makes `dev.public.t` resolve.
        self.connection.execute(f"ATTACH ':memory:' AS {self.quoted}")
        self.connection.execute(f"CREATE SCHEMA {self.quoted}.public")

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A new connection to this database for one statement (DuckDB's unit of concurrency)."""
        with self.lock:
            cursor = self.connection.cursor()
        cursor.execute(f"USE {self.quoted}.public")
        return cursor

    def close(self) -> None:
        with contextlib.suppress(duckdb.Error):
            self.connection.close()


class Warehouse:
    """Statements, their databases and the workers that run them.

    ``on_end`` (optional) is called once per statement when it reaches FINISHED,
    FAILED or ABORTED, outside any statement lock: the provider announces the end
    there (the Data API's ``WithEvent`` status-change event).
    """

    def __init__(
        self,
        workers: int = DEFAULT_WORKERS,
        on_end: Callable[[Statement], None] | None = None,
    ) -> None:
        self.on_end = on_end
        self._lock = threading.RLock()
        self._statements: OrderedDict[str, Statement] = OrderedDict()
        # The statements not yet seen ended, in submission order: at most
        # MAX_ACTIVE_STATEMENTS, so counting them costs what the limit allows, not what
        # the session has run (MAX_KEPT_STATEMENTS).
        self._active: dict[str, Statement] = {}
        self._databases: dict[tuple, _Database] = {}
        self._tokens: dict[tuple[str, str], str] = {}
        self._query_ids = 0
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="redshift-data")

    # -- requests ------------------------------------------------------------------------------
    def submit(
        self,
        target: Target,
        sqls: list[str],
        *,
        is_batch: bool,
        parameters: list[dict[str, str]] | None = None,
        statement_name: str | None = None,
        secret_arn: str | None = None,
        db_user: str | None = None,
        with_event: bool = False,
        client_token: str | None = None,
    ) -> Statement:
        """Queue a statement and return at once; a worker runs it later."""
        with self._lock:
            if client_token:
                known = self._tokens.get((target.account, client_token))
                if known and known in self._statements:
                    return self._statements[known]
            if self._active_count() >= MAX_ACTIVE_STATEMENTS:
                raise DataApiError(
                    "ActiveStatementsExceededException",
                    f"The number of active statements exceeds the limit of "
                    f"{MAX_ACTIVE_STATEMENTS}.",
                )
            created = _now()
            statement_id = str(uuid.uuid4())
            subs = [
                SubStatement(
                    id=f"{statement_id}:{n}" if is_batch else statement_id,
                    sql=sql,
                    created_at=created,
                    updated_at=created,
                )
                for n, sql in enumerate(sqls, start=1)
            ]
            statement = Statement(
                id=statement_id,
                target=target,
                subs=subs,
                is_batch=is_batch,
                created_at=created,
                updated_at=created,
                parameters=list(parameters or []),
                statement_name=statement_name,
                secret_arn=secret_arn,
                db_user=db_user,
                with_event=with_event,
                redshift_pid=1073741824 + len(self._statements) % 100000,
            )
            self._statements[statement_id] = statement
            self._active[statement_id] = statement
            if client_token:
                statement.client_token = client_token
                self._tokens[(target.account, client_token)] = statement_id
            self._forget_old()
        self._pool.submit(self._run, statement)
        return statement

    def get(self, account: str, region: str, statement_id: str) -> tuple[Statement, SubStatement]:
        """The statement with this Id (or ``<id>:<n>`` for a batch's n-th sub-statement)."""
        parent_id, _, number = statement_id.partition(":")
        with self._lock:
            statement = self._statements.get(parent_id)
        if (
            statement is None
            or statement.target.account != account
            or statement.target.region != region
        ):
            raise DataApiError("ResourceNotFoundException", f"Query {statement_id} does not exist.")
        if not number:
            return statement, statement.subs[-1]
        if (
            not statement.is_batch
            or not number.isdigit()
            or not (1 <= int(number) <= len(statement.subs))
        ):
            raise DataApiError("ResourceNotFoundException", f"Query {statement_id} does not exist.")
        return statement, statement.subs[int(number) - 1]

    def statements(self, account: str, region: str) -> list[Statement]:
        """The statements of an account in a region, newest first."""
        with self._lock:
            statements = list(self._statements.values())
        return [
            s
            for s in reversed(statements)
            if s.target.account == account and s.target.region == region
        ]

    def cancel(self, account: str, region: str, statement_id: str) -> None:
        """Stop a queued or running statement; it ends ABORTED and its transaction rolls back."""
        statement, _sub = self.get(account, region, statement_id)
        with statement.lock:
            if statement.status in TERMINAL:
                raise DataApiError(
                    "ValidationException",
                    f"Could not cancel a query that is already in {statement.status} state.",
                )
            statement.cancel.set()
            queued = statement.status in (SUBMITTED, PICKED)
            if queued:
                self._abort(statement)
            elif statement.cursor is not None:
                with contextlib.suppress(duckdb.Error):
                    statement.cursor.interrupt()
        if queued:
            self._ended(statement)  # a running statement's worker reports its own end

    def result_page(self, sub: SubStatement, next_token: str | None) -> dict[str, Any]:
        """One page of a finished statement's result set."""
        if sub.status != FINISHED or sub.result is None:
            raise DataApiError(
                "ResourceNotFoundException",
                "Query does not have result. Please check query status with DescribeStatement.",
            )
        offset = _decode_token(sub.id, next_token) if next_token else 0
        records = sub.result.records
        page: dict[str, Any] = {
            "Records": records[offset : offset + PAGE_ROWS],
            "ColumnMetadata": sub.result.columns,
            "TotalNumRows": len(records),
        }
        if offset + PAGE_ROWS < len(records):
            page["NextToken"] = _encode_token(sub.id, offset + PAGE_ROWS)
        return page

    def close(self) -> None:
        """Abort what is still running and release the databases (LocalStack shutdown)."""
        with self._lock:
            statements = list(self._statements.values())
        for statement in statements:
            with contextlib.suppress(DataApiError):
                self.cancel(statement.target.account, statement.target.region, statement.id)
        self._pool.shutdown(wait=False, cancel_futures=True)
        with self._lock:
            for database in self._databases.values():
                database.close()
            self._databases.clear()

    # -- workers -------------------------------------------------------------------------------
    def _active_count(self) -> int:
        """Statements queued or running (caller holds the warehouse lock).

        Drops the ended ones from ``_active`` first: a walk of at most the active limit,
        where a count over every kept statement cost each submit a pass over up to
        MAX_KEPT_STATEMENTS of them, under the warehouse lock (a submit's cost grew over
        bench_scale's dag-aggregate run with the statements before it).
        """
        for statement_id in [sid for sid, s in self._active.items() if s.status in TERMINAL]:
            del self._active[statement_id]
        return len(self._active)

    def _forget_old(self) -> None:
        """Forget the oldest ended statements past MAX_KEPT_STATEMENTS (caller holds the lock).

        Walks from the oldest and stops at the last one to forget: about one a submit,
        passing over only older statements still queued or running. A forgotten
        statement's ClientToken is forgotten with it (the token map grew with every
        statement submitted with one).
        """
        excess = len(self._statements) - MAX_KEPT_STATEMENTS
        if excess <= 0:
            return
        forget: list[str] = []
        for statement_id, statement in self._statements.items():
            if statement.status in TERMINAL:
                forget.append(statement_id)
                if len(forget) == excess:
                    break
        for statement_id in forget:
            statement = self._statements.pop(statement_id)
            token = (statement.target.account, statement.client_token)
            if statement.client_token and self._tokens.get(token) == statement_id:
                del self._tokens[token]  # its idempotency ends with it, as its record

    def _database(self, target: Target) -> _Database:
        with self._lock:
            database = self._databases.get(target.key)
            if database is None:
                database = self._databases[target.key] = _Database(target.database)
            return database

    def _next_query_id(self) -> int:
        with self._lock:
            self._query_ids += 1
            return self._query_ids

    def _abort(self, statement: Statement) -> None:
        """Mark a statement and its unfinished sub-statements ABORTED (caller holds its lock)."""
        for sub in statement.subs:
            if sub.status not in TERMINAL:
                sub.set_status(ABORTED)
        statement.set_status(ABORTED)

    def _ended(self, statement: Statement) -> None:
        """Report a statement's end to ``on_end``, once, whoever ended it."""
        with statement.lock:
            if statement.ended_reported or statement.status not in TERMINAL:
                return
            statement.ended_reported = True
        if self.on_end is not None:
            self.on_end(statement)

    def _run(self, statement: Statement) -> None:
        """Worker: run a statement to a terminal state, whatever happens."""
        with statement.lock:
            if statement.status != SUBMITTED:
                return  # cancelled while queued
            statement.set_status(PICKED)
        cursor: duckdb.DuckDBPyConnection | None = None
        try:
            cursor = self._database(statement.target).cursor()
            with statement.lock:
                if statement.cancel.is_set():
                    raise _Aborted
                statement.cursor = cursor
                statement.set_status(STARTED)
            failure = self._run_in_transaction(statement, cursor)
            with statement.lock:
                if failure is None:
                    statement.set_status(FINISHED)
                else:
                    self._fail(statement, failure)
        except _Aborted:
            with statement.lock:
                self._abort(statement)
        except Exception as error:  # e.g. the database could not be created
            with statement.lock:
                self._fail(statement, str(error))
        finally:
            statement.cursor = None
            if cursor is not None:
                with contextlib.suppress(duckdb.Error):
                    cursor.close()  # also rolls back a transaction left open
            self._ended(statement)

    def _run_in_transaction(
        self, statement: Statement, cursor: duckdb.DuckDBPyConnection
    ) -> str | None:
        """Run the sub-statements in order and commit; the first error, or None.

        Raises :class:`_Aborted` when the statement was cancelled; the commit and
        the check for a cancel happen under the statement's lock, so a statement
        is either committed and FINISHED or rolled back and ABORTED.
        """
        values = {p["name"]: p["value"] for p in statement.parameters}
        in_transaction = False
        for sub in statement.subs:
            with statement.lock:
                if statement.cancel.is_set():
                    raise _Aborted
                sub.set_status(STARTED)
            if statement.cancel.wait(sleep_hint(sub.sql)):
                raise _Aborted
            try:
                parsed = duckdb.extract_statements(bind_named_parameters(sub.sql, values))
                explicit = any(p.type == duckdb.StatementType.TRANSACTION for p in parsed)
                if not in_transaction and not explicit:
                    cursor.begin()
                    in_transaction = True
                self._execute(cursor, sub, parsed, values)
            except duckdb.Error as error:
                if statement.cancel.is_set():
                    raise _Aborted from error
                with statement.lock:
                    sub.error = str(error)
                    sub.set_status(FAILED)
                if in_transaction:
                    with contextlib.suppress(duckdb.Error):
                        cursor.rollback()
                return sub.error
            with statement.lock:
                sub.set_status(FINISHED)
        with statement.lock:
            if statement.cancel.is_set():
                raise _Aborted
            if in_transaction:
                cursor.commit()
        return None

    @staticmethod
    def _fail(statement: Statement, message: str) -> None:
        """Mark a statement FAILED; sub-statements that did not run end ABORTED."""
        for sub in statement.subs:
            if sub.status not in TERMINAL:
                sub.set_status(ABORTED)
        statement.error = message
        statement.set_status(FAILED)

    def _execute(
        self,
        cursor: duckdb.DuckDBPyConnection,
        sub: SubStatement,
        parsed: list[duckdb.Statement],
        values: dict[str, str],
    ) -> None:
        """Run a sub-statement's SQL statements in order; the last one's result is its result."""
        for part in parsed:
            sub.redshift_query_id = self._next_query_id()
            params = {name: values[name] for name in part.named_parameters if name in values}
            if part.type in _RESULT_SET_TYPES:
                sub.result = _fetch(cursor.sql(part.query, params=params or None))
                sub.has_result_set = True
                sub.result_rows = len(sub.result.records)
                sub.result_size = len(json.dumps(sub.result.records, default=len))
                continue
            cursor.execute(part.query, params or None)
            sub.result, sub.has_result_set, sub.result_size = None, False, 0
            sub.result_rows = -1
            if part.type in _COUNT_TYPES:
                row = cursor.fetchone()
                sub.result_rows = int(row[0]) if row else 0


def _fetch(relation: duckdb.DuckDBPyRelation) -> Result:
    """Typed records of a query, as the Data API returns them.

    Types without a typed field of their own (decimals, dates, timestamps, lists)
    are cast to text by DuckDB itself, as Redshift returns them as strings; this
    also spares Python the time-zone libraries DuckDB would need for them.
    """
    columns: list[dict[str, Any]] = []
    kinds: list[str] = []
    expressions: list[str] = []
    for position, (name, dtype) in enumerate(
        zip(relation.columns, relation.types, strict=True), start=1
    ):
        type_name, kind = _TYPES.get(dtype.id, ("super", "stringValue"))
        precision, scale = 0, 0
        if dtype.id == "decimal":
            attrs = dict(dtype.children)
            precision, scale = int(attrs["precision"]), int(attrs["scale"])
        columns.append(
            {
                "name": name,
                "label": name,
                "typeName": type_name,
                "nullable": 1,
                "precision": precision,
                "scale": scale,
                "isSigned": type_name in _SIGNED,
                "isCaseSensitive": type_name == "varchar",
                "isCurrency": False,
                "length": 0,
                "schemaName": "",
                "tableName": "",
            }
        )
        kinds.append(kind)
        cast = kind == "stringValue" and dtype.id != "varchar"
        expressions.append(f"CAST(#{position} AS VARCHAR)" if cast else f"#{position}")
    rows = relation.project(", ".join(expressions)).fetchall() if expressions else []
    for position, kind in enumerate(kinds):
        if kind == _WIDE:
            fits = all(row[position] is None or row[position] in _INT64 for row in rows)
            kinds[position] = "longValue" if fits else "stringValue"
            if not fits:
                columns[position]["typeName"] = "numeric"
    records = [
        [
            {"isNull": True} if value is None else {kind: _field_value(kind, value)}
            for kind, value in zip(kinds, row, strict=True)
        ]
        for row in rows
    ]
    return Result(columns, records)


def _field_value(kind: str, value: Any) -> Any:
    if kind == "longValue":
        return int(value)
    if kind == "doubleValue":
        return float(value)
    if kind == "booleanValue":
        return bool(value)
    if kind == "blobValue":
        return bytes(value)
    return str(value)


def _encode_token(statement_id: str, offset: int) -> str:
    return base64.urlsafe_b64encode(f"{statement_id}|{offset}".encode()).decode()


def _decode_token(statement_id: str, token: str) -> int:
    try:
        owner, _, offset = base64.urlsafe_b64decode(token.encode()).decode().rpartition("|")
        if owner == statement_id and offset.isdigit():
            return int(offset)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        pass
    raise DataApiError("ValidationException", "The NextToken is invalid.")


def page(items: list[Any], next_token: str | None, size: int, key: str) -> tuple[list, str | None]:
    """Offset pagination for list operations; the token names the list it belongs to."""
    offset = _decode_token(key, next_token) if next_token else 0
    chunk = items[offset : offset + size]
    more = offset + size < len(items)
    return chunk, (_encode_token(key, offset + size) if more else None)
