"""The runs table: every DynamoDB expression of the dependency strategy, in one class.

As in Powertools' idempotency persistence layer, no other module builds an
expression for this table: :class:`RunStore` owns the layout, the conditions and the
return values, and hands the scheduler plain Python objects (:class:`RunState`,
:class:`TaskState`). Every write is one conditional request (a single item, or one
transaction of the run item and ready items), so each is atomic and safe to repeat;
where losing a race means the caller must look at the winner's item, the write asks
for it in the same call (``ReturnValuesOnConditionCheckFailure=ALL_OLD``) instead of
reading it again. A transaction returns no new image: the run item is then read once.

Layout (``pk`` = run id, ``sk`` = ``run``, ``ready#<rank>#<name>`` or ``task#<name>``):

* the **run item**: ``status`` (STARTING, RUNNING, SUCCEEDED, FAILED), the coordinator
  ``execution`` and its ``token``, ``invocation`` (how many times the run id was
  (re)started), ``selection``, the first ``failure``, ``ready_count`` (how many ready
  items the run has) and two maps: ``active`` (task -> attempt: the tasks holding one
  of the N slots) and ``unlaunched`` (task -> ``"<claimed at>|<claimer>"`` until its
  execution started). Both maps hold at most N entries, so the item, which every
  report rewrites, stays the same size however large the DAG is;
* one **ready item** per task whose parents all succeeded and which waits for a
  slot: ``sk`` = ``ready#<rank>#<name>`` (rank = inverted priority in ms, 15 digits,
  so a Query in sort-key order reads the longest remaining path first) and its
  ``attempt``. Not a map in the run item: a DAG with a thousand roots would queue
  them all there, and every report would rewrite the whole queue (9 KB and 56 write
  units per task at 1,000 tasks, growing with the DAG). A ready item is written in
  the same transaction as the run item's ``ready_count`` change (queueing with a
  slot's release, claiming with its move into ``active``), so the count and the
  items always agree;
* one **task item** per selected task: ``status`` (pending, succeeded, failed),
  ``attempt`` (the attempt the task runs as next or now, which names its execution),
  ``waiting_on`` (parents in this run not yet succeeded; absent once all did),
  ``children`` (its children in this run), and the outcome: ``started_at``,
  ``finished_at``, ``statement_id``, ``rows``, ``error``, ``cause``.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

LOG = logging.getLogger("sfn_patterns.dag_aggregate.runtime")
RUN_SK = "run"
TASK_PREFIX = "task#"
READY_PREFIX = "ready#"
PENDING, SUCCEEDED, FAILED = "pending", "succeeded", "failed"
STARTING, RUNNING = "STARTING", "RUNNING"
RUN_SUCCEEDED, RUN_FAILED = "SUCCEEDED", "FAILED"
ENDED = (RUN_SUCCEEDED, RUN_FAILED)
MAX_ERROR = 256
MAX_CAUSE = 30_000  # SendTaskFailure allows 32,768 characters
# A start attempt may take over its own execution's run only if no later attempt of the
# Run state (by its retry count) holds it.
_NOT_LATER = "(attribute_not_exists(start_retry) OR start_retry <= :retry)"
# Writes per transaction of a start (TransactWriteItems takes 100 items, one of them
# the check that the start still owns the run).
_STARTING_WRITES = 99
# Map entries (and ready items) one request touches: a DynamoDB expression may be at
# most 4 KB, and each entry costs about 60 characters of UpdateExpression and
# ConditionExpression; a transaction holds at most 100 items.
EXPRESSION_BATCH = 25


class ConditionFailed(Exception):
    """A conditional write lost; ``item`` is the item as it was (ALL_OLD), if any."""

    def __init__(self, item: Mapping[str, Any] | None) -> None:
        super().__init__("conditional write lost")
        self.item = item


class _Cancelled(Exception):
    """A transaction was cancelled by a condition; ``reasons``: one per item, in order."""

    def __init__(self, reasons: list[dict[str, Any]]) -> None:
        super().__init__("transaction cancelled")
        self.reasons = reasons

    def failed(self, index: int) -> bool:
        """Whether item ``index``'s condition failed."""
        return (
            index < len(self.reasons)
            and self.reasons[index].get("Code") == "ConditionalCheckFailed"
        )

    def item(self, index: int) -> Mapping[str, Any] | None:
        """Item ``index`` as it was (ALL_OLD), if its condition failed and it existed."""
        return self.reasons[index].get("Item") if index < len(self.reasons) else None


@dataclass(frozen=True)
class ReadyEntry:
    """A task whose parents all succeeded, waiting for a slot."""

    rank: int  # inverted priority: ascending = longest remaining path first
    attempt: int

    def sort_key(self, task: str) -> str:
        """The ready item's ``sk``: ``ready#<rank, 15 digits>#<task>``."""
        return f"{READY_PREFIX}{self.rank:015d}#{task}"


