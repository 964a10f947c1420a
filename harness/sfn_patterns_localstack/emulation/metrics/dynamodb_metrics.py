"""``AWS/DynamoDB`` throttle and system-error metrics, from the answers DynamoDB gives.

DynamoDB here is moto behind LocalStack's gateway: it never throttles and never
fails, and nothing publishes ``AWS/DynamoDB`` metrics. The fault injector makes the
answers (a ``ProvisionedThroughputExceededException``, an ``InternalServerError``),
and this module counts them as AWS's DynamoDB metrics reference defines them, so the
modules' table alarms see a fault the way they would on AWS:

* ``ThrottledRequests`` (dimensions ``TableName``, ``Operation``): a request refused
  for throughput, 400 with ``ProvisionedThroughputExceededException``,
  ``ThrottlingException`` or ``RequestLimitExceeded``;
* ``ReadThrottleEvents`` or ``WriteThrottleEvents`` (``TableName``): the same request,
  by whether the operation reads or writes;
* ``SystemErrors`` (``TableName``, ``Operation``): a request answered with HTTP 5xx
  (injected before the call ran, or as ``answer_lost`` after it took effect).

As on AWS, a metric gets a datum only when it happens (no zeros): the modules' alarms
treat missing data as not breaching. One datum per table the request names (a batch
or transaction names several; AWS counts each table's throttled events). A request
that names no table (ListTables) gets none, as AWS publishes these per table.

A response handler in LocalStack's chain (after the fault injector's): every
DynamoDB answer passes it; any other service returns on its first comparison.
"""

from __future__ import annotations

import logging
from typing import Any

from .sink import SINK, Datum, dimensions

LOG = logging.getLogger(__name__)
NAMESPACE = "AWS/DynamoDB"
THROTTLE_CODES = frozenset(
    {"ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded"}
)
READ_OPERATIONS = frozenset(
    {"GetItem", "BatchGetItem", "Query", "Scan", "TransactGetItems", "ExecuteStatement"}
)
WRITE_OPERATIONS = frozenset(
    {
        "PutItem",
        "UpdateItem",
        "DeleteItem",
        "BatchWriteItem",
        "TransactWriteItems",
        "BatchExecuteStatement",
        "ExecuteTransaction",
    }
)
_TRANSACT_KINDS = ("Get", "Put", "Update", "Delete", "ConditionCheck")
_installed: list[bool] = []


def apply() -> bool:
    """Join LocalStack's response handlers once; False when LocalStack is not there."""
    try:
        from localstack.aws import handlers
    except ImportError:
        return False
    if not _installed:
        handlers.run_custom_response_handlers.append(on_response)
        _installed.append(True)
    return True


def on_response(chain: Any, context: Any, response: Any) -> None:
    """Count a throttled or failed DynamoDB request (nothing for any other answer)."""
    service = getattr(context, "service", None)
    if service is None or service.service_name != "dynamodb" or context.operation is None:
        return
    status = getattr(response, "status_code", 200)
    exception = getattr(context, "service_exception", None)
    code = getattr(exception, "code", None)
    if status < 500 and code not in THROTTLE_CODES:
        return
    data = answer_data(context.operation.name, context.service_request or {}, status, code)
    if data:
        SINK.put(context.account_id, context.region, data)


def answer_data(operation: str, request: dict, status: int, code: str | None) -> list[Datum]:
    """The data of one answer: ``status`` and error ``code`` of ``operation`` on ``request``."""
    data: list[Datum] = []
    for table in table_names(request):
        per_operation = dimensions(TableName=table, Operation=operation)
        if status >= 500:
            data.append(Datum(NAMESPACE, "SystemErrors", 1, per_operation, "Count"))
        elif code in THROTTLE_CODES:
            data.append(Datum(NAMESPACE, "ThrottledRequests", 1, per_operation, "Count"))
            kind = throttle_event_metric(operation)
            if kind:
                data.append(Datum(NAMESPACE, kind, 1, dimensions(TableName=table), "Count"))
    return data


def throttle_event_metric(operation: str) -> str | None:
    """``ReadThrottleEvents`` or ``WriteThrottleEvents`` for an item operation, else None."""
    if operation in READ_OPERATIONS:
        return "ReadThrottleEvents"
    if operation in WRITE_OPERATIONS:
        return "WriteThrottleEvents"
    return None


def table_names(request: dict) -> list[str]:
    """The tables a request names, each once, in the order it names them.

    ``TableName`` (item and table operations), the keys of ``RequestItems`` (batches),
    and each ``TransactItems`` entry's table. A table given by ARN is named by its
    last path part, as the metrics' ``TableName`` dimension is.
    """
    names: list[str] = []
    if isinstance(request.get("TableName"), str):
        names.append(request["TableName"])
    names.extend(request.get("RequestItems") or {})
    for item in request.get("TransactItems") or []:
        for kind in _TRANSACT_KINDS:
            table = (item.get(kind) or {}).get("TableName")
            if isinstance(table, str):
                names.append(table)
    plain = [name.rsplit("/", 1)[-1] if name.startswith("arn:") else name for name in names]
    return list(dict.fromkeys(plain))
