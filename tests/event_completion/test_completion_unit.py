"""The event-completion runtime on moto: parks, completion events, both orders, stale tokens."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from sfn_patterns.event_completion import handler as completion_handler
from sfn_patterns.event_completion.errors import CompletionConfigError, JobTimeoutError
from sfn_patterns.event_completion.handler import Completion, read_path
from sfn_patterns.event_completion.tokens import TokenTable

REGION = "us-east-1"


@pytest.fixture
def table(monkeypatch: pytest.MonkeyPatch) -> Iterator[TokenTable]:
    from moto import mock_aws

    for key in ("AWS_PROFILE", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    with mock_aws():
        client = boto3.client("dynamodb")
        client.create_table(
            TableName="tokens",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        yield TokenTable("tokens", client, ttl_seconds=3600)


class FakeSfn:
    """Records SendTaskSuccess calls; tokens in ``gone`` answer like AWS for a dead token."""

    def __init__(self, gone: tuple[str, ...] = (), code: str = "TaskTimedOut") -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.gone, self.code = set(gone), code

    def send_task_success(self, taskToken: str, output: str) -> dict:
        if taskToken in self.gone:
            raise ClientError({"Error": {"Code": self.code, "Message": "gone"}}, "SendTaskSuccess")
        self.sent.append((taskToken, json.loads(output)))
        return {}


def _event(job_id: str, state: str) -> dict[str, Any]:
    return {
        "source": "aws.redshift-data",
        "detail-type": "Redshift Data Statement Status Change",
        "detail": {"statementId": job_id, "state": state, "rows": 1},
    }


def _completion(table: TokenTable, sfn: FakeSfn) -> Completion:
    return Completion(
        table,
        sfn,
        job_id_path="$.detail.statementId",
        status_path="$.detail.state",
        terminal_statuses=("FINISHED", "FAILED", "ABORTED"),
    )


def test_event_after_park_resumes_the_parked_token(table: TokenTable) -> None:
    sfn = FakeSfn()
    done = _completion(table, sfn)
    assert done.route({"action": "park", "job_id": "s-1", "token": "t-1"}) == {
        "parked": "s-1",
        "checks": 1,
    }
    assert done.route(_event("s-1", "FINISHED"))["resumed"] is True
    assert sfn.sent == [
        (
            "t-1",
            {
                "status": "FINISHED",
                "result": {"statementId": "s-1", "state": "FINISHED", "rows": 1},
            },
        )
    ]


def test_event_before_park_is_answered_by_the_park(table: TokenTable) -> None:
    sfn = FakeSfn()
    done = _completion(table, sfn)
    assert done.route(_event("s-2", "FAILED")) == {
        "recorded": "s-2",
        "status": "FAILED",
        "resumed": False,
    }
    assert done.route({"action": "park", "job_id": "s-2", "token": "t-2"}) == {
        "completed": "s-2",
        "status": "FAILED",
    }
    assert [(token, out["status"]) for token, out in sfn.sent] == [("t-2", "FAILED")]


def test_each_park_replaces_the_token_and_counts(table: TokenTable) -> None:
    sfn = FakeSfn(gone=("t-old",))
    done = _completion(table, sfn)
    for check, token in enumerate(("t-old", "t-new"), start=1):
        assert done.park("s-3", token, max_checks=5, execution="arn:x")["checks"] == check
    done.route(_event("s-3", "FINISHED"))
    assert [token for token, _ in sfn.sent] == ["t-new"]


def test_park_past_the_limit_raises_the_timeout(table: TokenTable) -> None:
    # max_checks = 2 fallback checks: the first park, a park after each of two
    # timeouts, and the third timeout's check finds the job still running.
    done = _completion(table, FakeSfn())
    for _ in range(2):
        done.park("s-4", "t", max_checks=2, execution=None)
    with pytest.raises(JobTimeoutError, match="after 2 fallback checks"):
        done.park("s-4", "t", max_checks=2, execution=None)


@pytest.mark.parametrize("code", ["TaskTimedOut", "InvalidToken", "TaskDoesNotExist"])
def test_an_old_token_is_ignored(table: TokenTable, code: str) -> None:
    sfn = FakeSfn(gone=("t-dead",), code=code)
    done = _completion(table, sfn)
    done.park("s-5", "t-dead", None, None)
    assert done.route(_event("s-5", "FINISHED"))["resumed"] is False
    # A redelivered event is the same no-op.
    assert done.route(_event("s-5", "FINISHED"))["resumed"] is False


def test_other_errors_are_raised_so_the_delivery_is_retried(table: TokenTable) -> None:
    sfn = FakeSfn(gone=("t",), code="ThrottlingException")
    done = _completion(table, sfn)
    done.park("s-6", "t", None, None)
    with pytest.raises(ClientError):
        done.route(_event("s-6", "FINISHED"))


def test_unknown_job_running_status_and_missing_fields_are_ignored(table: TokenTable) -> None:
    sfn = FakeSfn()
    done = _completion(table, sfn)
    assert "not terminal" in done.route(_event("s-7", "STARTED"))["ignored"]
    assert "no job id" in done.route({"detail-type": "x", "detail": {}})["ignored"]
    # A job nobody waits for: its end is recorded (a late park would find it), nothing sent.
    assert done.route(_event("never-parked", "FINISHED"))["resumed"] is False
    assert sfn.sent == []


def test_read_path_and_configuration_errors() -> None:
    event = {"detail": {"a": {"b": "x"}}}
    assert read_path(event, "$.detail.a.b") == "x"
    assert read_path(event, "$.detail.missing") is None
    with pytest.raises(CompletionConfigError):
        read_path(event, "detail.a")
    with pytest.raises(CompletionConfigError, match="TOKEN_TABLE"):
        completion_handler.from_env({})
    with pytest.raises(ValueError, match="job id"):
        TokenTable("t", client=object()).park("", "token")


def test_from_env_reads_the_configuration(table: TokenTable) -> None:
    configured = completion_handler.from_env(
        {
            "TOKEN_TABLE": "tokens",
            "JOB_ID_PATH": "$.detail.statementId",
            "STATUS_PATH": "$.detail.state",
            "TERMINAL_STATUSES": '["FINISHED"]',
            "TOKEN_TTL_SECONDS": "7200",
        }
    )
    assert configured.terminal == frozenset({"FINISHED"})
    assert configured.table.ttl_seconds == 7200
    with pytest.raises(CompletionConfigError, match="unknown event"):
        configured.route({"action": "dance"})
