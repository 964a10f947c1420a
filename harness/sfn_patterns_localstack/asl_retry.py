"""Static check: every Task retries the errors AWS recommends retrying.

Rules, per Task state (at any depth: Map item processors, Parallel branches):

* a Lambda invoke (``arn:<partition>:states:::lambda:invoke``, ``.waitForTaskToken``
  too, or a function ARN as the resource) retries ``Lambda.ServiceException``,
  ``Lambda.AWSLambdaException``, ``Lambda.SdkClientException`` (Step Functions'
  best practice "Handle Lambda service exceptions") and
  ``Lambda.TooManyRequestsException`` (the invoke's throttle);
* an ``aws-sdk:<service>:<action>`` Task retries its service's throttling errors, named
  by the aws-sdk rule ``<Service>.<ExceptionName>`` (PascalCase, an ``Exception``
  suffix always added; an error the service's SDK does not model arrives as
  ``<Service>.<Service>Exception``, which is how Step Functions' and the Redshift Data
  API's ``ThrottlingException`` arrive);
* an optimised DynamoDB Task (``arn:<partition>:states:::dynamodb:<action>``) retries
  ``DynamoDB.ProvisionedThroughputExceededException``, ``DynamoDB.ThrottlingException``
  and ``DynamoDB.RequestLimitExceeded``;
* an optimised Step Functions Task (``arn:<partition>:states:::states:startExecution``,
  any mode) retries a throttled StartExecution: ``StepFunctions.AWSStepFunctionsException``
  (optimised integrations name errors after the Java SDK v1 client, which does not
  model Step Functions' ThrottlingException, as ``DynamoDB.AmazonDynamoDBException`` for
  DynamoDB) and ``StepFunctions.ThrottlingException`` (the code itself, as LocalStack
  names it).

Each such error must be matched first by a retrier that names it (not by an earlier
``States.ALL`` or ``States.TaskFailed`` retrier, nor by one that gives up at once) and
that backs off (``BackoffRate`` above 1) with full jitter (``JitterStrategy: FULL``).
The names are this module's own, from AWS's documentation, not the patterns'
``templates/retry/policy.json``: the check is the oracle of that file.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

LAMBDA_ERRORS = (
    "Lambda.ServiceException",
    "Lambda.AWSLambdaException",
    "Lambda.SdkClientException",
    "Lambda.TooManyRequestsException",
)
# Throttling errors by integration: "dynamodb" and "states" are the optimised DynamoDB
# and Step Functions integrations, "aws-sdk:<service>" an AWS SDK integration.
THROTTLING: dict[str, tuple[str, ...]] = {
    "dynamodb": (
        "DynamoDB.ProvisionedThroughputExceededException",
        "DynamoDB.ThrottlingException",
        "DynamoDB.RequestLimitExceeded",
    ),
    "aws-sdk:dynamodb": (
        "DynamoDb.ProvisionedThroughputExceededException",
        "DynamoDb.ThrottlingException",
        "DynamoDb.RequestLimitExceededException",
    ),
    "states": ("StepFunctions.ThrottlingException", "StepFunctions.AWSStepFunctionsException"),
    "aws-sdk:sfn": ("Sfn.ThrottlingException", "Sfn.SfnException"),
    "aws-sdk:redshiftdata": (
        "RedshiftData.ThrottlingException",
        "RedshiftData.RedshiftDataException",
    ),
}
_INTEGRATION = re.compile(r"^arn:[a-z-]+:states:::(?P<integration>.+)$")
_FUNCTION = re.compile(r"^arn:[a-z-]+:lambda:[^:]*:[^:]*:function:")
# ASL defaults of a retrier's fields.
DEFAULT_MAX_ATTEMPTS = 3
DEFAULT_BACKOFF_RATE = 2.0


@dataclass(frozen=True)
class Finding:
    """A Task that does not retry an error as AWS recommends."""

    machine: str
    state: str
    resource: str
    error: str
    problem: str

    def __str__(self) -> str:
        return f"{self.machine}: {self.state!r} ({self.resource}) {self.error}: {self.problem}"


def required_errors(resource: str) -> tuple[str, ...] | None:
    """The errors a Task with this resource must retry (empty: none).

    None for a resource the check has no rule for: not an integration ARN, or an
    aws-sdk service it knows no names for (:func:`check` reports the latter).
    """
    if _FUNCTION.match(resource):
        return LAMBDA_ERRORS
    match = _INTEGRATION.match(resource)
    if not match:
        return None
    integration = match["integration"]
    if integration.split(".")[0] == "lambda:invoke":
        return LAMBDA_ERRORS
    if integration.startswith("aws-sdk:"):
        return THROTTLING.get(f"aws-sdk:{integration.split(':')[1]}")
    optimised = {"dynamodb:": "dynamodb", "states:startExecution": "states"}
    return next((THROTTLING[k] for p, k in optimised.items() if integration.startswith(p)), ())


def _matches(retrier: Mapping[str, Any], error: str) -> bool:
    names = retrier.get("ErrorEquals", [])
    return error in names or "States.ALL" in names or "States.TaskFailed" in names


def retry_problem(retriers: list[Mapping[str, Any]], error: str) -> str | None:
    """Why ``retriers`` (a Task's Retry) do not retry ``error`` as required; None if they do."""
    first = next((r for r in retriers if _matches(r, error)), None)
    if first is None:
        return "no retrier"
    if error not in first.get("ErrorEquals", []):
        return f"first matched by {first.get('ErrorEquals')}, which does not name it"
    if first.get("MaxAttempts", DEFAULT_MAX_ATTEMPTS) < 1:
        return "its retrier gives up at once (MaxAttempts 0)"
    if first.get("BackoffRate", DEFAULT_BACKOFF_RATE) <= 1:
        return f"its retrier does not back off (BackoffRate {first.get('BackoffRate')})"
    if first.get("JitterStrategy") != "FULL":
        return f"its retrier has no full jitter (JitterStrategy {first.get('JitterStrategy')})"
    return None


def tasks(definition: Mapping[str, Any], path: str = "") -> Iterator[tuple[str, Mapping[str, Any]]]:
    """``(state path, state)`` of every Task, nested Map and Parallel states included."""
    for name, state in definition.get("States", {}).items():
        here = f"{path}/{name}" if path else name
        if state.get("Type") == "Task":
            yield here, state
        for key in ("ItemProcessor", "Iterator"):
            if key in state:
                yield from tasks(state[key], here)
        for index, branch in enumerate(state.get("Branches", [])):
            yield from tasks(branch, f"{here}[{index}]")


def check(machine: str, definition: Mapping[str, Any]) -> list[Finding]:
    """Every Task of ``definition`` that does not retry what its integration requires."""
    findings = []
    for state_path, state in tasks(definition):
        resource = state.get("Resource", "")
        required = required_errors(resource)
        if required is None:
            if resource.split(":::")[-1].startswith("aws-sdk:"):
                findings.append(
                    Finding(
                        machine,
                        state_path,
                        resource,
                        "*",
                        "no throttling error names known for this aws-sdk service: "
                        "add them to sfn_patterns_localstack.asl_retry.THROTTLING",
                    )
                )
            continue
        retriers = list(state.get("Retry", []))
        for error in required:
            problem = retry_problem(retriers, error)
            if problem:
                findings.append(Finding(machine, state_path, resource, error, problem))
    return findings
