"""The runtime's AWS clients retry throttled and (DynamoDB) conflicted calls, boundedly.

Oracle: what a real endpoint sees. A local HTTP server answers every request with
DynamoDB's throttling error; the test counts the requests one call makes through the
runtime's clients (``sfn_patterns.clients``) and through a status-table pynamodb model,
then checks the call raised. botocore's backoff sleeps are recorded instead of slept.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import json
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import botocore.endpoint
import botocore.session
import pytest
from botocore.exceptions import ClientError, ParamValidationError
from botocore.stub import Stubber

from sfn_patterns import clients
from sfn_patterns.status_table.model import make_model
from sfn_patterns.status_table.store import TaskStore

RUNTIME = Path(__file__).resolve().parents[1] / "lambda_src" / "sfn_patterns"
CREDENTIALS = {"aws_access_key_id": "test", "aws_secret_access_key": "test"}


class _Throttling(BaseHTTPRequestHandler):
    requests = 0

    def do_POST(self) -> None:
        type(self).requests += 1
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = json.dumps(
            {
                "__type": "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
                "message": "The level of configured provisioned throughput was exceeded.",
            }
        ).encode()
        self.send_response(400)
        self.send_header("Content-Type", "application/x-amz-json-1.0")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


class _RecordedSleeps:
    """botocore.endpoint's ``time``, with ``sleep`` recorded instead of slept.

    Only botocore's own reference is replaced: patching ``time.sleep`` itself would
    record every other thread's sleeps in this worker too (8,078 of them in one run).
    """

    def __init__(self, sleeps: list[float]) -> None:
        self.sleep = sleeps.append

    def __getattr__(self, name: str) -> object:
        return getattr(time, name)


@contextlib.contextmanager
def _local_endpoint(
    handler: type[BaseHTTPRequestHandler], monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[str, list[float]]]:
    """``handler`` serving on a local port: its URL, and botocore's backoffs (not slept)."""
    handler.requests = 0  # type: ignore[attr-defined]
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    sleeps: list[float] = []
    monkeypatch.setattr(botocore.endpoint, "time", _RecordedSleeps(sleeps))
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", sleeps
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def throttling_endpoint(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, list[float]]]:
    with _local_endpoint(_Throttling, monkeypatch) as served:
        yield served


def _bounded(attempts: int) -> None:
    # Retried (more than one attempt), and given up on (a handful, not forever).
    assert 2 <= attempts <= 10, attempts


def test_a_runtime_client_retries_a_throttled_call_then_raises(throttling_endpoint) -> None:
    url, sleeps = throttling_endpoint
    dynamodb = clients.client("dynamodb", endpoint_url=url, region_name="us-east-1", **CREDENTIALS)
    with pytest.raises(ClientError) as raised:
        dynamodb.get_item(TableName="t", Key={"pk": {"S": "k"}})
    assert raised.value.response["Error"]["Code"] == "ProvisionedThroughputExceededException"
    _bounded(_Throttling.requests)
    # One backoff before each retry, each drawn with jitter below botocore's 20 s cap.
    assert len(sleeps) == _Throttling.requests - 1
    assert all(0 <= s <= 20 for s in sleeps)
    assert clients.config().retries["mode"] in ("standard", "adaptive")


def test_the_status_table_model_retries_a_throttled_call_then_raises(
    throttling_endpoint, monkeypatch
) -> None:
    url, _ = throttling_endpoint
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    model = make_model("retry-budget", region="us-east-1", host=url)
    with pytest.raises(Exception) as raised:
        model.get("k")
    assert "ProvisionedThroughputExceeded" in repr(raised.value) + repr(raised.value.__cause__)
    _bounded(_Throttling.requests)


class _Conflicting(BaseHTTPRequestHandler):
    """Answers the first ``conflicts`` requests with ``answer``, then ``success``."""

    requests = 0
    conflicts = 0
    answer: ClassVar[dict] = {}
    success: ClassVar[dict] = {}

    def do_POST(self) -> None:
        type(self).requests += 1
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        status, body = (
            (400, self.answer) if self.requests <= self.conflicts else (200, self.success)
        )
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/x-amz-json-1.0")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


