"""The portable suite against a stock LocalStack, as a team's CI would run it.

``server.start(stock=True)`` stands in for the LocalStack 4.14.0 container of a CI job: the
same release with none of the project's fixes or emulations. These tests first show it
is stock (a role with no policy is let through, there is no fault route, no Redshift Data
API, no harness fix applied), then run the portable suite against it at the size that
keeps ``make test`` within its time (``SMOKE_PATHS``), through the same script that
generates docs/compatibility.md from a full run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from botocore.exceptions import ClientError

from sfn_patterns_localstack import server
from sfn_patterns_localstack.clients import client_factory, session_clients
from sfn_patterns_localstack.roles import account_root_trust

pytestmark = [pytest.mark.integration, pytest.mark.terraform]

REPO = Path(__file__).resolve().parents[2]
# The part of the portable suite make test runs: one example applied, executed with its
# real handler code, re-planned clean and destroyed. scripts/compatibility.py runs all.
SMOKE_PATHS = ["tests/smoke"]


@pytest.fixture(scope="module")
def stock() -> Iterator[str]:
    """A stock LocalStack on a free port, for this file only."""
    instance = server.start(stock=True)
    try:
        yield instance.endpoint
    finally:
        instance.stop()


def test_a_role_without_policies_is_let_through(stock: str) -> None:
    """No IAM enforcement: what a container LocalStack does unless told otherwise."""
    iam = client_factory(stock)("iam")
    role = iam.create_role(
        RoleName="no-policy", AssumeRolePolicyDocument=json.dumps(account_root_trust())
    )["Role"]["Arn"]
    assert "TableNames" in session_clients(stock, role)("dynamodb").list_tables()


def test_there_is_no_fault_route_and_no_redshift_data_api(stock: str) -> None:
    with pytest.raises(urllib.error.HTTPError) as error:
        urllib.request.urlopen(f"{stock}/_sfnp/faults", timeout=10)
    assert error.value.code in (404, 405)
    with pytest.raises(ClientError) as unavailable:
        client_factory(stock)("redshift-data").list_statements()
    assert unavailable.value.response["ResponseMetadata"]["HTTPStatusCode"] in (501, 404, 400)


def test_no_harness_fix_is_applied(stock: str) -> None:
    """A disabled rule still delivers: LocalStack 4.14.0's own behaviour, which AWS does
    not share and fixes/events_rule_state corrects in the harness."""
    sqs, events = client_factory(stock)("sqs"), client_factory(stock)("events")
    queue = sqs.create_queue(QueueName="disabled-rule-target")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]
    events.put_rule(Name="disabled", EventPattern=json.dumps({"source": ["sfnp.stock"]}))
    events.put_targets(Rule="disabled", Targets=[{"Id": "q", "Arn": arn["QueueArn"]}])
    events.disable_rule(Name="disabled")
    events.put_events(Entries=[{"Source": "sfnp.stock", "DetailType": "t", "Detail": "{}"}])
    received = sqs.receive_message(QueueUrl=queue, WaitTimeSeconds=5).get("Messages", [])
    assert len(received) == 1


def test_the_portable_suite_passes_on_it(stock: str, tmp_path: Path) -> None:
    report = tmp_path / "compatibility.json"
    done = subprocess.run(
        [
            sys.executable,
            "scripts/compatibility.py",
            "--endpoint",
            stock,
            "--workers",
            "1",
            "--json",
            str(report),
            "--only",
            *SMOKE_PATHS,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    groups = json.loads(report.read_text())
    assert groups, done.stdout[-2000:]
    assert all(not group["failed"] for group in groups.values()), groups
    assert sum(group["passed"] for group in groups.values()) >= 1, groups
