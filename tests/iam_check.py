"""The session's IAM account: what every role's calls used, and what the modules grant for nothing.

Registered by tests/conftest.py (``pytest_configure``). How it works:

* the controller makes one directory per session, ``build/iam-usage/session-<pid>``;
* each process that runs tests points ``SFNP_IAM_USAGE_FILE`` at a file of its own
  there before its LocalStack starts, so that LocalStack's IAM emulation
  (sfn_patterns_localstack.emulation.iam) records every call a role session made: the
  statement that allowed it, or the denial. Each LocalStack writes
  ``<stem>.<its pid>.json`` beside that name, so a process that starts a second one
  (a test's own) keeps both;
* when the session ends, the controller merges the files into ``build/iam-usage.json``
  and, under ``SFNP_IAM=enforce`` in a whole run (not a few files or ``-k``/``-m``),
  fails the session (``account``):

  - when a call was denied that no test declared: every denial a test makes on
    purpose is declared where it is made, with ``expect_denials(denial(principal,
    action, resource))`` (tests/iam_denial.py, which also fails the test when the
    declared denial did not happen); the declarations reach this process through
    ``expected-<pid>.jsonl`` beside the usage files;
  - when a statement of a module's policy (an inline policy named ``<role>-inline``,
    as modules/lambda-function and modules/state-machine write them) granted an action
    that allowed no call in the whole run, unless docs/harness.md lists that action
    under "Granted, not exercised on LocalStack" with the AWS page that requires it.

Statements are compared across deployments by their ``Sid`` (every module statement
has one): ``LockItem``'s ``dynamodb:UpdateItem`` is used when any deployment's lock
function used it. A denied call usually also fails the test that made it, through the
pattern's own error path; the session check catches the ones a pattern absorbs (a
retried call, a swallowed error, an EventBridge target that is never invoked).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from sfn_patterns_localstack.emulation.iam.usage import merge_usage, unused_actions

from .iam_denial import matches

REPO_ROOT = Path(__file__).resolve().parents[1]
ROOT = REPO_ROOT / "build" / "iam-usage"
REPORT = REPO_ROOT / "build" / "iam-usage.json"
ENV = "SFNP_IAM_USAGE_FILE"
MODULE_POLICY = re.compile(r"/[^/]+-inline$")
EXEMPT_HEADING = "Granted, not exercised on LocalStack"
# The page whose table under that heading lists them (the documentation site's harness page).
EXEMPT_DOC = REPO_ROOT / "docs" / "harness.md"


def configure(config: pytest.Config) -> None:
    """Register the account for this process (controller or worker)."""
    config.pluginmanager.register(IamCheck(config), "sfn-patterns-iam-check")


def exempt_actions(readme: Path = EXEMPT_DOC) -> set[tuple[str, str]]:
    """(Sid, action) pairs docs/harness.md lists as granted but never called on LocalStack.

    The section is a table whose first two cells are the statement's Sid and the
    action, both in backticks; the third names the AWS page that requires it.
    """
    text = readme.read_text()
    start = text.find(f"\n### {EXEMPT_HEADING}\n")  # the heading, not a mention of it
    if start < 0:
        return set()
    section = text[start + 1 :].split("\n#", 1)[0]
    pairs = set()
    for line in section.splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and ":" in cells[1] and not set(cells[0]) <= set("-: "):
            pairs.add((cells[0], cells[1].lower()))
    return pairs


def _role(principal: str) -> str | None:
    """The role of an assumed-role session ARN (None for a service principal)."""
    match = re.search(r":assumed-role/([^/]+)/", principal)
    return match.group(1) if match else None


def deliberate(row: dict, expected: list[dict]) -> bool:
    """True when a denied call is one a denial test declared (tests/iam_denial.py).

    ``expected``: the ``denial(...)`` entries ``expect_denials`` wrote, each naming the
    principal, the action and the resource it expects refused.
    """
    return any(matches(entry, row) for entry in expected)


def _sid(statement: str) -> str:
    return statement.rsplit("#", 1)[-1]


def module_grants_unused(usage: dict) -> list[dict[str, str]]:
    """The module statements' actions no call used, aggregated over every deployment."""
    unused = [row for row in unused_actions(usage) if MODULE_POLICY.search(row["policy"])]
    used = {
        (_sid(row["statement"]), row["action"].lower())
        for row in usage.get("allowed", [])
        if MODULE_POLICY.search(row["policy"])
    }
    pattern_used = {}
    for row in unused:
        key = (_sid(row["statement"]), row["action"].lower())
        if key not in pattern_used:
            regex = re.compile(
                "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in key[1])
            )
            pattern_used[key] = any(sid == key[0] and regex.fullmatch(a) for sid, a in used)
    found: dict[tuple[str, str], dict[str, str]] = {}
    for row in unused:
        key = (_sid(row["statement"]), row["action"].lower())
        if not pattern_used[key]:
            found.setdefault(key, {"sid": key[0], "action": row["action"], "role": row["role"]})
    return sorted(found.values(), key=lambda r: (r["sid"], r["action"]))


