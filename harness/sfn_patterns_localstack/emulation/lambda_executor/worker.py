"""The Lambda execution environment: one process running one function's handler.

Started by :class:`.executor.LocalProcessRuntimeExecutor` as
``python -I -S worker.py``: isolated mode and no ``site``, so the handler imports
only the standard library, the unzipped code (``LAMBDA_TASK_ROOT``) and the
runtime's own boto3/botocore (``SFNP_RUNTIME_PATH``), as on AWS Lambda. A dependency
missing from the zip therefore fails here the way it fails in AWS.

This file must use the standard library only: it runs before ``sys.path`` holds
anything else.

Protocol (one JSON document per line): the executor writes invocations to the fd
in ``SFNP_CMD_FD``; the worker answers on ``SFNP_RES_FD``. The first answer is
``{"type": "ready"}`` (with ``init_error`` when the handler could not be loaded, which
every invocation then reports, as AWS does). The handler's stdout/stderr (fds 1
and 2, so subprocesses are captured too) go to the log file named per invocation.

Fork server (``worker.py --fork-server``): one process per runtime per LocalStack, on
that runtime's Python (so this file runs on Python 3.9 to 3.13), that imports the
runtime's boto3 once, then forks each worker on request, so an environment's cold
start does not import boto3 again (scripts/bench_lambda_cold_start.py: 0.086
CPU-second per cold start against 0.231; a few hundred cold starts per test suite).
It reads requests on the SOCK_SEQPACKET socket in ``SFNP_CONTROL_FD``: a JSON
document ``{"id": I, "env": {...}, "cwd": ...}`` with the worker's two pipe ends
attached (SCM_RIGHTS). It answers ``{"id": I, "pid": N}`` for each, and
``{"id": I, "exited": N, "status": S}`` when that worker ends (S as
``Popen.returncode``: negative for a signal). The request's id, not the pid, names
the worker in both: an answer can come after its requester gave up waiting, and a
pid is reused once the kernel's pids wrap (a long benchmark run wraps them). A forked
worker is what a started one is: its own session, the function's environment and
working directory, the same ``sys.path``.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import logging
import os
import socket
import sys
import threading
import time
import traceback
from typing import Any


def _redirect_output(path: str) -> None:
    """Point fds 1 and 2 at ``path`` so every byte the handler prints is captured."""
    sys.stdout.flush()
    sys.stderr.flush()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)


def _watch_parent(parent_pid: int) -> None:
    """Exit when the executor's process is gone, so no worker outlives LocalStack."""
    while True:
        if os.getppid() != parent_pid:
            os._exit(70)
        time.sleep(0.5)


def _configure_logging() -> None:
    """Give the root logger a stderr handler, as the AWS Python runtime does.

    The level stays WARNING (AWS's default), so a handler that sets INFO sees
    its records in CloudWatch Logs, as it would on AWS.
    """
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        logging.Formatter(
            "[%(levelname)s]\t%(asctime)s.%(msecs)03dZ\t%(message)s", "%Y-%m-%dT%H:%M:%S"
        )
    )
    logging.getLogger().addHandler(handler)


def _error(exc: BaseException, error_type: str | None = None) -> dict[str, Any]:
    """Shape an exception like the AWS Python runtime does."""
    return {
        "errorMessage": str(exc),
        "errorType": error_type or type(exc).__name__,
        "requestId": "",
        # The first frame is this worker's call into the handler: not the user's code.
        "stackTrace": traceback.format_tb(exc.__traceback__.tb_next if exc.__traceback__ else None),
    }


