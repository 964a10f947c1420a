"""The scheduled starter: keep at most MAX executions of the target running.

Each run (an EventBridge schedule invokes it; reserved concurrency 1 makes it the
only writer of its deployment):

0. take the run lease in the ledger table (:mod:`.ledger`), so a second starter that
   runs at the same time (another deployment's schedule, a manual run) admits
   nothing until this run ends or its lease runs out; every admission and recount
   renews the short lease, so a crashed run blocks the next for seconds, not for its
   whole time budget;
1. count the running executions: ``ListExecutions(RUNNING)`` united with the
   starter's own ledger of executions it started and has not yet seen finish, each
   checked with ``DescribeExecution`` when the list does not show it (the list is
   eventually consistent, so a just-started execution may be missing from it);
2. while fewer than MAX run and the per-run budget (messages, seconds) lasts,
   receive one message, record the execution name in the ledger, start the
   execution named after the message's request id, and delete the message only
   after the start succeeded (``ExecutionAlreadyExists`` is success);
3. when every slot is taken and messages wait, sleep ``recheck_seconds`` and count
   again, until the time budget ends.

Messages are received one at a time: a FIFO group whose head fails to start stays
blocked behind it (order kept) and no other message of that group is received
with it, so a poison message never drags healthy ones towards the DLQ.
"""

from __future__ import annotations

import json
import logging
import os
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sfn_patterns import clients as aws_clients
from sfn_patterns import metrics

from .ledger import LeaseHolder, LeaseLost, Ledger
from .naming import execution_arn, execution_name
from .producer import REQUEST_ID_ATTRIBUTE

LOG = logging.getLogger(__name__)
LOG.setLevel(logging.INFO)

# The run lease runs this long past the recheck interval; every admission (in the
# transaction that records it) and every recount renews it. A live starter renews far
# sooner; a crashed one (nobody releases its lease) blocks other starters this long at
# most, and the next run of its own function not at all (Config.exclusive_group).
LEASE_MARGIN_SECONDS = 15.0
# Admission outcomes that end the run, and the reason its report gives.
STOPPING_OUTCOMES = {"failed": "start_failed", "lease_lost": "lease_lost"}
# Errors that refuse the request itself (its name or its input), on every attempt alike:
# this message can never start, so it is let reach the DLQ quickly, and no attempt of it
# ever started an execution.
PERMANENT_ERRORS = frozenset({"InvalidExecutionInput", "InvalidName", "ValidationException"})


@dataclass(frozen=True)
class Config:
    """What one starter throttles, and its per-run budget."""

    queue_url: str
    state_machine_arn: str
    max_concurrent: int
    ledger_table: str
    max_messages: int = 100
    max_seconds: float = 50.0
    recheck_seconds: float = 5.0
    # A ledger entry whose execution does not exist yet is still counted this long after
    # the latest its start can be sent (the end of the run that recorded it): a start
    # whose answer was lost may still appear.
    ledger_grace_seconds: float = 120.0
    ledger_ttl_seconds: int = 86400
    # A role in the target's account, assumed for every Step Functions call.
    target_role_arn: str | None = None
    # Runs that never overlap (this Lambda function: reserved concurrency 1). A run
    # takes over a lease its group still holds at once: that run can only be dead.
    exclusive_group: str | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Config:
        """The configuration the module passes as environment variables."""
        env = os.environ if env is None else env
        return cls(
            queue_url=env["QUEUE_URL"],
            state_machine_arn=env["TARGET_STATE_MACHINE_ARN"],
            max_concurrent=int(env["MAX_CONCURRENT_EXECUTIONS"]),
            ledger_table=env["LEDGER_TABLE"],
            max_messages=int(env.get("MAX_MESSAGES_PER_RUN", "100")),
            max_seconds=float(env.get("MAX_SECONDS_PER_RUN", "50")),
            recheck_seconds=float(env.get("RECHECK_SECONDS", "5")),
            ledger_grace_seconds=float(env.get("LEDGER_GRACE_SECONDS", "120")),
            ledger_ttl_seconds=int(env.get("LEDGER_TTL_SECONDS", "86400")),
            target_role_arn=env.get("TARGET_ROLE_ARN") or None,
            exclusive_group=_function_of(env),
        )


