"""Resource and trust policies: what a service may do to a resource, who may assume a role.

When EventBridge invokes a Lambda function or sends to a queue without a target role,
AWS decides the call on the resource's own policy alone: the function policy that
``aws_lambda_permission`` writes (with its ``SourceArn``/``SourceAccount`` conditions),
or the queue policy. LocalStack's internal clients mark such calls with the service
principal and source ARN (``InternalRequestParameters``, the ``x-localstack-data``
header), which is what this module is given.

``sts:AssumeRole`` is decided on the target role's trust policy as well: a service
(``states.amazonaws.com``, ``lambda.amazonaws.com``) may only assume a role that trusts
it, and a role session needs its own identity policy *and* the trust policy.
"""

from __future__ import annotations

from collections.abc import Callable

from sfn_patterns_localstack.emulation.iam.actions import Authorization
from sfn_patterns_localstack.emulation.iam.policy import (
    Decision,
    NamedPolicy,
    Principal,
    Request,
    evaluate,
)
from sfn_patterns_localstack.emulation.iam.principals import parse_document

# A resource's policy, looked up by (action, resource ARN); None when it has none.
PolicyLookup = Callable[[str, str], NamedPolicy | None]


def service_principal_name(short: str, partition: str = "aws") -> str:
    """LocalStack's short service principal (``events``) as policies spell it."""
    if "." in short:
        return short
    suffix = "amazonaws.com.cn" if partition == "aws-cn" else "amazonaws.com"
    return f"{short}.{suffix}"


def decide_resource(
    policy: NamedPolicy | None,
    authorization: Authorization,
    principal: Principal,
    context: dict[str, str],
) -> Decision:
    """Decide one call on the resource policy alone (no policy: implicit deny)."""
    if policy is None:
        return Decision(allowed=False, explicit=False)
    request = Request(
        action=authorization.action,
        resource=authorization.resource,
        context={**context, **authorization.context},
        principal=principal,
    )
    return evaluate([policy], request)


# -- the stores LocalStack 4.14.0 keeps resource policies in ---------------------------
def localstack_resource_policy(action: str, resource: str) -> NamedPolicy | None:
    """The function policy or queue policy of ``resource``, read from LocalStack's stores."""
    service = action.split(":", 1)[0].lower()
    if service == "lambda":
        return _function_policy(resource)
    if service == "sqs":
        return _queue_policy(resource)
    return None


def _function_policy(function_arn: str) -> NamedPolicy | None:
    from localstack.services.lambda_.invocation.models import lambda_stores

    parts = function_arn.split(":")
    if len(parts) < 7:
        return None
    region, account, name = parts[3], parts[4], parts[6]
    qualifier = parts[7] if len(parts) > 7 else "$LATEST"
    function = lambda_stores[account][region].functions.get(name)
    if function is None:
        return None
    permission = function.permissions.get(qualifier)
    if permission is None:
        return None
    policy = permission.policy
    document = {"Version": policy.Version, "Statement": list(policy.Statement)}
    return NamedPolicy(f"{function_arn} (function policy)", document)


def _queue_policy(queue_arn: str) -> NamedPolicy | None:
    from localstack.services.sqs.models import sqs_stores

    parts = queue_arn.split(":")
    if len(parts) < 6:
        return None
    region, account, name = parts[3], parts[4], parts[5]
    queue = sqs_stores[account][region].queues.get(name)
    text = queue.attributes.get("Policy") if queue is not None else None
    if not text:
        return None
    return NamedPolicy(f"{queue_arn} (queue policy)", parse_document(text))
