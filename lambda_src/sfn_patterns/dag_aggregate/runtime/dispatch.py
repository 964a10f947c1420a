"""Dependency-driven scheduling: start, task_done, dispatch and finish of a run.

The table's layout and every expression live in :mod:`.store` (``RunStore``); this
module decides what to write when. The protocol, and why it is safe:

* **start** records the run item for the coordinator execution and one task item
  per selected task (tasks a previous invocation of the run id already succeeded
  are kept), then claims and starts the first tasks. A coordinator whose run id is
  RUNNING under an *ended* coordinator (aborted, timed out) **adopts** the run as
  it is: running tasks keep their slots and report to it, nothing runs twice.
* **claim**: one Query reads the first ready items (longest remaining path first),
  then one transaction moves them into the run item's ``active`` if
  ``size(active) + k <= N`` and deletes their ready items: at most N tasks ever run,
  however many reports race, and a ready task is claimed once. Then each child
  execution starts (named run + task + attempt, so a repeated start is a no-op)
  and the claims leave ``unlaunched``. A claimer that died in between leaves its
  claim there; its own retry, or anyone after ``LAUNCH_GRACE`` seconds, starts the
  execution again (idempotent by name). A report claims its own slot and one spare;
  after a lost claim a dispatcher picks among the near-top ready tasks at random, so
  concurrent reports do not collide on the same task over and over.
* **task_done**: the outcome is written on the task item, once (only a pending
  item of that attempt takes it; a loser gets the recorded item back in the same
  call and replays the follow-up steps, so a redelivered report is harmless). On
  success each child loses the task from ``waiting_on`` (conditional on it being
  there, so exactly one first delivery sees the set become empty; a replayed report
  of another parent may find the child ready too). Then **one** write frees the
  slot *and* queues the children that became ready, each only if it is still
  unqueued: no ready item, no slot, pending at that attempt (a transaction of the
  run item, their ready items and checks of their task items; a plain update when
  none became ready); the run item after it says what to dispatch.
* **finish**: when nothing is active or ready, a consistent read of the task items
  re-queues a ready task lost by a crash (defensive: the protocol above cannot lose
  one), else one conditional update (RUNNING, nothing active or ready) ends the
  run, so exactly one caller writes the run artifact and answers the token.

DynamoDB requests per task, without failures or races: one outcome write, one
``waiting_on`` update per incoming edge, one slot release (a transaction with the
children it queues, then a read of the run item), at most one claim (a Query of
the ready items, a transaction, a read of the run item) and one launched mark
(shared by every task claimed in the same dispatch). Every request touches items
of a bounded size: the run item holds at most N slots, whatever the DAG's width.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Protocol

from sfn_patterns import metrics
from sfn_patterns.dag_aggregate.runtime import selection as sel
from sfn_patterns.dag_aggregate.runtime.artifacts import ArtifactWriter, document, parse_time
from sfn_patterns.dag_aggregate.runtime.store import (
    EXPRESSION_BATCH,
    FAILED,
    MAX_CAUSE,
    PENDING,
    RUN_FAILED,
    RUN_SUCCEEDED,
    RUNNING,
    STARTING,
    SUCCEEDED,
    ConditionFailed,
    Failure,
    Outcome,
    ReadyEntry,
    RunState,
    RunStore,
    Selection,
    TaskState,
    decode_run,
    decode_task,
)

log = logging.getLogger("sfn_patterns.dag_aggregate.runtime")

GENERATOR = "sfn-patterns-runtime dag_aggregate"
# The pattern's metrics (EMF lines): TaskFailures (the task named as a property, not a
# dimension: a dimension value per task would be a custom metric per task, billed
# monthly), TasksSkipped and RunDuration of an ended run.
PATTERN = "dag-aggregate"
LAUNCH_GRACE = 30.0  # seconds before another dispatcher restarts an unmarked claim
REPORT_CLAIMS = 2  # a report claims at most this many tasks: its own slot, and one spare
_MAX_RACES = 8  # lost claims in one dispatch before leaving it to the next report
_PRIORITY_SCALE = 1000  # priorities are kept to the millisecond in the sort key
_PRIORITY_CEILING = 10**14
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:=+@-]{0,127}$")
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


class RunAlreadyRunningError(Exception):
    """Another coordinator execution is running the same run id."""


class InvalidRunInputError(Exception):
    """The coordinator's input cannot start a run (bad run id, selection or retry)."""


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
    """UTC timestamp with milliseconds, for the items' and documents' times."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def ready_rank(priority: float) -> int:
    """Inverted priority in milliseconds: ascending order = longest remaining path first."""
    return _PRIORITY_CEILING - min(max(round(priority * _PRIORITY_SCALE), 0), _PRIORITY_CEILING)


def ready_sort_key(priority: float, task: str) -> str:
    """``<rank>#task``: the order ready tasks are claimed in (ties by task name)."""
    return f"{ready_rank(priority):015d}#{task}"


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
    """The plan document's runtime view (see ``sfn_patterns_cli...dependency``)."""

    tasks: dict[str, dict[str, Any]]
    key: str = ""
    _graph: sel.Graph | None = field(default=None, repr=False)
    _selected: dict[Selection, frozenset[str]] = field(default_factory=dict, repr=False)
    _edges: dict[Selection, dict[str, set[str]]] = field(default_factory=dict, repr=False)

    @classmethod
    def from_document(cls, document: Mapping[str, Any], key: str = "") -> Plan:
        """Validate the parts the runtime relies on (version 1 documents have no tags)."""
        tasks = dict(document["tasks"])
        for name, spec in tasks.items():
            for needed in ("parents", "children", "priority", "task"):
                if needed not in spec:
                    raise ValueError(f"plan document: task {name!r} has no {needed!r}")
        return cls(tasks=tasks, key=key)

    def priority(self, task: str) -> float:
        """Longest remaining path of a task (its sort key in the run's ready map)."""
        return float(self.tasks[task]["priority"])

    def graph(self) -> sel.Graph:
        """Edges and tags for selection (built once per container)."""
        if self._graph is None:
            self._graph = sel.Graph.from_tasks(self.tasks)
        return self._graph

    def selected(self, selection: Selection) -> frozenset[str]:
        """The tasks a selection covers (cached: every report of a run asks the same)."""
        if selection not in self._selected:
            self._selected[selection] = frozenset(
                sel.select(self.graph(), selection.select, selection.exclude)
            )
        return self._selected[selection]

    def run_parents(self, selection: Selection) -> dict[str, set[str]]:
        """Each selected task's parents within the selection (nearest selected ancestors)."""
        if selection not in self._edges:
            self._edges[selection] = sel.run_edges(self.graph(), self.selected(selection))
        return self._edges[selection]


