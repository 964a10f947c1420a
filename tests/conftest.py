"""Shared fixtures: one LocalStack for the whole session, and AWS clients for it.

Set LOCALSTACK_ENDPOINT (for example http://localhost:4566, the official
container) to run the same tests against an existing LocalStack instead of the
in-process one this fixture starts on a free port.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from sfn_patterns_localstack import gc_tuning

from . import cpu_account, portable, scheduling

REPO_ROOT = Path(__file__).resolve().parents[1]

# Every pytest process (the controller and each worker) holds botocore's models and
# the tests' deployments for minutes: collect young garbage less often (gc_tuning).
gc_tuning.tune()
# On a portable run (tests/portable.py), the harness's clients skip instead of failing.
portable.install_shims()

# Terraform's state through the http backend and the harness's in-process state server
# (sfn_patterns_localstack/terraform/state_server.py): a destroy costs about 40 % less
# Terraform CPU than with the local backend, which rewrites the whole state file after
# every resource change. Subprocesses (benchmark smokes, the demo) inherit it.
os.environ.setdefault("SFN_PATTERNS_TF_BACKEND", "http")
DURATIONS_OUT = REPO_ROOT / "build" / "test-durations.json"


@pytest.fixture(scope="session")
def localstack_endpoint() -> Iterator[str]:
    """The endpoint of a healthy LocalStack (started here unless LOCALSTACK_ENDPOINT is set)."""
    external = os.environ.get("LOCALSTACK_ENDPOINT")
    if portable.enabled() and not external:
        pytest.fail(
            "SFNP_PORTABLE=1 runs against somebody else's emulator: set LOCALSTACK_ENDPOINT "
            "(make test-portable ENDPOINT=http://HOST:PORT)"
        )
    if external:
        from sfn_patterns_localstack.server import health

        if health(external) is None:
            pytest.fail(f"LOCALSTACK_ENDPOINT={external} does not answer /_localstack/health")
        yield external.rstrip("/")
        return
    from sfn_patterns_localstack import server

    instance = server.start()
    try:
        yield instance.endpoint
    finally:
        instance.stop()


@pytest.fixture(scope="session")
def destroy_deployments() -> bool:
    """Whether a test that applies a configuration must destroy it afterwards.

    Always on a LocalStack given by LOCALSTACK_ENDPOINT: what a test applies there is
    somebody's to keep clean. On the test run's own LocalStack, thrown away at its end,
    only the tests whose subject is the teardown destroy: each pattern's example test,
    the smoke and the consumer test (destroy, then the leftover check across accounts).
    The other deployments (a test configuration, a benchmark's smoke) are left to the
    process exit; a destroy and its leftover check cost 3-5 CPU-seconds each, about 70 in
    a run (measured).
    """
    return bool(os.environ.get("LOCALSTACK_ENDPOINT"))


@pytest.fixture(scope="module")
def inbox(aws: Callable) -> Iterator[object]:
    """Where a test file's alarms notify: an SNS topic read through an SQS subscription.

    One per file (``tests.alarm_check.Inbox``), deleted after the file's last test.
    """
    from tests.alarm_check import Inbox

    created = Inbox.create(aws, f"inbox-{uuid.uuid4().hex[:8]}")
    yield created
    created.delete()


@pytest.fixture(scope="session")
def aws(localstack_endpoint: str) -> Callable[..., object]:
    """A factory of boto3 clients bound to LocalStack: ``aws("lambda")``.

    Made through ``localstack-client`` (sfn_patterns_localstack.clients), as every
    client of the harness, the demo and the benchmarks is.
    """
    from sfn_patterns_localstack.clients import client_factory

    return client_factory(localstack_endpoint)


def _share_botocore_data_loader() -> None:
    """Every botocore session this test process makes reads botocore's JSON files once.

    Why: a fresh botocore session (each moto test's ``boto3.client``, since moto resets
    boto3's default session; each pynamodb model class; each role's session) makes a
    data loader of its own and parses the service model and the endpoints and
    partitions files again: a sixth of the test workers' CPU (py-spy over a whole
    run). The loader only caches those read-only files; credentials, configuration
    and clients stay per session, as in the libraries.
    """
    import botocore.loaders
    import botocore.session

    loaders: dict[object, botocore.loaders.Loader] = {}

    def register(session: botocore.session.Session) -> None:
        def shared() -> botocore.loaders.Loader:
            path = session.get_config_variable("data_path")
            if path not in loaders:
                loaders[path] = botocore.loaders.create_loader(path)
            return loaders[path]

        session._components.lazy_register_component("data_loader", shared)

    botocore.session.Session._register_data_loader = register


def pytest_configure(config: pytest.Config) -> None:
    """Charge each file the CPU it used (tests/cpu_account.py), validate every definition
    the test run's LocalStacks accept (tests/asl_check.py), and account for every call
    their role sessions make (tests/iam_check.py)."""
    _share_botocore_data_loader()
    cpu_account.configure(config)
    if portable.enabled():
        return  # the definitions accepted and the calls decided are the harness's records
    try:
        from . import asl_check, iam_check
    except ImportError:  # a runtime-only venv (tests/tooling/test_python_versions.py)
        return
    asl_check.configure(config)
    iam_check.configure(config)
    if config.getoption("numprocesses", None) and not hasattr(config, "workerinput"):
        from . import result_cache

        result_cache.share_key()  # one replay key for every worker of the run


# Scheduling under pytest-xdist (`make test` runs `-n $(PYTEST_WORKERS) --dist loadfile
# --no-loadscope-reorder`): files go longest first, by the durations recorded in
# tests/file_durations.json (tests/scheduling.py says why and how).
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Order files longest first (stable: tests keep their order in a file); on a
    portable run, skip the tests marked as needing the harness (tests/portable.py)."""
    portable.skip_marked(items)
    markers: dict[str, set[str]] = {}
    for item in items:
        markers.setdefault(scheduling.file_of(item.nodeid), set()).update(
            marker.name for marker in item.iter_markers()
        )
    order = scheduling.longest_first(
        [item.nodeid for item in items], markers, scheduling.load_record()
    )
    position = {nodeid: i for i, nodeid in enumerate(order)}
    items.sort(key=lambda item: position[item.nodeid])


_seconds: dict[str, float] = {}


_replayed: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Add each phase's time to its file (in the controller: workers send their reports),
    and note the deterministic cases replayed from tests/result_cache.py."""
    path = scheduling.file_of(report.nodeid)
    _seconds[path] = _seconds.get(path, 0.0) + report.duration
    _replayed.extend(value for name, value in report.user_properties if name == "replayed")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say which passes were replayed rather than run, and how to run them."""
    cases = sorted(set(_replayed))
    if cases:
        terminalreporter.section("replayed passes (tests/result_cache.py)")
        terminalreporter.write_line(
            f"{len(cases)} deterministic cases passed before on exactly these inputs and "
            "were not run again (SFN_PATTERNS_NO_CHECK_CACHE=1 runs them):"
        )
        for case in cases:
            terminalreporter.write_line(f"  {case}")


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Record this run's seconds per file in build/test-durations.json (`make durations`),
    and its CPU seconds per file in build/test-cpu.json (tests/cpu_account.py)."""
    if hasattr(session.config, "workerinput"):
        return
    cpu_account.merge()
    if not _seconds:
        return
    recorded = scheduling.load_record(DURATIONS_OUT)
    recorded.update(_seconds)
    scheduling.write_record(recorded, DURATIONS_OUT)