CONFLICT = {
    "__type": "com.amazonaws.dynamodb.v20120810#TransactionConflictException",
    "message": "Transaction is ongoing for the item",
}


def _cancelled(*codes: str) -> dict:
    return {
        "__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
        "message": "Transaction cancelled",
        "CancellationReasons": [{"Code": code} for code in codes],
    }


@pytest.fixture
def conflicting(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, list[float]]]:
    """A runtime DynamoDB client whose endpoint answers _Conflicting's script."""
    with _local_endpoint(_Conflicting, monkeypatch) as (url, sleeps):
        yield (
            clients.client("dynamodb", endpoint_url=url, region_name="us-east-1", **CREDENTIALS),
            sleeps,
        )


TRANSACTION = [
    {
        "ConditionCheck": {
            "TableName": "t",
            "Key": {"pk": {"S": "k"}},
            "ConditionExpression": "attribute_exists(pk)",
        }
    }
]


@pytest.mark.parametrize(
    ("answer", "call"),
    [
        (CONFLICT, "update"),
        (_cancelled("None", "TransactionConflict"), "transact"),
    ],
)
def test_a_write_refused_for_a_transaction_conflict_is_sent_again(
    conflicting, answer, call
) -> None:
    """DynamoDB wrote nothing; botocore's retry modes would raise at once."""
    dynamodb, sleeps = conflicting
    _Conflicting.answer, _Conflicting.conflicts = answer, 3
    if call == "update":
        dynamodb.update_item(
            TableName="t",
            Key={"pk": {"S": "k"}},
            UpdateExpression="SET a = :a",
            ExpressionAttributeValues={":a": {"N": "1"}},
        )
    else:
        dynamodb.transact_write_items(TransactItems=TRANSACTION)
    assert _Conflicting.requests == 4
    assert len(sleeps) == 3 and all(0 <= s <= clients.CONFLICT_BACKOFF * 4 for s in sleeps)


def test_a_transaction_cancelled_by_a_condition_is_not_sent_again(conflicting) -> None:
    dynamodb, _ = conflicting
    _Conflicting.answer, _Conflicting.conflicts = (
        _cancelled("TransactionConflict", "ConditionalCheckFailed"),
        9,
    )
    with pytest.raises(ClientError) as raised:
        dynamodb.transact_write_items(TransactItems=TRANSACTION)
    assert raised.value.response["Error"]["Code"] == "TransactionCanceledException"
    assert _Conflicting.requests == 1


def test_conflicts_that_last_are_raised_after_a_bounded_number_of_attempts(conflicting) -> None:
    dynamodb, _ = conflicting
    _Conflicting.answer, _Conflicting.conflicts = CONFLICT, 1000
    with pytest.raises(ClientError) as raised:
        dynamodb.update_item(
            TableName="t",
            Key={"pk": {"S": "k"}},
            UpdateExpression="SET a = :a",
            ExpressionAttributeValues={":a": {"N": "1"}},
        )
    assert raised.value.response["Error"]["Code"] == "TransactionConflictException"
    assert _Conflicting.requests == clients.CONFLICT_ATTEMPTS


