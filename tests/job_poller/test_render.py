"""Every job-poller template and variant rendered and validated offline (no LocalStack)."""

from __future__ import annotations

import json

import pytest

from sfn_patterns_localstack.asl import render_tftpl, validate

from . import render

STRATEGIES = ("wait-count", "start-time")


def _lambda(strategy: str, timeout: int = 600) -> dict:
    return render.machine(
        "job",
        render.lambda_variant("demo", "job", strategy, timeout),
        initial=60,
        interval=30,
        timeout=timeout,
        strategy=strategy,
    )


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_lambda_variant_renders_valid_asl(strategy: str) -> None:
    definition = validate(_lambda(strategy))
    states = definition["States"]
    assert definition["StartAt"] == "job Run Job"
    assert states["job Run Job"]["Next"] == "job Start"
    # Run Job -> Wait (initial) -> Get Status -> Choice, looping through Count -> Wait (poll).
    assert states["job Start"]["Next"] == "job Wait Initial"
    assert states["job Start"]["Parameters"]["initial_wait_seconds"] == 60
    assert states["job Wait Initial"]["SecondsPath"] == "$.job_poller.job.loop.initial_wait_seconds"
    assert states["job Wait Initial"]["Next"] == "job Get Status"
    assert states["job Get Status"]["Next"] == "job Check"
    assert states["job Count"]["Next"] == "job Wait Poll"
    assert states["job Wait Poll"]["Seconds"] == 30
    assert states["job Wait Poll"]["Next"] == "job Get Status"
    # Both Lambdas receive the whole context object.
    for name in ("job Run Job", "job Get Status"):
        assert states[name]["Parameters"]["Payload"]["context.$"] == "$$"
        assert states[name]["Parameters"]["Payload"]["timeout_strategy"] == strategy
    waits = render.max_wait_count(60, 30, 600, strategy)
    assert waits == (19 if strategy == "start-time" else 18)
    assert states["job Start"]["Parameters"]["max_wait_count"] == waits


def test_unknown_status_fails_instead_of_looping() -> None:
    states = _lambda("wait-count")["States"]
    check = states["job Check"]
    assert check["Default"] == "job Unknown Status"
    assert states["job Unknown Status"]["Type"] == "Fail"
    assert states["job Unknown Status"]["Error"] == "JobPoller.UnknownStatus"
    # The only way back into the loop is an explicit RUNNING.
    loops = [rule for rule in check["Choices"] if rule["Next"] == "job Count"]
    assert loops == [
        {
            "Or": [{"Variable": "$.job_poller.job.status.status", "StringEquals": "RUNNING"}],
            "Next": "job Count",
        }
    ]


def test_wait_count_rule_precedes_the_loop_and_uses_math_add() -> None:
    states = _lambda("wait-count")["States"]
    nexts = [rule["Next"] for rule in states["job Check"]["Choices"]]
    assert nexts == ["job Succeeded", "job Job Failed", "job Timed Out", "job Count"]
    timeout_rule = states["job Check"]["Choices"][2]["And"][1]
    assert timeout_rule == {
        "Variable": "$.job_poller.job.loop.wait_count",
        "NumericGreaterThanEqualsPath": "$.job_poller.job.loop.max_wait_count",
    }
    assert states["job Start"]["Parameters"]["max_wait_count"] == 18
    count = states["job Count"]["Parameters"]["wait_count.$"]
    assert count == "States.MathAdd($.job_poller.job.loop.wait_count, 1)"


def test_retries_use_backoff_with_jitter_and_catch_carries_the_cause() -> None:
    states = _lambda("start-time")["States"]
    for name in ("job Run Job", "job Get Status"):
        (retry,) = states[name]["Retry"]
        assert "RetryableJobError" in retry["ErrorEquals"]
        assert "Lambda.TooManyRequestsException" in retry["ErrorEquals"]
        assert retry["BackoffRate"] == 2
        assert retry["JitterStrategy"] == "FULL"
    catches = {c["ErrorEquals"][0]: c["Next"] for c in states["job Get Status"]["Catch"]}
    assert catches == {"JobTimeoutError": "job Timed Out", "States.ALL": "job Poll Error"}
    error = states["job Poll Error"]
    assert error["ErrorPath"] == "$.job_poller.job.error.Error"
    assert error["CausePath"] == "$.job_poller.job.error.Cause"


def test_aws_sdk_variant_has_no_lambda_and_rebuilds_describe_input() -> None:
    variant = render.sdk_variant("child")
    definition = validate(
        render.machine("child", variant, initial=10, interval=5, timeout=60, strategy="wait-count")
    )
    states = definition["States"]
    assert "lambda" not in json.dumps(definition)
    assert states["child Run Job"]["Resource"] == "arn:aws:states:::aws-sdk:sfn:startExecution"
    assert states["child Get Status"]["Parameters"] == {
        "ExecutionArn.$": "$.job_poller.child.run.handle.ExecutionArn"
    }
    failed = [r["StringEquals"] for r in states["child Check"]["Choices"][1]["Or"]]
    assert failed == ["FAILED", "TIMED_OUT", "ABORTED"]


