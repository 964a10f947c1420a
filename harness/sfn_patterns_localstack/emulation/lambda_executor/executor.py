"""A LocalStack Lambda runtime executor that runs handlers in local processes.

LocalStack's Lambda service (function versions, concurrency, event invokes, logs
to CloudWatch, the Step Functions integration) stays LocalStack's own; only the
place the code runs changes: instead of a Docker container, a child process
(:mod:`.worker`) that imports the unzipped function code.

A function runs on the Python of its declared ``Runtime`` (python3.9 to python3.13:
this interpreter, or pyenv's, or ``pythonX.Y`` on PATH); any other runtime fails to
become Active, with a message naming it and the supported ones. (LocalStack 4.14.0,
like AWS, also accepts python3.14, which this executor does not run yet.)

Workers are forked from one fork server per runtime per LocalStack process
(``worker.py --fork-server``, started on that runtime's first cold start), which has
imported the runtime's boto3 already: a cold start then costs a fork and the
handler's own imports, not a new interpreter importing boto3
(scripts/bench_lambda_cold_start.py: 87 ms and 0.086 CPU-second per cold start,
against 231 ms and 0.231). ``SFNP_LAMBDA_FORK_SERVER=0`` starts each worker as a
process of its own instead, as does a fork server that cannot be started.

It implements LocalStack 4.14.0's ``RuntimeExecutor`` (``invocation.runtime_executor``,
the same interface as 4.9.2's): ``ExecutionEnvironment`` calls ``start`` with the
environment it builds (the function's own variables last, unlike 4.9.2), ``invoke`` with
the ``invoke-id``/``invoked-function-arn``/``payload``/``trace-id`` payload the Docker
executor posts to its container, and ``stop``; the version manager calls
``prepare_version`` (``S3Code.prepare_for_execution``, which unzips the code once per
version, into a temporary directory renamed into place, unlike 4.9.2) and
``cleanup_version``. Results come back over a pipe, not LocalStack's executor endpoint,
so ``get_runtime_endpoint`` is unused.

What it does not emulate, and the docs say so: the runtime's patch level and its
own boto3 version (the harness's pure-Python boto3/botocore are shared by every
runtime), layers, container images, memory limits and isolation between functions.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import logging
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from functools import cache
from pathlib import Path

from localstack.services.lambda_.invocation.lambda_models import FunctionVersion, InvocationResult
from localstack.services.lambda_.invocation.runtime_executor import (
    LambdaRuntimeException,
    RuntimeExecutor,
)

from sfn_patterns_localstack.emulation.faults import invocation as invocation_faults

LOG = logging.getLogger(__name__)

WORKER = Path(__file__).with_name("worker.py")
STARTUP_TIMEOUT_SECONDS = 30.0

# What the AWS Python runtime ships besides the standard library: the handler
# may import these without bundling them.
RUNTIME_PACKAGES = ("boto3", "botocore", "s3transfer", "jmespath", "dateutil", "six", "urllib3")


def runtime_cache() -> Path:
    """Where the runtimes' package directories are kept: the project's cache."""
    from sfn_patterns_localstack.server import cache_dir

    return cache_dir() / "lambda-runtime"


@cache
def runtime_path() -> str:
    """A directory exposing only the runtime-provided packages to the handler.

    The worker runs without ``site``, so the harness's own site-packages (pynamodb,
    networkx, ...) are not importable; a handler that needs them must bundle them,
    exactly as on AWS Lambda.

    One directory per set of package locations, in the project's cache, made once
    (atomically: LocalStacks started at once race to make it) and then reused, so
    no LocalStack leaves a directory of its own in the temporary directory.
    """
    sources = []
    for name in RUNTIME_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            continue
        origin = Path(spec.origin)
        sources.append(origin.parent if origin.name == "__init__.py" else origin)
    key = hashlib.sha256("\n".join(map(str, sources)).encode()).hexdigest()[:16]
    root = runtime_cache() / f"packages-{key}"
    if not root.is_dir():
        root.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=root.parent))
        for source in sources:
            (staging / source.name).symlink_to(source)
        try:
            staging.rename(root)
        except OSError:  # made by another LocalStack meanwhile
            shutil.rmtree(staging, ignore_errors=True)
    return str(root)


# The Lambda runtimes this executor runs, each on its own Python (AWS's supported
# Python runtimes; python3.8 and older are deprecated there). Anything else (another
# language, a container image) fails to become Active, with a message naming it.
SUPPORTED_RUNTIMES = ("python3.9", "python3.10", "python3.11", "python3.12", "python3.13")
# Packages a runtime's Python needs instead of the harness's copy, installed by
# ``make bootstrap`` into ``runtime_cache()/<runtime>``: botocore's own markers ask
# for urllib3 < 1.27 before Python 3.10, and urllib3 2.x does not import on 3.9.
RUNTIME_OVERLAYS = {"python3.9": ("urllib3==1.26.20",)}


class UnsupportedRuntime(LambdaRuntimeException):
    """The function's runtime cannot run here (unknown, or its Python is missing)."""


