"""The fault injector's place in LocalStack's handler chain: one request, one response handler.

The request handler runs after the request is parsed (service, operation, parameters
known) and before the service: a throttle or server error is raised there as the
service's own error, serialized by LocalStack in the service's protocol, so clients
see exactly what AWS would send; latency sleeps, then the call proceeds. Every call
between services (Step Functions' tasks, EventBridge's targets, a Lambda's SDK calls)
passes the same chain, so the faults reach them too, matched by the calling role.

The response handler changes a successful answer: ListExecutions from a stale view
(:mod:`.stale_list`), an SQS ReceiveMessage whose messages are made visible again at
once, so the next receive delivers them a second time (at-least-once delivery while
the first consumer still works on them), or any answer replaced by the service's 500
after the call took effect (``answer_lost``: the client retries a call that happened).

With no plan loaded each handler returns on its first line: the cost per request is
one attribute read.
"""

from __future__ import annotations

import datetime
import logging
import threading
import time
from typing import Any

from sfn_patterns_localstack.emulation import callers
from sfn_patterns_localstack.emulation.faults import errors, stale_list
from sfn_patterns_localstack.emulation.faults.injector import INJECTOR, Call, Injector
from sfn_patterns_localstack.emulation.faults.plan import Fault

LOG = logging.getLogger(__name__)
# The response-stage fault decided for a request (an attribute of its RequestContext).
CONTEXT_ATTRIBUTE = "_sfnp_fault"
# The request parameter that names a call's resource, per service, for ``resource``.
RESOURCE_PARAMETERS = (
    "TableName",
    "FunctionName",
    "stateMachineArn",
    "executionArn",
    "QueueUrl",
    "EventBusName",
    "Name",
    "WorkgroupName",
)
# Calls the injector makes itself (an SQS visibility reset) pass the chain untouched.
_own_calls = threading.local()


def call_of(context: Any) -> Call:
    """What the injector needs to know of a parsed request."""
    caller = callers.caller_of(context)
    request = context.service_request or {}
    resource = next(
        (request[name] for name in RESOURCE_PARAMETERS if isinstance(request.get(name), str)),
        None,
    )
    if resource is None and request.get("TransactItems"):
        # A DynamoDB transaction names its tables per item: its first item's table.
        first = next(iter(request["TransactItems"][0].values()), {})
        resource = first.get("TableName") if isinstance(first, dict) else None
    return Call(
        service=context.service.service_name,
        operation=context.operation.name,
        caller_role=caller.role_arn if caller else None,
        caller=caller.session_arn if caller else None,
        resource=resource,
    )


def exception_for(
    fault: Fault, service: str, operation: str, request: dict[str, Any] | None = None
) -> Exception:
    """The service's own error for an error-kind fault (``request``: the call's parameters)."""
    from localstack.aws.api import CommonServiceException

    if fault.kind == "transaction_conflict":
        return _transaction_conflict(operation, request or {})

    if fault.kind == "throttle":
        error = errors.throttle(service, operation)
    elif fault.kind in ("internal_error", "answer_lost"):
        error = errors.internal(service)
    elif fault.kind == "unavailable":
        error = errors.UNAVAILABLE
    else:
        error = errors.Error(fault.code or "", fault.status or 500, "Injected fault")
    return CommonServiceException(
        code=error.code,
        message=fault.message or error.message,
        status_code=error.status,
        sender_fault=error.status < 500,
    )


def on_request(chain: Any, context: Any, response: Any, injector: Injector = INJECTOR) -> None:
    """Inject request-stage faults; choose the response-stage one for this call."""
    if injector.plan is None:
        return
    if context.operation is None or context.service is None or getattr(_own_calls, "on", False):
        return
    call = call_of(context)
    if injector.active("request"):
        for fault in injector.decide("request", call):
            if fault.kind == "latency":
                time.sleep(fault.seconds or 0.0)
            else:
                raise exception_for(
                    fault, call.service, call.operation, dict(context.service_request or {})
                )
    if injector.active("response"):
        fired = injector.decide("response", call)
        if fired:
            fault = fired[-1]
            setattr(context, CONTEXT_ATTRIBUTE, (fault, dict(context.service_request or {})))
            if fault.kind == "stale_list":
                context.service_request = type(context.service_request)(
                    stale_list.widened(context.service_request)
                )


