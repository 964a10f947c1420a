"""Static IAM check: every state machine's role allows what AWS documents for its Tasks.

LocalStack never evaluates a state machine's role, and never makes some calls an
integration makes on AWS (the ``.sync`` managed rule, the Data API's credential
lookup). tests/terraform/iam_static plans every pattern module in every strategy and
option the examples use, one instance of each with a customer managed key, callers'
machines embedding the semaphore's fragments with caller_policy_json only and the job
poller's loop with poll_loop_embedder_policy_json only, and roles holding every other
policy output the modules give their users (sqs-throttle's producer and target-account
policies, status-table's reader and writer policies; not dag-aggregate's
operator_policy_json, which names the plan bucket, known only at apply: the dependency
tests apply it, tests/dag_aggregate/test_dependency_on_localstack.py). This test reads each state
machine's definition and inline role policy from that one plan and checks each
requirement of ``sfn_patterns_localstack.emulation.iam.integrations`` against the
policy (``static_check``). Nothing is applied.

Every role of the plan, with its trust and inline policies, is the differential test's
input (tests/harness/iam/test_differential.py, on a checked-in copy); the policies the
plan cannot know are named in ``UNKNOWN`` with what leaves them unknown.

The same plan holds every definition the modules render, in every strategy and
option: the retry check (``sfn_patterns_localstack.asl_retry``) reads them
too, so every Task is checked for the retriers AWS recommends without another plan.
"""

from __future__ import annotations

import copy
import json
import re
import resource
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sfn_patterns_localstack import asl_retry
from sfn_patterns_localstack.emulation.iam.integrations import required_permissions
from sfn_patterns_localstack.emulation.iam.static_check import (
    check_plan,
    machines_in_plan,
    rendered_policies,
)
from sfn_patterns_localstack.terraform.workspace import REPO_ROOT, Workspace

from .. import result_cache

pytestmark = [pytest.mark.integration, pytest.mark.terraform]