def _version_of(runtime: str) -> str:
    if runtime not in SUPPORTED_RUNTIMES:
        raise UnsupportedRuntime(
            f"Runtime {runtime!r} is not supported by the local-process Lambda executor "
            f"(supported: {', '.join(SUPPORTED_RUNTIMES)})"
        )
    return runtime.removeprefix("python")


@cache
def _find_python(version: str) -> str | None:
    """An interpreter of Python ``version``: this one, pyenv's newest, or one on PATH."""
    if f"{sys.version_info.major}.{sys.version_info.minor}" == version:
        return sys.executable
    root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    installed = sorted(
        root.glob(f"{version}.*/bin/python{version}"),
        key=lambda path: [int(part) for part in path.parts[-3].split(".") if part.isdigit()],
    )
    if installed:
        return str(installed[-1])
    return shutil.which(f"python{version}")


def python_for(runtime: str) -> str:
    """The interpreter a function declared with ``runtime`` runs on (errors name the fix)."""
    version = _version_of(runtime)
    python = _find_python(version)
    if python is None:
        raise UnsupportedRuntime(
            f"Runtime {runtime}: no Python {version} interpreter on this machine. Install it "
            f"(`make bootstrap` runs `pyenv install {version}`) or put python{version} on PATH."
        )
    return python


def runtime_paths(runtime: str) -> str:
    """The runtime's package directories, as ``SFNP_RUNTIME_PATH`` (``os.pathsep``-joined)."""
    _version_of(runtime)
    paths = [runtime_path()]
    if runtime in RUNTIME_OVERLAYS:
        overlay = runtime_cache() / runtime
        if not (overlay / ".installed").exists():
            raise UnsupportedRuntime(
                f"Runtime {runtime}: its packages ({', '.join(RUNTIME_OVERLAYS[runtime])}) "
                f"are missing from {overlay}: run `make bootstrap`."
            )
        paths.insert(0, str(overlay))
    return os.pathsep.join(paths)


class WorkerDied(Exception):
    """The worker process exited while the executor waited for it."""


