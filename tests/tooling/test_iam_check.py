"""The session's IAM account (tests/iam_check.py): exemptions and unused module grants."""

from __future__ import annotations

from pathlib import Path

from tests.iam_check import deliberate, exempt_actions, module_grants_unused


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


def test_only_the_denials_a_denial_test_asked_for_are_deliberate() -> None:
    def row(principal: str, action: str, resource: str) -> dict:
        return {"principal": principal, "action": action, "resource": resource, "calls": 1}

    session = "arn:aws:sts::000000000000:assumed-role/{}/session-1"
    revoked = {"role": "cb-fn", "actions": ["states:sendtasksuccess"], "resource": None}
    bare = {"role": "probe-1a2b", "actions": [], "resource": None}
    permission = {"role": None, "actions": [], "resource": ":function:cleanup"}
    expected = [revoked, bare, permission]
    assert deliberate(row(session.format("cb-fn"), "states:SendTaskSuccess", "*"), expected)
    # The same role's other actions were not revoked: a denial there is a finding.
    assert not deliberate(row(session.format("cb-fn"), "dynamodb:Query", "*"), expected)
    assert deliberate(row(session.format("probe-1a2b"), "sqs:SendMessage", "q"), expected)
    fn = "arn:aws:lambda:us-east-1:000000000000:function:cleanup"
    assert deliberate(row("events.amazonaws.com", "lambda:InvokeFunction", fn), expected)
    other = "arn:aws:lambda:us-east-1:000000000000:function:acquire"
    assert not deliberate(row("events.amazonaws.com", "lambda:InvokeFunction", other), expected)
    assert not deliberate(row(session.format("cb-fn"), "states:SendTaskSuccess", "*"), [])
