"""The session's IAM account (tests/iam_check.py): exemptions and unused module grants."""

from __future__ import annotations

from pathlib import Path

from tests.iam_check import exempt_actions, module_grants_unused


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
