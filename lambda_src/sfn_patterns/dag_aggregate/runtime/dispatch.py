"""Dependency-driven scheduling on one DynamoDB table: start, task_done, dispatch, finish.

Table layout (``pk`` = run id, ``sk`` = ``run`` or ``task#<name>``):

* the **run item** is the single arbiter of the run: its status (STARTING, RUNNING,
  SUCCEEDED, FAILED), the coordinator execution and its task token, the first
  ``failure``, and two maps: ``ready`` (task -> priority sort key and next attempt:
  tasks whose parents all succeeded) and ``active`` (task -> attempt and whether its
  child execution was started: the tasks holding one of the N slots);
* one **task item** per task, the record of the run: ``status`` (pending,
  in_progress, succeeded, failed), ``attempt`` (names the child execution),
  ``waiting_on`` (string set of parents not yet succeeded; absent once all did) and
  ``queued`` (it was put in the run item's ``ready`` map).

Every step is one conditional single-item write, so each is atomic and a redelivered
call changes nothing (no transactions: they cost double on DynamoDB, and moto copies
the whole table for each one):

* **claim**: run ``SET active.T, REMOVE ready.T`` if ``size(active) < N`` and T is
  ready and the run is RUNNING. ``size(active)`` is the number of running tasks, so it
  can never exceed N, however many task_done calls race. Then the task item goes
  in_progress, the child execution starts (its name is run + task + attempt, so a
  repeated start is a no-op) and ``active.T.launched`` is set. A dispatcher that died
  in between leaves ``launched = false``; the next dispatch finishes the start.
* **complete**: for a success, each child first loses T from ``waiting_on`` (a set
  DELETE, idempotent); a child whose set is empty is marked ``queued`` (once) and put
  in ``ready``. Then the task item records the outcome, and last ``REMOVE active.T``
  (with ``failure`` if it is the first) releases the slot, conditional on the attempt.
  So once ``active`` is empty, every finished task has already queued its children.
* **finish**: when ``active`` and ``ready`` are empty, a consistent read of the run's
  items checks that no task is pending and ready (such a task, lost by a crash between
  ``queued`` and ``ready``, is queued again); then one conditional update
  (RUNNING, nothing active or ready) ends the run, so one caller sends the token.

The run item holds one map entry per ready or running task (about 60 bytes), far
below DynamoDB's 400 KB item limit for runs of thousands of tasks.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Protocol

from botocore.exceptions import ClientError

log = logging.getLogger("sfn_patterns.dag_aggregate.runtime")

RUN_SK = "run"
TASK_PREFIX = "task#"
PENDING, IN_PROGRESS, SUCCEEDED, FAILED = "pending", "in_progress", "succeeded", "failed"
STARTING, RUNNING = "STARTING", "RUNNING"
RUN_SUCCEEDED, RUN_FAILED = "SUCCEEDED", "FAILED"
_MAX_CAUSE = 30_000  # SendTaskFailure allows 32,768 characters
_PRIORITY_SCALE = 1000  # priorities are kept to the millisecond in the sort key
_PRIORITY_CEILING = 10**14


class RunAlreadyRunningError(Exception):
    """Another coordinator execution is running the same run id."""


class Launcher(Protocol):
    """Side effects outside the table: child executions and the coordinator's token."""

    def start_task(self, name: str, payload: Mapping[str, Any]) -> None:
        """Start the task state machine; must treat ExecutionAlreadyExists as success."""
        ...

    def send_success(self, token: str, output: Mapping[str, Any]) -> None:
        """SendTaskSuccess; a token that is gone (timed out, aborted) is not an error."""
        ...

    def send_failure(self, token: str, error: str, cause: str) -> None:
        """SendTaskFailure; a token that is gone is not an error."""
        ...

    def execution_running(self, execution_arn: str) -> bool:
        """Whether a coordinator execution still runs (to take over an abandoned run id)."""
        ...


def now_iso() -> str:
    """UTC timestamp with milliseconds, for the items' started_at/finished_at."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def ready_sort_key(priority: float, task: str) -> str:
    """``<inverted priority>#task``: ascending order = longest remaining path first."""
    inverted = _PRIORITY_CEILING - min(round(priority * _PRIORITY_SCALE), _PRIORITY_CEILING)
    return f"{inverted:015d}#{task}"


