"""No log line per request when nobody keeps the log (``SFNP_REQUEST_LOG=0``).

LocalStack logs every request at INFO (``AWS sqs.ReceiveMessage => 200``) through
``localstack.request.*`` loggers, with its request and response as the record's
``extra``. A test session's LocalStack writes its log into its work directory, which
``server.LocalStack.stop`` removes: nobody reads those lines, yet each costs a
formatted record and a write (0.3 CPU-second on tests/job_poller/test_example.py,
emulation/profiler.py). ``server.start`` sets ``SFNP_REQUEST_LOG=0`` unless the log is
kept (a daemon's log, ``SFNP_KEEP_LOCALSTACK_LOG=1``); the loggers then pass WARNING
and above only. Everything else LocalStack and the plugins log is unchanged.
"""

from __future__ import annotations

import logging
import os

REQUEST_LOGGERS = ("localstack.request",)


def apply() -> bool:
    """Quiet the request loggers when ``SFNP_REQUEST_LOG=0``; whether it did."""
    if os.environ.get("SFNP_REQUEST_LOG", "1") != "0":
        return False
    for name in REQUEST_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    return True