@dataclass(frozen=True)
class Slot:
    """A task holding one of the run's N slots."""

    attempt: int
    by: str = ""  # who claimed it: "start#<execution>" or "<task>#<attempt>" of a report
    claimed_at: float = 0.0  # epoch seconds
    launched: bool = False


@dataclass(frozen=True)
class Failure:
    """The run's first failed task."""

    task: str
    error: str
    cause: str


@dataclass(frozen=True)
class Selection:
    """The graph selectors a run was started with (empty select = every task)."""

    select: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()


@dataclass
class RunState:
    """The run item, decoded."""

    run_id: str
    status: str
    execution: str = ""
    token: str = ""
    invocation: int = 0
    max_concurrency: int = 0
    selection: Selection = field(default_factory=Selection)
    ready_count: int = 0  # ready items waiting for a slot (RunStore.ready_tasks reads them)
    active: dict[str, Slot] = field(default_factory=dict)
    failure: Failure | None = None
    counts: dict[str, int] = field(default_factory=dict)
    started_at: str = ""
    finished_at: str = ""
    notified: bool = False

    @property
    def ended(self) -> bool:
        """Whether the run reached SUCCEEDED or FAILED."""
        return self.status in ENDED


@dataclass
class TaskState:
    """A task item, decoded (also what :meth:`RunStore.put_tasks` writes)."""

    name: str
    status: str = PENDING
    attempt: int = 1
    invocation: int = 0
    waiting_on: frozenset[str] = frozenset()
    children: tuple[str, ...] = ()
    started_at: str | None = None
    finished_at: str | None = None
    statement_id: str | None = None
    rows: int | None = None
    error: str | None = None
    cause: str | None = None


@dataclass(frozen=True)
class Outcome:
    """What a task execution reports (``task_done``)."""

    ok: bool
    error: str | None = None
    cause: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    statement_id: str | None = None
    rows: int | None = None


# --- attribute value codecs ------------------------------------------------------------


def _s(value: str) -> dict[str, str]:
    return {"S": value}


def _n(value: float) -> dict[str, str]:
    return {"N": repr(value) if isinstance(value, float) else str(value)}


def _str(item: Mapping[str, Any], name: str, default: str = "") -> str:
    return item[name]["S"] if name in item else default


def _int(item: Mapping[str, Any], name: str, default: int = 0) -> int:
    return int(float(item[name]["N"])) if name in item else default


def _opt_str(item: Mapping[str, Any], name: str) -> str | None:
    return item[name]["S"] if name in item else None


def _strings(value: Mapping[str, Any] | None) -> tuple[str, ...]:
    if not value:
        return ()
    if "L" in value:
        return tuple(v["S"] for v in value["L"])
    return tuple(value.get("SS", ()))


def decode_run(run_id: str, item: Mapping[str, Any]) -> RunState:
    """The run item as a :class:`RunState`."""
    unlaunched = {
        task: value["S"].split("|", 1)
        for task, value in item.get("unlaunched", {}).get("M", {}).items()
    }
    active = {}
    for task, value in item.get("active", {}).get("M", {}).items():
        claim = unlaunched.get(task)
        active[task] = Slot(
            attempt=int(value["N"]),
            by=claim[1] if claim else "",
            claimed_at=float(claim[0]) if claim else 0.0,
            launched=claim is None,
        )
    failure = None
    if "failure" in item:
        f = item["failure"]["M"]
        failure = Failure(_str(f, "task"), _str(f, "error"), _str(f, "cause"))
    selection = Selection()
    if "selection" in item:
        s = item["selection"]["M"]
        selection = Selection(_strings(s.get("select")), _strings(s.get("exclude")))
    return RunState(
        run_id=run_id,
        status=_str(item, "status"),
        execution=_str(item, "execution"),
        token=_str(item, "token"),
        invocation=_int(item, "invocation"),
        max_concurrency=_int(item, "max_concurrency"),
        selection=selection,
        ready_count=_int(item, "ready_count"),
        active=active,
        failure=failure,
        counts={k: int(v["N"]) for k, v in item.get("counts", {}).get("M", {}).items()},
        started_at=_str(item, "started_at"),
        finished_at=_str(item, "finished_at"),
        notified="notified" in item,
    )