_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def execution_name(run_id: str, task: str, attempt: int) -> str:
    """Deterministic child execution name (<= 80 chars): a redelivered start is a no-op.

    Truncated parts are disambiguated by a hash of the full run id and task name.
    """
    digest = hashlib.sha256(f"{run_id}\0{task}".encode()).hexdigest()[:8]
    run = _NAME_UNSAFE.sub("_", run_id)[:36]
    name = _NAME_UNSAFE.sub("_", task)[:24]
    return f"{run}-{name}-{attempt}-{digest}"


@dataclass
class Plan:
    """The plan document's runtime view (see ``dag_aggregate.dependency.plan_document``)."""

    tasks: dict[str, dict[str, Any]]

    @classmethod
    def from_document(cls, document: Mapping[str, Any]) -> Plan:
        """Validate the parts the runtime relies on."""
        tasks = dict(document["tasks"])
        for name, spec in tasks.items():
            for key in ("parents", "children", "priority", "task"):
                if key not in spec:
                    raise ValueError(f"plan document: task {name!r} has no {key!r}")
        return cls(tasks=tasks)

    def priority(self, task: str) -> float:
        """Longest remaining path of a task (its sort key in the run's ready map)."""
        return float(self.tasks[task]["priority"])


def _num(value: Any) -> int:
    return int(value["N"])


def _item_status(item: Mapping[str, Any]) -> str:
    return item.get("status", {}).get("S", "")