def _function_of(env: Mapping[str, str]) -> str | None:
    """The Lambda function running this code (region and name, set by the runtime), or None."""
    name = env.get("AWS_LAMBDA_FUNCTION_NAME")
    return f"lambda:{env.get('AWS_REGION', '')}:{name}" if name else None


@dataclass
class RunReport:
    """What one run did (returned by the handler and logged as JSON)."""

    running_at_start: int = -1
    counts: list[int] = field(default_factory=list)
    started: list[str] = field(default_factory=list)
    already_existed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    poison: list[str] = field(default_factory=list)
    receives: int = 0
    stopped: str = ""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready view."""
        return dict(self.__dict__)


def _error_code(error: Exception) -> str:
    response = getattr(error, "response", None) or {}
    return str(response.get("Error", {}).get("Code", type(error).__name__))


def request_id_of(message: dict) -> str:
    """The message's request id: its ``request_id`` attribute, else its dedup id."""
    attribute = (message.get("MessageAttributes") or {}).get(REQUEST_ID_ATTRIBUTE) or {}
    value = attribute.get("StringValue")
    if value:
        return value
    dedup = (message.get("Attributes") or {}).get("MessageDeduplicationId")
    if dedup:
        return dedup
    raise ValueError("message has neither a request_id attribute nor a deduplication id")


