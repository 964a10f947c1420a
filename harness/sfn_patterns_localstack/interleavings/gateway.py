"""The pause point: a botocore ``before-send`` handler between the runtime's clients and the world.

Why ``before-send``: it fires once per HTTP request, after botocore has built and signed
it and before anything is sent, and a handler that returns a response replaces the
network. So every request the runtime makes, including each of botocore's own retries
(standard mode re-sends a throttled or timed-out request up to three times), is one pause
point, and the handler decides what the store and the caller see:

* run: the store applies the request and the caller gets the answer;
* lose: the store applies it, then the caller gets ``ReadTimeoutError`` (the answer lost
  on the way back; botocore retries it as it would a real timeout);
* throttle: the store never sees it; the caller gets ``ProvisionedThroughputExceededException``;
* crash: the actor never gets the turn back (see :mod:`.scheduler`).

The handler is registered first on each client the runtime uses (pynamodb builds its own
botocore client per model; :meth:`Gateway.attach` is given it). Requests from threads that
are not actors (the harness's setup) go straight to the store.

DynamoDB requests go to the store (:mod:`.store`); Step Functions requests go to the
stand-in (:mod:`.sfn`), through the same pause point, so a ``SendTaskSuccess`` or a
``StopExecution`` is a step like a conditional write. A throttled Step Functions call is
answered ``ThrottlingException``. SQS requests go to the protocol's queue (:mod:`.sqs`,
moto's SQS), the way DynamoDB requests go to the store: applied, recorded as a write of
the queue's messages, and throttled as ``RequestThrottled``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from botocore.awsrequest import AWSPreparedRequest, AWSResponse
from botocore.exceptions import ReadTimeoutError

from sfn_patterns_localstack.interleavings import scheduler
from sfn_patterns_localstack.interleavings.scheduler import CallPause, Write
from sfn_patterns_localstack.interleavings.sfn import StepFunctions, json_response
from sfn_patterns_localstack.interleavings.sqs import MotoQueue
from sfn_patterns_localstack.interleavings.steps import Kind
from sfn_patterns_localstack.interleavings.store import MotoStore, changed

HANDLER_ID = "sfn-patterns-interleavings-gateway"
#: The services a client may be attached for (botocore's hyphenized service ids).
SERVICES = ("dynamodb", "sfn", "sqs")
_READS = frozenset(
    {"GetItem", "BatchGetItem", "Query", "Scan", "TransactGetItems", "DescribeTable"}
)
_THROTTLE = "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException"


class Gateway:
    """Routes each request of an actor through its pause point to the store.

    Args:
        store: The store DynamoDB requests are applied to.
        hash_key: The table's hash key attribute (a request's items are named by it).
        range_key: The table's range key attribute, if it has one (items named by both,
            ``<hash>/<range>`` as in snapshots).
        sfn: The Step Functions stand-in (None: a Step Functions client cannot be attached).
        queue: The SQS queue (None: an SQS client cannot be attached).

    """

    def __init__(
        self,
        store: MotoStore,
        hash_key: str,
        sfn: StepFunctions | None = None,
        queue: MotoQueue | None = None,
        range_key: str | None = None,
    ) -> None:
        self.store = store
        self.hash_key = hash_key
        self.range_key = range_key
        self.sfn = sfn
        self.queue = queue

    def attach(self, client: Any) -> None:
        """Put this gateway first on ``client``'s ``before-send`` (replacing an earlier one)."""
        service = client.meta.service_model.service_id.hyphenize()
        missing = {"sfn": self.sfn is None, "sqs": self.queue is None}.get(service, False)
        if service not in SERVICES or missing:
            raise ValueError(
                f"the gateway answers {', '.join(SERVICES)} clients (sfn only when given "
                f"a StepFunctions stand-in, sqs only when given a queue), not a {service} client"
            )
        event = f"before-send.{service}"
        events = client.meta.events
        events.unregister(event, unique_id=HANDLER_ID)
        events.register_first(event, self, unique_id=HANDLER_ID)
        reset_retry_quota(client)

    def __call__(self, request: AWSPreparedRequest, event_name: str, **_: Any) -> AWSResponse:
        """The handler: pause an actor's request, then apply, lose or throttle it."""
        service, operation = event_name.split(".")[1:3]
        if service == "sfn":
            return self._step_functions(operation, request)
        if service == "sqs":
            assert self.queue is not None  # attach() refuses an sqs client otherwise
            call = self.queue.describe(operation, request.body)
            return self._snapshotted(request, self.queue, call, self.queue.throttled)
        call = describe(operation, request.body, self.hash_key, self.range_key)
        return self._snapshotted(request, self.store, call, throttled)

    def _snapshotted(
        self,
        request: AWSPreparedRequest,
        store: MotoStore | MotoQueue,
        call: CallPause,
        throttle: Callable[[AWSPreparedRequest], AWSResponse],
    ) -> AWSResponse:
        """A request to a store whose writes are recorded from its snapshots before and after."""
        binding = scheduler.current()
        if binding is None:
            return store.send(request)
        run, actor = binding
        decision = run.pause_at_call(actor, call)
        if decision.kind is Kind.THROTTLE:
            run.after_answer(decision)
            return throttle(request)
        before = store.snapshot() if call.writes else None
        response = store.send(request)
        if before is not None:
            old, new = changed(before, store.snapshot())
            if old:
                run.record(
                    Write(run.step_count, actor.index, call.operation, old, new, run.clock.now)
                )
        run.after_answer(decision)
        if decision.kind is Kind.LOSE:
            raise ReadTimeoutError(endpoint_url=request.url)
        return response

    def _step_functions(self, operation: str, request: AWSPreparedRequest) -> AWSResponse:
        """A Step Functions request: the same pause, answered by the stand-in (which records)."""
        assert self.sfn is not None  # attach() refuses an sfn client otherwise
        binding = scheduler.current()
        if binding is None:
            return self.sfn.send(operation, request)
        run, actor = binding
        decision = run.pause_at_call(actor, self.sfn.describe(operation, request.body))
        if decision.kind is Kind.THROTTLE:
            run.after_answer(decision)
            return self.sfn.throttled(request)
        response = self.sfn.send(operation, request)
        run.after_answer(decision)
        if decision.kind is Kind.LOSE:
            raise ReadTimeoutError(endpoint_url=request.url)
        return response