def decode_task(item: Mapping[str, Any]) -> TaskState:
    """A task item as a :class:`TaskState`."""
    return TaskState(
        name=item["sk"]["S"][len(TASK_PREFIX) :],
        status=_str(item, "status", PENDING),
        attempt=_int(item, "attempt", 1),
        invocation=_int(item, "invocation"),
        waiting_on=frozenset(item.get("waiting_on", {}).get("SS", ())),
        children=_strings(item.get("children")),
        started_at=_opt_str(item, "started_at"),
        finished_at=_opt_str(item, "finished_at"),
        statement_id=_opt_str(item, "statement_id"),
        rows=_int(item, "rows") if "rows" in item else None,
        error=_opt_str(item, "error"),
        cause=_opt_str(item, "cause"),
    )


def _ready_item(run_id: str, task: str, entry: ReadyEntry) -> dict[str, Any]:
    return {
        "pk": _s(run_id),
        "sk": _s(entry.sort_key(task)),
        "task": _s(task),
        "attempt": _n(entry.attempt),
    }


def _decode_ready(item: Mapping[str, Any]) -> tuple[str, ReadyEntry]:
    rank = int(item["sk"]["S"][len(READY_PREFIX) :].split("#", 1)[0])
    return item["task"]["S"], ReadyEntry(rank, _int(item, "attempt", 1))


def _failure_value(failure: Failure) -> dict[str, Any]:
    return {
        "M": {
            "task": _s(failure.task),
            "error": _s(failure.error[:MAX_ERROR]),
            "cause": _s(failure.cause[:MAX_CAUSE]),
        }
    }


def _selection_value(selection: Selection) -> dict[str, Any]:
    return {
        "M": {
            "select": {"L": [_s(s) for s in selection.select]},
            "exclude": {"L": [_s(s) for s in selection.exclude]},
        }
    }


def _encode_task(run_id: str, task: TaskState) -> dict[str, Any]:
    item: dict[str, Any] = {
        "pk": _s(run_id),
        "sk": _s(TASK_PREFIX + task.name),
        "status": _s(task.status),
        "attempt": _n(task.attempt),
        "invocation": _n(task.invocation),
    }
    if task.waiting_on:
        item["waiting_on"] = {"SS": sorted(task.waiting_on)}
    if task.children:
        item["children"] = {"L": [_s(c) for c in task.children]}
    return item