@dataclass
class Scheduler:
    """The run's state machine on the table; every method is safe to call again.

    ``client`` is a boto3 DynamoDB client, ``launcher`` does the Step Functions calls.
    """

    client: Any
    table: str
    plan: Plan
    max_concurrency: int
    launcher: Launcher
    sleep: Callable[[float], None] = field(default=time.sleep)

    # --- small helpers ---------------------------------------------------------------

    def _key(self, run_id: str, sk: str) -> dict[str, Any]:
        return {"pk": {"S": run_id}, "sk": {"S": sk}}

    def _get(self, run_id: str, sk: str) -> dict[str, Any] | None:
        return self.client.get_item(
            TableName=self.table, Key=self._key(run_id, sk), ConsistentRead=True
        ).get("Item")

    def _update(self, run_id: str, sk: str, **kwargs: Any) -> dict[str, Any] | None:
        """UpdateItem; None when the condition failed, else the returned attributes."""
        try:
            return self.client.update_item(
                TableName=self.table, Key=self._key(run_id, sk), **kwargs
            ).get("Attributes", {})
        except ClientError as err:
            if err.response["Error"]["Code"] == "ConditionalCheckFailedException":
                return None
            raise

    def _query_run(self, run_id: str) -> Iterator[dict[str, Any]]:
        """Every item of the run, strongly consistent (the final check relies on it)."""
        kwargs: dict[str, Any] = {
            "TableName": self.table,
            "KeyConditionExpression": "pk = :r",
            "ExpressionAttributeValues": {":r": {"S": run_id}},
            "ConsistentRead": True,
        }
        while True:
            page = self.client.query(**kwargs)
            yield from page.get("Items", [])
            if "LastEvaluatedKey" not in page:
                return
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def _ready_entry(self, task: str, next_attempt: int) -> dict[str, Any]:
        return {
            "M": {
                "k": {"S": ready_sort_key(self.plan.priority(task), task)},
                "a": {"N": str(next_attempt)},
            }
        }

    # --- start -----------------------------------------------------------------------

    def start(self, run_id: str, execution: str, token: str) -> None:
        """Record the run (resuming a previous one with this id) and start the first tasks.

        Succeeded tasks of a previous run with the same id are kept; failed and
        never-started ones go back to pending. A redelivered start of the same coordinator
        execution only refreshes the token and dispatches.
        """
        run = self._get(run_id, RUN_SK)
        if run is not None:
            status = run["status"]["S"]
            owner = run.get("execution", {}).get("S")
            if status in (STARTING, RUNNING) and owner != execution:
                if self.launcher.execution_running(owner or ""):
                    raise RunAlreadyRunningError(
                        f"run {run_id!r} is being run by {owner}; wait for it or use another id"
                    )
                log.warning("taking over run %s from ended coordinator %s", run_id, owner)
            elif status == RUNNING and owner == execution:
                self._update(
                    run_id,
                    RUN_SK,
                    UpdateExpression="SET #t = :t",
                    ConditionExpression="execution = :e",
                    ExpressionAttributeNames={"#t": "token"},
                    ExpressionAttributeValues={":t": {"S": token}, ":e": {"S": execution}},
                )
                self.dispatch(run_id)
                return
        self._claim_run(run_id, execution, token, run)
        ready = self._reset_tasks(run_id)
        started = self._update(
            run_id,
            RUN_SK,
            UpdateExpression="SET #s = :running, active = :empty, ready = :ready",
            ConditionExpression="#s = :starting AND execution = :e",
            ExpressionAttributeNames={"#s": "status"},
            ExpressionAttributeValues={
                ":running": {"S": RUNNING},
                ":starting": {"S": STARTING},
                ":empty": {"M": {}},
                ":ready": {"M": ready},
                ":e": {"S": execution},
            },
        )
        if started is None:
            raise RunAlreadyRunningError(f"run {run_id!r} was taken over while starting")
        self.dispatch(run_id)

    def _claim_run(
        self, run_id: str, execution: str, token: str, previous: Mapping[str, Any] | None
    ) -> None:
        """Put the run item as STARTING for this execution (conditional: no one else owns it)."""
        condition = "attribute_not_exists(pk) OR #s IN (:ok, :failed) OR execution = :e"
        values: dict[str, Any] = {
            ":ok": {"S": RUN_SUCCEEDED},
            ":failed": {"S": RUN_FAILED},
            ":e": {"S": execution},
        }
        if previous is not None and previous.get("execution"):
            # Taking over from an ended coordinator: only if it is still the owner we saw.
            condition += " OR execution = :old"
            values[":old"] = previous["execution"]
        item = {
            **self._key(run_id, RUN_SK),
            "status": {"S": STARTING},
            "execution": {"S": execution},
            "token": {"S": token},
            "active": {"M": {}},
            "ready": {"M": {}},
            "max_concurrency": {"N": str(self.max_concurrency)},
            "started_at": {"S": now_iso()},
        }
        try:
            self.client.put_item(
                TableName=self.table,
                Item=item,
                ConditionExpression=condition,
                ExpressionAttributeNames={"#s": "status"},
                ExpressionAttributeValues=values,
            )
        except ClientError as err:
            if err.response["Error"]["Code"] == "ConditionalCheckFailedException":
                raise RunAlreadyRunningError(
                    f"run {run_id!r} was claimed by another coordinator execution"
                ) from None
            raise

    def _reset_tasks(self, run_id: str) -> dict[str, Any]:
        """One pending item per plan task, except tasks a previous run already succeeded.

        Returns the ``ready`` map of the new run: tasks none of whose parents is left.
        """
        existing = {
            item["sk"]["S"][len(TASK_PREFIX) :]: item
            for item in self._query_run(run_id)
            if item["sk"]["S"].startswith(TASK_PREFIX)
        }
        done = {name for name, item in existing.items() if _item_status(item) == SUCCEEDED}
        puts = []
        ready: dict[str, Any] = {}
        for name, spec in self.plan.tasks.items():
            if name in done:
                continue
            previous = existing.get(name)
            # Attempts only grow, so a re-run never reuses a closed child execution's name.
            attempt = _num(previous["attempt"]) if previous and "attempt" in previous else 0
            item: dict[str, Any] = {
                **self._key(run_id, TASK_PREFIX + name),
                "status": {"S": PENDING},
                "attempt": {"N": str(attempt)},
                "priority": {"N": repr(self.plan.priority(name))},
            }
            waiting = sorted(set(spec["parents"]) - done)
            if waiting:
                item["waiting_on"] = {"SS": waiting}
            else:
                item["queued"] = {"BOOL": True}
                ready[name] = self._ready_entry(name, attempt + 1)
            puts.append({"PutRequest": {"Item": item}})
        for i in range(0, len(puts), 25):
            self._batch_write(puts[i : i + 25])
        return ready

    def _batch_write(self, requests: list[dict[str, Any]]) -> None:
        pending = {self.table: requests}
        for attempt in range(10):
            response = self.client.batch_write_item(RequestItems=pending)
            pending = response.get("UnprocessedItems") or {}
            if not pending:
                return
            self.sleep(min(0.05 * 2**attempt, 2))
        raise RuntimeError("BatchWriteItem kept returning unprocessed items")

    # --- task_done ---------------------------------------------------------------------

    def task_done(
        self,
        run_id: str,
        task: str,
        attempt: int,
        *,
        ok: bool,
        error: str | None = None,
        cause: str | None = None,
    ) -> None:
        """Record a task's outcome, queue its children, and start what can start.

        Safe to deliver twice (the task state machine retries it, and the EventBridge
        rule may report an execution that already reported): every write is conditional
        on the attempt, so only the first report of attempt ``attempt`` counts.
        """
        if task not in self.plan.tasks:
            log.warning("task_done for unknown task %s in run %s: ignored", task, run_id)
            return
        item = self._get(run_id, TASK_PREFIX + task)
        if item is None or _num(item["attempt"]) != attempt:
            log.warning("stale report for %s attempt %s in run %s: ignored", task, attempt, run_id)
            return
        status = _item_status(item)
        if status == IN_PROGRESS:
            if ok:  # before the slot is released: see the module docstring
                self._queue_children(run_id, task)
            if not self._record(run_id, task, attempt, ok=ok, error=error, cause=cause):
                item = self._get(run_id, TASK_PREFIX + task) or item  # a racing report won
                status = _item_status(item)
            else:
                status = SUCCEEDED if ok else FAILED
        # The outcome that counts is the recorded one (a late failure event after a
        # recorded success must not fail the run); repeat the idempotent steps.
        if status == SUCCEEDED:
            self._queue_children(run_id, task)
            self._release(run_id, task, attempt, ok=True, error=None, cause=None)
        elif status == FAILED:
            self._release(
                run_id,
                task,
                attempt,
                ok=False,
                error=item.get("error", {}).get("S", error),
                cause=item.get("cause", {}).get("S", cause),
            )
        self.dispatch(run_id)

    def _queue_children(self, run_id: str, task: str) -> None:
        for child in self.plan.tasks[task]["children"]:
            new = self._update(
                run_id,
                TASK_PREFIX + child,
                UpdateExpression="DELETE waiting_on :p",
                ConditionExpression="#s = :pending",
                ExpressionAttributeNames={"#s": "status"},
                ExpressionAttributeValues={":p": {"SS": [task]}, ":pending": {"S": PENDING}},
                ReturnValues="ALL_NEW",
            )
            if new is None or "waiting_on" in new or "queued" in new:
                continue  # not pending, still waiting, or already queued
            self._queue(run_id, child)

    def _queue(self, run_id: str, task: str) -> None:
        """Mark a ready task queued (once) and add it to the run's ``ready`` map."""
        marked = self._update(
            run_id,
            TASK_PREFIX + task,
            UpdateExpression="SET queued = :t",
            ConditionExpression="#s = :pending AND attribute_not_exists(waiting_on) "
            "AND attribute_not_exists(queued)",
            ExpressionAttributeNames={"#s": "status"},
            ExpressionAttributeValues={":t": {"BOOL": True}, ":pending": {"S": PENDING}},
            ReturnValues="ALL_NEW",
        )
        if marked is None:
            return
        self._update(
            run_id,
            RUN_SK,
            UpdateExpression="SET ready.#t = :r",
            ConditionExpression="#s = :running AND attribute_not_exists(active.#t)",
            ExpressionAttributeNames={"#s": "status", "#t": task},
            ExpressionAttributeValues={
                ":r": self._ready_entry(task, _num(marked["attempt"]) + 1),
                ":running": {"S": RUNNING},
            },
        )

    def _record(
        self,
        run_id: str,
        task: str,
        attempt: int,
        *,
        ok: bool,
        error: str | None,
        cause: str | None,
    ) -> bool:
        """Write the outcome on the task item; False if another report was recorded first."""
        values: dict[str, Any] = {
            ":in_progress": {"S": IN_PROGRESS},
            ":a": {"N": str(attempt)},
            ":done": {"S": SUCCEEDED if ok else FAILED},
            ":t": {"S": now_iso()},
        }
        names = {"#s": "status"}
        update = "SET #s = :done, finished_at = :t"
        if not ok:
            update += ", #e = :err, #c = :cause"
            names |= {"#e": "error", "#c": "cause"}
            values[":err"] = {"S": (error or "DagAggregate.TaskFailed")[:256]}
            values[":cause"] = {"S": (cause or "-")[:_MAX_CAUSE]}
        return (
            self._update(
                run_id,
                TASK_PREFIX + task,
                UpdateExpression=update,
                ConditionExpression="#s = :in_progress AND attempt = :a",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=values,
            )
            is not None
        )

    def _release(
        self,
        run_id: str,
        task: str,
        attempt: int,
        *,
        ok: bool,
        error: str | None,
        cause: str | None,
    ) -> None:
        """Free the task's slot (and record the run's first failure), once per attempt."""
        update = "REMOVE active.#t"
        values: dict[str, Any] = {":a": {"N": str(attempt)}}
        if not ok:
            update = "SET failure = if_not_exists(failure, :f) " + update
            values[":f"] = {
                "M": {
                    "task": {"S": task},
                    "error": {"S": (error or "DagAggregate.TaskFailed")[:256]},
                    "cause": {"S": (cause or "-")[:_MAX_CAUSE]},
                }
            }
        self._update(
            run_id,
            RUN_SK,
            UpdateExpression=update,
            ConditionExpression="active.#t.a = :a",
            ExpressionAttributeNames={"#t": task},
            ExpressionAttributeValues=values,
        )

    # --- dispatch ----------------------------------------------------------------------

    def dispatch(self, run_id: str) -> None:
        """Start ready tasks, longest remaining path first, while a slot is free.

        Also finishes half-done starts (``launched`` false) and, when nothing runs and
        nothing is ready, ends the run.
        """
        for _ in range(3):  # a census that re-queues lost tasks dispatches once more
            run = self._get(run_id, RUN_SK)
            if run is None or run["status"]["S"] != RUNNING:
                if run is not None:
                    self._notify_if_needed(run_id, run)
                return
            active = run.get("active", {}).get("M", {})
            for task, entry in active.items():
                if not entry["M"].get("launched", {}).get("BOOL"):
                    self._launch(run_id, task, _num(entry["M"]["a"]))
            ready = sorted(
                run.get("ready", {}).get("M", {}).items(), key=lambda kv: kv[1]["M"]["k"]["S"]
            )
            free = self.max_concurrency - len(active)
            for task, entry in ready:
                if free <= 0:
                    return  # a running task's task_done will dispatch when it ends
                attempt = _num(entry["M"]["a"])
                outcome = self._claim(run_id, task, attempt)
                if outcome == "full":
                    return
                if outcome == "claimed":
                    free -= 1
                    self._launch(run_id, task, attempt)
            if active or ready:
                return
            if not self._finish_or_requeue(run_id):
                return

    def _claim(self, run_id: str, task: str, attempt: int) -> str:
        """Take a slot for a ready task: one conditional update of the run item."""
        claimed = self._update(
            run_id,
            RUN_SK,
            UpdateExpression="SET active.#t = :entry REMOVE ready.#t",
            ConditionExpression="#s = :running AND size(active) < :max "
            "AND ready.#t.a = :a AND attribute_not_exists(active.#t)",
            ExpressionAttributeNames={"#s": "status", "#t": task},
            ExpressionAttributeValues={
                ":entry": {"M": {"a": {"N": str(attempt)}, "launched": {"BOOL": False}}},
                ":running": {"S": RUNNING},
                ":max": {"N": str(self.max_concurrency)},
                ":a": {"N": str(attempt)},
            },
        )
        if claimed is not None:
            return "claimed"
        run = self._get(run_id, RUN_SK) or {}
        if run.get("status", {}).get("S") != RUNNING:
            return "full"
        if len(run.get("active", {}).get("M", {})) >= self.max_concurrency:
            return "full"
        return "taken"

    def _launch(self, run_id: str, task: str, attempt: int) -> None:
        """Mark the task in_progress, start its child execution, note it launched.

        Each step is idempotent, so a dispatcher that finds ``launched`` false (its
        claimer died, or is still at it) can simply do them all again.
        """
        self._update(
            run_id,
            TASK_PREFIX + task,
            UpdateExpression="SET #s = :in_progress, attempt = :a, started_at = :t, "
            "execution_name = :n REMOVE queued",
            ConditionExpression="#s = :pending OR (#s = :in_progress AND attempt = :a)",
            ExpressionAttributeNames={"#s": "status"},
            ExpressionAttributeValues={
                ":in_progress": {"S": IN_PROGRESS},
                ":pending": {"S": PENDING},
                ":a": {"N": str(attempt)},
                ":t": {"S": now_iso()},
                ":n": {"S": execution_name(run_id, task, attempt)},
            },
        )
        self.launcher.start_task(
            execution_name(run_id, task, attempt),
            {
                "run_id": run_id,
                "task_id": task,
                "attempt": attempt,
                "task": self.plan.tasks[task]["task"],
            },
        )
        self._update(
            run_id,
            RUN_SK,
            UpdateExpression="SET active.#t.launched = :true",
            ConditionExpression="active.#t.a = :a",
            ExpressionAttributeNames={"#t": task},
            ExpressionAttributeValues={":true": {"BOOL": True}, ":a": {"N": str(attempt)}},
        )

    # --- finish --------------------------------------------------------------------------

    def _finish_or_requeue(self, run_id: str) -> bool:
        """Nothing active or ready: re-queue lost ready tasks (True), or end the run."""
        counts, lost = self._census(run_id)
        if lost:
            log.warning("run %s: re-queueing %s", run_id, ", ".join(sorted(lost)))
            for task, attempt in lost.items():
                self._update(
                    run_id,
                    RUN_SK,
                    UpdateExpression="SET ready.#t = :r",
                    ConditionExpression="#s = :running AND attribute_not_exists(active.#t)",
                    ExpressionAttributeNames={"#s": "status", "#t": task},
                    ExpressionAttributeValues={
                        ":r": self._ready_entry(task, attempt + 1),
                        ":running": {"S": RUNNING},
                    },
                )
            return True
        if counts[IN_PROGRESS]:
            return False  # claimed after our read of the run item; its task_done finishes
        run = self._get(run_id, RUN_SK) or {}
        failure = run.get("failure", {}).get("M")
        if failure is None and counts[SUCCEEDED] != len(self.plan.tasks):
            failure = {
                "task": {"S": "-"},
                "error": {"S": "DagAggregate.Stalled"},
                "cause": {
                    "S": f"nothing runs or can start, but only {counts[SUCCEEDED]} of "
                    f"{len(self.plan.tasks)} tasks succeeded: {counts}"
                },
            }
        final = RUN_FAILED if failure else RUN_SUCCEEDED
        updated = self._update(
            run_id,
            RUN_SK,
            UpdateExpression="SET #s = :final, finished_at = :t, counts = :c"
            + (", failure = if_not_exists(failure, :f)" if failure else ""),
            ConditionExpression="#s = :running AND size(active) = :zero AND size(ready) = :zero",
            ExpressionAttributeNames={"#s": "status"},
            ExpressionAttributeValues={
                ":final": {"S": final},
                ":running": {"S": RUNNING},
                ":zero": {"N": "0"},
                ":t": {"S": now_iso()},
                ":c": {"M": {k: {"N": str(v)} for k, v in counts.items()}},
            }
            | ({":f": {"M": failure}} if failure else {}),
            ReturnValues="ALL_NEW",
        )
        if updated is not None:
            self._notify(run_id, updated)
        return False

    def _census(self, run_id: str) -> tuple[dict[str, int], dict[str, int]]:
        """Task counts by status, and pending tasks with no parent left (lost if any)."""
        counts = {PENDING: 0, IN_PROGRESS: 0, SUCCEEDED: 0, FAILED: 0}
        lost: dict[str, int] = {}
        for item in self._query_run(run_id):
            if not item["sk"]["S"].startswith(TASK_PREFIX):
                continue
            name = item["sk"]["S"][len(TASK_PREFIX) :]
            if name not in self.plan.tasks:
                continue  # a task of an older plan with this run id
            state = _item_status(item)
            counts[state] = counts.get(state, 0) + 1
            if state == PENDING and "waiting_on" not in item:
                lost[name] = _num(item["attempt"])
        return counts, lost

    def _notify_if_needed(self, run_id: str, run: Mapping[str, Any]) -> None:
        """Resend the outcome of an ended run whose sender died before noting it."""
        if run["status"]["S"] in (RUN_SUCCEEDED, RUN_FAILED) and "notified" not in run:
            self._notify(run_id, run)

    def _notify(self, run_id: str, run: Mapping[str, Any]) -> None:
        token = run["token"]["S"]
        if run["status"]["S"] == RUN_SUCCEEDED:
            counts = {k: _num(v) for k, v in run.get("counts", {}).get("M", {}).items()}
            self.launcher.send_success(
                token, {"run_id": run_id, "status": RUN_SUCCEEDED, "tasks": counts}
            )
        else:
            failure = run["failure"]["M"]
            self.launcher.send_failure(
                token,
                failure["error"]["S"],
                json.dumps(
                    {"run_id": run_id, "task": failure["task"]["S"], "cause": failure["cause"]["S"]}
                )[:_MAX_CAUSE],
            )
        self._update(
            run_id,
            RUN_SK,
            UpdateExpression="SET notified = :t",
            ExpressionAttributeValues={":t": {"S": now_iso()}},
        )
