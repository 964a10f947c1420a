"""A Redshift Data API for LocalStack whose statements really run, on DuckDB.

LocalStack (community) has no Redshift Data API: 4.14.0, like 4.9.2, registers no
``redshift-data`` provider among its ``localstack.aws.provider`` entry points. Yet the
patterns' state machines call ``arn:aws:states:::aws-sdk:redshiftdata:executeStatement``
and poll ``describeStatement``; this provider (select it with
``PROVIDER_OVERRIDE_REDSHIFT_DATA=duckdb``) answers those calls with results
computed by an embedded SQL engine, so a test can check the numbers, not a stub.

Behaviour, as in the real API:

* ``ExecuteStatement`` / ``BatchExecuteStatement`` return an Id at once; the SQL
  runs on a pool of 16 worker threads. Beyond 16 running statements the rest wait
  SUBMITTED; beyond 500 active ones a request gets ActiveStatementsExceededException.
* One DuckDB database per (account, region, WorkgroupName or ClusterIdentifier,
  Database). It is attached under the database's name with a ``public`` schema as
  the default, so ``t``, ``public.t`` and ``dev.public.t`` all resolve. Other
  schemas must be created by the SQL (``CREATE SCHEMA IF NOT EXISTS agg``).
* Each request runs in its own transaction on its own DuckDB cursor: a batch's
  statements run in order and commit together or not at all; one ExecuteStatement
  may hold several ``;``-separated statements (the last one's result is kept).
  A statement that fails (unknown table, syntax error, write conflict) ends FAILED
  with DuckDB's message in ``Error``; it does not affect other statements.
* ``CancelStatement`` turns a queued or running statement ABORTED (its transaction
  rolls back, a running query is interrupted) and answers ``{"Status": true}``.
* ``Parameters`` (``:name`` placeholders with text values) bind as DuckDB
  parameters, typed by their context.
* Result sets use the Data API's typed fields (longValue, doubleValue,
  booleanValue, stringValue, blobValue, isNull); decimals, dates, timestamps and
  nested types come back as text, like Redshift returns them. Pages hold 1000
  records; ``NextToken`` fetches the next.

Test hint: a SQL comment ``/* sfnp:sleep=2.5 */`` or ``-- sfnp:sleep=2.5`` keeps
the (sub-)statement STARTED for that many seconds before its SQL runs, so poll
loops and CancelStatement can be observed; a cancel during that time aborts the
statement before it changes anything.

* ``WithEvent=true``: when the statement ends (FINISHED, FAILED or ABORTED) a
  "Redshift Data Statement Status Change" event (source ``aws.redshift-data``) goes
  to the account's default event bus, shaped as AWS documents it (detail:
  ``principal``, ``statementName``, ``statementId``, ``redshiftQueryId``, ``state``,
  ``rows``, ``expireAt``; ``resources``: the cluster's or workgroup's ARN, a
  workgroup's ending in its id, see :mod:`.workgroups`). Published from a separate
  thread, in the order statements end; like AWS, delivery is best effort.

Not emulated: sessions (SessionId, SessionKeepAliveSeconds), ResultFormat CSV and
GetStatementResultV2, DescribeTable/ListDatabases/ListSchemas/ListTables,
IAM/secret authentication (accepted and echoed only).

LocalStack quirk handled here: its Step Functions aws-sdk integration turns the
ARN's service name into a boto3 client name verbatim, and ``redshiftdata`` is
not one (boto3 says ``redshift-data``); importing this module (which LocalStack
does when it discovers its provider plugins at start-up) adds that mapping.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from localstack.aws.api import CommonServiceException, RequestContext
from localstack.services.plugins import Service, ServiceLifecycleHook, aws_provider

from sfn_patterns_localstack.emulation.redshift_data.engine import (
    MAX_BATCH_STATEMENTS,
    TERMINAL,
    DataApiError,
    Statement,
    SubStatement,
    Target,
    Warehouse,
    page,
)
from sfn_patterns_localstack.emulation.redshift_data.workgroups import partition_of, workgroup_arn

LOG = logging.getLogger(__name__)

Request = dict[str, Any]
Response = dict[str, Any]
EVENT_SOURCE = "aws.redshift-data"
EVENT_DETAIL_TYPE = "Redshift Data Statement Status Change"
# Results of a finished statement stay available for 24 hours (expireAt).
RESULT_RETENTION_SECONDS = 86400
STATUSES = frozenset({"SUBMITTED", "PICKED", "STARTED", "FINISHED", "ABORTED", "FAILED", "ALL"})


def teach_step_functions_redshift_data() -> None:
    """Let Step Functions' ``aws-sdk:redshiftdata:*`` tasks reach the ``redshift-data`` API.

    LocalStack 4.14.0 (``StateTaskService._SERVICE_NAME_SFN_TO_BOTO_OVERRIDES``, the same
    as 4.9.2's) maps only ``sfn``/``states`` to a different boto3 name, so without this
    a task fails with ``Unknown service: 'redshiftdata'`` before a request is sent. It
    also names the task's errors ``RedshiftData.<Exception>`` as AWS does (otherwise
    ``redshiftdata.<...>``: ``state_task_service_aws_sdk._SERVICE_ERROR_NAMES`` knows only
    ``dynamodb`` and ``sfn``).
    """
    try:
        from localstack.services.stepfunctions.asl.component.state.state_execution.state_task.service import (  # noqa: E501
            state_task_service,
            state_task_service_aws_sdk,
        )
    except ImportError:  # a LocalStack without Step Functions: nothing to teach
        return
    overrides = state_task_service.StateTaskService._SERVICE_NAME_SFN_TO_BOTO_OVERRIDES
    overrides.setdefault("redshiftdata", "redshift-data")
    state_task_service_aws_sdk._SERVICE_ERROR_NAMES.setdefault("redshiftdata", "RedshiftData")


teach_step_functions_redshift_data()


def _error(code: str, message: str) -> CommonServiceException:
    return CommonServiceException(code, message, status_code=400, sender_fault=True)


def _validation(message: str) -> CommonServiceException:
    return _error("ValidationException", message)


class RedshiftDataProvider(ServiceLifecycleHook):
    """The ``redshift-data`` operations; each handler takes ``(context, request)``.

    LocalStack generates no ASF API class for redshift-data, so the dispatch table
    is built by :meth:`dispatch_table` rather than from ``@handler`` methods.
    """

    service = "redshift-data"

    def __init__(
        self,
        warehouse: Warehouse | None = None,
        publish: Callable[[dict[str, Any], Target], None] | None = None,
    ) -> None:
        self.warehouse = warehouse or Warehouse()
        self.warehouse.on_end = self._announce
        self._publish = publish or _put_event
        self._announcer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rsd-events")
        self._closing = False

    def on_before_stop(self) -> None:
        """Abort running statements and release the DuckDB databases."""
        self._closing = True
        self.warehouse.close()
        self._announcer.shutdown(wait=False, cancel_futures=True)

    def _announce(self, statement: Statement) -> None:
        """Queue the status-change event of a statement run ``WithEvent``."""
        if statement.with_event and not self._closing:
            entry = status_change_event(statement)
            self._announcer.submit(self._safely_publish, entry, statement.target)

    def _safely_publish(self, entry: dict[str, Any], target: Target) -> None:
        try:
            self._publish(entry, target)
        except Exception:  # best effort, as on AWS: a lost event is not a failed statement
            LOG.exception("could not publish the status change of %s", entry.get("Detail"))

    def dispatch_table(self) -> dict[str, Callable[[RequestContext, Request], Response]]:
        """Operation name -> handler, for the skeleton; errors become API errors."""
        handlers = {
            "ExecuteStatement": self.execute_statement,
            "BatchExecuteStatement": self.batch_execute_statement,
            "DescribeStatement": self.describe_statement,
            "GetStatementResult": self.get_statement_result,
            "CancelStatement": self.cancel_statement,
            "ListStatements": self.list_statements,
        }
        return {name: _translating_errors(handler) for name, handler in handlers.items()}

    # -- operations ----------------------------------------------------------------------------
    def execute_statement(self, context: RequestContext, request: Request) -> Response:
        """Queue one SQL string (possibly several ``;``-separated statements)."""
        sql = request.get("Sql")
        if not isinstance(sql, str) or not sql.strip():
            raise _validation("Sql must be a non-empty string.")
        parameters = request.get("Parameters") or []
        names = [p.get("name") for p in parameters if isinstance(p, dict)]
        if len(names) != len(parameters) or not all(
            isinstance(p.get("name"), str) and isinstance(p.get("value"), str) for p in parameters
        ):
            raise _validation("Each parameter needs a name and a string value.")
        if len(set(names)) != len(names):
            raise _validation("Parameter names must be unique.")
        return self._submit(context, request, [sql], is_batch=False, parameters=parameters)

    def batch_execute_statement(self, context: RequestContext, request: Request) -> Response:
        """Queue SQL strings that run in order in one transaction."""
        sqls = request.get("Sqls")
        if (
            not isinstance(sqls, list)
            or not sqls
            or not all(isinstance(s, str) and s.strip() for s in sqls)
        ):
            raise _validation("Sqls must be a non-empty list of non-empty strings.")
        if len(sqls) > MAX_BATCH_STATEMENTS:
            raise _validation(f"A batch holds at most {MAX_BATCH_STATEMENTS} SQL statements.")
        return self._submit(context, request, sqls, is_batch=True, parameters=None)

    def describe_statement(self, context: RequestContext, request: Request) -> Response:
        """The state of a statement (or, with ``<id>:<n>``, of a batch's sub-statement)."""
        statement, sub = self._find(context, request)
        if ":" in request["Id"]:
            described = self._describe_sub(sub)
            return {**self._describe_common(statement), **described}
        response = self._describe_common(statement)
        if statement.is_batch:
            finished = [s for s in statement.subs if s.result_rows >= 0]
            response.update(
                HasResultSet=any(s.has_result_set for s in statement.subs),
                ResultRows=sum(s.result_rows for s in finished) if finished else -1,
                ResultSize=sum(max(s.result_size, 0) for s in statement.subs),
                RedshiftQueryId=sub.redshift_query_id,
                Duration=_duration(statement),
                SubStatements=[self._describe_sub(s) for s in statement.subs],
            )
        else:
            response.update(
                {k: v for k, v in self._describe_sub(sub).items() if k not in ("Id", "CreatedAt")}
            )
        response.update(
            Status=statement.status,
            UpdatedAt=statement.updated_at,
        )
        if statement.error:
            response["Error"] = statement.error
        else:
            response.pop("Error", None)
        return response

    def get_statement_result(self, context: RequestContext, request: Request) -> Response:
        """A page of a finished statement's records (a batch needs ``<id>:<n>``)."""
        statement, sub = self._find(context, request)
        if statement.is_batch and ":" not in request["Id"]:
            raise _error(
                "ValidationException",
                "Use the Id of a sub-statement (<id>:<n>) to get a batch's results.",
            )
        return self.warehouse.result_page(sub, request.get("NextToken"))

    def cancel_statement(self, context: RequestContext, request: Request) -> Response:
        """Abort a queued or running statement."""
        statement_id = request.get("Id")
        if not isinstance(statement_id, str) or not statement_id:
            raise _validation("Id is required.")
        self.warehouse.cancel(context.account_id, context.region, statement_id.split(":")[0])
        return {"Status": True}

    def list_statements(self, context: RequestContext, request: Request) -> Response:
        """The caller's statements, newest first, filtered like the real API."""
        status = request.get("Status") or "ALL"
        if status not in STATUSES:
            raise _validation(f"Status must be one of {sorted(STATUSES)}.")
        max_results = int(request.get("MaxResults") or 100)
        if not 0 <= max_results <= 100:
            raise _validation("MaxResults must be between 0 and 100.")
        name_prefix = request.get("StatementName")
        wanted = {
            "ClusterIdentifier": request.get("ClusterIdentifier"),
            "WorkgroupName": request.get("WorkgroupName"),
            "Database": request.get("Database"),
        }
        selected = []
        for statement in self.warehouse.statements(context.account_id, context.region):
            target = statement.target
            actual = {
                "ClusterIdentifier": target.cluster_identifier,
                "WorkgroupName": target.workgroup_name,
                "Database": target.database,
            }
            if status not in ("ALL", statement.status):
                continue
            if name_prefix and not (statement.statement_name or "").startswith(name_prefix):
                continue
            if any(value and actual[key] != value for key, value in wanted.items()):
                continue
            selected.append(self._summary(statement))
        key = f"list:{context.account_id}:{status}:{name_prefix}"
        chunk, token = page(selected, request.get("NextToken"), max_results or 100, key)
        response: Response = {"Statements": chunk}
        if token:
            response["NextToken"] = token
        return response

    # -- helpers -------------------------------------------------------------------------------
    def _submit(
        self,
        context: RequestContext,
        request: Request,
        sqls: list[str],
        *,
        is_batch: bool,
        parameters: list[dict[str, str]] | None,
    ) -> Response:
        if request.get("SessionId") or request.get("SessionKeepAliveSeconds"):
            raise _validation("Sessions are not supported by the sfn-patterns emulator.")
        cluster, workgroup = request.get("ClusterIdentifier"), request.get("WorkgroupName")
        if bool(cluster) == bool(workgroup):
            raise _validation("Exactly one of ClusterIdentifier or WorkgroupName is required.")
        database = request.get("Database")
        if not isinstance(database, str) or not database:
            raise _validation("Database is required.")
        if workgroup and request.get("DbUser"):
            raise _validation("DbUser is not supported for a serverless workgroup.")
        target = Target(
            account=context.account_id,
            region=context.region,
            database=database,
            cluster_identifier=cluster,
            workgroup_name=workgroup,
        )
        statement = self.warehouse.submit(
            target,
            sqls,
            is_batch=is_batch,
            parameters=parameters,
            statement_name=request.get("StatementName"),
            secret_arn=request.get("SecretArn"),
            db_user=request.get("DbUser"),
            with_event=bool(request.get("WithEvent")),
            client_token=request.get("ClientToken"),
        )
        response: Response = {"Id": statement.id, "CreatedAt": statement.created_at}
        response.update(_echo(statement))
        if request.get("DbGroups"):
            response["DbGroups"] = request["DbGroups"]
        return response

    def _find(self, context: RequestContext, request: Request) -> tuple[Statement, SubStatement]:
        statement_id = request.get("Id")
        if not isinstance(statement_id, str) or not statement_id:
            raise _validation("Id is required.")
        return self.warehouse.get(context.account_id, context.region, statement_id)

    @staticmethod
    def _describe_common(statement: Statement) -> Response:
        response: Response = {
            "Id": statement.id,
            "CreatedAt": statement.created_at,
            "QueryString": statement.query_string,
            "RedshiftPid": statement.redshift_pid,
            "ResultFormat": "JSON",
        }
        response.update(_echo(statement))
        if statement.parameters:
            response["QueryParameters"] = statement.parameters
        return response

    @staticmethod
    def _describe_sub(sub: SubStatement) -> Response:
        response: Response = {
            "Id": sub.id,
            "CreatedAt": sub.created_at,
            "UpdatedAt": sub.updated_at,
            "Status": sub.status,
            "QueryString": sub.sql,
            "Duration": sub.duration_ns,
            "HasResultSet": sub.has_result_set,
            "ResultRows": sub.result_rows,
            "ResultSize": sub.result_size,
            "RedshiftQueryId": sub.redshift_query_id,
        }
        if sub.error:
            response["Error"] = sub.error
        return response

    @staticmethod
    def _summary(statement: Statement) -> Response:
        summary: Response = {
            "Id": statement.id,
            "CreatedAt": statement.created_at,
            "UpdatedAt": statement.updated_at,
            "Status": statement.status,
            "IsBatchStatement": statement.is_batch,
            "ResultFormat": "JSON",
        }
        if statement.is_batch:
            summary["QueryStrings"] = [sub.sql for sub in statement.subs]
        else:
            summary["QueryString"] = statement.subs[0].sql
        if statement.statement_name:
            summary["StatementName"] = statement.statement_name
        if statement.secret_arn:
            summary["SecretArn"] = statement.secret_arn
        if statement.parameters:
            summary["QueryParameters"] = statement.parameters
        return summary


def _echo(statement: Statement) -> Response:
    """The request's target and credentials, echoed back as the real API does."""
    target = statement.target
    echoed = {
        "ClusterIdentifier": target.cluster_identifier,
        "WorkgroupName": target.workgroup_name,
        "Database": target.database,
        "DbUser": statement.db_user,
        "SecretArn": statement.secret_arn,
    }
    return {key: value for key, value in echoed.items() if value}


def status_change_event(statement: Statement) -> dict[str, Any]:
    """The PutEvents entry of a statement's "Redshift Data Statement Status Change" event."""
    target = statement.target
    partition = partition_of(target.region)
    if target.cluster_identifier:
        resource = (
            f"arn:{partition}:redshift:{target.region}:{target.account}:cluster:"
            f"{target.cluster_identifier}"
        )
    else:
        resource = workgroup_arn(target.workgroup_name or "", target.account, target.region)
    finished = [sub for sub in statement.subs if sub.result_rows >= 0]
    detail: dict[str, Any] = {
        "principal": f"arn:{partition}:iam::{target.account}:root",
        "statementId": statement.id,
        "redshiftQueryId": statement.subs[-1].redshift_query_id or -1,
        "state": statement.status,
        "rows": sum(sub.result_rows for sub in finished) if finished else -1,
        "expireAt": int(time.time()) + RESULT_RETENTION_SECONDS,
    }
    if statement.statement_name:
        detail["statementName"] = statement.statement_name
    return {
        "Source": EVENT_SOURCE,
        "DetailType": EVENT_DETAIL_TYPE,
        "Resources": [resource],
        "Detail": json.dumps(detail),
    }


def _put_event(entry: dict[str, Any], target: Target) -> None:
    """PutEvents on the target account's default bus, through LocalStack's internal client."""
    from localstack.aws.connect import connect_to

    events = connect_to(aws_access_key_id=target.account, region_name=target.region).events
    events.put_events(Entries=[entry])


def _duration(statement: Statement) -> int:
    if statement.status not in TERMINAL:
        return -1
    return sum(max(sub.duration_ns, 0) for sub in statement.subs)


def _translating_errors(
    handler: Callable[[RequestContext, Request], Response],
) -> Callable[[RequestContext, Request], Response]:
    """Turn the warehouse's :class:`DataApiError` into the error response LocalStack serializes."""

    def call(context: RequestContext, request: Request) -> Response:
        try:
            return handler(context, request or {})
        except DataApiError as error:
            raise _error(error.code, error.message) from error

    call.__name__ = getattr(handler, "__name__", "handler")
    return call


@aws_provider(api="redshift-data", name="duckdb")
def redshift_data_duckdb() -> Service:
    """Build the ``redshift-data:duckdb`` service (PROVIDER_OVERRIDE_REDSHIFT_DATA=duckdb)."""
    teach_step_functions_redshift_data()
    provider = RedshiftDataProvider()
    return Service.for_provider(provider, dispatch_table_factory=lambda p: p.dispatch_table())


__all__ = [
    "RedshiftDataProvider",
    "redshift_data_duckdb",
    "status_change_event",
    "teach_step_functions_redshift_data",
]