def describe(
    operation: str, body: bytes | str | None, hash_key: str, range_key: str | None = None
) -> CallPause:
    """What a request touches: its operation, its items' keys, whether it writes.

    An item is named by its hash key, or ``<hash>/<range>`` when the table has a range key
    (as snapshots name it), so that calls on different items of one partition commute.
    """
    data = json.loads(body or b"{}")
    keys: set[str] | None = set()

    def add(key: dict[str, Any] | None) -> None:
        if key is None or hash_key not in key or keys is None:
            return
        name = str(next(iter(key[hash_key].values())))
        if range_key is not None and range_key in key:
            name += f"/{next(iter(key[range_key].values()))}"
        keys.add(name)

    if operation in ("Query", "Scan"):
        keys = None
    add(data.get("Key"))
    add(data.get("Item"))
    for request in (data.get("RequestItems") or {}).values():
        for key in request.get("Keys", []) if isinstance(request, dict) else []:
            add(key)
        for write in request if isinstance(request, list) else []:
            add(write.get("PutRequest", {}).get("Item"))
            add(write.get("DeleteRequest", {}).get("Key"))
    for item in data.get("TransactItems") or []:
        for part in item.values():
            add(part.get("Key"))
            add(part.get("Item"))
    return CallPause(operation, None if keys is None else frozenset(keys), operation not in _READS)


def throttled(request: AWSPreparedRequest) -> AWSResponse:
    """DynamoDB's answer to a throttled request (HTTP 400, nothing applied)."""
    message = "Throughput exceeds the current capacity (injected by the explorer)."
    return json_response(request, 400, {"__type": _THROTTLE, "message": message})


def reset_retry_quota(client: Any) -> None:
    """Give ``client`` botocore's full retry quota again, so each run starts the same.

    Standard retry mode keeps a per-client token bucket (500 tokens; a retry costs 5, a
    timeout's 10). A client lives across runs (pynamodb caches it), so without a reset a
    run's retries would depend on the runs before it. botocore keeps the bucket in the
    ``after-call`` handler it registers; it is found there.
    """
    from botocore.retries.quota import RetryQuota
    from botocore.retries.standard import RetryQuotaChecker

    model = client.meta.service_model
    event = f"after-call.{model.service_id.hyphenize()}.{model.operation_names[0]}"
    handlers = client.meta.events._emitter._handlers.prefix_search(event)
    for handler in handlers:
        owner = getattr(handler, "__self__", None)
        if isinstance(owner, RetryQuotaChecker):
            owner._quota = RetryQuota()
