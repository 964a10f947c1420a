"""The pause point: a botocore ``before-send`` handler between the runtime's clients and the store.

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
"""

from __future__ import annotations

import json
from typing import Any

from botocore.awsrequest import AWSPreparedRequest, AWSResponse
from botocore.exceptions import ReadTimeoutError

from sfn_patterns_localstack.interleavings import scheduler
from sfn_patterns_localstack.interleavings.scheduler import CallPause, Write
from sfn_patterns_localstack.interleavings.steps import Kind
from sfn_patterns_localstack.interleavings.store import MotoStore, changed, item_name

HANDLER_ID = "sfn-patterns-interleavings-gateway"
_EVENT = "before-send.dynamodb"
_READS = frozenset(
    {"GetItem", "BatchGetItem", "Query", "Scan", "TransactGetItems", "DescribeTable"}
)
_THROTTLE = "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException"


class Gateway:
    """Routes each request of an actor through its pause point to the store.

    Args:
        store: The store requests are applied to.
        hash_key: The table's hash key attribute (a request's items are named by it).
        range_key: The table's range key attribute, if it has one (then with it).

    """

    def __init__(self, store: MotoStore, hash_key: str, range_key: str | None = None) -> None:
        self.store = store
        self.hash_key = hash_key
        self.range_key = range_key

    def attach(self, client: Any) -> None:
        """Put this gateway first on ``client``'s ``before-send`` (replacing an earlier one)."""
        events = client.meta.events
        events.unregister(_EVENT, unique_id=HANDLER_ID)
        events.register_first(_EVENT, self, unique_id=HANDLER_ID)
        reset_retry_quota(client)

    def __call__(self, request: AWSPreparedRequest, event_name: str, **_: Any) -> AWSResponse:
        """The handler: pause an actor's request, then apply, lose or throttle it."""
        binding = scheduler.current()
        if binding is None:
            return self.store.send(request)
        run, actor = binding
        call = describe(event_name.rsplit(".", 1)[-1], request.body, self.hash_key, self.range_key)
        decision = run.pause_at_call(actor, call)
        if decision.kind is Kind.THROTTLE:
            run.after_answer(decision)
            return throttled(request)
        before = self.store.snapshot() if call.writes else None
        response = self.store.send(request)
        if before is not None:
            old, new = changed(before, self.store.snapshot())
            if old:
                run.record(
                    Write(run.step_count, actor.index, call.operation, old, new, run.clock.now)
                )
        run.after_answer(decision)
        if decision.kind is Kind.LOSE:
            raise ReadTimeoutError(endpoint_url=request.url)
        return response


def describe(
    operation: str, body: bytes | str | None, hash_key: str, range_key: str | None = None
) -> CallPause:
    """What a request touches: its operation, its items' names, whether it writes.

    Items are named as :meth:`MotoStore.snapshot` names them (:func:`~.store.item_name`).
    """
    data = json.loads(body or b"{}")
    keys: set[str] | None = set()

    def add(key: dict[str, Any] | None) -> None:
        if key is None or hash_key not in key or keys is None:
            return
        hashed = str(next(iter(key[hash_key].values())))
        ranged = key.get(range_key) if range_key is not None else None
        keys.add(item_name(hashed, None if ranged is None else str(next(iter(ranged.values())))))

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
    from moto.core.botocore_stubber import MockRawResponse

    body = json.dumps(
        {
            "__type": _THROTTLE,
            "message": "Throughput exceeds the current capacity (injected by the explorer).",
        }
    )
    headers = {"Content-Type": "application/x-amz-json-1.0", "x-amzn-RequestId": "throttled"}
    return AWSResponse(request.url, 400, headers, MockRawResponse(body))


def reset_retry_quota(client: Any) -> None:
    """Give ``client`` botocore's full retry quota again, so each run starts the same.

    Standard retry mode keeps a per-client token bucket (500 tokens; a retry costs 5, a
    timeout's 10). A client lives across runs (pynamodb caches it), so without a reset a
    run's retries would depend on the runs before it. botocore keeps the bucket in the
    ``after-call`` handler it registers; it is found there.
    """
    from botocore.retries.quota import RetryQuota
    from botocore.retries.standard import RetryQuotaChecker

    handlers = client.meta.events._emitter._handlers.prefix_search("after-call.dynamodb.GetItem")
    for handler in handlers:
        owner = getattr(handler, "__self__", None)
        if isinstance(owner, RetryQuotaChecker):
            owner._quota = RetryQuota()