@dataclass(frozen=True)
class StartRequest:
    """The coordinator's start call: who runs which run id, over which tasks."""

    run_id: str
    execution: str
    token: str
    selection: Selection | None = None  # None: not given (a resume keeps the run's own)
    retry: bool = False
    attempt: int = 0  # the Run state's retry count ($$.State.RetryCount): 0, 1, ...

    @classmethod
    def from_event(cls, event: Mapping[str, Any]) -> StartRequest:
        """From the start payload: ``input`` (the execution input), ``execution``, ``token``.

        The run id defaults to the execution's name. ``select``/``exclude`` take dbt
        style selectors; ``retry: true`` re-runs what failed or was skipped.
        ``retry_count`` (the Run state's ``$$.State.RetryCount``; 0 when absent) orders
        two attempts of one start that overlap: the later one keeps the run.
        """
        execution = str(event["execution"])
        given = event.get("input")
        data: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
        if given is not None and not isinstance(given, Mapping):
            raise InvalidRunInputError("the execution input must be a JSON object")
        run_id = data.get("run_id", event.get("run_id")) or execution.rsplit(":", 1)[-1]
        if not isinstance(run_id, str) or not _RUN_ID.match(run_id):
            raise InvalidRunInputError(
                f"run_id must be 1-128 characters of letters, digits and ._:=+@- "
                f"starting with a letter or digit, got {run_id!r}"
            )
        unknown = sorted(set(data) - {"run_id", "select", "exclude", "retry"})
        if unknown:
            raise InvalidRunInputError(
                f"unknown input field(s) {', '.join(unknown)}; the input takes run_id, "
                "select, exclude and retry"
            )
        retry = data.get("retry", False)
        if not isinstance(retry, bool):
            raise InvalidRunInputError(f"retry must be true or false, got {retry!r}")
        try:
            select = sel.normalize(data.get("select"), "select")
            exclude = sel.normalize(data.get("exclude"), "exclude")
            for text in (*select, *exclude):
                for part in text.split(","):
                    if part:
                        sel.parse_selector(part)
        except sel.SelectionError as err:
            raise InvalidRunInputError(str(err)) from None
        given_selection = "select" in data or "exclude" in data
        if retry and given_selection:
            raise InvalidRunInputError(
                "retry re-runs the failed and skipped tasks of the run's own selection; "
                "drop select/exclude, or start a new run id with them"
            )
        attempt = event.get("retry_count", 0)
        if not isinstance(attempt, int) or isinstance(attempt, bool) or attempt < 0:
            raise InvalidRunInputError(f"retry_count must be a count, got {attempt!r}")
        return cls(
            run_id=run_id,
            execution=execution,
            token=str(event["token"]),
            selection=Selection(select, exclude) if given_selection else None,
            retry=retry,
            attempt=attempt,
        )

    @property
    def claimer(self) -> str:
        """Identity of this start's claims (its retry re-launches them at once)."""
        return f"start#{self.execution}"