class LambdaContext:
    """The subset of the AWS Lambda context object that handlers use."""

    def __init__(self, request_id: str, arn: str, deadline_ms: int) -> None:
        self.aws_request_id = request_id
        self.invoked_function_arn = arn
        self.function_name = os.environ.get("AWS_LAMBDA_FUNCTION_NAME", "")
        self.function_version = os.environ.get("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST")
        self.memory_limit_in_mb = os.environ.get("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "128")
        self.log_group_name = os.environ.get("AWS_LAMBDA_LOG_GROUP_NAME", "")
        self.log_stream_name = os.environ.get("AWS_LAMBDA_LOG_STREAM_NAME", "")
        self._deadline_ms = deadline_ms

    def get_remaining_time_in_millis(self) -> int:
        """Milliseconds left before the executor stops this invocation."""
        return max(0, self._deadline_ms - int(time.time() * 1000))


def _load_handler() -> Any:
    """Import the handler named by ``_HANDLER`` ("path/to/module.function")."""
    module_path, _, function_name = os.environ["_HANDLER"].rpartition(".")
    try:
        module = importlib.import_module(module_path.replace("/", "."))
    except Exception as exc:
        raise _InitError(exc, "Runtime.ImportModuleError") from exc
    handler = getattr(module, function_name, None)
    if handler is None:
        raise _InitError(
            AttributeError(f"Handler '{function_name}' missing on module '{module_path}'"),
            "Runtime.HandlerNotFound",
        )
    return handler


class _InitError(Exception):
    def __init__(self, cause: BaseException, error_type: str) -> None:
        super().__init__(str(cause))
        self.payload = _error(cause, error_type)
        self.payload["errorMessage"] = f"Unable to import module: {cause}"


def _runtime_path() -> list[str]:
    """The runtime's package directories (``SFNP_RUNTIME_PATH``), taken from the environment."""
    return [p for p in os.environ.pop("SFNP_RUNTIME_PATH", "").split(os.pathsep) if p]


def main(runtime_path: list[str] | None = None) -> None:
    """Load the handler, report readiness, then serve invocations until EOF.

    ``runtime_path``: None when started as a process (read from the environment); a
    forked worker's fork server has put it on ``sys.path`` already and passes ``[]``.
    """
    commands = os.fdopen(int(os.environ.pop("SFNP_CMD_FD")), "r", encoding="utf-8")
    results = os.fdopen(int(os.environ.pop("SFNP_RES_FD")), "w", encoding="utf-8")
    _redirect_output(os.environ.pop("SFNP_INIT_LOG"))
    if runtime_path is None:
        runtime_path = _runtime_path()
    sys.path[:0] = [os.environ["LAMBDA_TASK_ROOT"], *runtime_path]
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()
    _configure_logging()

    def answer(message: dict[str, Any]) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        results.write(json.dumps(message) + "\n")
        results.flush()

    handler = init_error = None
    try:
        handler = _load_handler()
    except _InitError as exc:
        init_error = exc.payload
        traceback.print_exc()
    answer({"type": "ready", "init_error": init_error})

    for line in commands:
        request = json.loads(line)
        _redirect_output(request["log"])
        if init_error is not None:
            answer({"type": "result", "ok": False, "payload": json.dumps(init_error)})
            continue
        context = LambdaContext(request["id"], request["arn"], request["deadline_ms"])
        os.environ["_X_AMZN_TRACE_ID"] = request.get("trace_id") or ""
        try:
            event = json.loads(request["payload"]) if request["payload"] else {}
            response = handler(event, context)
            try:
                body = json.dumps(response)
            except (TypeError, ValueError) as exc:
                raise _MarshalError(exc) from exc
            answer({"type": "result", "ok": True, "payload": body})
        except Exception as exc:
            payload = _error(
                exc, "Runtime.MarshalError" if isinstance(exc, _MarshalError) else None
            )
            payload["requestId"] = request["id"]
            print(f"[ERROR] {payload['errorType']}: {exc}", file=sys.stderr)
            traceback.print_exc()
            answer({"type": "result", "ok": False, "payload": json.dumps(payload)})


class _MarshalError(Exception):
    """The handler returned something that is not JSON serializable."""


# What a handler's first AWS call imports: boto3 and the botocore modules a client
# is built from. Imported once by the fork server; each forked worker finds them
# loaded. Only the runtime's own packages, so a handler still imports nothing that
# AWS's Python runtime would not give it.
PRELOAD = (
    "boto3",
    "boto3.session",
    "botocore.args",
    "botocore.auth",
    "botocore.client",
    "botocore.configprovider",
    "botocore.credentials",
    "botocore.endpoint",
    "botocore.endpoint_provider",
    "botocore.httpsession",
    "botocore.parsers",
    "botocore.regions",
    "botocore.retries.standard",
    "botocore.serialize",
    "botocore.useragent",
)


# The botocore data a handler's first clients parse: the endpoint tables and the models
# of the services the patterns' handlers call. Parsed once by the fork server; a forked
# worker's loader gets the parsed file instead of parsing it again (0.16 CPU-second for
# a worker's first client, mostly JSON decoding). Keyed by the file's full path, so a
# worker only ever gets the data of the very file its own loader would read.
WARM_DATA = ("endpoints", "partitions", "sdk-default-configuration", "_retry")
WARM_SERVICES = ("dynamodb", "stepfunctions", "sqs", "sts", "lambda", "events", "s3")
WARM_MODELS = ("service-2", "endpoint-rule-set-1")


def warm_botocore_data() -> int:
    """Keep every JSON file botocore loads in this process, parsed; warm the common ones.

    botocore treats a loaded file as read-only (one loader hands the same dict to every
    client of a session; merging a service's extras into it again changes nothing), so
    the same dict may serve the loaders of every session of a worker. Returns how many
    files were parsed here.
    """
    from botocore import loaders

    parsed: dict[str, Any] = {}
    original = loaders.JSONFileLoader.load_file

    def load_file(self: Any, file_path: str) -> Any:
        if file_path in parsed:
            return parsed[file_path]
        data = original(self, file_path)
        if data is not None:
            parsed[file_path] = data
        return data

    loaders.JSONFileLoader.load_file = load_file
    loader = loaders.create_loader()
    for name in WARM_DATA:
        with contextlib.suppress(Exception):
            loader.load_data(name)
    for service in WARM_SERVICES:
        for model in WARM_MODELS:
            with contextlib.suppress(Exception):
                loader.load_service_model(service, model)
    return len(parsed)


class _Children:
    """The fork server's live workers, reaped by one thread that reports each exit."""

    def __init__(self, send: Any, send_lock: threading.Lock) -> None:
        # The server holds send_lock from a fork until its answer is sent, so an exit
        # reaped meanwhile is reported after the answer, under the id add() recorded.
        self._send = send
        self._send_lock = send_lock
        self._ids: dict = {}  # pid -> the request id it was forked for
        self._changed = threading.Condition()
        threading.Thread(target=self._reap, daemon=True).start()

    def add(self, pid: int, request_id: Any) -> None:
        with self._changed:
            self._ids[pid] = request_id
            self._changed.notify()

    def _reap(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: bool(self._ids))
            try:
                pid, status = os.waitpid(-1, 0)
            except ChildProcessError:  # not expected: every fork was counted
                time.sleep(0.1)
                continue
            with self._send_lock:
                with self._changed:
                    request_id = self._ids.pop(pid, None)
                self._send(
                    {"id": request_id, "exited": pid, "status": os.waitstatus_to_exitcode(status)}
                )


def _run_forked(request: dict[str, Any], fds: list[int]) -> None:
    """In the forked child: become the requested worker; never returns to the server."""
    code = 0
    try:
        os.setsid()  # its own process group, so the executor's killpg reaches its children
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"], SFNP_CMD_FD=str(fds[0]), SFNP_RES_FD=str(fds[1]))
        main(runtime_path=[])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        os._exit(code)


def serve_forks() -> None:
    """The fork server: preload the runtime's packages, then fork a worker per request."""
    control = socket.socket(fileno=int(os.environ.pop("SFNP_CONTROL_FD")))
    runtime_path = _runtime_path()
    sys.path[:0] = runtime_path
    for name in PRELOAD:
        # An older botocore without one of them: the worker imports what it has.
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    with contextlib.suppress(ImportError):
        warm_botocore_data()
    if os.environ.get("SFNP_GC") != "default":
        # What the workers inherit stays out of their collections (and pages shared):
        # gc.freeze's documented use before fork. A collection per 50,000 net
        # allocations, not 2,000 (sfn_patterns_localstack.gc_tuning has the measurement;
        # this file may import only the standard library).
        gc.set_threshold(50_000, 10, 10)
        gc.freeze()
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()
    send_lock = threading.Lock()

    def send(message: dict[str, Any]) -> None:
        control.send(json.dumps(message).encode())

    children = _Children(send, send_lock)
    while True:
        data, fds, _, _ = socket.recv_fds(control, 1 << 20, 2)
        if not data:
            os._exit(0)  # the executor side closed: LocalStack is stopping
        request = json.loads(data)
        with send_lock:  # no exit report between the fork and this request's answer
            pid = os.fork()
            if pid == 0:
                control.close()
                _run_forked(request, fds)
            for fd in fds:
                os.close(fd)
            children.add(pid, request.get("id"))
            send({"id": request.get("id"), "pid": pid})


if __name__ == "__main__":
    if sys.argv[1:] == ["--fork-server"]:
        serve_forks()
    else:
        main()
