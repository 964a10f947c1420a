"""Load the user's job adapter: a Python callable in the zip, or a Lambda invoked synchronously.

The generic Run Job and Get Job Status Lambdas own the plumbing (context object,
start time, timeout, status normalisation); an adapter only knows its service:

* ``start(request) -> dict``: start the job, return a JSON handle (job id, ARN, ...);
* ``status(request) -> dict``: return ``{"status": "RUNNING" | "SUCCEEDED" | "FAILED", ...}``.

A spec is ``"package.module:function"`` (imported from the deployment package) or a
Lambda ARN, invoked with ``{"action": "start" | "status", **request}``; a Lambda
adapter that fails with ``errorType`` RetryableJobError is retried like a local one.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from typing import Any

from sfn_patterns import clients

from .errors import AdapterError, RetryableJobError

Adapter = Callable[[dict[str, Any]], dict[str, Any]]


def load(spec: str, action: str) -> Adapter:
    """Resolve an adapter spec to a callable; ``action`` names it for a Lambda adapter."""
    spec = (spec or "").strip()
    if spec.startswith("arn:"):
        return _lambda_adapter(spec, action)
    module_name, sep, function_name = spec.partition(":")
    if not sep or not module_name or not function_name:
        raise AdapterError(f"adapter {spec!r} must be 'package.module:function' or a Lambda ARN")
    try:
        function = getattr(importlib.import_module(module_name), function_name)
    except (ImportError, AttributeError) as error:
        raise AdapterError(f"adapter {spec!r} cannot be imported: {error}") from error
    if not callable(function):
        raise AdapterError(f"adapter {spec!r} is not callable")
    return function


def _lambda_adapter(function_arn: str, action: str, client: Any = None) -> Adapter:
    def invoke(request: dict[str, Any]) -> dict[str, Any]:
        lambda_client = client or clients.client("lambda")
        response = lambda_client.invoke(
            FunctionName=function_arn,
            InvocationType="RequestResponse",
            Payload=json.dumps({"action": action, **request}).encode("utf-8"),
        )
        payload = json.loads(response["Payload"].read() or b"null")
        if response.get("FunctionError"):
            error_type = (payload or {}).get("errorType", "Error")
            message = (payload or {}).get("errorMessage", "")
            if error_type == RetryableJobError.__name__:
                raise RetryableJobError(message)
            raise AdapterError(f"adapter {function_arn} failed: {error_type}: {message}")
        if not isinstance(payload, dict):
            raise AdapterError(f"adapter {function_arn} returned {payload!r}, not a JSON object")
        return payload

    return invoke
