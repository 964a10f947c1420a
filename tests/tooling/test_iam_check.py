"""The session's IAM account (tests/iam_check.py): exemptions and unused module grants."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.iam_check import account, deliberate, exempt_actions, module_grants_unused
from tests.iam_denial import USAGE_ENV, denial, expect_denials


def _policy(role: str, statements: list[dict]) -> dict:
    return {"name": f"{role}/{role}-inline", "document": {"Statement": statements}}


def test_a_grant_used_by_any_deployment_counts_as_used() -> None:
    statement = {"Sid": "LockItem", "Effect": "Allow", "Action": ["dynamodb:UpdateItem"]}
    unused_stmt = {"Sid": "Extra", "Effect": "Allow", "Action": ["dynamodb:Scan"]}
    usage = {
        "policies": {
            "a-lock": [_policy("a-lock", [statement, unused_stmt])],
            "b-lock": [_policy("b-lock", [statement, unused_stmt])],
        },
        "allowed": [
            {
                "role": "b-lock",
                "policy": "b-lock/b-lock-inline",
                "statement": "b-lock/b-lock-inline#LockItem",
                "action": "dynamodb:UpdateItem",
                "resource_pattern": "*",
                "calls": 1,
            }
        ],
    }
    # a-lock never called UpdateItem, b-lock did: LockItem is used; Extra never was.
    assert [(r["sid"], r["action"]) for r in module_grants_unused(usage)] == [
        ("Extra", "dynamodb:Scan")
    ]


def test_policies_that_are_not_a_modules_are_not_accounted() -> None:
    usage = {
        "policies": {
            "consumer": [
                {
                    "name": "consumer/producer",
                    "document": {"Statement": [{"Effect": "Allow", "Action": "sqs:*"}]},
                }
            ]
        },
        "allowed": [],
    }
    assert module_grants_unused(usage) == []


def test_the_readme_table_names_sid_and_action(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(
        '# x\n\nA mention of "Granted, not exercised on LocalStack" is not the table.\n'
        "| `Mentioned` | `s3:ListBucket` | x |\n\n"
        "### Granted, not exercised on LocalStack\n\n"
        "| statement | action | why |\n|---|---|---|\n"
        "| `SyncRule` | `events:PutRule` | a page |\n\n## Next\n| `Other` | `s3:GetObject` | x |\n"
    )
    assert exempt_actions(readme) == {("SyncRule", "events:putrule")}


def test_the_harness_page_lists_the_grants_localstack_never_exercises() -> None:
    """The real table is found where the session check looks (docs/harness.md): a moved
    page or a renamed heading would otherwise exempt nothing and fail a whole run."""
    exempt = exempt_actions()
    assert ("SyncRule", "events:putrule") in exempt
    assert ("DeliverExecutionLogs", "logs:createlogdelivery") in exempt
    assert all(":" in action for _, action in exempt)


def _denied(principal: str, action: str, resource: str, calls: int = 1) -> dict:
    return {
        "principal": principal,
        "action": action,
        "resource": resource,
        "reason": "implicit-deny",
        "enforced": True,
        "calls": calls,
    }


SESSION = "arn:aws:sts::000000000000:assumed-role/{}/session-1"
CLEANUP = "arn:aws:lambda:us-east-1:000000000000:function:cleanup"


def test_only_the_denials_a_denial_test_declared_are_deliberate() -> None:
    expected = [
        denial("arn:aws:iam::000000000000:role/cb-fn", "states:SendTaskSuccess", "*"),
        denial("probe-1a2b", "dynamodb:ListTables", "*"),
        denial("events.amazonaws.com", "lambda:InvokeFunction", CLEANUP),
        denial("reader", "dynamodb:Query", "arn:aws:dynamodb:*:table/t/index/*"),
    ]
    assert deliberate(_denied(SESSION.format("cb-fn"), "states:SendTaskSuccess", "*"), expected)
    # The action is compared case-insensitively, as IAM does.
    assert deliberate(_denied(SESSION.format("cb-fn"), "states:sendtasksuccess", "*"), expected)
    # The same role's other actions were not declared: a denial there is a finding.
    assert not deliberate(_denied(SESSION.format("cb-fn"), "dynamodb:Query", "*"), expected)
    # A role made with no policy is declared for the one call it makes, not for any.
    assert deliberate(_denied(SESSION.format("probe-1a2b"), "dynamodb:ListTables", "*"), expected)
    assert not deliberate(_denied(SESSION.format("probe-1a2b"), "sqs:SendMessage", "q"), expected)
    # A role whose name only starts like a declared one is another role.
    assert not deliberate(
        _denied(SESSION.format("probe-1a2b-x"), "dynamodb:ListTables", "*"), expected
    )
    # Any session of the role, in any account (a cross-account role).
    other = "arn:aws:sts::222222222222:assumed-role/reader/consumer"
    index = "arn:aws:dynamodb:us-east-1:222222222222:table/t/index/by-status"
    assert deliberate(_denied(other, "dynamodb:Query", index), expected)
    assert not deliberate(_denied(other, "dynamodb:Query", index.replace("/t/", "/u/")), expected)
    assert deliberate(_denied("events.amazonaws.com", "lambda:InvokeFunction", CLEANUP), expected)
    acquire = CLEANUP.replace("cleanup", "acquire")
    assert not deliberate(
        _denied("events.amazonaws.com", "lambda:InvokeFunction", acquire), expected
    )
    # A role's session is not the service principal, and the other way round.
    assert not deliberate(
        _denied(SESSION.format("events"), "lambda:InvokeFunction", CLEANUP), expected
    )
    assert not deliberate(_denied(SESSION.format("cb-fn"), "states:SendTaskSuccess", "*"), [])


def _usage(denied: list[dict], unused_sid: str | None = None) -> dict:
    statements = [{"Sid": "Used", "Effect": "Allow", "Action": ["dynamodb:GetItem"]}]
    if unused_sid:
        statements.append({"Sid": unused_sid, "Effect": "Allow", "Action": ["dynamodb:Scan"]})
    return {
        "policies": {"fn": [_policy("fn", statements)]},
        "allowed": [
            {
                "role": "fn",
                "policy": "fn/fn-inline",
                "statement": "fn/fn-inline#Used",
                "action": "dynamodb:GetItem",
                "resource_pattern": "*",
                "calls": 5,
            }
        ],
        "denied": denied,
    }


MEANT = _denied(SESSION.format("probe-1"), "dynamodb:ListTables", "*")
MISSING_GRANT = _denied(SESSION.format("fn"), "dynamodb:Query", "arn:t/index/i", calls=3)
DECLARED = [denial("probe-1", "dynamodb:ListTables", "*")]


def test_a_whole_enforced_run_with_an_undeclared_denial_fails_naming_it() -> None:
    lines, failed = account(_usage([MEANT, MISSING_GRANT]), DECLARED, "enforce", True, set())
    assert failed
    assert "5 calls allowed" in lines[0] and "3 denied unexpectedly" in lines[0]
    assert "1 denied on purpose" in lines[0]
    named = [line for line in lines if "declared by no test" in line]
    assert named == [
        f"  denied 3x, declared by no test: {SESSION.format('fn')} dynamodb:Query "
        "arn:t/index/i (implicit-deny)"
    ]
    assert any("1 kinds of call denied that no test declared" in line for line in lines)


def test_only_declared_denials_pass() -> None:
    lines, failed = account(_usage([MEANT]), DECLARED, "enforce", True, set())
    assert not failed, lines
    assert "0 denied unexpectedly" in lines[0] and "1 denied on purpose" in lines[0]
    assert lines[-1] == "every module grant allowed a call (or is listed in docs/harness.md)"


def test_the_same_denial_undeclared_counts_against_the_run() -> None:
    lines, failed = account(_usage([MEANT]), [], "enforce", True, set())
    assert failed and "1 denied unexpectedly" in lines[0]


def test_a_partial_run_or_an_audit_run_reports_without_failing() -> None:
    usage = _usage([MEANT, MISSING_GRANT], unused_sid="Extra")
    lines, failed = account(usage, DECLARED, "enforce", False, set())
    assert not failed
    assert any("declared by no test" in line for line in lines)  # still printed
    assert not any("allowed no call" in line for line in lines)  # not judged on a part
    lines, failed = account(usage, DECLARED, "audit", True, set())
    assert not failed
    assert any("declared by no test" in line for line in lines)
    assert any("1 module grants allowed no call" in line for line in lines)


def test_a_module_action_that_allowed_nothing_fails_a_whole_enforced_run() -> None:
    lines, failed = account(_usage([], unused_sid="Extra"), [], "enforce", True, set())
    assert failed
    assert "  Extra: dynamodb:Scan (e.g. role fn)" in lines
    # Listed in docs/harness.md's "Granted, not exercised on LocalStack": explained, not failed.
    lines, failed = account(
        _usage([], unused_sid="Extra"), [], "enforce", True, {("Extra", "dynamodb:scan")}
    )
    assert not failed, lines


def _record(path: Path, *rows: dict) -> None:
    path.write_text(json.dumps({"policies": {}, "allowed": [], "denied": list(rows)}))


@pytest.fixture
def usage_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A worker's usage name (gw9.json), as tests/iam_check.py sets it; no external LocalStack."""
    monkeypatch.setenv(USAGE_ENV, str(tmp_path / "gw9.json"))
    monkeypatch.delenv("LOCALSTACK_ENDPOINT", raising=False)
    from sfn_patterns_localstack.server import ENVIRONMENT

    monkeypatch.setitem(ENVIRONMENT, "SFNP_IAM", "enforce")
    return tmp_path