class _Names:
    """Placeholders for map keys (task names are data, never expression syntax)."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def __call__(self, name: str) -> str:
        for placeholder, value in self.names.items():
            if value == name:
                return placeholder
        placeholder = f"#n{len(self.names)}"
        self.names[placeholder] = name
        return placeholder


class RunStore:
    """Reads and conditional writes of the runs table (boto3 low-level DynamoDB client)."""

    def __init__(self, client: Any, table: str) -> None:
        self.client = client
        self.table = table
        # DynamoDB requests by operation (the handler logs them per invocation).
        self.requests: Counter[str] = Counter()

    # --- plumbing ----------------------------------------------------------------------

    def _call(self, operation: str, **kwargs: Any) -> Any:
        # A write refused for a transaction conflict alone is retried by the client
        # (sfn_patterns.clients), as a throttle is.
        self.requests[operation] += 1
        return getattr(self.client, operation)(**kwargs)

    def _transact(self, items: list[dict[str, Any]]) -> None:
        """TransactWriteItems; a condition that failed raises :class:`_Cancelled`.

        Any other refusal (a conflict the client's retries did not outlast, a
        throttle) is raised as it came: the invocation fails, and its caller retries.
        """
        try:
            self._call("transact_write_items", TransactItems=items)
        except ClientError as err:
            reasons = err.response.get("CancellationReasons") or []
            if any(r.get("Code") == "ConditionalCheckFailed" for r in reasons):
                raise _Cancelled(reasons) from None
            raise

    def _run_update(self, run_id: str, **kwargs: Any) -> dict[str, Any]:
        """The run item's part of a transaction (its old image returned if it fails)."""
        return {
            "Update": {
                "TableName": self.table,
                "Key": self._key(run_id, RUN_SK),
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                **kwargs,
            }
        }

    def _raw_run(self, run_id: str) -> dict[str, Any] | None:
        return self._call(
            "get_item", TableName=self.table, Key=self._key(run_id, RUN_SK), ConsistentRead=True
        ).get("Item")

    @staticmethod
    def _key(run_id: str, sk: str) -> dict[str, Any]:
        return {"pk": _s(run_id), "sk": _s(sk)}

    def _update(self, run_id: str, sk: str, **kwargs: Any) -> dict[str, Any]:
        """UpdateItem returning the new item; :class:`ConditionFailed` carries the old one."""
        try:
            return self._call(
                "update_item",
                TableName=self.table,
                Key=self._key(run_id, sk),
                ReturnValues="ALL_NEW",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
                **kwargs,
            ).get("Attributes", {})
        except ClientError as err:
            if err.response["Error"]["Code"] == "ConditionalCheckFailedException":
                raise ConditionFailed(err.response.get("Item")) from None
            raise

    # --- the run item --------------------------------------------------------------------

    def get_run(self, run_id: str) -> RunState | None:
        """The run item (strongly consistent), or None for a new run id."""
        item = self._raw_run(run_id)
        return decode_run(run_id, item) if item else None

    def ready_tasks(self, run_id: str, limit: int) -> dict[str, ReadyEntry]:
        """The ``limit`` first ready items in claim order (longest remaining path first)."""
        items = self._items(run_id, READY_PREFIX, page_size=limit)
        return dict(map(_decode_ready, itertools.islice(items, limit)))

    def _items(
        self, run_id: str, prefix: str, page_size: int | None = None
    ) -> Iterator[dict[str, Any]]:
        """The run's items whose sort key starts with ``prefix``, in order (consistent).

        Pages of ``page_size`` items (None: DynamoDB's 1 MB pages), each read only when the
        caller asks for its first item.
        """
        kwargs: dict[str, Any] = {
            "TableName": self.table,
            "KeyConditionExpression": "pk = :r AND begins_with(sk, :p)",
            "ExpressionAttributeValues": {":r": _s(run_id), ":p": _s(prefix)},
            "ConsistentRead": True,
        }
        if page_size is not None:
            kwargs["Limit"] = page_size
        while True:
            page = self._call("query", **kwargs)
            yield from page.get("Items", [])
            if "LastEvaluatedKey" not in page:
                return
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def create_run(
        self,
        run_id: str,
        execution: str,
        token: str,
        *,
        invocation: int,
        max_concurrency: int,
        previous_execution: str | None,
        now: str,
        retry: int = 0,
    ) -> None:
        """Put the run item as STARTING for this execution, with this attempt's ``token``.

        Allowed when the run id is new, has ended, is still STARTING for this execution
        under the same or an earlier attempt (``retry``: the Run state's retry count; an
        earlier attempt died, or is still writing: this attempt takes over, and every
        write of the earlier one is fenced by token), or is still owned by
        ``previous_execution`` (the ended coordinator being taken over). A run this
        execution has already opened is not reset. A loser gets
        :class:`ConditionFailed` with the winner's run item.
        """
        condition = (
            "attribute_not_exists(pk) OR #s IN (:ok, :failed) "
            f"OR (execution = :e AND #s = :starting AND {_NOT_LATER})"
        )
        values: dict[str, Any] = {
            ":ok": _s(RUN_SUCCEEDED),
            ":failed": _s(RUN_FAILED),
            ":e": _s(execution),
            ":starting": _s(STARTING),
            ":retry": _n(retry),
        }
        if previous_execution:
            condition += " OR execution = :old"
            values[":old"] = _s(previous_execution)
        item = {
            **self._key(run_id, RUN_SK),
            "status": _s(STARTING),
            "execution": _s(execution),
            "token": _s(token),
            "invocation": _n(invocation),
            "active": {"M": {}},
            "ready_count": _n(0),
            "unlaunched": {"M": {}},
            "max_concurrency": _n(max_concurrency),
            "started_at": _s(now),
            "start_retry": _n(retry),
        }
        try:
            self._call(
                "put_item",
                TableName=self.table,
                Item=item,
                ConditionExpression=condition,
                ExpressionAttributeNames={"#s": "status"},
                ExpressionAttributeValues=values,
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ClientError as err:
            if err.response["Error"]["Code"] == "ConditionalCheckFailedException":
                raise ConditionFailed(err.response.get("Item")) from None
            raise

    def adopt_run(
        self, run_id: str, execution: str, token: str, previous: str, retry: int = 0
    ) -> RunState:
        """Take over a RUNNING run from an ended coordinator, keeping its slots and queue."""
        return decode_run(
            run_id,
            self._update(
                run_id,
                RUN_SK,
                UpdateExpression="SET execution = :e, #t = :t, start_retry = :retry",
                ConditionExpression="#s = :running AND execution = :old",
                ExpressionAttributeNames={"#s": "status", "#t": "token"},
                ExpressionAttributeValues={
                    ":e": _s(execution),
                    ":t": _s(token),
                    ":running": _s(RUNNING),
                    ":old": _s(previous),
                    ":retry": _n(retry),
                },
            ),
        )

    def refresh_token(self, run_id: str, execution: str, token: str, retry: int = 0) -> RunState:
        """A redelivered start of the owning execution: keep the newest attempt's token.

        Newest by the Run state's retry count: an attempt Step Functions has given up on
        that arrives after its retry does not take the token back (ConditionFailed).
        """
        return decode_run(
            run_id,
            self._update(
                run_id,
                RUN_SK,
                UpdateExpression="SET #t = :t, start_retry = :retry",
                ConditionExpression=f"execution = :e AND {_NOT_LATER}",
                ExpressionAttributeNames={"#t": "token"},
                ExpressionAttributeValues={
                    ":t": _s(token),
                    ":e": _s(execution),
                    ":retry": _n(retry),
                },
            ),
        )

    def open_run(
        self,
        run_id: str,
        execution: str,
        token: str,
        *,
        ready: Mapping[str, ReadyEntry],
        selection: Selection,
        task_count: int,
    ) -> RunState:
        """STARTING -> RUNNING with the first ready tasks, if this attempt still owns it.

        Owned: this execution's, with this attempt's task token. Two attempts of one
        start can overlap (Step Functions retried the first while it was still
        writing); the later one's :meth:`create_run` took the token, so the earlier
        one cannot open the run under it (the 5,000-task scale run failed when the
        earlier one did, and the later one, the attempt Step Functions waited on, then
        found the run opened and failed the coordinator).

        The ready items are written first, and any other ready item of the run deleted
        (a start that died before this step may have queued another selection), each
        write only while this attempt owns the run (:meth:`_starting_writes`); no one
        claims while the run is STARTING. Then one write opens the run with their count.
        """
        wanted = {entry.sort_key(task): (task, entry) for task, entry in ready.items()}
        queued = self._items(run_id, READY_PREFIX)
        existing = {item["sk"]["S"]: _decode_ready(item) for item in queued}
        stale = [
            {"Delete": {"TableName": self.table, "Key": self._key(run_id, sk)}}
            for sk in existing
            if sk not in wanted
        ]
        puts = [
            {"Put": {"TableName": self.table, "Item": _ready_item(run_id, task, entry)}}
            for sk, (task, entry) in wanted.items()
            if existing.get(sk) != (task, entry)
        ]
        self._starting_writes(run_id, execution, token, stale + puts)
        return decode_run(
            run_id,
            self._update(
                run_id,
                RUN_SK,
                UpdateExpression="SET #s = :running, active = :empty, ready_count = :ready, "
                "unlaunched = :empty, selection = :sel, tasks = :n "
                "REMOVE failure, finished_at, counts, notified, ready",
                ConditionExpression="#s = :starting AND execution = :e AND #t = :t",
                ExpressionAttributeNames={"#s": "status", "#t": "token"},
                ExpressionAttributeValues={
                    ":running": _s(RUNNING),
                    ":starting": _s(STARTING),
                    ":empty": {"M": {}},
                    ":ready": _n(len(ready)),
                    ":sel": _selection_value(selection),
                    ":n": _n(task_count),
                    ":e": _s(execution),
                    ":t": _s(token),
                },
            ),
        )

    def release(
        self,
        run_id: str,
        task: str,
        attempt: int,
        *,
        ready: Mapping[str, ReadyEntry],
        failure: Failure | None,
        keep_slot: bool = False,
    ) -> RunState:
        """Free a task's slot and queue the children it made ready, in one atomic write.

        Conditional on the slot still being this attempt's, so a redelivered report
        changes nothing. Each child is queued only if it is still unqueued, checked in
        the same transaction: its ready item absent, no slot held by it, and its task
        item pending at that attempt with no parent left. One child can be handed to two
        callers (the parent whose unblock emptied its ``waiting_on``, and a replayed
        report of another parent, which cannot tell whether its first delivery queued
        it), and by the time the second writes, the first's queueing may have been
        claimed, or claimed and run: queued again, the child ran twice, or held a slot
        no report frees (its start a no-op on the existing execution). The 5,000-task
        scale run stalled on such slots. Without children the release is one plain
        update. At most EXPRESSION_BATCH children per call: with ``keep_slot`` the call
        only queues them (still conditional on the slot), so a wide fan-out is queued
        in several writes before the last one frees the slot.
        """
        if len(ready) > EXPRESSION_BATCH:
            raise ValueError(f"queue at most {EXPRESSION_BATCH} children per request")

        def run_part(queued: Mapping[str, ReadyEntry]) -> dict[str, Any]:
            names = _Names()
            guards = [f"attribute_not_exists(active.{names(c)})" for c in queued]
            sets = ["ready_count = if_not_exists(ready_count, :zero) + :k"] if queued else []
            values: dict[str, Any] = {":a": _n(attempt)}
            if queued:
                values.update({":k": _n(len(queued)), ":zero": _n(0)})
            if failure is not None and not keep_slot:
                sets.append("failure = if_not_exists(failure, :f)")
                values[":f"] = _failure_value(failure)
            slot = names(task)
            update = (f"SET {', '.join(sets)} " if sets else "") + (
                "" if keep_slot else f"REMOVE active.{slot}, unlaunched.{slot}"
            )
            return {
                "UpdateExpression": update.strip(),
                "ConditionExpression": " AND ".join([f"active.{slot} = :a", *guards]),
                "ExpressionAttributeNames": names.names,
                "ExpressionAttributeValues": values,
            }

        if self._queue_ready(run_id, ready, run_part):
            return self._run_after_write(run_id)
        return decode_run(run_id, self._update(run_id, RUN_SK, **run_part({})))

    def _queue_ready(
        self,
        run_id: str,
        ready: Mapping[str, ReadyEntry],
        run_part: Callable[[Mapping[str, ReadyEntry]], dict[str, Any]],
    ) -> bool:
        """Write ready items with the run item's update, in one transaction; False: none left.

        ``run_part(queued)`` is the run item's update for the items still to queue (it
        adds their count to ``ready_count``, under its own condition, which also checks
        that none of them holds a slot). Each task is queued only if its ready item is
        absent and its task item still pending at that attempt with no parent left. A
        task already queued, or no longer pending, is left out and the rest written
        again, so no item is ever counted twice; the run item's condition failing
        raises :class:`ConditionFailed` with its image.
        """
        pending = dict(ready)
        while pending:
            children = list(pending.items())
            try:
                self._transact(
                    [
                        self._run_update(run_id, **run_part(pending)),
                        *(self._put_ready(run_id, t, e) for t, e in children),
                        *(self._still_pending(run_id, t, e) for t, e in children),
                    ]
                )
                return True
            except _Cancelled as cancelled:
                if cancelled.failed(0):
                    raise ConditionFailed(cancelled.item(0)) from None
                dropped = {
                    t for i, (t, _) in enumerate([*children, *children], 1) if cancelled.failed(i)
                }
                if not dropped:
                    raise
                for t in dropped:
                    del pending[t]
        return False

    def _still_pending(self, run_id: str, task: str, entry: ReadyEntry) -> dict[str, Any]:
        """A transaction's check that a task is pending at ``entry.attempt``, its parents done."""
        return {
            "ConditionCheck": {
                "TableName": self.table,
                "Key": self._key(run_id, TASK_PREFIX + task),
                "ConditionExpression": "#s = :pending AND attempt = :a "
                "AND attribute_not_exists(waiting_on)",
                "ExpressionAttributeNames": {"#s": "status"},
                "ExpressionAttributeValues": {":pending": _s(PENDING), ":a": _n(entry.attempt)},
            }
        }

    def _put_ready(self, run_id: str, task: str, entry: ReadyEntry) -> dict[str, Any]:
        return {
            "Put": {
                "TableName": self.table,
                "Item": _ready_item(run_id, task, entry),
                "ConditionExpression": "attribute_not_exists(sk)",
            }
        }

    def _run_after_write(self, run_id: str) -> RunState:
        """The run item after a transaction (which returns no image): one consistent read."""
        item = self._raw_run(run_id)
        if item is None:  # pragma: no cover - the transaction's condition needed it
            raise ConditionFailed(None)
        return decode_run(run_id, item)

    def claim(
        self, run_id: str, tasks: Mapping[str, ReadyEntry], max_concurrency: int, by: str
    ) -> RunState:
        """Move ready tasks into ``active`` if that many slots are free (and still ready).

        ``size(active)`` counts the running tasks, so however many dispatchers race,
        no claim can take the run past N; each task's ready item is deleted in the same
        transaction, only if it is still there for that attempt, so a task is claimed
        once. A ready item exists only for a pending task: the release that queues a
        child checks, in its own transaction, that the child has no ready item, holds
        no slot and is still pending at that attempt (see ``release``), so a claim
        needs no check of its own (tests/interleavings/test_dag_aggregate.py explores
        claims, reports, replayed reports and takeovers against that invariant). At
        most EXPRESSION_BATCH tasks per call. A loser gets :class:`ConditionFailed`
        with the run item as it is.
        """
        if not tasks or len(tasks) > EXPRESSION_BATCH:
            raise ValueError(f"claim 1 to {EXPRESSION_BATCH} tasks per request")
        names = _Names()
        sets = []
        values: dict[str, Any] = {
            ":running": _s(RUNNING),
            ":max": _n(max_concurrency - len(tasks)),
            ":k": _n(len(tasks)),
            ":claim": _s(f"{time.time():.3f}|{by}"),
        }
        for i, (task, entry) in enumerate(tasks.items()):
            ph = names(task)
            values[f":a{i}"] = _n(entry.attempt)
            sets.append(f"active.{ph} = :a{i}, unlaunched.{ph} = :claim")
        names.names["#s"] = "status"
        run_part = self._run_update(
            run_id,
            UpdateExpression=f"SET {', '.join(sets)}, ready_count = ready_count - :k",
            ConditionExpression="#s = :running AND size(active) <= :max",
            ExpressionAttributeNames=names.names,
            ExpressionAttributeValues=values,
        )
        deletes = [
            {
                "Delete": {
                    "TableName": self.table,
                    "Key": self._key(run_id, entry.sort_key(task)),
                    "ConditionExpression": "attempt = :a",
                    "ExpressionAttributeValues": {":a": _n(entry.attempt)},
                }
            }
            for task, entry in tasks.items()
        ]
        try:
            self._transact([run_part, *deletes])
        except _Cancelled as cancelled:
            # The run item as the winner left it: from the failed condition, or read.
            raise ConditionFailed(
                cancelled.item(0) if cancelled.failed(0) else self._raw_run(run_id)
            ) from None
        return self._run_after_write(run_id)

    def mark_launched(self, run_id: str, tasks: Mapping[str, int]) -> None:
        """Note that these slots' executions were started (each only if still that attempt).

        One request for all; if a slot was released meanwhile (its task already
        reported), the others are marked one by one.
        """
        if not tasks:
            return
        if len(tasks) > EXPRESSION_BATCH:
            items = list(tasks.items())
            for i in range(0, len(items), EXPRESSION_BATCH):
                self.mark_launched(run_id, dict(items[i : i + EXPRESSION_BATCH]))
            return
        names = _Names()
        removes, checks = [], []
        values: dict[str, Any] = {}
        for i, (task, attempt) in enumerate(tasks.items()):
            ph = names(task)
            removes.append(f"unlaunched.{ph}")
            checks.append(f"active.{ph} = :a{i}")
            values[f":a{i}"] = _n(attempt)
        try:
            self._call(
                "update_item",
                TableName=self.table,
                Key=self._key(run_id, RUN_SK),
                UpdateExpression="REMOVE " + ", ".join(removes),
                ConditionExpression=" AND ".join(checks),
                ExpressionAttributeNames=names.names,
                ExpressionAttributeValues=values,
            )
            return
        except ClientError as err:
            if err.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
        if len(tasks) == 1:
            return
        for task, attempt in tasks.items():
            self.mark_launched(run_id, {task: attempt})

    def requeue(self, run_id: str, ready: Mapping[str, ReadyEntry]) -> RunState:
        """Put ready tasks lost by a crash back in the queue (only while the run runs).

        A task that holds a slot, whose ready item is there, or that is no longer pending
        at that attempt, is not queued again.
        """

        def run_part(queued: Mapping[str, ReadyEntry]) -> dict[str, Any]:
            names = _Names()
            checks = ["#s = :running"]
            checks += [f"attribute_not_exists(active.{names(t)})" for t in queued]
            names.names["#s"] = "status"
            return {
                "UpdateExpression": "SET ready_count = if_not_exists(ready_count, :zero) + :k",
                "ConditionExpression": " AND ".join(checks),
                "ExpressionAttributeNames": names.names,
                "ExpressionAttributeValues": {
                    ":running": _s(RUNNING),
                    ":k": _n(len(queued)),
                    ":zero": _n(0),
                },
            }

        items = list(ready.items())
        for i in range(0, len(items), EXPRESSION_BATCH):
            self._queue_ready(run_id, dict(items[i : i + EXPRESSION_BATCH]), run_part)
        return self._run_after_write(run_id)

    def finish(
        self,
        run_id: str,
        status: str,
        *,
        counts: Mapping[str, int],
        failure: Failure | None,
        now: str,
    ) -> RunState:
        """RUNNING with nothing active or ready -> ended; exactly one caller wins."""
        values: dict[str, Any] = {
            ":final": _s(status),
            ":running": _s(RUNNING),
            ":zero": _n(0),
            ":t": _s(now),
            ":c": {"M": {k: _n(v) for k, v in counts.items()}},
        }
        update = "SET #s = :final, finished_at = :t, counts = :c"
        if failure is not None:
            update += ", failure = if_not_exists(failure, :f)"
            values[":f"] = _failure_value(failure)
        return decode_run(
            run_id,
            self._update(
                run_id,
                RUN_SK,
                UpdateExpression=update,
                ConditionExpression="#s = :running AND size(active) = :zero "
                "AND (attribute_not_exists(ready_count) OR ready_count = :zero)",
                ExpressionAttributeNames={"#s": "status"},
                ExpressionAttributeValues=values,
            ),
        )

    def mark_notified(self, run_id: str, now: str) -> None:
        """Record that the coordinator's token was answered (a resend is then skipped)."""
        self._call(
            "update_item",
            TableName=self.table,
            Key=self._key(run_id, RUN_SK),
            UpdateExpression="SET notified = :t",
            ExpressionAttributeValues={":t": _s(now)},
        )

    # --- task items ----------------------------------------------------------------------

    def tasks(self, run_id: str) -> dict[str, TaskState]:
        """Every task item of the run, strongly consistent (the final census relies on it)."""
        return {t.name: t for t in map(decode_task, self._items(run_id, TASK_PREFIX))}

    def put_tasks(
        self, run_id: str, tasks: Iterable[TaskState], *, execution: str, token: str
    ) -> None:
        """Write task items (new or reset) while this start attempt owns the run.

        See :meth:`_starting_writes`: an attempt that was taken over writes nothing.
        """
        self._starting_writes(
            run_id,
            execution,
            token,
            [{"Put": {"TableName": self.table, "Item": _encode_task(run_id, t)}} for t in tasks],
        )

    def _starting_writes(
        self, run_id: str, execution: str, token: str, writes: list[dict[str, Any]]
    ) -> None:
        """Transactions of up to 99 writes, each with a check that this attempt owns the run.

        Owned: STARTING for this execution with this attempt's token, as
        :meth:`open_run` requires. Two attempts of one start overlap when Step Functions
        retries the first while it still runs; once the retry's :meth:`create_run` took
        the token, the first must not write: its task items would reset tasks the retry
        has run since, and its ready items queue tasks already claimed or run (the
        stale ready items of the 5,000-task scale run, whose start took minutes).
        A lost ownership raises :class:`ConditionFailed` with the run item.
        """
        check = {
            "ConditionCheck": {
                "TableName": self.table,
                "Key": self._key(run_id, RUN_SK),
                "ConditionExpression": "#s = :starting AND execution = :e AND #t = :t",
                "ExpressionAttributeNames": {"#s": "status", "#t": "token"},
                "ExpressionAttributeValues": {
                    ":starting": _s(STARTING),
                    ":e": _s(execution),
                    ":t": _s(token),
                },
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            }
        }
        for i in range(0, len(writes), _STARTING_WRITES):
            try:
                self._transact([check, *writes[i : i + _STARTING_WRITES]])
            except _Cancelled as cancelled:
                if cancelled.failed(0):
                    raise ConditionFailed(cancelled.item(0)) from None
                raise

    def record(self, run_id: str, task: str, attempt: int, outcome: Outcome) -> TaskState:
        """Write a task's outcome, once: only a pending task of this attempt takes it.

        A loser (redelivered report, late event, stale attempt) gets
        :class:`ConditionFailed` with the item as recorded, so it can replay the
        recorded outcome's follow-up steps without reading the item again.
        """
        names = {"#s": "status"}
        values: dict[str, Any] = {
            ":pending": _s(PENDING),
            ":a": _n(attempt),
            ":done": _s(SUCCEEDED if outcome.ok else FAILED),
            ":end": _s(outcome.finished_at or ""),  # the scheduler always sets it
        }
        sets = ["#s = :done", "finished_at = :end"]
        optional = {
            "started_at": outcome.started_at,
            "statement_id": outcome.statement_id,
        }
        if not outcome.ok:
            optional["error"] = (outcome.error or "DagAggregate.TaskFailed")[:MAX_ERROR]
            optional["cause"] = (outcome.cause or "-")[:MAX_CAUSE]
        for attribute, value in optional.items():
            if value:
                names[f"#{attribute}"] = attribute
                values[f":{attribute}"] = _s(value)
                sets.append(f"#{attribute} = :{attribute}")
        if outcome.rows is not None:
            sets.append("#rows = :rows")
            names["#rows"] = "rows"
            values[":rows"] = _n(int(outcome.rows))
        return decode_task(
            self._update(
                run_id,
                TASK_PREFIX + task,
                UpdateExpression="SET " + ", ".join(sets),
                ConditionExpression="#s = :pending AND attempt = :a",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=values,
            )
        )

    def unblock(self, run_id: str, child: str, parent: str) -> TaskState:
        """Remove a succeeded parent from a pending child's ``waiting_on``.

        Conditional on the parent still being there, so exactly one call sees the set
        become empty (DynamoDB then drops the attribute): that caller queues the child.
        """
        return decode_task(
            self._update(
                run_id,
                TASK_PREFIX + child,
                UpdateExpression="DELETE waiting_on :p",
                ConditionExpression="#s = :pending AND contains(waiting_on, :parent)",
                ExpressionAttributeNames={"#s": "status"},
                ExpressionAttributeValues={
                    ":p": {"SS": [parent]},
                    ":parent": _s(parent),
                    ":pending": _s(PENDING),
                },
            )
        )
