"""Errors whose class names become Step Functions error names (keep them stable)."""

from __future__ import annotations


class JobTimeoutError(Exception):
    """The job is still running after its last allowed park (the wait-count timeout).

    The same name as ``sfn_patterns.job_poller.errors.JobTimeoutError``: a task's
    Catch on ``JobTimeoutError`` routes both to the loop's timeout exit.
    """


class CompletionConfigError(Exception):
    """The handler's environment or a request is malformed (a deployment bug)."""