def test_a_declared_denial_is_written_for_the_session_and_checked_on_the_record(
    usage_dir: Path,
) -> None:
    expected = denial("probe-1", "dynamodb:ListTables", "*")
    # Two LocalStacks of this process (the session's, a test's own), one row before.
    _record(usage_dir / "gw9.100.json", {**MEANT, "calls": 1})
    with expect_denials(expected, timeout=5):
        _record(usage_dir / "gw9.200.json", MEANT)  # the body's refused call, recorded
    declared = (usage_dir / f"expected-{os.getpid()}.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in declared] == [expected]


def test_a_declared_denial_that_did_not_happen_fails_the_test(usage_dir: Path) -> None:
    # Happened before the block (an earlier test), and another role's denial in it: not it.
    _record(usage_dir / "gw9.100.json", MEANT)
    with (
        pytest.raises(AssertionError, match="declared denials that did not happen"),
        expect_denials(denial("probe-1", "dynamodb:ListTables", "*"), timeout=0.5),
    ):
        _record(usage_dir / "gw9.100.json", MEANT, {**MEANT, "principal": SESSION.format("x")})
    # Another worker's file (gw90) is another process's LocalStack: not this one's record.
    with (
        pytest.raises(AssertionError),
        expect_denials(denial("probe-1", "dynamodb:ListTables", "*"), timeout=0.5),
    ):
        _record(usage_dir / "gw90.100.json", MEANT)


def test_every_declared_denial_must_happen(usage_dir: Path) -> None:
    first = denial("probe-1", "dynamodb:ListTables", "*")
    second = denial("fn", "dynamodb:Query", "arn:t/index/*")
    with (
        pytest.raises(AssertionError, match="dynamodb:query"),
        expect_denials(first, second, timeout=0.5),
    ):
        _record(usage_dir / "gw9.100.json", MEANT)
    with expect_denials(first, second, timeout=5):
        _record(usage_dir / "gw9.100.json", {**MEANT, "calls": 2}, MISSING_GRANT)


def test_a_failing_body_is_not_masked_by_the_check(usage_dir: Path) -> None:
    with pytest.raises(KeyError), expect_denials(*DECLARED, timeout=0.1):
        raise KeyError("the test's own failure")


def test_a_new_session_removes_finished_sessions_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A unit-test run during an integration run must not delete that run's usage files."""
    import subprocess
    import sys

    from tests import iam_check

    finished = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    monkeypatch.setattr(iam_check, "ROOT", tmp_path)
    for pid in (os.getpid(), int(finished.stdout)):
        (tmp_path / f"session-{pid}").mkdir()
        (tmp_path / f"session-{pid}" / "gw0.1.json").write_text("{}")
    iam_check.remove_finished_sessions()
    assert [p.name for p in tmp_path.iterdir()] == [f"session-{os.getpid()}"]