@dataclass
class Scheduler:
    """The run's state machine on the table; every method is safe to call again.

    ``artifacts`` writes the run document to S3 (None: no documents, e.g. in tests).
    """

    store: RunStore
    plan: Plan
    max_concurrency: int
    launcher: Launcher
    artifacts: ArtifactWriter | None = None
    clock: Callable[[], str] = field(default=now_iso)
    pause: Callable[[float], None] = field(default=time.sleep)

    # --- start ---------------------------------------------------------------------------

    def start(self, request: StartRequest) -> None:
        """Begin, resume, retry or adopt the run ``request.run_id`` (see the module doc)."""
        run = self.store.get_run(request.run_id)
        if run is None:
            if request.retry:
                raise InvalidRunInputError(f"nothing to retry: run {request.run_id!r} never ran")
            self._begin(request, None, 1, request.selection or Selection())
            return
        if run.status in (STARTING, RUNNING):
            self._restart_unfinished(request, run)
            return
        selection = request.selection if request.selection is not None else run.selection
        self._begin(request, run.execution, run.invocation + 1, selection)

    def _restart_unfinished(self, request: StartRequest, run: RunState) -> None:
        own = run.execution == request.execution
        if not own and self.launcher.execution_running(run.execution):
            raise RunAlreadyRunningError(
                f"run {request.run_id!r} is being run by {run.execution}; "
                "wait for it or use another run id"
            )
        if run.status == STARTING:  # its starter died, or is still writing the task items
            selection = request.selection if request.selection is not None else run.selection
            previous = None if own else run.execution
            self._begin(request, previous, max(run.invocation, 1), selection)
            return
        if request.selection is not None and request.selection != run.selection:
            raise InvalidRunInputError(
                f"run {request.run_id!r} is still running with selection "
                f"{list(run.selection.select)} / exclude {list(run.selection.exclude)}; "
                "a takeover continues it as it is"
            )
        try:
            if own:
                run = self.store.refresh_token(
                    request.run_id, request.execution, request.token, request.attempt
                )
            else:
                log.warning(
                    "run %s: adopting it from ended coordinator %s", request.run_id, run.execution
                )
                run = self.store.adopt_run(
                    request.run_id,
                    request.execution,
                    request.token,
                    run.execution,
                    request.attempt,
                )
        except ConditionFailed as lost:
            now = decode_run(request.run_id, lost.item or {})
            if not own and now.ended:
                # The adopted run ended since it was read (its outcome went to the
                # ended coordinator): start it as an ended run id is started.
                self.start(request)
                return
            raise RunAlreadyRunningError(
                f"run {request.run_id!r} was taken over by {_winner(request, now)}"
            ) from None
        if run.ended:
            # It ended since it was read, and its outcome went to the token of an
            # attempt Step Functions no longer waits on: answer this attempt's too.
            self._conclude(run)
            return
        self.dispatch(run, request.claimer)

    def _begin(
        self,
        request: StartRequest,
        previous: str | None,
        invocation: int,
        selection: Selection,
    ) -> None:
        """Claim the run item, reset the selected tasks that did not succeed, dispatch."""
        try:
            chosen = self.plan.selected(selection)
            run_parents = self.plan.run_parents(selection)
        except sel.SelectionError as err:
            raise InvalidRunInputError(str(err)) from None
        try:
            self.store.create_run(
                request.run_id,
                request.execution,
                request.token,
                invocation=invocation,
                max_concurrency=self.max_concurrency,
                previous_execution=previous,
                now=self.clock(),
                retry=request.attempt,
            )
        except ConditionFailed as lost:
            now = decode_run(request.run_id, lost.item or {})
            if now.execution == request.execution and now.status == RUNNING:
                # An earlier attempt of this start opened the run since we read it:
                # continue it as a redelivered start (keep this attempt's token).
                self._restart_unfinished(request, now)
                return
            raise RunAlreadyRunningError(
                f"run {request.run_id!r} was claimed by {_winner(request, now)}"
            ) from None
        existing = self.store.tasks(request.run_id)
        done = {n for n in chosen if n in existing and existing[n].status == SUCCEEDED}
        children: dict[str, list[str]] = {n: [] for n in chosen}
        for child in sorted(chosen):
            for parent in run_parents[child]:
                children[parent].append(child)
        reset: list[TaskState] = []
        ready: dict[str, ReadyEntry] = {}
        for name in sorted(chosen - done):
            before = existing.get(name)
            # A failed attempt's execution name is used up: the re-run takes the next
            # one. A task still pending in an ended (or never opened) run never started.
            attempt = 1 if before is None else before.attempt + (before.status == FAILED)
            task = TaskState(
                name=name,
                status=PENDING,
                attempt=attempt,
                invocation=invocation,
                waiting_on=frozenset(run_parents[name] - done),
                children=tuple(sorted(children[name])),
            )
            reset.append(task)
            if not task.waiting_on:
                ready[name] = self._ready_entry(name, attempt)
        try:
            self.store.put_tasks(
                request.run_id, reset, execution=request.execution, token=request.token
            )
            run = self.store.open_run(
                request.run_id,
                request.execution,
                request.token,
                ready=ready,
                selection=selection,
                task_count=len(chosen),
            )
        except ConditionFailed as lost:
            run = decode_run(request.run_id, lost.item or {})
            opened = (run.status, run.execution, run.token)
            if opened != (RUNNING, request.execution, request.token):
                # A later attempt of this start (or another coordinator) took the run
                # over while this one wrote its items; that one writes them and opens it.
                raise RunAlreadyRunningError(
                    f"run {request.run_id!r} was taken over while starting"
                ) from None
            # This attempt's own opening, whose answer was lost: the client's re-sent
            # request found the run already open under this token.
        log.info(
            "run %s invocation %s: %s tasks selected, %s already succeeded, %s ready",
            request.run_id,
            invocation,
            len(chosen),
            len(done),
            len(ready),
        )
        self._write_artifact(run, {**existing, **{t.name: t for t in reset}})
        self.dispatch(run, request.claimer)

    def _ready_entry(self, task: str, attempt: int) -> ReadyEntry:
        return ReadyEntry(ready_rank(self.plan.priority(task)), attempt)

    # --- task_done -----------------------------------------------------------------------

    def task_done(self, run_id: str, task: str, attempt: int, outcome: Outcome) -> None:
        """Record a task's outcome, queue its children, and start what can start.

        Safe to deliver twice (the task state machine retries it, and the EventBridge
        rule may report an execution that already reported): only the first report of
        attempt ``attempt`` is recorded, and a later one replays the recorded outcome.
        """
        if task not in self.plan.tasks:
            log.warning("task_done for unknown task %s in run %s: ignored", task, run_id)
            return
        if not outcome.finished_at:
            outcome = replace(outcome, finished_at=self.clock())
        replaying = False
        try:
            recorded = self.store.record(run_id, task, attempt, outcome)
        except ConditionFailed as lost:
            if lost.item is None:
                log.warning("task_done for %s of unknown run %s: ignored", task, run_id)
                return
            recorded = decode_task(lost.item)
            if recorded.attempt != attempt or recorded.status == PENDING:
                log.warning(
                    "stale report for %s attempt %s in run %s: ignored", task, attempt, run_id
                )
                return
            replaying = True  # the outcome that counts is the recorded one
        ready = self._unblock_children(run_id, recorded, replaying=replaying)
        failure = None
        if recorded.status == FAILED:
            failure = Failure(
                task, recorded.error or "DagAggregate.TaskFailed", recorded.cause or "-"
            )
            if not replaying:  # once per failed attempt, however often it is reported
                metrics.emit(
                    PATTERN,
                    {"TaskFailures": 1},
                    properties={"Task": task, "RunId": run_id, "Error": failure.error},
                )
        run = self._release(run_id, task, attempt, ready=ready, failure=failure)
        if run is not None:
            self.dispatch(run, f"{task}#{attempt}", want=REPORT_CLAIMS)

    def _unblock_children(
        self, run_id: str, recorded: TaskState, *, replaying: bool
    ) -> dict[str, ReadyEntry]:
        """Remove a succeeded task from its children's ``waiting_on``; return the ready ones.

        A replayed report also returns the children it finds ready without having
        unblocked them (its first delivery may have crashed before queueing them). A
        child may so be returned to two callers, the replay and the parent whose unblock
        emptied the set: :meth:`RunStore.release` queues it only if it is still unqueued.
        """
        ready: dict[str, ReadyEntry] = {}
        if recorded.status != SUCCEEDED:
            return ready
        for child in recorded.children:
            try:
                unblocked = self.store.unblock(run_id, child, recorded.name)
            except ConditionFailed as lost:
                if not replaying or lost.item is None:
                    continue
                unblocked = decode_task(lost.item)
                if unblocked.status != PENDING:
                    continue
            if not unblocked.waiting_on:
                ready[child] = self._ready_entry(child, unblocked.attempt)
        return ready

    def _release(
        self,
        run_id: str,
        task: str,
        attempt: int,
        *,
        ready: dict[str, ReadyEntry],
        failure: Failure | None,
    ) -> RunState | None:
        """Queue the ready children (in batches) and free the slot, each write once.

        Every batch but the last is queued while the slot is still held; the last one
        frees it. A batch is retried only for itself (minus children found running),
        so no entry is ever written twice.
        """
        items = list(ready.items())
        batches = [
            dict(items[i : i + EXPRESSION_BATCH]) for i in range(0, len(items), EXPRESSION_BATCH)
        ] or [{}]
        for index, batch in enumerate(batches):
            last = index == len(batches) - 1
            for _ in range(3):
                try:
                    run = self.store.release(
                        run_id,
                        task,
                        attempt,
                        ready=batch,
                        failure=failure,
                        keep_slot=not last,
                    )
                    break
                except ConditionFailed as lost:
                    if lost.item is None:
                        return None
                    run = decode_run(run_id, lost.item)
                    slot = run.active.get(task)
                    if slot is None or slot.attempt != attempt:
                        return run  # released by an earlier delivery
                    busy = {c for c in batch if c in run.active}
                    if not busy:
                        raise
                    for child in busy:  # already claimed: queueing it again would run it twice
                        del batch[child]
            else:
                raise RuntimeError(f"run {run_id}: could not release {task} attempt {attempt}")
            if last:
                return run
        return None  # pragma: no cover - the last batch returns

    # --- dispatch ------------------------------------------------------------------------

    def dispatch(self, run: RunState, claimer: str, want: int | None = None) -> None:
        """Start ready tasks, longest remaining path first, while a slot is free.

        Also finishes half-done starts and, when nothing runs and nothing is ready,
        ends the run. ``run`` is the freshest run item the caller has (no read here).
        ``want``: most tasks this call claims in all (a report hands over the slot it
        freed and one spare, so concurrent reports do not all race for every free
        slot; the start fills them all), at most EXPRESSION_BATCH per request.
        """
        budget = want if want is not None else self.max_concurrency
        races = 0
        launched: set[str] = set()  # started by this call (the image may not say so yet)
        while True:
            if run.status != RUNNING:
                if run.ended and not run.notified:
                    self._conclude(run)
                return
            now = time.time()
            stale = {
                t: s.attempt
                for t, s in run.active.items()
                if not s.launched
                and t not in launched
                and (s.by == claimer or now - s.claimed_at > LAUNCH_GRACE)
            }
            if stale:
                self._launch(run.run_id, stale)
                launched |= stale.keys()
            free = min(self.max_concurrency - len(run.active), budget)
            if free > 0 and run.ready_count > 0:
                after, picks = self._try_claim(run, claimer, min(free, EXPRESSION_BATCH), races)
                if after is None:
                    return
                run = after
                if not picks:  # lost: try again on the winner's view
                    races += 1
                    if races >= _MAX_RACES:
                        break
                    self.pause(random.uniform(0, 0.01 * races))  # desynchronise the racers
                    continue
                attempts = {task: entry.attempt for task, entry in picks.items()}
                self._launch(run.run_id, attempts)
                launched |= picks.keys()
                budget -= len(picks)
                if budget <= 0:
                    return  # the other free slots are for other reports to fill
                continue  # more slots and ready tasks than one request takes?
            if run.active or run.ready_count > 0:
                return  # a running task's report dispatches when it ends
            follow = self._finish_or_requeue(run)
            if follow is None:
                return
            run = follow
            races += 1  # a re-queue: bounded like a race
            if races >= _MAX_RACES:
                break
        log.warning("run %s: dispatch gave up after %s lost races", run.run_id, _MAX_RACES)

    def _try_claim(
        self, run: RunState, claimer: str, count: int, races: int
    ) -> tuple[RunState | None, dict[str, ReadyEntry]]:
        """Claim up to ``count`` ready tasks: the run item after, and what was claimed.

        Nothing claimed: a lost race, and the run item as the winner left it (None:
        the run item is gone).
        """
        picks = self._picks(run.run_id, count, races)
        if not picks:  # all claimed since the run item was read
            return self.store.get_run(run.run_id), {}
        try:
            return self.store.claim(run.run_id, picks, self.max_concurrency, claimer), picks
        except ConditionFailed as lost:
            return (decode_run(run.run_id, lost.item) if lost.item else None), {}

    def _picks(self, run_id: str, count: int, races: int) -> dict[str, ReadyEntry]:
        """The ``count`` ready tasks to claim: the top ones by priority.

        After a lost race, a random choice among the top ``count * (2 + 2 * races)``:
        concurrent reports that all wanted the same top task spread out instead of
        colliding on it again (priority order bends only among near-top tasks). One
        Query of the ready items, in sort-key order, reads just that window.
        """
        size = count * (2 + 2 * races) if races else count
        window = list(self.store.ready_tasks(run_id, size).items())  # in sort-key order
        return dict(random.sample(window, min(count, len(window))) if races else window)

    def _launch(self, run_id: str, tasks: Mapping[str, int]) -> None:
        """Start each task's execution (idempotent by name), then mark the slots launched."""
        for task, attempt in tasks.items():
            self.launcher.start_task(
                execution_name(run_id, task, attempt),
                {
                    "run_id": run_id,
                    "task_id": task,
                    "attempt": attempt,
                    "task": self.plan.tasks[task]["task"],
                    # Defaults the task machine overwrites; its report reads them.
                    "statement": {"id": None},
                    "result": {"rows": None},
                },
            )
        self.store.mark_launched(run_id, tasks)

    # --- finish --------------------------------------------------------------------------

    def _finish_or_requeue(self, run: RunState) -> RunState | None:
        """Nothing active or ready: re-queue lost ready tasks, or end the run."""
        tasks = self.store.tasks(run.run_id)
        chosen = self.plan.selected(run.selection)
        lost = {
            name: self._ready_entry(name, tasks[name].attempt)
            for name in sorted(chosen)
            if name in tasks and tasks[name].status == PENDING and not tasks[name].waiting_on
        }
        if lost:
            log.warning("run %s: re-queueing %s", run.run_id, ", ".join(lost))
            try:
                return self.store.requeue(run.run_id, lost)
            except ConditionFailed:
                return None
        counts = {PENDING: 0, SUCCEEDED: 0, FAILED: 0}
        for name in chosen:
            counts[tasks[name].status if name in tasks else PENDING] += 1
        failure = run.failure
        if failure is None and counts[SUCCEEDED] != len(chosen):
            failure = Failure(
                "-",
                "DagAggregate.Stalled",
                f"nothing runs or can start, but only {counts[SUCCEEDED]} of {len(chosen)} "
                f"tasks succeeded: {counts}",
            )
        now = self.clock()
        try:
            final = self.store.finish(
                run.run_id,
                RUN_FAILED if failure else RUN_SUCCEEDED,
                counts=counts,
                failure=failure,
                now=now,
            )
        except ConditionFailed as lost:
            # Something became ready, or another caller ended the run (it answers), or
            # this very write landed and its answer was lost: the client's re-sent
            # request then finds the run ended, and nobody else would answer the token.
            ended = decode_run(run.run_id, lost.item) if lost.item else None
            if ended is None or not ended.ended or ended.notified:
                return None
            if ended.finished_at != now:
                self._conclude(ended, tasks)  # a second answer to a token is ignored
                return None
            final = ended
        emit_run_metrics(final, counts)
        self._conclude(final, tasks)
        return None

    def _conclude(self, run: RunState, tasks: Mapping[str, TaskState] | None = None) -> None:
        """Write the final document, answer the coordinator's token, note it was answered."""
        artifact = self._write_artifact(
            run, tasks if tasks is not None else self.store.tasks(run.run_id)
        )
        if run.status == RUN_SUCCEEDED:
            output: dict[str, Any] = {
                "run_id": run.run_id,
                "status": RUN_SUCCEEDED,
                "invocation": run.invocation,
                "tasks": run.counts,
            }
            if artifact:
                output["run_results"] = artifact
            self.launcher.send_success(run.token, output)
        else:
            failure = run.failure or Failure("-", "DagAggregate.Failed", "-")
            cause = {"run_id": run.run_id, "task": failure.task, "cause": failure.cause}
            if artifact:
                cause["run_results"] = artifact
            self.launcher.send_failure(run.token, failure.error, json.dumps(cause)[:MAX_CAUSE])
        self.store.mark_notified(run.run_id, self.clock())

    def _write_artifact(self, run: RunState, tasks: Mapping[str, TaskState]) -> str | None:
        """The run document in S3 (``s3://bucket/key``), or None without a writer."""
        if self.artifacts is None:
            return None
        doc = document(
            run,
            tasks,
            self.plan.selected(run.selection),
            execution_name=execution_name,
            plan_key=self.plan.key,
            plan_tasks=len(self.plan.tasks),
            generated_at=self.clock(),
            generator=GENERATOR,
        )
        key = self.artifacts.write(doc)
        return f"s3://{self.artifacts.bucket}/{key}"