def account(
    usage: dict, expected: list[dict], mode: str, whole: bool, exempt: set[tuple[str, str]]
) -> tuple[list[str], bool]:
    """The session's IAM summary lines, and whether they fail the run.

    Under ``SFNP_IAM=enforce`` a whole run fails when a call was denied that no denial
    test declared (a missing grant, or a denial test that does not say what it
    provokes), naming each, and when a module grant allowed no call and docs/harness.md does
    not list it. A partial run only reports: it makes part of the calls. Under
    ``audit`` the account is a report.
    """
    lines: list[str] = []
    calls = sum(row["calls"] for row in usage["allowed"])
    meant = [row for row in usage["denied"] if deliberate(row, expected)]
    unexpected = [row for row in usage["denied"] if row not in meant]
    lines.append(
        f"SFNP_IAM={mode}: {calls} calls allowed by {len(usage['policies'])} roles' "
        f"policies, {sum(r['calls'] for r in unexpected)} denied unexpectedly, and "
        f"{sum(r['calls'] for r in meant)} denied on purpose by the denial tests "
        "(declared with tests/iam_denial.py expect_denials; all in build/iam-usage.json)"
    )
    for row in unexpected:
        lines.append(
            f"  denied {row['calls']}x, declared by no test: {row['principal']} "
            f"{row['action']} {row['resource']} ({row['reason']})"
        )
    enforce = mode == "enforce"
    if not whole:
        lines.append("unexpected denials and unused grants fail only a whole run: a partial run")
        return lines, False
    failed = False
    if unexpected and enforce:
        lines.append(
            f"{len(unexpected)} kinds of call denied that no test declared: grant what the "
            "call needs, or, for a denial made on purpose, declare it where the test makes it "
            "(tests/iam_denial.py expect_denials)"
        )
        failed = True
    unused = [
        row
        for row in module_grants_unused(usage)
        if (row["sid"], row["action"].lower()) not in exempt
    ]
    if unused:
        lines.append(
            f"{len(unused)} module grants allowed no call in the whole run (remove them, or "
            f'list them in docs/harness.md "{EXEMPT_HEADING}" with the AWS page that needs them):'
        )
        for row in unused:
            lines.append(f"  {row['sid']}: {row['action']} (e.g. role {row['role']})")
        failed = failed or enforce
    else:
        lines.append("every module grant allowed a call (or is listed in docs/harness.md)")
    return lines, failed


def remove_finished_sessions() -> None:
    """Remove the usage of earlier sessions, never of one still running.

    Another pytest in the same checkout (a unit-test run during an integration run)
    must not delete the files that session's LocalStacks and declarations are writing.
    """
    for directory in ROOT.glob("session-*"):
        pid = directory.name.removeprefix("session-")
        if not (pid.isdigit() and _running(int(pid))):
            shutil.rmtree(directory, ignore_errors=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class IamCheck:
    """Points each LocalStack at a usage file; merges and checks them at the end."""

    def __init__(self, config: pytest.Config) -> None:
        self.worker = getattr(config, "workerinput", None)
        self.external = bool(os.environ.get("LOCALSTACK_ENDPOINT"))
        if self.worker is None:
            self.session = ROOT / f"session-{os.getpid()}"
            remove_finished_sessions()
            self.session.mkdir(parents=True)
            own = self.session / "main.json"
        else:
            self.session = Path(os.environ[ENV]).parent
            own = self.session / f"{self.worker['workerid']}.json"
        os.environ[ENV] = str(own)  # inherited by the LocalStack this process starts
        self.summary: list[str] = []

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Merge the usage files; fail on an undeclared denial or a grant that allowed nothing."""
        if self.worker is not None or session.exitstatus == pytest.ExitCode.INTERRUPTED:
            return
        files = sorted(self.session.glob("*.json"))
        expected = [
            json.loads(line)
            for path in sorted(self.session.glob("expected-*.jsonl"))
            for line in path.read_text().splitlines()
        ]
        from sfn_patterns_localstack.server import ENVIRONMENT

        mode = ENVIRONMENT["SFNP_IAM"]
        if not files or self.external:
            if self.external:
                self.summary.append("not checked: LOCALSTACK_ENDPOINT names a LocalStack")
            return
        usage = merge_usage(files)
        REPORT.write_text(json.dumps(usage, indent=1) + "\n")
        # Partial runs (a few files, -k) exercise part of the modules and make part of
        # the denial tests' calls: both checks are about the whole suite.
        options = session.config.option
        whole = session.config.args in ([], ["tests"]) and not options.keyword
        whole = whole and not options.markexpr
        lines, failed = account(usage, expected, mode, whole, exempt_actions())
        self.summary += lines
        if failed:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        """Print the account after the test summary."""
        if self.summary:
            terminalreporter.section("IAM (calls role sessions made on LocalStack)")
            for line in self.summary:
                terminalreporter.write_line(line)
