"""The job-poller Lambda code, unit tested on moto (no LocalStack, no sleeping)."""

from __future__ import annotations

import io
import json
import time
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from sfn_patterns.job_poller import adapters, get_job_status, run_job, store
from sfn_patterns.job_poller.errors import (
    AdapterError,
    JobStillRunning,
    JobTimeoutError,
    RetryableJobError,
)
from sfn_patterns_samples.job_poller import sample_job

REGION = "us-east-1"
EXECUTION = "arn:aws:states:us-east-1:123456789012:execution:m:run-1"


@pytest.fixture
def moto_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    from moto import mock_aws

    for key in ("AWS_PROFILE", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    with mock_aws():
        yield


@pytest.fixture(params=["s3", "dynamodb"])
def metadata(request: pytest.FixtureRequest, moto_env: None, monkeypatch) -> store.MetadataStore:
    if request.param == "s3":
        boto3.client("s3").create_bucket(Bucket="meta")
        monkeypatch.setenv("METADATA_STORE", "s3")
        monkeypatch.setenv("METADATA_BUCKET", "meta")
    else:
        boto3.client("dynamodb").create_table(
            TableName="meta",
            KeySchema=[
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"},
            ],
            AttributeDefinitions=[
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "S"},
            ],
            BillingMode="PAY_PER_REQUEST",
        )
        monkeypatch.setenv("METADATA_STORE", "dynamodb")
        monkeypatch.setenv("METADATA_TABLE", "meta")
    return store.from_env()