def _winner(request: StartRequest, run: RunState) -> str:
    """Who holds a run a start lost: another execution, or a later attempt of this start."""
    if run.execution == request.execution:
        return "a later attempt of this start"
    return run.execution or "another execution"


def emit_run_metrics(run: RunState, counts: Mapping[str, int]) -> None:
    """The ended run's pattern metrics: its duration, and the tasks it never ran.

    ``TasksSkipped``: selected tasks still pending when the run ended (a failure
    stopped the run before their parents succeeded). Printed by the one caller whose
    write ended the run.
    """
    values: dict[str, metrics.Value] = {"TasksSkipped": counts.get(PENDING, 0)}
    started, finished = parse_time(run.started_at or ""), parse_time(run.finished_at or "")
    if started and finished:
        values["RunDuration"] = (max(0.0, (finished - started).total_seconds()), "Seconds")
    metrics.emit(PATTERN, values, properties={"RunId": run.run_id, "Status": run.status})


def outcome_from_report(event: Mapping[str, Any]) -> Outcome:
    """The task machine's ``task_done`` payload as an :class:`Outcome` (extra fields optional).

    ``statement_id``, ``rows``, ``started_at`` and ``finished_at`` came with the run
    artifacts; a report without them (an older task machine) still counts.
    """
    rows = event.get("rows")
    try:
        rows = int(rows) if rows is not None else None
    except (TypeError, ValueError):
        rows = None
    if rows is not None and rows < 0:
        rows = None  # the Data API says -1 when it does not know
    started = event.get("started_at")
    finished = event.get("finished_at")
    return Outcome(
        ok=bool(event["ok"]),
        error=event.get("error"),
        cause=event.get("cause"),
        started_at=str(started) if started and parse_time(str(started)) else None,
        finished_at=str(finished) if finished and parse_time(str(finished)) else None,
        statement_id=str(event["statement_id"]) if event.get("statement_id") else None,
        rows=rows,
    )


def epoch_ms_iso(value: Any) -> str | None:
    """EventBridge's epoch milliseconds (startDate/stopDate) as an ISO timestamp."""
    if not isinstance(value, (int, float)):
        return None
    return datetime.fromtimestamp(value / 1000, timezone.utc).isoformat(timespec="milliseconds")