def _transaction_conflict(operation: str, request: dict[str, Any]) -> Exception:
    """What DynamoDB answers a call that met a transaction on one of its items.

    A single-item write: TransactionConflictException. A transaction: cancelled, with
    one reason per item in order, its first item's ``TransactionConflict`` and the
    others' ``None``, the shape clients read to tell a conflict from a condition.
    """
    from localstack.aws.api import CommonServiceException
    from localstack.aws.api.dynamodb import TransactionCanceledException

    if operation.startswith("Transact"):
        items = request.get("TransactItems") or [{}]
        reasons = [{"Code": "TransactionConflict", "Message": errors.TRANSACTION_CONFLICT.message}]
        reasons += [{"Code": "None"} for _ in items[1:]]
        codes = ", ".join(r["Code"] for r in reasons)
        return TransactionCanceledException(
            f"{errors.TRANSACTION_CANCELED.message} [{codes}]", CancellationReasons=reasons
        )
    error = errors.TRANSACTION_CONFLICT
    return CommonServiceException(
        code=error.code, message=error.message, status_code=error.status, sender_fault=True
    )


def on_response(chain: Any, context: Any, response: Any) -> None:
    """Apply the response-stage fault chosen for this request, if any."""
    chosen = getattr(context, CONTEXT_ATTRIBUTE, None)
    if chosen is None:
        return
    fault, original = chosen
    if context.service_exception is not None or context.service_response is None:
        return
    if fault.kind == "stale_list":
        _answer_stale(context, response, fault, original)
    elif fault.kind == "duplicate_delivery":
        _redeliver(context)
    elif fault.kind == "answer_lost":
        _lose_answer(context, response, fault)


def _lose_answer(context: Any, response: Any, fault: Fault) -> None:
    """The call took effect; its caller gets the service's 500 instead of the answer.

    The harshest failure for a client: it cannot tell whether the call happened, and
    its SDK sends it again (a second SendTaskSuccess, a second conditional write),
    which the code under test must take as a duplicate, not as an error.
    """
    from localstack.aws.protocol.serializer import create_serializer

    exception = exception_for(fault, context.service.service_name, context.operation.name)
    # In the protocol the client spoke (SQS: JSON or query), as LocalStack's own errors are.
    serializer = create_serializer(context.service, context.protocol)
    response.update_from(
        serializer.serialize_error_to_response(
            exception, context.operation, context.request.headers, context.request_id
        )
    )


def _answer_stale(context: Any, response: Any, fault: Fault, original: dict[str, Any]) -> None:
    from localstack.aws.protocol.serializer import create_serializer

    cutoff = datetime.datetime.now(datetime.UTC) - datetime.timedelta(seconds=fault.seconds or 0.0)
    view = stale_list.as_of(list(context.service_response.get("executions", [])), cutoff)
    answer = stale_list.page(view, original)
    context.service_response = answer
    serializer = create_serializer(context.service, context.protocol)
    response.update_from(
        serializer.serialize_to_response(
            answer, context.operation, context.request.headers, context.request_id
        )
    )


def _redeliver(context: Any) -> None:
    """Make the received messages visible again, so the next receive gets them too."""
    from localstack.aws.connect import connect_to

    messages = context.service_response.get("Messages") or []
    if not messages:
        return
    queue_url = context.service_request["QueueUrl"]
    sqs = connect_to(aws_access_key_id=context.account_id, region_name=context.region).sqs
    _own_calls.on = True
    try:
        for message in messages:
            try:
                sqs.change_message_visibility(
                    QueueUrl=queue_url,
                    ReceiptHandle=message["ReceiptHandle"],
                    VisibilityTimeout=0,
                )
            except Exception:  # a message deleted meanwhile: nothing to redeliver
                LOG.debug("fault injector: could not redeliver %s", message.get("MessageId"))
    finally:
        _own_calls.on = False
