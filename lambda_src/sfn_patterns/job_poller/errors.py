"""Error types whose class names become Step Functions error names.

A Lambda error reaches Step Functions as ``errorType`` = the exception's class
name, so the state machine's Retry and Catch rules match these names exactly:
keep them stable (the Terraform module and the ASL templates name them).
"""

from __future__ import annotations


class JobTimeoutError(Exception):
    """The job ran longer than the poller's timeout (start-time strategy).

    Raised by Get Job Status, caught by the poll loop's Catch and routed to the
    timeout exit, so only this loop times out, never the whole execution.
    """


class JobStillRunning(Exception):
    """The job is still running (retry polling): the Get Status task's Retry polls again.

    Raised instead of returning RUNNING when the state machine polls with
    ``polling = "retry"``: the Task's own Retry (IntervalSeconds = the poll interval,
    MaxAttempts = the wait count) then does the waiting, one transition per poll.
    Once the retries are used up the error reaches the Catch, which routes it to the
    loop's timeout exit. CloudWatch counts each one as a Lambda error: that is the
    price of the cheaper loop.
    """


class RetryableJobError(Exception):
    """A transient failure talking to the job's service; the Task retries it with backoff."""


class AdapterError(Exception):
    """The configured job adapter is missing, malformed or returned something unusable."""


# Normalised statuses the Choice state understands. Anything else an adapter
# reports is passed through unchanged and ends in the "Unknown Status" Fail state.
SUCCEEDED = "SUCCEEDED"
FAILED = "FAILED"
RUNNING = "RUNNING"
