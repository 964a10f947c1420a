"""The local-process Lambda executor behaves like AWS Lambda where the patterns rely on it."""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import signal
import tempfile
import time
import uuid
import zipfile
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest
from botocore.config import Config

from sfn_patterns_localstack.roles import function_role

pytestmark = pytest.mark.integration

HANDLERS = {
    "ok": """
import gc, logging, os, boto3
logging.getLogger().setLevel(logging.INFO)
def handler(event, context):
    print("printed line")
    logging.info("logged line")
    account = boto3.client("sts").get_caller_identity()["Account"]
    return {"event": event, "account": account, "name": context.function_name,
            "remaining": context.get_remaining_time_in_millis(),
            "task_root": os.environ["LAMBDA_TASK_ROOT"], "cwd": os.getcwd(),
            "ppid": os.getppid(), "sid": os.getsid(0), "pid": os.getpid(),
            "gc_threshold": gc.get_threshold(), "gc_frozen": gc.get_freeze_count()}
""",
    "error": """
class OrderRejected(Exception):
    pass
def handler(event, context):
    raise OrderRejected("order 42 rejected")
""",
    "sleep": """
import time
def handler(event, context):
    time.sleep(event.get("seconds", 0))
    return "slept"
""",
    "pids": """
import os
def handler(event, context):
    return {"pid": os.getpid(), "ppid": os.getppid()}
""",
    "window": """
import time
def handler(event, context):
    start = time.time()
    time.sleep(event["seconds"])
    print(f"WINDOW {start:.3f} {time.time():.3f}")
""",
    "version": """
import sys, boto3
def handler(event, context):
    account = boto3.client("sts").get_caller_identity()["Account"]
    return {"version": list(sys.version_info[:2]), "account": account}
""",
    "crash": """
import os
def handler(event, context):
    os._exit(3)
""",
    "needs_pynamodb": """
import pynamodb  # not in the zip, and not part of the Lambda runtime
def handler(event, context):
    return "unreachable"
""",
}


