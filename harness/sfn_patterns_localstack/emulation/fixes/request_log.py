"""No log line per request when nobody keeps the log (``SFNP_REQUEST_LOG=0``).

LocalStack 4.14.0 logs every request at INFO (``AWS sqs.ReceiveMessage => 200``)
through ``localstack.request.*`` loggers, with its request and response as the
record's ``extra`` (``localstack.aws.handlers.logging.ResponseLogger``, the same as
4.9.2's). A test session's LocalStack writes its log into its work directory, which
``server.LocalStack.stop`` removes: nobody reads those lines, yet each costs a
formatted record and a write (0.3 CPU-second on tests/job_poller/test_example.py,
emulation/profiler.py, on 4.9.2). ``server.start`` sets ``SFNP_REQUEST_LOG=0`` unless
the log is kept (a daemon's log, ``SFNP_KEEP_LOCALSTACK_LOG=1``); the loggers then pass
WARNING and above only. Everything else LocalStack and the plugins log is unchanged.

Quieting the loggers alone still left LocalStack 4.14.0's ``ResponseLogger._log``
building each record's ``extra`` (copies of the request's and the response's headers,
the parsed input and output) before the logger dropped it: 2.1 % of the emulator's
time on DynamoDB GetItems (``py-spy --gil``, on 4.9.2). ``_log`` now returns first
when none of its four loggers would pass an INFO record: so it does nothing exactly
when its records would have gone nowhere. AWS writes no such log; only the emulator's
CPU changes.
"""

from __future__ import annotations

import functools
import logging
import os
from typing import Any

REQUEST_LOGGERS = ("localstack.request",)
LOG = logging.getLogger(__name__)


def apply() -> bool:
    """Quiet the request loggers when ``SFNP_REQUEST_LOG=0``; whether it did."""
    if os.environ.get("SFNP_REQUEST_LOG", "1") != "0":
        return False
    for name in REQUEST_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    _skip_unlogged_records()
    return True


def _skip_unlogged_records() -> None:
    """``ResponseLogger._log`` builds no record that none of its loggers would pass."""
    try:
        from localstack.aws.handlers.logging import ResponseLogger
    except ImportError:
        return
    original = getattr(ResponseLogger, "_log", None)
    if original is None:
        LOG.warning("sfn-patterns request log patch: no ResponseLogger._log")
        return
    if getattr(original, "_sfnp_patched", False):
        return

    @functools.wraps(original)
    def _log(self: Any, context: Any, response: Any) -> None:
        loggers = (
            self.aws_logger,
            self.http_logger,
            self.internal_aws_logger,
            self.internal_http_logger,
        )
        if any(logger.isEnabledFor(logging.INFO) for logger in loggers):
            original(self, context, response)

    _log._sfnp_patched = True  # type: ignore[attr-defined]
    ResponseLogger._log = _log