def test_fragment_alone_is_a_mergeable_object_with_parameterised_exits() -> None:
    exits = {
        "succeeded": "Next Step",
        "failed": "Handle Failure",
        "timeout": "Handle Failure",
        "unknown": "Handle Failure",
        "error": "Handle Failure",
    }
    text = render.fragment(
        "export", render.sdk_variant("export"), initial=1, interval=1, waits=3, exits=exits
    )
    loop = json.loads(text)
    assert set(loop) == {
        "export Start",
        "export Wait Initial",
        "export Get Status",
        "export Check",
        "export Count",
        "export Wait Poll",
    }
    host = {
        "StartAt": "Kick Off",
        "States": {
            "Kick Off": {"Type": "Pass", "Next": "export Start"},
            **loop,
            "Next Step": {"Type": "Succeed"},
            "Handle Failure": {"Type": "Fail", "Error": "Failed"},
        },
    }
    validate(host)


def test_two_loops_merge_into_one_machine_with_separate_paths() -> None:
    fast = render.lambda_variant("demo", "fast", "wait-count", 3)
    slow = render.lambda_variant("demo", "slow", "start-time", 30)
    machine = render.machine("fast", fast, initial=1, interval=1, timeout=3, strategy="wait-count")
    second = render.machine("slow", slow, initial=2, interval=1, timeout=30, strategy="start-time")
    machine["States"]["fast Check"]["Choices"][0]["Next"] = "slow Run Job"
    del machine["States"]["fast Succeeded"]
    machine["States"].update(second["States"])
    states = validate(machine)["States"]
    assert states["fast Start"]["ResultPath"] == "$.job_poller.fast.loop"
    assert states["slow Start"]["ResultPath"] == "$.job_poller.slow.loop"
    assert states["fast Start"]["Parameters"]["max_wait_count"] == 2
    assert states["slow Start"]["Parameters"]["max_wait_count"] == 29


def test_templates_use_no_directives_and_every_placeholder_is_filled() -> None:
    for template in (render.FRAGMENT, render.MACHINE):
        assert "%{" not in template.read_text()
    with pytest.raises(KeyError):
        render_tftpl(render.FRAGMENT, {"name": "x"})


@pytest.mark.parametrize(
    ("initial", "interval", "timeout", "strategy", "expected"),
    [
        (60, 30, 3600, "wait-count", 118),
        (0, 1, 100, "wait-count", 100),
        (10, 10, 10, "wait-count", 0),
        (900, 60, 1800, "start-time", 16),
    ],
)
def test_max_wait_count_arithmetic(
    initial: int, interval: int, timeout: int, strategy: str, expected: int
) -> None:
    assert render.max_wait_count(initial, interval, timeout, strategy) == expected


def test_history_budget_numbers() -> None:
    # 1-second polling for 3 hours with 3 retries: far over the 25,000 events.
    assert render.history_events_worst_case(10800, 3) == 20 + 18 + 10800 * 20
    # The module's default settings (60 / 30 / 3600): 118 loops.
    assert render.history_events_worst_case(118, 3) == 2398


def test_fragment_serves_a_redshift_data_api_poll_loop() -> None:
    """The same template renders dag-aggregate's Redshift Data API loop; ABORTED fails."""
    variant = {
        "get_status_resource": "arn:aws:states:::aws-sdk:redshiftdata:describeStatement",
        "get_status_parameters": {"Id.$": "$.job_poller.sql.run.handle.Id"},
        "get_status_result_selector": {"status.$": "$.Status", "result.$": "$"},
        "retry_errors": ["RedshiftData.ThrottlingException"],
        "succeeded": ["FINISHED"],
        "failed": ["FAILED", "ABORTED"],
        "running": ["SUBMITTED", "PICKED", "STARTED"],
    }
    exits = dict.fromkeys(("failed", "timeout", "unknown", "error"), "Task Failed")
    exits["succeeded"] = "Task Done"
    loop = json.loads(render.fragment("sql", variant, initial=5, interval=5, waits=10, exits=exits))
    host = {
        "StartAt": "Execute",
        "States": {
            "Execute": {
                "Type": "Task",
                "Resource": "arn:aws:states:::aws-sdk:redshiftdata:executeStatement",
                "Parameters": {"Sql": "select 1", "WorkgroupName": "wg", "Database": "dev"},
                "ResultSelector": {"handle.$": "$"},
                "ResultPath": "$.job_poller.sql.run",
                "Next": "sql Start",
            },
            **loop,
            "Task Done": {"Type": "Succeed"},
            "Task Failed": {"Type": "Fail", "Error": "SqlFailed"},
        },
    }
    states = validate(host)["States"]
    failed = [r["StringEquals"] for r in states["sql Check"]["Choices"][1]["Or"]]
    assert failed == ["FAILED", "ABORTED"]
    running = [r["StringEquals"] for r in states["sql Check"]["Choices"][3]["Or"]]
    assert running == ["SUBMITTED", "PICKED", "STARTED"]
