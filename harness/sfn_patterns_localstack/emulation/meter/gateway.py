"""The meter's place in LocalStack's handler chain: one response handler.

It runs after every parsed request has been answered, calls between services
included (Step Functions' tasks, a Lambda's SDK calls, EventBridge's targets pass
the same chain), so a count is a request the service really served. The calling
role comes from the request's access key (:mod:`..callers`); the resource is named
without per-call parts (an execution ARN counts under its state machine, a queue URL
under its queue name), so the counters stay few however many items a run has.
"""

from __future__ import annotations

import logging
from typing import Any

from sfn_patterns_localstack.emulation import callers
from sfn_patterns_localstack.emulation.meter.meter import (
    ACCOUNT,
    METER,
    RESOURCE_PARAMETERS,
    Meter,
)

LOG = logging.getLogger(__name__)


def resource_name(value: str) -> str:
    """A resource parameter without its per-call part."""
    if value.startswith("arn:"):
        parts = value.split(":")
        if len(parts) >= 7 and parts[5] == "execution":
            return parts[6]  # the state machine of an execution
        tail = parts[-1]
        return tail.split("/")[1] if tail.startswith("table/") else tail
    if value.startswith("http"):
        return value.rstrip("/").rsplit("/", 1)[-1]  # a queue URL: the queue's name
    return value


def resource_of(request: dict[str, Any]) -> str:
    """The first resource parameter of a request, named as :func:`resource_name` does."""
    for name in RESOURCE_PARAMETERS:
        value = request.get(name)
        if isinstance(value, str):
            return resource_name(value)
    return ""


def written(operation: str, request: dict[str, Any]) -> list[tuple[str, str, dict]]:
    """(table, kind, key or item) of each item a DynamoDB write request touches.

    kind: ``put`` (the item given), ``update`` or ``delete`` (the key given).
    ``ConditionCheck`` entries of a transaction write nothing and are left out.
    """
    if operation == "PutItem":
        return [(request["TableName"], "put", request["Item"])]
    if operation == "UpdateItem":
        return [(request["TableName"], "update", request["Key"])]
    if operation == "DeleteItem":
        return [(request["TableName"], "delete", request["Key"])]
    if operation == "TransactWriteItems":
        found = []
        for entry in request.get("TransactItems", []):
            for name, kind, field_name in (
                ("Put", "put", "Item"),
                ("Update", "update", "Key"),
                ("Delete", "delete", "Key"),
            ):
                if name in entry:
                    found.append((entry[name]["TableName"], kind, entry[name][field_name]))
        return found
    if operation == "BatchWriteItem":
        return [
            (table, "put", entry["PutRequest"]["Item"])
            if "PutRequest" in entry
            else (table, "delete", entry["DeleteRequest"]["Key"])
            for table, entries in request.get("RequestItems", {}).items()
            for entry in entries
        ]
    return []


def item_sizes(context: Any, items: list[tuple[str, str, dict]]) -> list[tuple[str, int]]:
    """(table, bytes) of each item a successful DynamoDB write left, read back from moto."""
    from moto.dynamodb.models import dynamodb_backends

    backend = dynamodb_backends[context.account_id][context.region]
    sizes = []
    for table_name, kind, attributes in items:
        if kind == "delete":
            continue
        table = backend.get_table(table_name)
        key = {table.hash_key_attr: attributes[table.hash_key_attr]}
        if table.range_key_attr:
            key[table.range_key_attr] = attributes[table.range_key_attr]
        item = backend.get_item(table_name, key)
        if item is not None:
            sizes.append((resource_name(table.name), item.size()))
    return sizes


def on_response(chain: Any, context: Any, response: Any, meter: Meter = METER) -> None:
    """Count the request; record the size of the DynamoDB items it wrote."""
    if not meter.on:
        return
    if context.operation is None or context.service is None:
        return
    service = context.service.service_name
    operation = context.operation.name
    caller = callers.caller_of(context)
    role = caller.role_arn.rsplit("/", 1)[-1] if caller else ACCOUNT
    meter.count(service, operation, role, resource_of(context.service_request or {}))
    if service != "dynamodb":
        return
    items = written(operation, context.service_request or {})
    for table, _, _ in items:
        meter.item_write(resource_name(table), operation == "TransactWriteItems")
    if context.service_exception is not None:
        return
    if operation in ("Query", "Scan") and context.service_response is not None:
        answer = context.service_response
        meter.items_read(
            operation,
            resource_of(context.service_request or {}),
            int(answer.get("ScannedCount") or 0),
            int(answer.get("Count") or 0),
        )
        return
    try:
        for table, size in item_sizes(context, items):
            meter.item_written(table, size)
    except Exception:  # a table deleted meanwhile: no size to record
        LOG.debug("meter: no item size for %s", operation, exc_info=True)
