"""Each service's own throttling and server errors: code, HTTP status and message.

A client retries what it recognises: botocore's retry handlers and Step Functions'
``Retry`` match on the error code (``Lambda.TooManyRequestsException``,
``DynamoDB.ProvisionedThroughputExceededException``), so a generic 500 would test
nothing. The codes and statuses are the ones the services' API references and
botocore's models give (``error`` metadata where modelled, "Common Errors" otherwise).
"""

from __future__ import annotations

from typing import NamedTuple


class Error(NamedTuple):
    """An AWS error answer."""

    code: str
    status: int
    message: str


RATE = "Rate exceeded"
# DynamoDB's item operations answer ProvisionedThroughputExceededException (on-demand
# tables too); its control plane answers ThrottlingException.
DYNAMODB_ITEM_OPERATIONS = frozenset(
    {
        "GetItem",
        "PutItem",
        "UpdateItem",
        "DeleteItem",
        "Query",
        "Scan",
        "BatchGetItem",
        "BatchWriteItem",
        "TransactGetItems",
        "TransactWriteItems",
        "ExecuteStatement",
        "BatchExecuteStatement",
        "ExecuteTransaction",
    }
)
THROTTLE: dict[str, Error] = {
    "stepfunctions": Error("ThrottlingException", 400, RATE),
    "lambda": Error("TooManyRequestsException", 429, "Rate Exceeded."),
    "sqs": Error("RequestThrottled", 400, RATE),
    "events": Error("ThrottlingException", 400, RATE),
    "scheduler": Error("ThrottlingException", 429, RATE),
    "logs": Error("ThrottlingException", 400, RATE),
    "kms": Error("ThrottlingException", 400, RATE),
    "redshift-data": Error("ThrottlingException", 400, RATE),
    "s3": Error("SlowDown", 503, "Please reduce your request rate."),
    "sts": Error("Throttling", 400, RATE),
    "iam": Error("Throttling", 400, RATE),
}
DEFAULT_THROTTLE = Error("ThrottlingException", 400, RATE)
DYNAMODB_ITEM_THROTTLE = Error(
    "ProvisionedThroughputExceededException",
    400,
    "The level of configured provisioned throughput for the table was exceeded. "
    "Consider increasing your provisioning level with the UpdateTable API.",
)
INTERNAL: dict[str, Error] = {
    "dynamodb": Error("InternalServerError", 500, "Internal server error"),
    "lambda": Error(
        "ServiceException", 500, "The AWS Lambda service encountered an internal error."
    ),
    "events": Error("InternalException", 500, "An internal error occurred."),
    "redshift-data": Error("InternalServerException", 500, "An internal error occurred."),
    "scheduler": Error("InternalServerException", 500, "An internal error occurred."),
    "kms": Error("KMSInternalException", 500, "An internal error occurred."),
    "logs": Error("ServiceUnavailableException", 500, "The service cannot complete the request."),
    "s3": Error("InternalError", 500, "We encountered an internal error. Please try again."),
    "iam": Error("ServiceFailure", 500, "The request processing has failed."),
}
DEFAULT_INTERNAL = Error("InternalFailure", 500, "The request processing has failed.")
# A write of an item that a transaction holds; a transaction that met another one is
# cancelled instead (TransactionCanceledException, reason TransactionConflict).
TRANSACTION_CONFLICT = Error(
    "TransactionConflictException", 400, "Transaction is ongoing for the item"
)
TRANSACTION_CANCELED = Error(
    "TransactionCanceledException",
    400,
    "Transaction cancelled, please refer cancellation reasons for specific reasons",
)
UNAVAILABLE = Error(
    "ServiceUnavailable", 503, "The request has failed due to a temporary failure of the server."
)


def throttle(service: str, operation: str) -> Error:
    """What ``service`` answers when ``operation`` is throttled."""
    if service == "dynamodb":
        return DYNAMODB_ITEM_THROTTLE if operation in DYNAMODB_ITEM_OPERATIONS else DEFAULT_THROTTLE
    return THROTTLE.get(service, DEFAULT_THROTTLE)


def internal(service: str) -> Error:
    """What ``service`` answers when it fails internally (HTTP 500)."""
    return INTERNAL.get(service, DEFAULT_INTERNAL)