def _zip(source: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("app.py", source)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def role_arn(aws: Callable) -> str:
    # The functions here are all named exec-<case>-<id>: their logs, nothing else.
    return function_role(aws("iam"), f"executor-test-{uuid.uuid4().hex[:8]}", ["exec-*"])


@pytest.fixture(scope="module")
def make_function(aws: Callable, role_arn: str) -> Callable[..., str]:
    client = aws("lambda")
    created: list[str] = []

    def make(kind: str, timeout: int = 10, runtime: str = "python3.12") -> str:
        name = f"exec-{kind}-{uuid.uuid4().hex[:6]}"
        client.create_function(
            FunctionName=name,
            Runtime=runtime,
            Role=role_arn,
            Handler="app.handler",
            Code={"ZipFile": _zip(HANDLERS[kind])},
            Timeout=timeout,
        )
        client.get_waiter("function_active_v2").wait(FunctionName=name)
        created.append(name)
        return name

    yield make
    for name in created:
        client.delete_function(FunctionName=name)


def _invoke(aws: Callable, name: str, event: dict | None = None) -> tuple[dict, dict]:
    response = aws("lambda").invoke(
        FunctionName=name, Payload=json.dumps(event or {}), LogType="Tail"
    )
    payload = json.loads(response["Payload"].read() or b"null")
    return response, payload


def test_handler_runs_with_localstack_credentials_and_endpoint(aws, make_function) -> None:
    name = make_function("ok")
    response, payload = _invoke(aws, name, {"hello": "world"})
    assert "FunctionError" not in response
    assert payload["event"] == {"hello": "world"}
    assert payload["account"] == "000000000000"  # a real STS call, answered by LocalStack
    assert payload["name"] == name
    assert 0 < payload["remaining"] <= 10_000
    assert payload["cwd"] == payload["task_root"]
    logs = base64.b64decode(response["LogResult"]).decode()
    assert "printed line" in logs and "logged line" in logs
    # Forked by the fork server (executor.py), in a session of its own, and it still
    # had the function's own environment and directory (the assertions above).
    parent = Path(f"/proc/{payload['ppid']}/cmdline").read_bytes().split(b"\0")
    assert b"--fork-server" in parent, parent
    assert payload["sid"] == payload["pid"]
    # What the fork server preloaded (boto3, parsed models) is frozen out of the
    # worker's collections, which run per 50,000 allocations (gc_tuning).
    assert payload["gc_threshold"] == [50_000, 10, 10]
    assert payload["gc_frozen"] > 10_000, payload["gc_frozen"]


@pytest.mark.parametrize("runtime", ["python3.9", "python3.12", "python3.13"])
def test_a_handler_runs_on_the_python_of_its_declared_runtime(aws, make_function, runtime) -> None:
    """The handler reports its own interpreter's version, and the runtime's boto3 works."""
    name = make_function("version", runtime=runtime)
    response, payload = _invoke(aws, name)
    assert "FunctionError" not in response, payload
    assert payload["version"] == [3, int(runtime.removeprefix("python3."))]
    assert payload["account"] == "000000000000"


@pytest.mark.parametrize("runtime", ["nodejs20.x", "python3.8"])
def test_an_unsupported_runtime_is_a_clear_error(aws, role_arn, runtime) -> None:
    """Refused at create (LocalStack's own check), or Failed naming it and the supported ones."""
    client = aws("lambda")
    name = f"exec-unsupported-{uuid.uuid4().hex[:6]}"
    try:
        client.create_function(
            FunctionName=name,
            Runtime=runtime,
            Role=role_arn,
            Handler="app.handler",
            Code={"ZipFile": _zip(HANDLERS["pids"])},
        )
    except client.exceptions.ClientError as error:
        assert runtime in str(error)
        return
    deadline = time.monotonic() + 30
    while (config := client.get_function(FunctionName=name)["Configuration"])[
        "State"
    ] == "Pending" and time.monotonic() < deadline:
        time.sleep(0.3)
    # AWS deletes a function that failed. LocalStack 4.9.2 answered InternalError but had
    # removed it (the client's retry got ResourceNotFound); 4.14.0's DeleteFunction
    # stops the versions before removing the function, finds no version manager for
    # the failed one (LambdaService.stop_version) and answers InternalError each time.
    with contextlib.suppress(client.exceptions.ResourceNotFoundException):
        client.delete_function(FunctionName=name)
    assert config["State"] == "Failed", config
    assert runtime in config["StateReason"], config["StateReason"]
    assert "python3.9" in config["StateReason"] and "python3.13" in config["StateReason"]


def test_handler_exception_is_a_function_error_with_its_type(aws, make_function) -> None:
    name = make_function("error")
    response, payload = _invoke(aws, name)
    assert response["FunctionError"] == "Unhandled"
    assert payload["errorType"] == "OrderRejected"
    assert payload["errorMessage"] == "order 42 rejected"
    assert any("raise OrderRejected" in frame for frame in payload["stackTrace"])


def test_timeout_is_enforced_and_the_environment_recovers(aws, make_function) -> None:
    name = make_function("sleep", timeout=1)
    started = time.monotonic()
    response, payload = _invoke(aws, name, {"seconds": 30})
    assert time.monotonic() - started < 15
    assert response["FunctionError"] == "Unhandled"
    assert payload["errorType"] == "Sandbox.Timedout"
    assert "Task timed out after 1.00 seconds" in payload["errorMessage"]
    response, payload = _invoke(aws, name, {"seconds": 0})
    assert "FunctionError" not in response and payload == "slept"


def test_process_exit_is_reported_and_the_environment_recovers(aws, make_function) -> None:
    name = make_function("crash")
    response, payload = _invoke(aws, name)
    assert response["FunctionError"] == "Unhandled"
    assert payload["errorType"] == "Runtime.ExitError"
    assert "exit status 3" in payload["errorMessage"]


def test_dependency_missing_from_the_zip_fails_as_on_aws(aws, make_function) -> None:
    name = make_function("needs_pynamodb")
    response, payload = _invoke(aws, name)
    assert response["FunctionError"] == "Unhandled"
    assert payload["errorType"] == "Runtime.ImportModuleError"
    assert "pynamodb" in payload["errorMessage"]


def test_logs_reach_cloudwatch_logs(aws, make_function) -> None:
    name = make_function("ok")
    _invoke(aws, name, {"marker": "cw-logs-check"})
    logs = aws("logs")
    deadline = time.monotonic() + 20
    messages: list[str] = []
    while time.monotonic() < deadline:
        try:
            events = logs.filter_log_events(logGroupName=f"/aws/lambda/{name}")["events"]
        except logs.exceptions.ResourceNotFoundException:
            events = []
        messages = [event["message"] for event in events]
        if any("printed line" in message for message in messages):
            break
        time.sleep(0.5)
    assert any("printed line" in message for message in messages), messages
    assert any(message.startswith("REPORT RequestId") for message in messages), messages


def _alive(pids: list[int]) -> list[int]:
    """Those of ``pids`` that are still processes (a zombie counts: not yet reaped)."""
    return [pid for pid in pids if Path(f"/proc/{pid}").exists()]


def _wait_until_gone(pids: list[int], seconds: float = 15) -> list[int]:
    deadline = time.monotonic() + seconds
    while (alive := _alive(pids)) and time.monotonic() < deadline:
        time.sleep(0.25)
    return alive


def test_deleting_a_function_leaves_no_process(aws, role_arn) -> None:
    client = aws("lambda")
    name = f"exec-delete-{uuid.uuid4().hex[:6]}"
    client.create_function(
        FunctionName=name,
        Runtime="python3.12",
        Role=role_arn,
        Handler="app.handler",
        Code={"ZipFile": _zip(HANDLERS["pids"])},
        Timeout=5,
    )
    client.get_waiter("function_active_v2").wait(FunctionName=name)
    _, worker = _invoke(aws, name)  # the worker reports its own pid
    assert _alive([worker["pid"]]), "the worker should outlive its invocation"
    client.delete_function(FunctionName=name)
    assert _wait_until_gone([worker["pid"]]) == []


def _cmdline(pid: int) -> list[bytes]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")


def test_a_dead_fork_server_is_replaced_and_the_next_invoke_succeeds(aws, make_function) -> None:
    """Kill the fork server: its worker exits, and the next invoke forks from a new one."""
    name = make_function("pids")
    _, first = _invoke(aws, name)
    server = first["ppid"]
    assert b"--fork-server" in _cmdline(server)
    os.kill(server, signal.SIGKILL)
    assert _wait_until_gone([first["pid"]]) == []  # a worker exits when its server dies
    # One attempt: a 500 that the SDK would retry is the failure looked for.
    once = aws("lambda", config=Config(retries={"total_max_attempts": 1}))
    response = once.invoke(FunctionName=name, Payload=b"{}")
    second = json.loads(response["Payload"].read())
    assert "FunctionError" not in response, second
    assert second["pid"] != first["pid"]
    assert second["ppid"] != server
    assert b"--fork-server" in _cmdline(second["ppid"])


def test_a_lean_localstack_stopped_leaves_no_process_and_no_file(tmp_path: Path) -> None:
    """One LocalStack of its own (server.start), serving a Lambda and SQS, then stopped.

    Lean while it runs: its log has LocalStack's messages but no line per request
    (fixes/request_log.py; a daemon's kept log has them, tests/harness/test_server.py),
    and the service catalog index it needed is in the project's cache for the next one
    (fixes/service_catalog.py). Clean once stopped: no process, no file.
    """
    import boto3

    from sfn_patterns_localstack import server
    from sfn_patterns_localstack.clients import client_factory
    from sfn_patterns_localstack.emulation.fixes import service_catalog

    runtime_dirs = set(Path(tempfile.gettempdir()).glob("sfnp-lambda-runtime-*"))
    instance = server.start()
    pids: list[int] = []
    try:
        sqs = client_factory(instance.endpoint)("sqs")
        url = sqs.create_queue(QueueName="lean-log")["QueueUrl"]
        assert sqs.get_queue_url(QueueName="lean-log")["QueueUrl"] == url
        kw = dict(
            endpoint_url=instance.endpoint,
            region_name="us-east-1",
            aws_access_key_id="test",
            aws_secret_access_key="test",
        )
        role = function_role(boto3.client("iam", **kw), "r", ["orphan-check"])
        client = boto3.client("lambda", **kw)
        client.create_function(
            FunctionName="orphan-check",
            Runtime="python3.12",
            Role=role,
            Handler="app.handler",
            Code={"ZipFile": _zip(HANDLERS["pids"])},
            Timeout=5,
        )
        client.get_waiter("function_active_v2").wait(FunctionName="orphan-check")
        response = client.invoke(FunctionName="orphan-check", Payload=b"{}")
        worker = json.loads(response["Payload"].read())
        # The worker and its parent, the fork server LocalStack started.
        pids = [worker["pid"], worker["ppid"]]
        assert worker["ppid"] != instance.process.pid
        assert _alive(pids) == pids
        log = instance.log_path.read_text(errors="replace")
    finally:
        instance.stop()
    assert "Ready." in log
    assert "sqs.CreateQueue" not in log and "sqs.GetQueueUrl" not in log
    assert "lambda.Invoke" not in log
    assert list(service_catalog.shared_dir().glob(service_catalog.PATTERN))
    assert _wait_until_gone(pids) == []
    # Nothing left on disk either: its work directory (log, unzipped code, scratch)
    # is gone, and the runtime's package directory is the one kept in the cache.
    assert not instance.workdir.exists(), sorted(instance.workdir.rglob("*"))[:20]
    leaked = set(Path(tempfile.gettempdir()).glob("sfnp-lambda-runtime-*")) - runtime_dirs
    assert leaked == set()


def test_asynchronous_invokes_run_beyond_six_at_once(aws, make_function) -> None:
    """LocalStack's pool of six threads per function is widened (lambda_async_fix).

    Ten Event invokes of a handler that holds for 6 s: on AWS (and with the patch)
    they overlap; with LocalStack's default pool at most six would run at once. The
    oracle is the handlers' own start and end times, read back from their logs.
    """
    name = make_function("window", timeout=30)
    client = aws("lambda")
    for _ in range(10):
        client.invoke(FunctionName=name, InvocationType="Event", Payload=json.dumps({"seconds": 6}))
    logs = aws("logs")
    windows: list[tuple[float, float]] = []
    deadline = time.monotonic() + 90
    while len(windows) < 10 and time.monotonic() < deadline:
        time.sleep(1)
        try:
            events = logs.filter_log_events(logGroupName=f"/aws/lambda/{name}")["events"]
        except logs.exceptions.ResourceNotFoundException:
            continue
        windows = [
            (float(parts[1]), float(parts[2]))
            for parts in (e["message"].split() for e in events)
            if parts and parts[0] == "WINDOW"
        ]
    assert len(windows) == 10, windows
    most = max(sum(1 for s, e in windows if s <= start < e) for start, _ in windows)
    assert most > 6, sorted(windows)


def test_a_function_s_async_pool_reaches_the_account_concurrency(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each function version's async pool holds 1,000 threads, AWS's default concurrency.

    In-process: LocalStack's own Poller, built for a stand-in version manager. The
    pool was 64 until 1,000 job-poller sample jobs of 210 s each queued behind it.
    """
    from types import SimpleNamespace

    from localstack.services.lambda_.invocation import event_manager

    from sfn_patterns_localstack.emulation.fixes import lambda_async

    monkeypatch.delenv("SFNP_LAMBDA_ASYNC_WORKERS", raising=False)
    assert lambda_async.apply() is True
    version = SimpleNamespace(
        function_version=SimpleNamespace(
            id=SimpleNamespace(function_name="fn", qualifier="$LATEST")
        )
    )
    poller = event_manager.Poller(version, "http://queue")
    try:
        assert poller.invoker_pool._max_workers == 1000
    finally:
        poller.invoker_pool.shutdown(wait=False)
    monkeypatch.setenv("SFNP_LAMBDA_ASYNC_WORKERS", "8")
    poller = event_manager.Poller(version, "http://queue")
    try:
        assert poller.invoker_pool._max_workers == 8
    finally:
        poller.invoker_pool.shutdown(wait=False)


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_a_worker_that_cannot_start_leaks_no_file_descriptor(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Starting a worker process that fails (OSError) closes all four pipe ends.

    In-process, no LocalStack: the executor's own ``_spawn`` with the fork server off
    and an interpreter that does not exist, three times over.
    """
    from localstack.services.lambda_.invocation.runtime_executor import LambdaRuntimeException

    from sfn_patterns_localstack.emulation.lambda_executor import executor

    monkeypatch.setenv("SFNP_LAMBDA_FORK_SERVER", "0")
    monkeypatch.setattr(executor, "python_for", lambda runtime: str(tmp_path / "no-python"))
    runtime = executor.LocalProcessRuntimeExecutor.__new__(executor.LocalProcessRuntimeExecutor)
    runtime._env = {"LAMBDA_TASK_ROOT": str(tmp_path)}
    runtime._workdir = tmp_path
    runtime.function_version = SimpleNamespace(
        qualified_arn="arn:aws:lambda:fd-test", config=SimpleNamespace(runtime="python3.11")
    )
    before = _open_fds()
    errors = []
    for _ in range(3):
        with pytest.raises(Exception) as caught:
            runtime._spawn()
        errors.append(caught.value)
    assert _open_fds() == before
    assert all(isinstance(e, LambdaRuntimeException) for e in errors), errors
    assert "arn:aws:lambda:fd-test did not start" in str(errors[0])
