"""A demo critical section: record when this execution entered and left it.

The example runs it between acquire and release. Each call writes its enter
time, sleeps, then writes its leave time to ``RECORD_TABLE``, so tests can
count the holders that were inside at once from the holders' own timestamps.
"""

from __future__ import annotations

import os
import time
from typing import Any

import boto3


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """Record enter, sleep ``sleep_seconds``, record leave; raise if ``fail`` is set.

    The event is ``{"execution_id": ..., "input": {"sleep_seconds": 1, "fail": ...}}``.
    """
    table = os.environ["RECORD_TABLE"]
    execution_id = event["execution_id"]
    options = event.get("input") or {}
    sleep_seconds = float(options.get("sleep_seconds", 1))
    dynamodb = boto3.client("dynamodb")
    entered = time.time()
    dynamodb.put_item(
        TableName=table,
        Item={"execution_id": {"S": execution_id}, "entered_at": {"N": repr(entered)}},
    )
    time.sleep(sleep_seconds)
    left = time.time()
    dynamodb.update_item(
        TableName=table,
        Key={"execution_id": {"S": execution_id}},
        UpdateExpression="SET left_at = :left",
        ExpressionAttributeValues={":left": {"N": repr(left)}},
    )
    if options.get("fail"):
        raise RuntimeError(f"asked to fail: {options['fail']}")
    return {"execution_id": execution_id, "entered_at": entered, "left_at": left}