FIXTURE = Path(__file__).resolve().parent / "iam_static"
# What each machine needs, for reading (and for the usage report: the actions
# LocalStack never exercises): machine, state, action, resource, scope, role, AWS page.
REQUIREMENTS_OUT = REPO_ROOT / "build" / "iam-static-requirements.json"
# Every role's trust and inline policies, as the differential test reads them
# (tests/harness/iam/test_differential.py runs without Terraform, on a copy).
POLICIES_OUT = REPO_ROOT / "build" / "iam-rendered-policies.json"
POLICIES_COPY = REPO_ROOT / "tests" / "harness" / "iam" / "rendered_policies.json"
P = 'module.{kind}["{key}"].module.{machine}.aws_sfn_state_machine.this[0]'
# Every machine the fixture plans: the check must see all of them (it cannot pass by
# seeing nothing).
EXPECTED = {
    *(
        P.format(kind="job_poller", key=k, machine="state_machine")
        for k in ("retry", "loop-assign", "loop", "event", "sdk", "sdk-event", "sdk-role")
    ),
    *(
        P.format(kind="semaphore", key=k, machine="wrapper")
        for k in ("callback", "dynamodb", "fifo", "oldest-first", "cross")
    ),
    *(
        P.format(kind="dag_aggregate", key=k, machine="state_machine")
        for k in ("simple-level", "parent-level")
    ),
    *(
        P.format(kind="dag_aggregate", key=k, machine=m)
        for k in ("dependency", "dep-poll")
        for m in ("coordinator", "task_machine")
    ),
    *(
        f'module.semaphore_caller["{k}"].aws_sfn_state_machine.this[0]'
        for k in ("callback", "dynamodb", "fifo", "oldest-first", "cross")
    ),
    *(
        f'module.job_poller_embedder["{k}"].aws_sfn_state_machine.this[0]'
        for k in ("retry", "loop-assign", "loop", "event", "sdk", "sdk-event", "sdk-role")
    ),
}
# The roles holding the modules' other policy outputs (the fixture's consumer roles):
# the differential test must see each of them.
TASK_TABLE_USERS = tuple(
    f"tasks-{k}-{who}" for k in ("plain", "kms") for who in ("reader", "writer")
)
CONSUMERS = (
    *(f"thr-{k}-producer" for k in ("local", "kms", "cross")),
    "thr-cross-target",
    *TASK_TABLE_USERS,
)
_DAG_BUCKET = (
    "ReadPlan and WriteRunResults name the plan bucket's ARN, and the bucket "
    "(aws_s3_bucket.plan, modules/dag-aggregate/dependency.tf) is named by bucket_prefix: "
    "AWS's provider picks its name, so its ARN, at apply"
)
# Inline policies the plan cannot know, and why: left out of the differential test's
# input. A module that builds these ARNs from its inputs would make them known.
UNKNOWN = {
    'module.dag_aggregate["dep-poll"].module.runtime.aws_iam_role_policy.this[0]': _DAG_BUCKET,
    'module.dag_aggregate["dependency"].module.runtime.aws_iam_role_policy.this[0]': _DAG_BUCKET,
}


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@pytest.fixture(scope="module")
def plan(
    localstack_endpoint: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    # The plan depends only on the code (tests/result_cache.py keys it by every module,
    # template and runtime file): one built from the same inputs is read, and the
    # checks below run on it all the same.
    kept = result_cache.built_before("iam_static plan")
    if kept is not None:
        yield json.loads(kept)
        return
    ws = Workspace(FIXTURE, localstack_endpoint, tmp_path_factory.mktemp("iam-static-tf"))
    try:
        before = _cpu_seconds()
        ws.init()
        plan_file = ws.scratch_dir / "plan.tfplan"
        ws.run("plan", "-input=false", "-no-color", "-refresh=false", f"-out={plan_file}")
        shown = ws.run("show", "-json", str(plan_file)).stdout
        print(f"iam_static: init + plan + show took {_cpu_seconds() - before:.1f} CPU-s")
        result_cache.keep_built("iam_static plan", shown)
        yield json.loads(shown)
    finally:
        ws.close()


def test_every_role_allows_what_its_tasks_need(plan: dict[str, Any]) -> None:
    REQUIREMENTS_OUT.parent.mkdir(exist_ok=True)
    REQUIREMENTS_OUT.write_text(
        json.dumps(
            [
                {"machine": m.address, **vars(r)}
                for m in machines_in_plan(plan)
                for r in required_permissions(m.definition, m.context)
            ],
            indent=1,
        )
    )
    report = check_plan([plan])
    assert set(report.machines) == EXPECTED
    assert report.requirements >= 3 * len(EXPECTED)
    assert report.missing == [], "state machine roles lack permissions AWS requires:\n" + (
        "\n".join(str(f) for f in report.missing)
    )


def _policies_text(plan: dict[str, Any]) -> str:
    return json.dumps(rendered_policies(plan), indent=1, sort_keys=True) + "\n"


def test_the_differential_test_reads_the_policies_of_this_plan(plan: dict[str, Any]) -> None:
    text = _policies_text(plan)
    POLICIES_OUT.parent.mkdir(exist_ok=True)
    POLICIES_OUT.write_text(text)
    copy = POLICIES_COPY.relative_to(REPO_ROOT)
    assert POLICIES_COPY.read_text() == text, (
        f"the modules render other IAM policies than {copy} holds, which the differential "
        f"test decides: refresh it with `cp {POLICIES_OUT.relative_to(REPO_ROOT)} {copy}`"
    )


def test_every_consumer_role_is_in_the_input_and_only_the_named_policies_are_unknown(
    plan: dict[str, Any],
) -> None:
    rendered = rendered_policies(plan)
    roles = {role["role"]: role for role in rendered["roles"]}
    assert rendered["unknown"] == sorted(UNKNOWN), (
        "the inline policies unknown at plan time are not the ones UNKNOWN names: "
        "a policy the plan cannot know is left out of the differential test "
        "(name it with its reason), or one UNKNOWN names is known now (drop it)"
    )
    for name in CONSUMERS:
        role = roles[f'aws_iam_role.consumer["{name}"]']
        assert role["identity"], f"{name}: no inline policy"


def test_a_changed_policy_changes_the_differential_tests_input(plan: dict[str, Any]) -> None:
    # The comparison above must see a policy the copy does not hold: widen one statement.
    changed = copy.deepcopy(plan)
    stack = [changed["planned_values"]["root_module"]]
    while stack:
        module = stack.pop()
        stack.extend(module.get("child_modules", []))
        for res in module.get("resources", []):
            if res["type"] == "aws_iam_role_policy" and res["values"].get("policy"):
                document = json.loads(res["values"]["policy"])
                document["Statement"][0]["Resource"] = "arn:aws:s3:::planted/*"
                res["values"]["policy"] = json.dumps(document)
                stack = []
                break
    assert _policies_text(changed) != _policies_text(plan)


def test_tasks_through_credentials_are_listed_for_the_assumed_role(plan: dict[str, Any]) -> None:
    # The job-poller's aws-sdk tasks with aws_sdk_job.role_arn and the semaphore wrapper
    # with target_role_arn act through a role in another account: the machine's role
    # needs only sts:AssumeRole (checked above); what that role needs is the caller's.
    # Across accounts .sync polls DescribeExecution: no managed rule.
    report = check_plan([plan])
    by_machine = {(f.machine.split(".")[1], f.requirement.action) for f in report.other_roles}
    assert by_machine == {
        ('job_poller["sdk-role"]', "states:StartExecution"),
        ('job_poller["sdk-role"]', "states:DescribeExecution"),
        # The embedder's loop polls through the role; it starts the job itself.
        ('job_poller_embedder["sdk-role"]', "states:DescribeExecution"),
        ('semaphore["cross"]', "states:StartExecution"),
        ('semaphore["cross"]', "states:DescribeExecution"),
        ('semaphore["cross"]', "states:StopExecution"),
    }


def test_the_check_fails_when_a_permission_is_removed(plan: dict[str, Any]) -> None:
    # Drop the statement that lets the job poller invoke its Lambdas: the check must
    # name both Tasks that invoke them.
    broken = copy.deepcopy(plan)
    address = P.format(kind="job_poller", key="retry", machine="state_machine")
    module = address.rsplit(".aws_sfn_state_machine", 1)[0]
    found = False
    stack = [broken["planned_values"]["root_module"]]
    while stack:
        current = stack.pop()
        stack.extend(current.get("child_modules", []))
        if current.get("address") != module:
            continue
        for res in current["resources"]:
            if res["type"] == "aws_iam_role_policy":
                policy = json.loads(res["values"]["policy"])
                kept = [s for s in policy["Statement"] if s.get("Sid") != "InvokeJobLambdas"]
                assert len(kept) == len(policy["Statement"]) - 1
                res["values"]["policy"] = json.dumps({**policy, "Statement": kept})
                found = True
    assert found
    assert len(machines_in_plan(broken)) == len(EXPECTED)
    missing = check_plan([broken]).missing
    assert {(f.machine, f.requirement.action) for f in missing} == {
        (address, "lambda:InvokeFunction")
    }
    assert {f.requirement.resource.rsplit(":", 1)[1] for f in missing} == {
        "sfnp-iam-jp-retry-run-job",
        "sfnp-iam-jp-retry-get-job-status",
    }


def _resource_kinds(definition: dict[str, Any]) -> set[str]:
    kinds = set()
    for _, state in asl_retry.tasks(definition):
        integration = state["Resource"].split(":::")[-1]
        kinds.add(":".join(integration.split(":")[:2]).split(".")[0])
    return kinds


def test_every_task_retries_what_aws_recommends(plan: dict[str, Any]) -> None:
    machines = machines_in_plan(plan)
    assert {m.address for m in machines} == EXPECTED
    kinds = set().union(*(_resource_kinds(m.definition) for m in machines))
    # Every kind of Task the patterns use was seen (the check cannot pass on nothing).
    assert {"lambda:invoke", "aws-sdk:sfn", "aws-sdk:redshiftdata", "dynamodb:updateItem"} <= kinds
    findings = [f for m in machines for f in asl_retry.check(m.address, m.definition)]
    assert findings == [], "Tasks without the retriers AWS recommends:\n" + "\n".join(
        str(f) for f in findings
    )


def _state(definition: dict[str, Any], path: str) -> dict[str, Any]:
    return dict(asl_retry.tasks(definition))[path]


def test_the_retry_check_fails_when_a_retrier_is_missing(plan: dict[str, Any]) -> None:
    # Drop the Lambda retrier of the job poller's Run Job, and the throttling retrier of
    # a Data API call inside a dag-aggregate Map: the check names exactly those Tasks.
    machines = {m.address: copy.deepcopy(m.definition) for m in machines_in_plan(plan)}
    poller = P.format(kind="job_poller", key="retry", machine="state_machine")
    dag = P.format(kind="dag_aggregate", key="parent-level", machine="state_machine")
    run_job = _state(machines[poller], "job Run Job")
    run_job["Retry"] = [
        r for r in run_job["Retry"] if "Lambda.ServiceException" not in r["ErrorEquals"]
    ]
    stage = next(name for name in machines[dag]["States"] if name.startswith("Stage 1:"))
    execute = _state(machines[dag], f"{stage}/S1 Execute batch")
    execute["Retry"][0]["JitterStrategy"] = "NONE"
    findings = [f for address, d in machines.items() for f in asl_retry.check(address, d)]
    assert {(f.machine, f.state) for f in findings} == {
        (poller, "job Run Job"),
        (dag, f"{stage}/S1 Execute batch"),
    }
    assert {f.error for f in findings if f.machine == poller} >= set(asl_retry.LAMBDA_ERRORS)


def _reported_roles(plan: dict[str, Any]) -> dict[str, dict[str, set[str]]]:
    """Each pattern call's ``role_arns`` keys, as the fixture's output holds them (the
    ARNs are unknown at plan time, the keys are not)."""
    change = plan["output_changes"]["role_arns"]
    reported: dict[str, dict[str, set[str]]] = {}
    for part in ("after", "after_unknown"):
        value = change.get(part)
        if not isinstance(value, dict):
            continue
        for kind, calls in value.items():
            for key, roles in (calls or {}).items():
                if isinstance(roles, dict):
                    reported.setdefault(kind, {}).setdefault(key, set()).update(roles)
    return reported


def _module_roles(plan: dict[str, Any]) -> Iterator[tuple[str, str | None, dict]]:
    """Every IAM role planned inside a module call: the call (``module.job_poller["event"]``),
    the call's building block that owns it (``completion`` for
    ``module.job_poller["event"].module.completion.module.function...``; None for a role
    of the call itself) and its resource change."""
    for change in plan["resource_changes"]:
        parts = change["address"].split(".")
        if change["type"] == "aws_iam_role" and parts[0] == "module":
            yield ".".join(parts[:2]), parts[3] if parts[2] == "module" else None, change


def _planned_roles(plan: dict[str, Any]) -> dict[str, dict[str, set[str]]]:
    """Each pattern call's IAM roles in the plan, named by the call's building block that
    owns them."""
    planned: dict[str, dict[str, set[str]]] = {}
    for call, block, _ in _module_roles(plan):
        if block is not None:
            kind, _, key = call.removeprefix("module.").partition("[")
            planned.setdefault(kind, {}).setdefault(key.strip('"]'), set()).add(block)
    return planned


def _role_arns_mismatches(plan: dict[str, Any]) -> list[str]:
    """The roles a pattern call plans and its ``role_arns`` leaves out, or names wrongly."""
    reported = _reported_roles(plan)
    planned = _planned_roles(plan)
    found = []
    for kind in ("job_poller", "semaphore", "dag_aggregate", "sqs_throttle"):
        for key in sorted(set(planned.get(kind, {})) | set(reported.get(kind, {}))):
            want = planned.get(kind, {}).get(key, set())
            got = reported.get(kind, {}).get(key, set())
            found += [f"{kind}[{key}]: role {r} not in role_arns" for r in sorted(want - got)]
            found += [f"{kind}[{key}]: role_arns names {r}, unplanned" for r in sorted(got - want)]
    return found


def test_role_arns_names_every_role_each_module_creates(plan: dict[str, Any]) -> None:
    # A key policy or trust policy that names principals needs every role: a role the
    # output leaves out would be denied the key on AWS.
    assert sum(len(calls) for calls in _reported_roles(plan).values()) >= 15
    assert _role_arns_mismatches(plan) == []


def test_a_role_left_out_of_role_arns_fails_the_comparison(plan: dict[str, Any]) -> None:
    planted = copy.deepcopy(plan)
    change = planted["output_changes"]["role_arns"]
    for part in (change.get("after"), change.get("after_unknown")):
        if isinstance(part, dict):
            part["job_poller"]["event"].pop("completion", None)
    assert _role_arns_mismatches(planted) == ["job_poller[event]: role completion not in role_arns"]


# The calls the fixture gives role_path and role_permissions_boundary (its
# local.with_role_settings), and what they set.
ROLE_SETTINGS_CALLS = {
    'module.job_poller["event"]',
    'module.semaphore["cross"]',
    'module.dag_aggregate["dependency"]',
    'module.sqs_throttle["cross"]',
}
ROLE_PATH = "/platform/workloads/"
BOUNDARY = re.compile(r"^arn:aws:iam::\d{12}:policy/[\w-]+-boundary$")


def _role_settings_mismatches(plan: dict[str, Any]) -> list[str]:
    """Roles of a call given a path and boundary that lack them, and roles of any other
    call that have either: every building block must pass both through."""
    found = []
    for call, _, change in _module_roles(plan):
        after = change["change"]["after"]
        path, boundary = after.get("path"), after.get("permissions_boundary")
        if call in ROLE_SETTINGS_CALLS:
            if path != ROLE_PATH or not BOUNDARY.match(str(boundary)):
                found.append(f"{change['address']}: path {path!r}, boundary {boundary!r}")
        elif path != "/" or boundary is not None:
            found.append(f"{change['address']}: path {path!r}, boundary {boundary!r} (not asked)")
    return found


def test_every_role_takes_the_path_and_permissions_boundary_its_call_asks_for(
    plan: dict[str, Any],
) -> None:
    with_settings = {
        change["address"] for call, _, change in _module_roles(plan) if call in ROLE_SETTINGS_CALLS
    }
    assert len(with_settings) >= 10, sorted(with_settings)
    assert _role_settings_mismatches(plan) == []


def test_a_role_without_the_boundary_fails_the_comparison(plan: dict[str, Any]) -> None:
    planted = copy.deepcopy(plan)
    address = 'module.semaphore["cross"].module.reconciler.aws_iam_role.this[0]'
    (role,) = [c for c in planted["resource_changes"] if c["address"] == address]
    role["change"]["after"]["permissions_boundary"] = None
    assert _role_settings_mismatches(planted) == [f"{address}: path {ROLE_PATH!r}, boundary None"]
