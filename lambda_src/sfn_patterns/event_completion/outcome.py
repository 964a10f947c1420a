"""Send a parked task its outcome; a token that no longer waits is not an error.

A token stops waiting when its task timed out (the fallback took over), when the
execution ended or was stopped, or when the other side already answered. AWS then
answers TaskTimedOut, InvalidToken or TaskDoesNotExist (LocalStack 4.14.0 answers
``{}`` for a timed-out task and InvalidToken for a finished execution): the job's
end is then found by the fallback check, so these are ignored.
"""

from __future__ import annotations

import json
from typing import Any

from botocore.exceptions import ClientError

GONE_TOKEN_ERRORS = frozenset({"TaskTimedOut", "InvalidToken", "TaskDoesNotExist"})


def send_status(sfn: Any, token: str, status: str, result: Any) -> bool:
    """SendTaskSuccess with ``{"status", "result"}``; False when the token no longer waits."""
    try:
        sfn.send_task_success(
            taskToken=token, output=json.dumps({"status": status, "result": result}, default=str)
        )
    except ClientError as error:
        if error.response["Error"]["Code"] in GONE_TOKEN_ERRORS:
            return False
        raise
    return True