class _ForkedProcess:
    """A worker forked by the fork server, with the part of Popen the executor uses.

    Its exit is looked up by the id of the request that forked it, not by its pid,
    which the kernel reuses once pids wrap.
    """

    def __init__(self, pid: int, request_id: int, server: _ForkServer) -> None:
        self.pid = pid
        self.request_id = request_id
        self.returncode: int | None = None
        self._server = server

    def poll(self) -> int | None:
        """The exit status once the fork server has reported it, else None.

        A worker whose fork server has died is reported ended at once: nobody would
        ever report its exit (it is no child of this process), and it is ending anyway
        (it exits within half a second of losing its parent).
        """
        if self.returncode is None:
            self.returncode = self._server.exit_status(self.request_id, timeout=0)
            if self.returncode is None and not self._server.alive():
                self.returncode = self._orphaned()
        return self.returncode

    def wait(self) -> int | None:
        """Block until the worker's exit is reported (or its fork server has died)."""
        if self.returncode is None:
            self.returncode = self._server.exit_status(self.request_id, timeout=None)
            if self.returncode is None:  # exit_status returns None only once the server died
                self.returncode = self._orphaned()
        return self.returncode

    def _orphaned(self) -> int:
        """End the worker of a dead fork server (its own process group) and say it was killed."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        return -signal.SIGKILL


class _ForkServer:
    """The fork server of this LocalStack process (protocol: :mod:`worker`'s docstring).

    Started on the first cold start. It is in LocalStack's process group, so stopping
    LocalStack stops it, and it watches its parent as workers do; its workers each
    have a session of their own, and exit when it does.
    """

    def __init__(self, runtime: str) -> None:
        self.runtime = runtime
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.process = subprocess.Popen(
                [python_for(runtime), "-I", "-S", str(WORKER), "--fork-server"],
                env={
                    "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
                    "LANG": "C.UTF-8",
                    "SFNP_CONTROL_FD": str(theirs.fileno()),
                    "SFNP_RUNTIME_PATH": runtime_paths(runtime),
                    # gc_tuning's switch (the server tunes its collector unless "default").
                    "SFNP_GC": os.environ.get("SFNP_GC", ""),
                },
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self._socket = ours
        self._request_lock = threading.Lock()
        self._next_id = 0
        # Both keyed by request id, under _exited: the pid each request was answered,
        # the ids whose requester gave up waiting (their late worker is killed), and
        # each worker's exit status until its executor asks for it.
        self._answers: dict[int, int] = {}
        self._abandoned: set[int] = set()
        self._exits: dict[int, int] = {}
        self._exited = threading.Condition()
        self._dead = False
        threading.Thread(target=self._read, name="sfnp-fork-server", daemon=True).start()

    def _read(self) -> None:
        """Route the server's messages: answers to spawn(), exit statuses to waiters."""
        while True:
            try:
                data = self._socket.recv(65536)
            except OSError:
                data = b""
            if not data:
                with self._exited:
                    self._dead = True
                    self._exited.notify_all()
                return
            message = json.loads(data)
            with self._exited:
                request_id = message["id"]
                if "pid" not in message:  # a worker's exit (always after its answer)
                    if request_id in self._abandoned:
                        self._abandoned.discard(request_id)  # nobody waits for it
                    elif request_id is not None:
                        self._exits[request_id] = message["status"]
                elif request_id in self._abandoned:
                    # Answered after its requester gave up (a fork server slower than
                    # STARTUP_TIMEOUT_SECONDS under load): nobody will use this worker.
                    # Before ids, this answer went to the next request, and every later
                    # worker was taken for its predecessor: executors killed, and
                    # waited forever on, each other's workers (1,000 job-poller jobs:
                    # half failed with Runtime.ExitError, ten hung). Just forked and
                    # never invoked, it has no children: the process is enough.
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(message["pid"], signal.SIGKILL)
                else:
                    self._answers[request_id] = message["pid"]
                self._exited.notify_all()

    def alive(self) -> bool:
        """Whether the server still answers (a new one replaces a dead one)."""
        return not self._dead and self.process.poll() is None

    def spawn(self, env: dict[str, str], cwd: str, fds: tuple[int, int]) -> _ForkedProcess:
        """Fork a worker with ``env`` in ``cwd``, its command and result pipe ends ``fds``."""
        # One request at a time, as before ids: a spawn queues here, and its timeout
        # counts only the server's answer to it, not the requests ahead of it.
        with self._request_lock:
            self._next_id += 1
            request_id = self._next_id
            request = {"id": request_id, "env": env, "cwd": cwd}
            try:
                socket.send_fds(self._socket, [json.dumps(request).encode()], fds)
            except OSError as exc:  # the server is gone (EPIPE, ECONNRESET)
                raise WorkerDied(f"the fork server is gone ({exc})") from exc
            with self._exited:
                self._exited.wait_for(
                    lambda: request_id in self._answers or self._dead, STARTUP_TIMEOUT_SECONDS
                )
                pid = self._answers.pop(request_id, None)
                if pid is None:
                    self._abandoned.add(request_id)
        if pid is None:
            raise WorkerDied("the fork server did not answer")
        return _ForkedProcess(pid, request_id, self)

    def exit_status(self, request_id: int, timeout: float | None) -> int | None:
        """The exit status of ``request_id``'s worker, waiting up to ``timeout``.

        None if not (yet) known.
        """
        with self._exited:
            self._exited.wait_for(lambda: request_id in self._exits or self._dead, timeout)
            return self._exits.pop(request_id, None)


class _Shared:
    """The fork servers this LocalStack process shares between its environments: one per runtime."""

    servers: dict[str, _ForkServer] = {}  # noqa: RUF012 (process-wide on purpose)
    lock = threading.Lock()


def fork_server(runtime: str) -> _ForkServer | None:
    """The runtime's fork server, started on its first use; None when off or broken.

    Started lazily: a LocalStack pays for the servers of the runtimes its functions
    declare, nothing more.
    """
    if os.environ.get("SFNP_LAMBDA_FORK_SERVER", "1") == "0":
        return None
    with _Shared.lock:
        server = _Shared.servers.get(runtime)
        if server is None or not server.alive():
            try:
                server = _Shared.servers[runtime] = _ForkServer(runtime)
            except OSError:
                LOG.exception("cannot start the %s fork server: starting workers directly", runtime)
                return None
        return server


class Channel:
    """Line-oriented reads from the worker's result pipe, with a deadline."""

    def __init__(self, fd: int, process: subprocess.Popen | _ForkedProcess) -> None:
        self.fd = fd
        self.process = process
        self.buffer = b""
        # poll, not select: select() refuses a descriptor above FD_SETSIZE (1024), and a
        # LocalStack running hundreds of environments (two pipes each) gets there: 1,000
        # job-poller executions failed with "filedescriptor out of range in select()".
        self._poll = select.poll()
        self._poll.register(fd, select.POLLIN)

    def read(self, timeout: float) -> dict:
        """The worker's next JSON line; TimeoutError after ``timeout`` s, WorkerDied if it ended."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            ready = self._poll.poll(min(remaining, 0.25) * 1000)
            if ready:
                chunk = os.read(self.fd, 65536)
                if not chunk:
                    raise WorkerDied(self.process.wait())
                self.buffer += chunk
            elif self.process.poll() is not None:
                raise WorkerDied(self.process.returncode)
        line, _, self.buffer = self.buffer.partition(b"\n")
        return json.loads(line)


class LocalProcessRuntimeExecutor(RuntimeExecutor):
    """One execution environment = one worker process (replaced after a timeout)."""

    def __init__(self, id: str, function_version: FunctionVersion) -> None:
        super().__init__(id=id, function_version=function_version)
        self._env: dict[str, str] = {}
        self._process: subprocess.Popen | _ForkedProcess | None = None
        self._commands = None
        self._channel: Channel | None = None
        self._lock = threading.Lock()
        self._workdir = Path(tempfile.mkdtemp(prefix=f"sfnp-lambda-{id}-"))
        self._init_logs = ""
        self._invocations = 0

    # -- lifecycle ---------------------------------------------------------------------
    def start(self, env_vars: dict[str, str]) -> None:
        """Start the worker and return once the handler module is loaded."""
        code_dir = str(self.function_version.config.code.get_unzipped_code_location())
        env = {key: str(value) for key, value in env_vars.items()}
        env.update(
            LAMBDA_TASK_ROOT=code_dir,
            LAMBDA_RUNTIME_DIR=code_dir,
            # Not the developer's ~/.aws: handlers must reach LocalStack with the
            # credentials and endpoint LocalStack gave them, nothing else.
            HOME=str(self._workdir),
            PATH=os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
            LANG="C.UTF-8",
            PYTHONDONTWRITEBYTECODE="1",
            PYTHONUNBUFFERED="1",
        )
        self._env = env
        with self._lock:
            self._spawn()

    def _spawn(self) -> None:
        cmd_read, cmd_write = os.pipe()
        res_read, res_write = os.pipe()
        init_log = self._workdir / "init.log"
        init_log.write_bytes(b"")
        env = dict(self._env, SFNP_INIT_LOG=str(init_log))
        try:
            process = self._start_worker(env, (cmd_read, res_write))
        except BaseException as exc:  # no pipe end may leak, whatever failed
            os.close(cmd_write)
            os.close(res_read)
            if not isinstance(exc, (WorkerDied, OSError)):
                raise
            raise LambdaRuntimeException(
                f"Lambda worker for {self.function_version.qualified_arn} did not start ({exc})"
            ) from exc
        finally:
            os.close(cmd_read)
            os.close(res_write)
        self._process = process
        self._commands = os.fdopen(cmd_write, "w", encoding="utf-8")
        self._channel = Channel(res_read, process)
        try:
            ready = self._channel.read(STARTUP_TIMEOUT_SECONDS)
        except (TimeoutError, WorkerDied) as exc:
            logs = init_log.read_text(errors="replace")
            self._kill()
            raise LambdaRuntimeException(
                f"Lambda worker for {self.function_version.qualified_arn} did not start "
                f"({type(exc).__name__}: {exc}). Output:\n{logs}"
            ) from exc
        self._init_logs += init_log.read_text(errors="replace")
        if ready.get("init_error"):
            LOG.warning("Handler of %s failed to load: %s", self.id, ready["init_error"])

    def _start_worker(
        self, env: dict[str, str], fds: tuple[int, int]
    ) -> subprocess.Popen | _ForkedProcess:
        """Fork the worker from the fork server, or start it as a process of its own.

        A fork server that died since its last fork shows it when asked for a new one;
        it is replaced, once, and the request sent to the new one.
        """
        cwd = self._env["LAMBDA_TASK_ROOT"]
        runtime = self.function_version.config.runtime
        for attempt in range(2):
            server = fork_server(runtime)
            if server is None:
                break
            try:
                return server.spawn(env, cwd, fds)
            except WorkerDied:
                if attempt or server.alive():
                    raise
        return subprocess.Popen(
            [python_for(runtime), "-I", "-S", str(WORKER)],
            env=dict(
                env,
                SFNP_CMD_FD=str(fds[0]),
                SFNP_RES_FD=str(fds[1]),
                SFNP_RUNTIME_PATH=runtime_paths(runtime),
            ),
            cwd=cwd,
            pass_fds=fds,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its own process group: stop() kills children too
        )

    def _kill(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:  # an ended worker's pid may be another's by now
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        if self._commands is not None:
            with contextlib.suppress(OSError):
                self._commands.close()
        if self._channel is not None:
            os.close(self._channel.fd)
            self._channel = None
        self._commands = None

    def stop(self) -> None:
        """Kill the worker's whole process group and remove its scratch space."""
        with self._lock:
            self._kill()
        shutil.rmtree(self._workdir, ignore_errors=True)

    # -- invocation --------------------------------------------------------------------
    def invoke(self, payload: dict[str, str]) -> InvocationResult:
        """Run one invocation, enforcing the function's timeout by replacing the worker."""
        request_id = payload["invoke-id"]
        # The function's configured timeout, as AWS enforces it. Not the environment's
        # AWS_LAMBDA_FUNCTION_TIMEOUT: LocalStack 4.14.0 applies the function's own
        # variables last (ExecutionEnvironment.get_environment_variables), so one named
        # so would have replaced it, where AWS has no such variable to override.
        timeout = float(self.function_version.config.timeout)
        with self._lock:
            if self._process is None or self._process.poll() is not None:
                self._kill()
                self._spawn()
            self._invocations += 1
            log_path = self._workdir / f"invoke-{self._invocations}.log"
            log_path.write_bytes(b"")
            started = time.monotonic()
            self._commands.write(
                json.dumps(
                    {
                        "id": request_id,
                        "arn": payload.get("invoked-function-arn", ""),
                        "payload": payload.get("payload", ""),
                        "trace_id": payload.get("trace-id", ""),
                        "deadline_ms": int(time.time() * 1000 + timeout * 1000),
                        "log": str(log_path),
                    }
                )
                + "\n"
            )
            self._commands.flush()
            # Injected kill/timeout faults (emulation.faults.invocation); else the channel.
            channel = invocation_faults.channel(
                self._channel, self._process, self.function_version.qualified_arn
            )
            try:
                message = channel.read(timeout)
                is_error, body = not message["ok"], message["payload"]
            except TimeoutError:
                self._kill()
                is_error, body = (
                    True,
                    json.dumps(
                        {
                            "errorType": "Sandbox.Timedout",
                            "errorMessage": f"RequestId: {request_id} Error: "
                            f"Task timed out after {timeout:.2f} seconds",
                        }
                    ),
                )
            except WorkerDied as exc:
                self._kill()
                is_error, body = (
                    True,
                    json.dumps(
                        {
                            "errorType": "Runtime.ExitError",
                            "errorMessage": f"RequestId: {request_id} Error: "
                            f"Runtime exited with error: exit status {exc.args[0]}",
                        }
                    ),
                )
            duration_ms = (time.monotonic() - started) * 1000
            output = log_path.read_text(errors="replace")
            log_path.unlink(missing_ok=True)
            init_logs, self._init_logs = self._init_logs, ""
        if is_error and json.loads(body).get("errorType") == "Sandbox.Timedout":
            output += json.loads(body)["errorMessage"] + "\n"
        logs = (
            f"{init_logs}START RequestId: {request_id} Version: "
            f"{self.function_version.id.qualifier}\n{output}END RequestId: {request_id}\n"
            f"REPORT RequestId: {request_id}\tDuration: {duration_ms:.2f} ms\t"
            f"Memory Size: {self.function_version.config.memory_size} MB\n"
        )
        return InvocationResult(request_id, body.encode("utf-8"), is_error=is_error, logs=logs)

    # -- addresses (no network between LocalStack and the worker) ----------------------
    def get_address(self) -> str:
        """The worker runs on this host."""
        return "127.0.0.1"

    def get_endpoint_from_executor(self) -> str:
        """Handlers reach LocalStack on loopback (AWS_ENDPOINT_URL is built from this)."""
        return "127.0.0.1"

    def get_runtime_endpoint(self) -> str:
        """Not used: results come back over a pipe, not LocalStack's executor endpoint."""
        return ""

    def get_logs(self) -> str:
        """Logs of the environment's start-up, shown by LocalStack when start() fails."""
        return self._init_logs

    @classmethod
    def prepare_version(cls, function_version: FunctionVersion) -> None:
        """Check the function's runtime can run here, then unzip its code for the worker.

        An unsupported runtime (or a missing interpreter) raises here, so the function
        ends ``Failed`` with the reason, not ``Active`` and failing at each invoke.
        """
        runtime = function_version.config.runtime
        python_for(runtime)
        runtime_paths(runtime)
        if function_version.config.code:
            function_version.config.code.prepare_for_execution()

    @classmethod
    def cleanup_version(cls, function_version: FunctionVersion) -> None:
        """Nothing to clean: LocalStack owns the unzipped code."""

    @classmethod
    def validate_environment(cls) -> bool:
        """A Python interpreter is all this executor needs."""
        return True
