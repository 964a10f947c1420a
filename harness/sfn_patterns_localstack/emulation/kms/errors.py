"""The error each service answers when KMS refuses it the key, naming the key.

The service passes KMS's own refusal on, wrapped in its protocol:

- DynamoDB: ``AccessDeniedException`` (400), "KMS key access denied error: " and KMS's
  message (as reported in aws/aws-cdk#10010, aws/aws-cdk#18616);
- SQS: ``KMS.AccessDeniedException`` (400) with KMS's message (SQS Developer Guide,
  "Troubleshoot access denied errors": "An error occurred (KMS.AccessDeniedException)
  when calling the SendMessage operation: User: ... is not authorized to perform:
  kms:GenerateDataKey on resource: arn:aws:kms:...");
- S3: ``AccessDenied`` (403) with KMS's message;
- Lambda: ``KMSAccessDeniedException`` (502), "Lambda was unable to decrypt the
  environment variables because KMS access was denied" (Invoke API reference); and
  ``InvalidParameterValueException`` (400) when the key cannot be configured;
- Step Functions: ``KmsAccessDeniedException`` (400), "Either your KMS key policy or API
  caller does not have the required permissions" (API reference), with KMS's message;
- CloudWatch Logs: ``AccessDeniedException`` (400), "The specified KMS key does not
  exist or is not allowed to be used with Arn 'LOG_GROUP_ARN'" (the answer Terraform
  users report for CreateLogGroup/AssociateKmsKey, hashicorp/terraform-provider-aws
  #29282).

KMS's message is ``iam.handler.denial_message`` on the key ARN ("User: ... is not
authorized to perform: kms:Decrypt on resource: arn:aws:kms:... because no
identity-based policy allows the kms:Decrypt action"), followed by the tail Java SDKs
add ("(Service: AWSKMS; Status Code: 400; Error Code: AccessDeniedException)"). Pure.
"""

from __future__ import annotations

from dataclasses import dataclass

_KMS_TAIL = " (Service: AWSKMS; Status Code: 400; Error Code: AccessDeniedException)"


@dataclass(frozen=True)
class ServiceError:
    """An error as the service serializes it: code, HTTP status, message."""

    code: str
    status: int
    message: str


def service_error(  # noqa: PLR0911 - one answer per service
    service: str, operation: str, kms_message: str, resource: str
) -> ServiceError:
    """The error ``service`` answers ``operation`` with when KMS said ``kms_message``."""
    if service == "dynamodb":
        return ServiceError(
            "AccessDeniedException", 400, f"KMS key access denied error: {kms_message}{_KMS_TAIL}"
        )
    if service == "sqs":
        return ServiceError("KMS.AccessDeniedException", 400, kms_message + _KMS_TAIL)
    if service == "s3":
        return ServiceError("AccessDenied", 403, kms_message)
    if service == "lambda":
        if operation in ("CreateFunction", "UpdateFunctionConfiguration"):
            return ServiceError(
                "InvalidParameterValueException",
                400,
                "Lambda was unable to configure access to your environment variables because"
                " the KMS key is invalid for CreateGrant. Please check your KMS key settings."
                f" KMS Exception: AccessDeniedException KMS Message: {kms_message}",
            )
        return ServiceError(
            "KMSAccessDeniedException",
            502,
            "Lambda was unable to decrypt the environment variables because KMS access was"
            " denied. Please check the function's KMS key settings. KMS Exception:"
            f" AccessDeniedException KMS Message: {kms_message}",
        )
    if service == "stepfunctions":
        return ServiceError(
            "KmsAccessDeniedException",
            400,
            "Either your KMS key policy or API caller does not have the required"
            f" permissions. {kms_message}",
        )
    if service == "logs":
        return ServiceError(
            "AccessDeniedException",
            400,
            "The specified KMS key does not exist or is not allowed to be used with Arn"
            f" '{resource}'. {kms_message}",
        )
    return ServiceError("AccessDeniedException", 400, kms_message + _KMS_TAIL)
