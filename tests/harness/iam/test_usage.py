"""The usage recorder's file, the merge of several workers' files and the unused-grant list."""

from __future__ import annotations

import json
import os

from sfn_patterns_localstack.emulation.iam.policy import NamedPolicy, StatementRef
from sfn_patterns_localstack.emulation.iam.usage import UsageRecorder, merge_usage, unused_actions

TABLE = "arn:aws:dynamodb:us-east-1:000000000000:table/jobs"


def ref(sid: str, action: str = "dynamodb:*", resource: str = TABLE) -> StatementRef:
    return StatementRef("worker/inline", 0, sid, "Allow", action, resource)


def test_flush_writes_counts_atomically(tmp_path):
    path = tmp_path / "usage" / "iam-usage.json"
    recorder = UsageRecorder(path)
    for _ in range(3):
        recorder.allowed("worker", ref("Write"), "dynamodb:PutItem")
    recorder.denied(
        "arn:aws:sts::0:assumed-role/worker/s", "dynamodb:Query", TABLE, "implicit-deny", True
    )
    recorder.flush()
    document = json.loads(path.read_text())
    assert document["allowed"] == [
        {
            "role": "worker",
            "policy": "worker/inline",
            "statement": "worker/inline#Write",
            "action": "dynamodb:PutItem",
            "resource_pattern": TABLE,
            "calls": 3,
        }
    ]
    assert document["denied"][0]["reason"] == "implicit-deny"
    assert document["denied"][0]["enforced"] is True
    assert [p.name for p in path.parent.iterdir()] == ["iam-usage.json"]  # no temp file left


def test_periodic_flush_writes_without_a_stop(tmp_path):
    path = tmp_path / "u.json"
    recorder = UsageRecorder(path, interval=0.05)
    recorder.start()
    recorder.allowed("worker", ref("Write"), "dynamodb:PutItem")
    import time

    deadline = time.monotonic() + 10
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert json.loads(path.read_text())["allowed"][0]["calls"] == 1


def test_merge_sums_the_same_key_across_files(tmp_path):
    files = []
    for i, calls in enumerate((2, 5)):
        recorder = UsageRecorder(tmp_path / f"{i}.json")
        for _ in range(calls):
            recorder.allowed("worker", ref("Write"), "dynamodb:PutItem")
        recorder.allowed("worker", ref("Read"), f"dynamodb:GetItem{i}")
        recorder.flush()
        files.append(recorder.path)
    files.append(tmp_path / "missing.json")
    merged = merge_usage(files)
    by_action = {row["action"]: row["calls"] for row in merged["allowed"]}
    assert by_action == {"dynamodb:PutItem": 7, "dynamodb:GetItem0": 1, "dynamodb:GetItem1": 1}


def test_unused_actions_lists_granted_actions_that_allowed_nothing():
    document = {
        "Statement": [
            {
                "Sid": "Write",
                "Effect": "Allow",
                "Action": ["dynamodb:PutItem", "dynamodb:DeleteItem"],
                "Resource": TABLE,
            },
            {"Effect": "Allow", "Action": "states:SendTask*", "Resource": "*"},
            {"Effect": "Deny", "Action": "dynamodb:Scan", "Resource": "*"},
            {"Effect": "Allow", "NotAction": "iam:*", "Resource": "*"},
        ]
    }
    usage = {
        "allowed": [
            {
                "role": "worker",
                "policy": "worker/inline",
                "statement": "worker/inline#Write",
                "action": "dynamodb:PutItem",
            },
            {
                "role": "worker",
                "policy": "worker/inline",
                "statement": "worker/inline#[1]",
                "action": "states:SendTaskSuccess",
            },
            # The same action through another role's statement does not count here.
            {
                "role": "other",
                "policy": "worker/inline",
                "statement": "worker/inline#Write",
                "action": "dynamodb:DeleteItem",
            },
        ]
    }
    unused = unused_actions(usage, {"worker": [NamedPolicy("worker/inline", document)]})
    assert unused == [
        {
            "role": "worker",
            "policy": "worker/inline",
            "statement": "worker/inline#Write",
            "action": "dynamodb:DeleteItem",
        }
    ]


def test_each_localstack_process_writes_its_own_file(tmp_path):
    """Two LocalStacks a test process starts (its session's, a test's own) never share a file."""
    from sfn_patterns_localstack.emulation.iam.handler import usage_path

    name = str(tmp_path / "gw0.json")
    assert usage_path(name, 101) == tmp_path / "gw0.101.json"
    assert usage_path(name, 101) != usage_path(name, 102)
    assert usage_path(name).name == f"gw0.{os.getpid()}.json"