class FakeLambda:
    """Records invokes; answers synchronous ones with a canned payload."""

    def __init__(self, answer: Any = None, error: str | None = None) -> None:
        self.calls: list[dict[str, Any]] = []
        self.answer, self.error = answer, error

    def invoke(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append({**kwargs, "Payload": json.loads(kwargs["Payload"])})
        response = {"Payload": io.BytesIO(json.dumps(self.answer).encode())}
        if self.error:
            response["FunctionError"] = "Unhandled"
        return response


def event(poller: str = "job", **extra: Any) -> dict[str, Any]:
    context = {"Execution": {"Id": EXECUTION, "Input": {}}, "State": {"RetryCount": 0}}
    return {"context": context, "poller": poller, **extra}


def test_execution_key_is_the_md5_of_the_execution_arn() -> None:
    import hashlib

    assert store.execution_key(EXECUTION) == hashlib.md5(EXECUTION.encode()).hexdigest()
    assert len(store.execution_key(EXECUTION)) == 32


def test_store_round_trip_and_missing_document(metadata: store.MetadataStore) -> None:
    assert metadata.get("k", "job", "start") is None
    metadata.put("k", "job", "start", {"started_at": 1.5})
    assert metadata.get("k", "job", "start") == {"started_at": 1.5}
    # Pollers are separate namespaces.
    assert metadata.get("k", "other", "start") is None


def test_run_job_records_start_time_before_starting(
    metadata: store.MetadataStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, Any] = {}

    def start(request: dict[str, Any]) -> dict[str, Any]:
        key = request["execution_key"]
        seen["start_doc"] = metadata.get(key, "export", "start")
        seen["request"] = request
        return {"job_id": "j-1"}

    monkeypatch.setattr(adapters, "load", lambda spec, action: start)
    before = time.time()
    handle = run_job.handler(
        event("export", input={"x": 1}, timeout_strategy="start-time", timeout_seconds=30),
        None,
    )
    assert handle == {"job_id": "j-1"}
    assert seen["start_doc"]["timeout_seconds"] == 30
    assert before <= seen["start_doc"]["started_at"] <= time.time()
    assert seen["request"]["input"] == {"x": 1}
    assert seen["request"]["execution_key"] == store.execution_key(EXECUTION)


def test_run_job_without_context_object_is_an_adapter_error() -> None:
    with pytest.raises(AdapterError, match=r"context object \(\$\$\)"):
        run_job.handler({"poller": "job"}, None, metadata=None)


def _status_adapter(status: str):
    return lambda spec, action: lambda request: {"status": status}


def test_get_status_times_out_only_while_running(
    metadata: store.MetadataStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = store.execution_key(EXECUTION)
    metadata.put(key, "job", "start", {"started_at": time.time() - 10, "timeout_seconds": 5})
    monkeypatch.setattr(adapters, "load", _status_adapter("running"))
    with pytest.raises(JobTimeoutError, match="timeout_seconds=5"):
        get_job_status.handler(event(timeout_strategy="start-time"), None)
    # A job that finished after the deadline still counts as finished.
    monkeypatch.setattr(adapters, "load", _status_adapter("succeeded"))
    answer = get_job_status.handler(event(timeout_strategy="start-time"), None)
    assert answer["status"] == "SUCCEEDED"
    assert answer["elapsed_seconds"] >= 10


def test_get_status_within_deadline_and_unknown_status_passes_through(
    metadata: store.MetadataStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = store.execution_key(EXECUTION)
    metadata.put(key, "job", "start", {"started_at": time.time(), "timeout_seconds": 60})
    monkeypatch.setattr(adapters, "load", _status_adapter("RUNNING"))
    assert get_job_status.handler(event(timeout_strategy="start-time"), None)["status"] == "RUNNING"
    monkeypatch.setattr(adapters, "load", _status_adapter("Weird"))
    assert get_job_status.handler(event(timeout_strategy="wait-count"), None)["status"] == "Weird"


def test_get_status_start_time_without_recorded_start_is_an_error(
    metadata: store.MetadataStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(adapters, "load", _status_adapter("RUNNING"))
    with pytest.raises(AdapterError, match="no start time recorded"):
        get_job_status.handler(event(timeout_strategy="start-time"), None)


def test_sample_job_lifecycle(metadata: store.MetadataStore, monkeypatch) -> None:
    monkeypatch.setenv("SAMPLE_JOB_FUNCTION", "runner")
    fake = FakeLambda()
    request = {
        "poller": "job",
        "execution_key": "abc",
        "input": {"jobs": {"job": {"duration_seconds": 0, "outcome": "fail"}}},
    }
    handle = sample_job.start(request, metadata, fake)
    assert handle == {"job_id": "abc/job", "status_errors": 0}
    (call,) = fake.calls
    assert call["InvocationType"] == "Event"
    assert call["Payload"]["outcome"] == "fail"
    assert sample_job.status({**request, "job": handle}, metadata)["status"] == "RUNNING"
    sample_job.runner_handler(call["Payload"], None, metadata)
    assert sample_job.status({**request, "job": handle}, metadata) == {
        "status": "FAILED",
        "reason": "the sample job was asked to fail",
    }


def test_sample_job_injected_errors_then_status(metadata: store.MetadataStore) -> None:
    request = {"poller": "p", "execution_key": "k", "job": {"status_errors": 2}}
    metadata.put("k", "p", "status", {"status": "RUNNING"})
    for attempt in (1, 2):
        with pytest.raises(RetryableJobError, match=f"{attempt}/2"):
            sample_job.status(request, metadata)
    assert sample_job.status(request, metadata)["status"] == "RUNNING"


def test_sample_job_unknown_outcome_and_bad_spec() -> None:
    assert sample_job.OUTCOMES["unknown"] not in ("SUCCEEDED", "FAILED", "RUNNING")
    with pytest.raises(AdapterError, match="outcome"):
        sample_job.job_spec({"job": {"outcome": "maybe"}}, "job")
    with pytest.raises(AdapterError, match="duration_seconds"):
        sample_job.job_spec({"job": {"duration_seconds": -1}}, "job")
    assert sample_job.job_spec({"job": {"duration_seconds": 2}, "jobs": {"b": {}}}, "b") == {
        "duration_seconds": 1.0,
        "outcome": "succeed",
        "status_errors": 0,
        "emit_event": True,
    }


def test_adapter_specs() -> None:
    start = adapters.load("sfn_patterns_samples.job_poller.sample_job:start", "start")
    assert start is sample_job.start
    for bad in (
        "nocolon",
        "sfn_patterns_samples.job_poller.sample_job:missing",
        "no.such.module:f",
    ):
        with pytest.raises(AdapterError):
            adapters.load(bad, "start")


def test_lambda_adapter_invokes_synchronously_and_maps_errors() -> None:
    arn = "arn:aws:lambda:us-east-1:123456789012:function:adapter"
    ok = FakeLambda(answer={"status": "RUNNING"})
    assert adapters._lambda_adapter(arn, "status", ok)({"job": 1}) == {"status": "RUNNING"}
    assert ok.calls[0]["InvocationType"] == "RequestResponse"
    assert ok.calls[0]["Payload"] == {"action": "status", "job": 1}
    retry = FakeLambda(answer={"errorType": "RetryableJobError", "errorMessage": "x"}, error="1")
    with pytest.raises(RetryableJobError):
        adapters._lambda_adapter(arn, "status", retry)({})
    boom = FakeLambda(answer={"errorType": "KeyError", "errorMessage": "y"}, error="1")
    with pytest.raises(AdapterError, match="KeyError"):
        adapters._lambda_adapter(arn, "status", boom)({})
    with pytest.raises(AdapterError, match="not a JSON object"):
        adapters._lambda_adapter(arn, "status", FakeLambda(answer=[1]))({})


def test_store_from_env_rejects_unknown_kind() -> None:
    assert store.from_env({"METADATA_STORE": "none"}) is None
    with pytest.raises(ValueError, match="METADATA_STORE"):
        store.from_env({"METADATA_STORE": "redis"})


def test_retry_polling_raises_while_running_and_returns_the_end(monkeypatch) -> None:
    monkeypatch.setattr(adapters, "load", _status_adapter("running"))
    with pytest.raises(JobStillRunning, match="still RUNNING"):
        get_job_status.handler(event(polling="retry"), None, metadata=None)
    # The loop's shape still gets the status back.
    assert get_job_status.handler(event(), None, metadata=None)["status"] == "RUNNING"
    monkeypatch.setattr(adapters, "load", _status_adapter("succeeded"))
    assert get_job_status.handler(event(polling="retry"), None)["status"] == "SUCCEEDED"


class FakeTokens:
    """A token table that remembers parks (the real one is tested in tests/event_completion)."""

    def __init__(self, final: str | None = None) -> None:
        self.parks: list[tuple[str, str]] = []
        self.final = final

    def park(self, job_id: str, token: str, execution: str | None = None) -> Any:
        from sfn_patterns.event_completion.tokens import Parked

        self.parks.append((job_id, token))
        detail = {"state": self.final} if self.final else None
        return Parked(checks=len(self.parks), final_status=self.final, detail=detail)


class FakeSfn:
    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []

    def send_task_success(self, taskToken: str, output: str) -> dict:
        self.sent.append((taskToken, json.loads(output)))
        return {}


def _park(status: str, monkeypatch, tokens: FakeTokens, sfn: FakeSfn, **extra: Any) -> dict:
    monkeypatch.setattr(adapters, "load", _status_adapter(status))
    payload = event(completion="event", token="tok", job={"job_id": "j-1"}, **extra)
    return get_job_status.park_and_check(payload, None, tokens, sfn)


def test_event_completion_parks_first_then_answers_a_finished_job(monkeypatch) -> None:
    tokens, sfn = FakeTokens(), FakeSfn()
    assert _park("failed", monkeypatch, tokens, sfn) == {"completed": "j-1", "status": "FAILED"}
    assert tokens.parks == [("j-1", "tok")]
    ((token, output),) = sfn.sent
    assert token == "tok" and output["status"] == "FAILED"
    assert output["result"]["detail"] == {"status": "failed"}


def test_event_completion_leaves_a_running_job_parked(monkeypatch) -> None:
    tokens, sfn = FakeTokens(), FakeSfn()
    assert _park("running", monkeypatch, tokens, sfn, max_checks=3) == {
        "parked": "j-1",
        "checks": 1,
    }
    assert sfn.sent == []


def test_event_completion_times_out_after_its_fallback_checks(monkeypatch) -> None:
    tokens, sfn = FakeTokens(), FakeSfn()
    for _ in range(2):
        _park("running", monkeypatch, tokens, sfn, max_checks=2)
    with pytest.raises(JobTimeoutError, match="2 fallback checks"):
        _park("running", monkeypatch, tokens, sfn, max_checks=2)


def test_an_event_recorded_before_the_park_wins_over_a_lagging_status(monkeypatch) -> None:
    tokens, sfn = FakeTokens(final="SUCCEEDED"), FakeSfn()
    assert _park("running", monkeypatch, tokens, sfn)["status"] == "SUCCEEDED"
    assert sfn.sent[0][1] == {"status": "SUCCEEDED", "result": {"state": "SUCCEEDED"}}


def test_event_completion_needs_a_job_id_and_a_token(monkeypatch) -> None:
    monkeypatch.setattr(adapters, "load", _status_adapter("running"))
    with pytest.raises(AdapterError, match="job_id"):
        get_job_status.park_and_check(
            event(completion="event", token="t", job={"id": 1}), None, FakeTokens(), FakeSfn()
        )
    with pytest.raises(AdapterError, match="task token"):
        get_job_status.park_and_check(
            event(completion="event", job={"job_id": "j"}), None, FakeTokens(), FakeSfn()
        )


class FakeEvents:
    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []

    def put_events(self, Entries: list[dict[str, Any]]) -> dict:
        self.entries += Entries
        return {"FailedEntryCount": 0}


class FakeContext:
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:sample"


@pytest.mark.parametrize("emit", [True, False])
def test_sample_job_announces_its_end_unless_told_not_to(
    metadata: store.MetadataStore, monkeypatch, emit: bool
) -> None:
    monkeypatch.setenv("SAMPLE_JOB_EVENTS", "1")
    events = FakeEvents()
    payload = {"execution_key": "k", "poller": "job", "duration_seconds": 0, "emit_event": emit}
    sample_job.runner_handler(payload, FakeContext(), metadata, events)
    if not emit:
        assert events.entries == []
        return
    (entry,) = events.entries
    assert entry["Source"] == sample_job.EVENT_SOURCE
    assert entry["Resources"] == [FakeContext.invoked_function_arn]
    assert json.loads(entry["Detail"]) == {"job_id": "k/job", "state": "SUCCEEDED"}
