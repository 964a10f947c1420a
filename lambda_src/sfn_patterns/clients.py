"""boto3 clients for the runtime: botocore's ``standard`` retry mode, bounded attempts.

Every AWS client the runtime's handlers build comes from here, so a throttled or
briefly failing call (``ThrottlingException``, ``ProvisionedThroughputExceededException``,
``TooManyRequestsException``, 5xx, a reset connection) is retried with exponential
backoff and full jitter a bounded number of times, and then raised: the handler fails,
and the Step Functions Task that invoked it retries or fails with a named error. A
retry mode left to the environment (``legacy`` unless ``AWS_RETRY_MODE`` says
otherwise) retries fewer errors and follows no budget of ours.

``standard`` rather than ``adaptive``: adaptive mode's client-side rate limiter
sleeps before sending once it has seen a throttle, which in a short-lived Lambda
spends the function's own timeout waiting; the Step Functions Retry above it is the
place for long waits. The pattern packages share this module (it is in every zip);
pynamodb models (status_table) take the same budget through ``max_retry_attempts``.

DynamoDB clients also retry a write refused for a transaction conflict alone, which
neither retry mode does: DynamoDB refuses a single-item write while a transaction on
the same item is in flight (``TransactionConflictException``), and cancels a
transaction that meets another one on an item (``TransactionCanceledException`` whose
reasons say ``TransactionConflict``). Nothing was written either way, so sending it
again is safe. The semaphore's lock item, the throttle's run lease and the DAG's run
item are written by several Lambdas at once, by transactions and single writes, as a
status table's task is by its workers: on AWS, without this, two writers meeting
would fail an invocation. pynamodb builds its own client; the status table's store
registers the same handler on it (:func:`retry_conflicts`).

Reads of an execution's status go through :func:`execution_status`, which asks Step
Functions for the execution's metadata only: see its docstring.
"""

from __future__ import annotations

import random
from typing import Any

import boto3
from botocore.config import Config

# Total attempts of one call, the first included (botocore's ``total_max_attempts``;
# its ``max_attempts`` counts retries only): at most three retries, whose backoffs
# (random below 1, 2 and 4 s: full jitter) stay far inside any handler's timeout.
MAX_ATTEMPTS = 4
RETRIES = {"mode": "standard", "total_max_attempts": MAX_ATTEMPTS}


# Attempts of one call refused for a transaction conflict, the first included; the
# backoff is full jitter below 50 ms doubling per attempt (the other writer's
# transaction takes milliseconds).
CONFLICT_ATTEMPTS = 6
CONFLICT_BACKOFF = 0.05


def config() -> Config:
    """The botocore Config every runtime client uses (a new object: Config merges)."""
    return Config(retries=dict(RETRIES))


def client(service: str, session: Any = None, **kwargs: Any) -> Any:
    """A boto3 client for ``service`` with the bounded standard retries.

    ``session`` is a ``boto3.session.Session`` (for credentials of an assumed role);
    ``kwargs`` go to ``client()`` (credentials, region).
    """
    made = (session or boto3).client(service, config=config(), **kwargs)
    if service == "dynamodb":
        retry_conflicts(made)
    return made


def retry_conflicts(dynamodb: Any) -> Any:
    """Make a DynamoDB client built elsewhere (pynamodb's) resend conflicted calls too.

    Registered after botocore's own retry handler, which answers first, so this one
    decides only when botocore would not retry; once per client however often asked
    (a fixed ``unique_id``). Returns the client.
    """
    dynamodb.meta.events.register(
        "needs-retry.dynamodb", retry_transaction_conflicts, unique_id=_CONFLICT_HANDLER
    )
    return dynamodb


_CONFLICT_HANDLER = "sfn-patterns-transaction-conflicts"


def transaction_conflict(parsed: dict[str, Any]) -> bool:
    """Whether a DynamoDB error answer refused the call for a transaction conflict alone."""
    code = parsed.get("Error", {}).get("Code")
    if code == "TransactionConflictException":
        return True
    if code != "TransactionCanceledException":
        return False
    reasons = {r.get("Code") for r in parsed.get("CancellationReasons") or []} - {"None", None}
    return reasons == {"TransactionConflict"}


def retry_transaction_conflicts(response: Any = None, attempts: int = 1, **_: Any) -> float | None:
    """The backoff before resending a conflicted call (a botocore ``needs-retry`` handler)."""
    if response is None or attempts >= CONFLICT_ATTEMPTS:
        return None
    if not transaction_conflict(response[1]):
        return None
    return random.uniform(0, CONFLICT_BACKOFF * 2 ** (attempts - 1))


# DescribeExecution's parameter that leaves the execution's input and output out, and
# the value that does.
INCLUDED_DATA = "includedData"
METADATA_ONLY = "METADATA_ONLY"


def execution_status(sfn: Any, execution_arn: str) -> str:
    """The status of a Step Functions execution, read without its input and output.

    A state machine encrypted with its own customer managed key returns its execution's
    input and output only to a caller allowed ``kms:Decrypt`` on that key. The runtime
    reads executions of machines it does not own (a semaphore's embedders and its
    wrapper's target, a throttle's target) and needs only their status, so every status
    read asks with ``includedData="METADATA_ONLY"``: Step Functions then decrypts
    nothing, and no role of ours needs the key of someone else's machine.

    The parameter is sent only when the client's botocore model has it: the boto3 that
    the Lambda Python runtimes bundle lags the releases, and a model older than the
    parameter refuses it before sending (``ParamValidationError``). Such a client sends
    the plain call, which needs the key as before. A client without a botocore model (a
    test's stand-in) is sent the parameter: nothing on our side can refuse it.
    ``ClientError`` (``ExecutionDoesNotExist``, ``AccessDeniedException``, ...) is
    raised to the caller, which knows what each means for it.
    """
    arguments = {"executionArn": execution_arn}
    if _describe_takes_included_data(sfn):
        arguments[INCLUDED_DATA] = METADATA_ONLY
    return str(sfn.describe_execution(**arguments)["status"])


def _describe_takes_included_data(sfn: Any) -> bool:
    """Whether ``sfn``'s botocore model of DescribeExecution has ``includedData``."""
    try:
        operation = sfn.meta.service_model.operation_model("DescribeExecution")
    except AttributeError:
        return True
    return INCLUDED_DATA in operation.input_shape.members
