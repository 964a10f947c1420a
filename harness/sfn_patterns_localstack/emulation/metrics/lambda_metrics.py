"""``AWS/Lambda`` metrics and EMF extraction for every invoke (LocalStack 4.14.0).

LocalStack publishes ``Invocations`` and ``Errors`` per invoke, each as an internal
PutMetricData request (see sink.py for the cost), and nothing else. AWS also
publishes ``Duration`` (milliseconds, per invoke) and ``Throttles`` (an invoke
refused for concurrency), and turns EMF log lines into metrics. The patch:

* sends LocalStack's two metrics to the sink instead of a request;
* wraps ``LambdaVersionManager.invoke``: ``Duration`` from the invoke's ``REPORT``
  line (the executor's own measure of the handler), ``Throttles`` when the invoke is
  refused with TooManyRequestsException, and the data of every EMF line the
  function printed.

Dimensions are ``FunctionName`` alone, as LocalStack's own metrics have them (AWS
adds ``Resource`` and ``ExecutedVersion`` sets, which the modules' alarms do not use).
"""

from __future__ import annotations

import functools
import logging
import re
from typing import Any

from sfn_patterns_localstack.emulation.pinned import LOCALSTACK_VERSION

from . import emf
from .sink import SINK, Datum, dimensions

LOG = logging.getLogger(__name__)
NAMESPACE = "AWS/Lambda"
_REPORT = re.compile(r"^REPORT RequestId: \S+\tDuration: ([0-9.]+) ms", re.MULTILINE)


def apply() -> bool:
    """Patch LocalStack 4.14.0 once; False (and nothing changed) on any other version."""
    try:
        from localstack import version
        from localstack.aws.api.lambda_ import TooManyRequestsException
        from localstack.services.lambda_.invocation import version_manager
    except ImportError:
        return False
    manager = version_manager.LambdaVersionManager
    if (
        version.__version__ != LOCALSTACK_VERSION
        or not hasattr(version_manager, "record_cw_metric_invocation")
        or not hasattr(version_manager, "record_cw_metric_error")
        or not hasattr(manager, "invoke")
    ):
        LOG.warning("sfn-patterns Lambda metrics not applied (localstack %s)", version.__version__)
        return False
    if getattr(manager.invoke, "_sfnp_patched", False):
        return True
    version_manager.record_cw_metric_invocation = record_invocation
    version_manager.record_cw_metric_error = record_error
    original = manager.invoke

    @functools.wraps(original)
    def invoke(self: Any, *, invocation: Any) -> Any:
        function_id = self.function_version.id
        try:
            result = original(self, invocation=invocation)
        except TooManyRequestsException:
            _put(function_id, [_datum("Throttles", 1, function_id.function_name)])
            raise
        _put(function_id, invoke_data(function_id.function_name, result.logs or ""))
        return result

    invoke._sfnp_patched = True
    manager.invoke = invoke
    return True


def invoke_data(function_name: str, logs: str) -> list[Datum]:
    """Duration from the REPORT line, and the data of the EMF lines, of one invoke."""
    data = [
        _datum("Duration", float(match.group(1)), function_name, "Milliseconds")
        for match in _REPORT.finditer(logs)
    ]
    for line in logs.splitlines():
        data.extend(emf.parse_line(line))
    return data


def record_invocation(function_name: str, account_id: str, region_name: str) -> None:
    """LocalStack's ``Invocations`` datum, through the sink."""
    SINK.put(account_id, region_name, [_datum("Invocations", 1, function_name)])


def record_error(function_name: str, account_id: str, region_name: str) -> None:
    """LocalStack's ``Invocations`` and ``Errors`` data of a failed invoke, through the sink."""
    SINK.put(
        account_id,
        region_name,
        [_datum("Invocations", 1, function_name), _datum("Errors", 1, function_name)],
    )


def _datum(name: str, value: float, function_name: str, unit: str = "Count") -> Datum:
    return Datum(NAMESPACE, name, value, dimensions(FunctionName=function_name), unit)


def _put(function_id: Any, data: list[Datum]) -> None:
    if data:
        SINK.put(function_id.account, function_id.region, data)
