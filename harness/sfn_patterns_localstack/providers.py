"""AWS service providers that replace LocalStack defaults needing downloads or Docker."""

from localstack.aws.api.dynamodb import DynamodbApi
from localstack.services.moto import MotoFallbackDispatcher
from localstack.services.plugins import Service, aws_provider


class MotoDynamoDBProvider(DynamodbApi):
    """Every DynamoDB operation falls through to moto's in-memory backend.

    LocalStack's own provider forwards to DynamoDB Local (a Java program it
    downloads on first use); moto implements the same API in-process, including
    conditional writes, transactions, GSIs, TTL settings and point-in-time
    recovery flags, which is what this project's patterns rely on.
    """


@aws_provider(api="dynamodb", name="moto")
def dynamodb_moto() -> Service:
    """Build the ``dynamodb:moto`` service (select with PROVIDER_OVERRIDE_DYNAMODB=moto)."""
    provider = MotoDynamoDBProvider()
    return Service.for_provider(provider, dispatch_table_factory=MotoFallbackDispatcher)
