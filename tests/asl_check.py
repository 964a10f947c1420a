"""The session's last check: every definition LocalStack received passes asl-validator.

Registered by tests/conftest.py (``pytest_configure``). How it works:

* the controller (the only process under ``-n 0``) makes one directory per session,
  ``build/asl-definitions/session-<pid>``, and names it in ``SFN_PATTERNS_RECORD_ASL``;
* each process that runs tests (an xdist worker, or the controller under ``-n 0``)
  points that variable at a subdirectory of its own before its LocalStack starts, so the
  LocalStack it starts, and any a benchmark script starts, records every definition it
  accepts there (sfn_patterns_localstack.asl_recorder);
* after each test, that process notes which test the new files arrived during
  (``origins.jsonl``: a module's deployment is credited to the module's first test);
* when the session ends, the controller validates every distinct definition in one node
  process (sfn_patterns_localstack.asl_validation). A problem fails the session, naming
  the state machine, the test that deployed it, the recorded file, the state and the
  validator's message.

With LOCALSTACK_ENDPOINT (a LocalStack this pytest run did not start) nothing is
recorded, and the summary says so.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import time
from pathlib import Path

import pytest

from sfn_patterns_localstack import asl_validation
from sfn_patterns_localstack.asl_recorder import ENV

REPO_ROOT = Path(__file__).resolve().parents[1]
ROOT = REPO_ROOT / "build" / "asl-definitions"
ORIGINS = "origins.jsonl"


def configure(config: pytest.Config) -> None:
    """Register the check for this process (controller or worker)."""
    config.pluginmanager.register(AslCheck(config), "sfn-patterns-asl-check")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _session_directory() -> Path:
    """A fresh directory for this pytest run; those of runs no longer running go."""
    ROOT.mkdir(parents=True, exist_ok=True)
    for old in ROOT.glob("session-*"):
        with contextlib.suppress(ValueError):
            if not _alive(int(old.name.removeprefix("session-"))):
                shutil.rmtree(old, ignore_errors=True)
    session = ROOT / f"session-{os.getpid()}"
    shutil.rmtree(session, ignore_errors=True)
    session.mkdir()
    return session


class AslCheck:
    """Records in workers, validates in the controller (see the module docstring)."""

    def __init__(self, config: pytest.Config) -> None:
        self.worker = getattr(config, "workerinput", None)
        self.external = bool(os.environ.get("LOCALSTACK_ENDPOINT"))
        if self.worker is None:
            self.session = _session_directory()
            own = self.session / "main"
        else:  # the controller named the session directory before starting workers
            self.session = Path(os.environ[ENV]).parent
            own = self.session / self.worker["workerid"]
        own.mkdir(exist_ok=True)
        os.environ[ENV] = str(own)  # inherited by the LocalStack this process starts
        self.own = own
        self.claimed: set[str] = set()
        self.summary: list[str] = []

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        """Credit the definitions recorded since the last test to this one."""
        new = sorted(p.name for p in self.own.glob("*.json") if p.name not in self.claimed)
        if not new:
            return
        self.claimed.update(new)
        with (self.own / ORIGINS).open("a") as origins:
            for name in new:
                origins.write(json.dumps({"file": name, "test": nodeid}) + "\n")

    def _origins(self) -> dict[str, str]:
        credited = {}
        for path in self.session.glob(f"*/{ORIGINS}"):
            for line in path.read_text().splitlines():
                entry = json.loads(line)
                credited[str(path.parent / entry["file"])] = entry["test"]
        return credited

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Validate every distinct definition the session's LocalStacks accepted."""
        if self.worker is not None or session.exitstatus == pytest.ExitCode.INTERRUPTED:
            return
        recorded = asl_validation.load_recorded(self.session)
        if not recorded:
            if self.external:
                self.summary.append("not checked: LOCALSTACK_ENDPOINT names a LocalStack")
            return
        credited = self._origins()
        distinct: dict[str, asl_validation.Definition] = {}
        for definition in recorded:
            test = credited.get(definition.source, "(after the last test)")
            source = f"{test}, {Path(definition.source).relative_to(REPO_ROOT)}"
            distinct.setdefault(
                definition.text, asl_validation.Definition(definition.name, source, definition.text)
            )
        files = {test.split("::")[0] for test in credited.values()}
        started = time.perf_counter()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        try:
            problems = asl_validation.validate(distinct.values())
        except RuntimeError as error:
            problems, failure = [], str(error)
        else:
            failure = ""
        took = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        self.summary.append(
            f"asl-validator {asl_validation.version()}: {len(recorded)} definitions recorded "
            f"({len(distinct)} distinct) from {len(files)} test files, "
            f"checked in {took:.1f} s ({cpu:.1f} CPU-s)"
        )
        if failure or problems:
            self.summary.append(failure or asl_validation.report(problems))
            self.summary.append(f"recorded definitions kept in {self.session}")
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        else:
            self.summary.append("all valid")

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        """Print the check's outcome after the test summary."""
        if self.summary:
            terminalreporter.section("asl-validator (definitions LocalStack received)")
            for line in self.summary:
                terminalreporter.write_line(line)
