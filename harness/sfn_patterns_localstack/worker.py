"""The Lambda execution environment: one process running one function's handler.

Started by :class:`sfn_patterns_localstack.executor.LocalProcessRuntimeExecutor` as
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
"""

from __future__ import annotations

import importlib
import json
import logging
import os
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


def main() -> None:
    """Load the handler, report readiness, then serve invocations until EOF."""
    commands = os.fdopen(int(os.environ.pop("SFNP_CMD_FD")), "r", encoding="utf-8")
    results = os.fdopen(int(os.environ.pop("SFNP_RES_FD")), "w", encoding="utf-8")
    _redirect_output(os.environ.pop("SFNP_INIT_LOG"))
    runtime_path = os.environ.pop("SFNP_RUNTIME_PATH", "")
    sys.path[:0] = [os.environ["LAMBDA_TASK_ROOT"], *filter(None, runtime_path.split(os.pathsep))]
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


if __name__ == "__main__":
    main()