class Starter:
    """One starter bound to its clients (boto3 or test doubles)."""

    def __init__(
        self,
        config: Config,
        sqs: Any,
        sfn: Any,
        dynamodb: Any,
        *,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.config = config
        self.sqs = sqs
        self.sfn = sfn
        self.store = Ledger(dynamodb, config.ledger_table, config.ledger_ttl_seconds)
        self.clock = clock
        self.sleep = sleep
        group = config.exclusive_group
        self.owner = f"{group}/{uuid.uuid4().hex}" if group else uuid.uuid4().hex
        self.lease_seconds = config.recheck_seconds + LEASE_MARGIN_SECONDS
        # When this run ends at the latest (its invocation's deadline), set by run(): the
        # latest any start it records can be sent. None: a run of no known end.
        self.ends_at: float | None = None

    # -- counting ---------------------------------------------------------------------

    def listed_running(self) -> set[str]:
        """Names ``ListExecutions(RUNNING)`` shows (eventually consistent)."""
        names: set[str] = set()
        kwargs = {
            "stateMachineArn": self.config.state_machine_arn,
            "statusFilter": "RUNNING",
            "maxResults": 1000,
        }
        while True:
            page = self.sfn.list_executions(**kwargs)
            names.update(e["name"] for e in page.get("executions", []))
            token = page.get("nextToken")
            if not token:
                return names
            kwargs["nextToken"] = token

    def ledger(self) -> list[tuple[str, float]]:
        """Starts recorded and not yet seen finish: (name, the latest the start can be sent)."""
        return self.store.entries()

    def count_running(self) -> int:
        """Executions to count as running: never fewer than actually run from this starter.

        A ledger entry whose execution does not exist keeps its slot until the grace has
        passed since the latest its start can be sent: the end of the run that recorded
        it, however long that run paused between its record and its ``StartExecution``.
        Counted from the record instead, a run paused past the grace (a function timeout
        longer than it) would have its entry forgotten and its start still land.
        """
        listed = self.listed_running()
        extra = 0
        now = self.clock()
        for name, start_by in self.ledger():
            if name in listed:
                continue
            arn = execution_arn(self.config.state_machine_arn, name)
            try:
                status = aws_clients.execution_status(self.sfn, arn)
            except Exception as error:
                if _error_code(error) != "ExecutionDoesNotExist":
                    raise
                if now - start_by < self.config.ledger_grace_seconds:
                    extra += 1  # an ambiguous start may still appear: keep its slot
                else:
                    self.store.forget(name)
                continue
            if status == "RUNNING":
                extra += 1
            else:
                self.store.forget(name)
        return len(listed) + extra

    # -- admitting --------------------------------------------------------------------

    def _receive_one(self) -> dict | None:
        response = self.sqs.receive_message(
            QueueUrl=self.config.queue_url,
            MaxNumberOfMessages=1,
            WaitTimeSeconds=0,
            # AttributeNames (not MessageSystemAttributeNames): older runtime boto3 knows it.
            AttributeNames=[
                "MessageDeduplicationId",
                "MessageGroupId",
                "ApproximateReceiveCount",
            ],
            MessageAttributeNames=[REQUEST_ID_ATTRIBUTE],
        )
        messages = response.get("Messages") or []
        return messages[0] if messages else None

    def _backlog(self) -> bool:
        attributes = self.sqs.get_queue_attributes(
            QueueUrl=self.config.queue_url, AttributeNames=["ApproximateNumberOfMessages"]
        )["Attributes"]
        return int(attributes.get("ApproximateNumberOfMessages", "0")) > 0

    def _release_now(self, message: dict) -> None:
        """Make a message that can never start visible again, so it reaches the DLQ soon."""
        self.sqs.change_message_visibility(
            QueueUrl=self.config.queue_url,
            ReceiptHandle=message["ReceiptHandle"],
            VisibilityTimeout=0,
        )

    def admit(self, message: dict, report: RunReport) -> str:
        """Start one message's execution: started, existed, poison, failed or lease_lost.

        A failed start leaves its ledger entry, refusals such as ``ThrottlingException``
        included, unless the request itself is refused (``PERMANENT_ERRORS``). A refusal
        answers one attempt; botocore re-sends a throttled or timed-out call, so an
        earlier attempt whose answer was lost may have started the execution, as may an
        earlier run's start of the same message. The next counts settle the entry as
        for any ambiguous start, with ``DescribeExecution`` and the grace: that costs no
        call here, and at most a slot held for the grace when nothing started. A
        ``DescribeExecution`` here instead would cost a call and prove nothing: a lost
        attempt may still be in flight. A request refused for its name or input was
        refused on every attempt, so its entry goes at once and frees its slot.
        """
        try:
            name = execution_name(request_id_of(message))
            body = message["Body"]
            json.loads(body)
        except ValueError as error:
            LOG.warning("poison message %s: %s", message.get("MessageId"), error)
            report.poison.append(message.get("MessageId", "?"))
            self._release_now(message)
            return "poison"

        # Record the name before starting: a crash between the start and any later
        # write can never hide a running execution from the next count. The record
        # renews the run lease, and is refused when the lease is no longer ours.
        try:
            self.store.record(
                name, self.clock(), self.owner, self.lease_seconds, start_by=self.ends_at
            )
        except LeaseLost as lost:
            # This run stalled past its lease and another starter took over: that one
            # admits now, and this message is its to take at once.
            LOG.warning("stopping before %s: %s", name, lost)
            self._release_now(message)
            return "lease_lost"
        outcome = "started"
        try:
            self.sfn.start_execution(
                stateMachineArn=self.config.state_machine_arn, name=name, input=body
            )
        except Exception as error:
            code = _error_code(error)
            if code == "ExecutionAlreadyExists":
                outcome = "existed"
            else:
                LOG.warning("start of %s failed: %s", name, error)
                if code in PERMANENT_ERRORS:
                    self.store.forget(name)
                    report.poison.append(name)
                    self._release_now(message)
                    return "poison"
                report.failed.append(name)
                return "failed"  # left in flight: redelivered after the visibility timeout

        # Only now, with the execution certainly existing, is the request done. A
        # failed delete is harmless: the redelivered message finds its execution.
        try:
            self.sqs.delete_message(
                QueueUrl=self.config.queue_url, ReceiptHandle=message["ReceiptHandle"]
            )
        except Exception as error:
            LOG.warning("delete of %s failed (it will be redelivered): %s", name, error)
        (report.started if outcome == "started" else report.already_existed).append(name)
        return outcome

    def _admit_until(self, deadline: float, budget: int, report: RunReport) -> None:
        """Admit while slots are free, recount while work waits, until a budget ends."""
        running = self._recount(report)
        report.running_at_start = running
        while not report.stopped:
            if report.receives >= budget:
                report.stopped = "max_messages"
            elif self.clock() >= deadline:
                report.stopped = "max_seconds"
            elif running >= self.config.max_concurrent:
                report.stopped = self._wait_for_a_slot(deadline)
                if not report.stopped:
                    running = self._recount(report)
            else:
                message = self._receive_one()
                if message is None:
                    report.stopped = "queue_empty"
                    continue
                report.receives += 1
                outcome = self.admit(message, report)
                if outcome in ("started", "existed"):
                    running += 1  # counted locally; an existing one may be finished (safe side)
                report.stopped = STOPPING_OUTCOMES.get(outcome, "")

    def _recount(self, report: RunReport) -> int:
        running = self.count_running()
        report.counts.append(running)
        return running

    def _take_lease(self) -> LeaseHolder | None:
        """Take or renew the run lease; None when ours, else who holds it."""
        return self.store.acquire_run_lease(
            self.owner, self.clock(), self.lease_seconds, self.config.exclusive_group
        )

    def _wait_for_a_slot(self, deadline: float) -> str:
        """Sleep one recheck interval and renew the lease; why the run stops, or ""."""
        if not self._backlog():
            return "full_no_backlog"
        if self.clock() + self.config.recheck_seconds >= deadline:
            return "full"
        self.sleep(self.config.recheck_seconds)
        if self._take_lease():
            return "lease_lost"  # this run stalled past its lease and another took over
        return ""

    def run(
        self,
        max_messages: int | None = None,
        max_seconds: float | None = None,
        remaining_seconds: float | None = None,
    ) -> RunReport:
        """One bounded run: admit while slots are free, recount while work waits.

        ``remaining_seconds`` is the time the invocation has left (the Lambda context's):
        the run stops admitting 5 s before it, and it is when the function's timeout
        kills the run, so the latest any start this run records can be sent, which its
        ledger entries carry for other starters' counts.
        """
        config = self.config
        budget = min(max_messages or config.max_messages, config.max_messages)
        seconds = min(max_seconds or config.max_seconds, config.max_seconds)
        if remaining_seconds is not None:
            seconds = min(seconds, remaining_seconds - 5)
            self.ends_at = self.clock() + remaining_seconds
        deadline = self.clock() + max(seconds, 0)
        report = RunReport()
        holder = self._take_lease()
        if holder is not None:
            report.stopped = "another_starter_running"
            LOG.info("run lease held by %s until %.0f: nothing to do", holder.owner, holder.until)
            return report
        try:
            self._admit_until(deadline, budget, report)
        finally:
            self.store.release_run_lease(self.owner)
        LOG.info("run %s", json.dumps(report.as_dict()))
        return report


def clients(config: Config) -> tuple[Any, Any, Any]:
    """SQS and DynamoDB in this account; Step Functions in the target's (assumed role)."""
    sfn_credentials: dict[str, str] = {}
    if config.target_role_arn:
        # One assumption per run: a run lasts at most max_seconds (< 15 min), far
        # inside the credentials' hour.
        credentials = aws_clients.client("sts").assume_role(
            RoleArn=config.target_role_arn, RoleSessionName="sfn-patterns-starter"
        )["Credentials"]
        sfn_credentials = {
            "aws_access_key_id": credentials["AccessKeyId"],
            "aws_secret_access_key": credentials["SecretAccessKey"],
            "aws_session_token": credentials["SessionToken"],
        }
    return (
        aws_clients.client("sqs"),
        aws_clients.client("stepfunctions", **sfn_credentials),
        aws_clients.client("dynamodb"),
    )


def handler(event: dict | None, context: Any) -> dict:
    """Lambda entry point (EventBridge schedule, or a direct invoke).

    A direct invoke may lower the per-run budget: ``{"max_messages": 5, "max_seconds": 2}``.
    """
    event = event if isinstance(event, dict) else {}
    remaining = None
    if context is not None and hasattr(context, "get_remaining_time_in_millis"):
        remaining = context.get_remaining_time_in_millis() / 1000
    config = Config.from_env()
    starter = Starter(config, *clients(config))
    report = starter.run(
        max_messages=event.get("max_messages"),
        max_seconds=event.get("max_seconds"),
        remaining_seconds=remaining,
    )
    # One EMF line per tick: running against MAX, admitted, poison. The backlog is
    # AWS/SQS ApproximateNumberOfMessagesVisible of the queue (no extra call here).
    metrics.emit(
        "sqs-throttle",
        {
            "Running": max(report.running_at_start, 0),
            "MaxConcurrent": config.max_concurrent,
            "Admitted": len(report.started),
            "StartFailures": len(report.failed),
            "Poison": len(report.poison),
        },
    )
    return report.as_dict()
