"""AWS service providers that replace LocalStack defaults needing downloads or Docker."""

from __future__ import annotations

import threading
from collections.abc import Callable

from localstack.aws.api.dynamodb import DynamodbApi
from localstack.aws.skeleton import DispatchTable
from localstack.services.moto import MotoFallbackDispatcher
from localstack.services.plugins import Service, aws_provider

from sfn_patterns_localstack import asl_recorder
from sfn_patterns_localstack.emulation.faults import install as faults_install
from sfn_patterns_localstack.emulation.fixes import (
    events_rule_state,
    http_server,
    lambda_async,
    lambda_code_url,
    lambda_delete_failed,
    lambda_kms_key_arn,
    moto_dispatch,
    moto_expression_cache,
    moto_query_partition,
    moto_transaction_copy,
    moto_update_copy,
    parser_cache,
    region_lookup,
    request_log,
    serializer_mime,
    service_catalog,
    sfn_client_cache,
    sfn_encryption_configuration,
    sfn_executions_snapshot,
    sfn_parse_cache,
    sfn_sdk_error_names,
    sfn_stop,
    sfn_task_timeout,
    sfn_token_index,
    sfn_variable_sample,
    sns_sqs_retry,
    store_attributes,
    thread_stacks,
)
from sfn_patterns_localstack.emulation.iam import handler as iam_handler
from sfn_patterns_localstack.emulation.kms import install as kms_install
from sfn_patterns_localstack.emulation.meter import routes as meter_routes
from sfn_patterns_localstack.emulation.metrics import install as metrics_install
from sfn_patterns_localstack.server import is_stock


# LocalStack imports every provider entry point's module at start-up, before it
# serves a request: the place to fix its Step Functions' StopExecution of an
# execution parked on a task token (see fixes.sfn_stop), to parse each definition
# once rather than once per execution (see sfn_parse_cache), to reuse a task's
# client per role (see sfn_client_cache), to spare moto's UpdateItem a copy of the
# whole item (see moto_update_copy) and its TransactWriteItems a copy of whole tables
# (see moto_transaction_copy), to parse each DynamoDB expression once rather than
# twice a request (see moto_expression_cache), to make a Query read its partition, not
# list and sort the whole table (see moto_query_partition), to make a disabled
# EventBridge rule deliver nothing (see fixes.events_rule_state), and to name an
# aws-sdk Task's error after the service's error code, as AWS does (see
# fixes.sfn_sdk_error_names). Under the test
# suite, every definition Step Functions accepts is also recorded for asl-validator
# (see asl_recorder). Three cut LocalStack's own work: the service catalog index is
# built once per LocalStack/botocore version, not once per LocalStack (see
# fixes.service_catalog), a service's regions come from one botocore session (see
# fixes.region_lookup), and GetFunction presigns its code URL with one S3 client (see
# fixes.lambda_code_url). A log nobody keeps gets no line per request (fixes.request_log),
# and the HTTP server parses no form body and writes no access log (fixes.http_server).
# moto finds a request's handler without listing its class's members each time
# (fixes.moto_dispatch); a response's content type is negotiated once per distinct
# Accept and Content-Type (fixes.serializer_mime). SNS retries a failed delivery to an
# SQS queue, as AWS's delivery policy does (fixes.sns_sqs_retry). A Task attempt has
# one outcome: a task that lost to its timeout records nothing more
# (fixes.sfn_task_timeout). SendTaskSuccess and the other calls that look through
# every execution loop over a snapshot, not the dict StartExecution grows
# (fixes.sfn_executions_snapshot), and the three task-token calls look the token's
# execution up instead of walking them all (fixes.sfn_token_index). A JSONPath
# variable read is answered in Python, not by JSONata on a Java VM, and returns the
# value as assigned (fixes.sfn_variable_sample). DeleteFunction
# deletes a function that failed to become Active (fixes.lambda_delete_failed). A
# service's request parser is built once, not by every request that arrives before it
# is cached (fixes.parser_cache),
# and the gateway queues a burst of connections rather than dropping their SYNs
# (fixes.listen_backlog; applied before the server listens, by emulation.startup).
# A stock LocalStack (server.start(stock=True)) gets none of this: it keeps only the
# providers below and the Lambda executor, which this machine has no Docker to replace.
def install_all() -> None:
    """Apply every fix and install every emulation (nothing in a stock LocalStack)."""
    service_catalog.apply()
    request_log.apply()
    http_server.apply()
    parser_cache.apply()
    region_lookup.apply()
    lambda_code_url.apply()
    lambda_delete_failed.apply()
    lambda_kms_key_arn.apply()
    sfn_encryption_configuration.apply()
    thread_stacks.apply()
    store_attributes.apply()
    sfn_task_timeout.apply()  # before sfn_stop, which wraps what it patches
    sfn_stop.apply()
    sfn_executions_snapshot.apply()
    sfn_token_index.apply()
    sfn_parse_cache.apply()
    sfn_variable_sample.apply()
    sfn_client_cache.apply()
    moto_update_copy.apply()
    moto_dispatch.apply()
    serializer_mime.apply()
    sns_sqs_retry.apply()
    moto_transaction_copy.apply()
    moto_expression_cache.apply()
    moto_query_partition.apply()
    lambda_async.apply()
    events_rule_state.apply()
    sfn_sdk_error_names.apply()
    asl_recorder.apply()
    # IAM enforcement of role sessions' calls (SFNP_IAM; see emulation/iam/handler.py),
    # and the KMS uses of services on customer managed keys (emulation/kms).
    iam_handler.install(kms_install.key_check)
    # The fault injector's handlers, route and delivery patches (after the fixes: its
    # EventBridge patch wraps the rule-state one), and the SFNP_FAULTS plan.
    faults_install.install()
    # The request meter (off until a benchmark switches it on at /_sfnp/meter).
    meter_routes.register()
    # CloudWatch metrics LocalStack does not publish (AWS/States, Lambda Duration and
    # Throttles, SQS message age, EMF log lines), and its own through one buffered sink
    # instead of a PutMetricData request each (see emulation/metrics/README.md).
    metrics_install.install()


if not is_stock():
    install_all()


class MotoDynamoDBProvider(DynamodbApi):
    """Every DynamoDB operation falls through to moto's in-memory backend.

    LocalStack's own provider forwards to DynamoDB Local (a Java program it
    downloads on first use); moto implements the same API in-process, including
    conditional writes, transactions, GSIs, TTL settings and point-in-time
    recovery flags, which is what this project's patterns rely on.
    """


def serialized(table: DispatchTable) -> DispatchTable:
    """Run the table's operations one at a time.

    moto checks an UpdateItem's condition and then writes without a lock, while
    LocalStack serves requests on several threads: two concurrent conditional
    updates of one item could both succeed (seen: 3 of 300 contended items).
    DynamoDB makes each single-item conditional write atomic, and the patterns'
    exactly-once guarantees depend on it, so every operation takes one lock.
    The cost is throughput under contention, which a local emulator can spare.
    """
    lock = threading.RLock()

    def locked(handler: Callable) -> Callable:
        def call(context, request):
            with lock:
                return handler(context, request)

        return call

    return {operation: locked(handler) for operation, handler in table.items()}


@aws_provider(api="dynamodb", name="moto")
def dynamodb_moto() -> Service:
    """Build the ``dynamodb:moto`` service (select with PROVIDER_OVERRIDE_DYNAMODB=moto)."""
    provider = MotoDynamoDBProvider()
    return Service.for_provider(
        provider,
        dispatch_table_factory=lambda p: serialized(MotoFallbackDispatcher(p)),
    )