@pytest.mark.parametrize("operation", ["transact", "update"])
def test_the_status_table_store_resends_a_conflicted_write(monkeypatch, operation) -> None:
    """pynamodb builds its own botocore client; the store gives it the conflict retry."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    answer = _cancelled("TransactionConflict", "None") if operation == "transact" else CONFLICT
    with _local_endpoint(_Conflicting, monkeypatch) as (url, sleeps):
        _Conflicting.answer, _Conflicting.conflicts = answer, 2
        # UpdateItem's answer carries the item (ReturnValues ALL_NEW).
        monkeypatch.setattr(_Conflicting, "success", {"Attributes": {}})
        store = TaskStore(f"conflicts-{operation}", "uc", n_shards=1, region="us-east-1", host=url)
        now = datetime.now(UTC)
        item = store.new_item("t1", now, None)
        if operation == "transact":
            store.succeed_and_chain(
                item, 0, now, data=None, next_use_case_id="next", next_payload_hash=None
            )
        else:
            store.reset(item, now)
    assert _Conflicting.requests == 3
    assert len(sleeps) == 2


def test_only_the_clients_module_builds_boto3_clients() -> None:
    # Any other boto3.client()/Session() in the runtime would miss the bounded retries.
    offenders = []
    for path in RUNTIME.rglob("*.py"):
        if path.name == "clients.py" and path.parent == RUNTIME:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
                if any(n == "boto3" or n.startswith("boto3.") for n in names):
                    offenders.append(f"{path.relative_to(RUNTIME)}:{node.lineno}")
    assert offenders == []


# --- Status reads: metadata only, when the client's model knows the parameter ----------

EXECUTION = "arn:aws:states:us-east-1:123456789012:execution:someone-elses-machine:run-1"
DESCRIBED = {
    "executionArn": EXECUTION,
    "stateMachineArn": "arn:aws:states:us-east-1:123456789012:stateMachine:someone-elses-machine",
    "status": "RUNNING",
    "startDate": datetime(2026, 1, 1, tzinfo=UTC),
}


def _stepfunctions(session: botocore.session.Session) -> Any:
    # A closed local port: a call the stub does not answer fails at once, never online.
    return session.create_client(
        "stepfunctions", region_name="us-east-1", endpoint_url="http://127.0.0.1:9", **CREDENTIALS
    )


def _session_with_older_model(scratch: Path) -> botocore.session.Session:
    """A botocore session whose Step Functions model predates DescribeExecution's includedData.

    The installed model is copied with that member removed into a data path of its own,
    searched before botocore's, as an older botocore would ship it.
    """
    installed = botocore.session.get_session().get_component("data_loader")
    version = installed.list_api_versions("stepfunctions", "service-2")[-1]
    model = copy.deepcopy(installed.load_service_model("stepfunctions", "service-2", version))
    del model["shapes"]["DescribeExecutionInput"]["members"]["includedData"]
    folder = scratch / "stepfunctions" / version
    folder.mkdir(parents=True)
    (folder / "service-2.json").write_text(json.dumps(model))
    session = botocore.session.get_session()
    session.set_config_variable("data_path", str(scratch))  # AWS_DATA_PATH: searched first
    return session


def test_a_status_read_asks_for_metadata_only_when_the_model_has_the_parameter() -> None:
    """Step Functions then decrypts nothing: no key of the machine's owner is needed."""
    sfn = _stepfunctions(botocore.session.get_session())
    members = sfn.meta.service_model.operation_model("DescribeExecution").input_shape.members
    assert "includedData" in members  # the installed botocore has it
    with Stubber(sfn) as stub:
        stub.add_response(
            "describe_execution",
            DESCRIBED,
            expected_params={"executionArn": EXECUTION, "includedData": "METADATA_ONLY"},
        )
        assert clients.execution_status(sfn, EXECUTION) == "RUNNING"
        stub.assert_no_pending_responses()


def test_a_status_read_leaves_the_parameter_out_where_the_model_lacks_it(tmp_path: Path) -> None:
    """An older botocore (the Lambda runtimes' bundled boto3) refuses the parameter
    before sending; the status is then read with the plain call."""
    sfn = _stepfunctions(_session_with_older_model(tmp_path))
    with pytest.raises(ParamValidationError, match="includedData"):
        sfn.describe_execution(executionArn=EXECUTION, includedData="METADATA_ONLY")
    with Stubber(sfn) as stub:
        stub.add_response(
            "describe_execution", DESCRIBED, expected_params={"executionArn": EXECUTION}
        )
        assert clients.execution_status(sfn, EXECUTION) == "RUNNING"
        stub.assert_no_pending_responses()


def test_only_the_clients_module_describes_executions() -> None:
    # Any other describe_execution in the runtime would read the input and output too,
    # and need the key of a machine encrypted with its owner's customer managed key.
    offenders = []
    for path in RUNTIME.rglob("*.py"):
        if path.name == "clients.py" and path.parent == RUNTIME:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr == "describe_execution":
                offenders.append(f"{path.relative_to(RUNTIME)}:{node.lineno}")
    assert offenders == []
