"""asl-validator checks the ASL this project renders, offline and at the end of a session.

* The validator rejects a ``Next`` to a missing state (which LocalStack's parser
  accepts), and the failure names the state machine, where it came from, the state and
  the validator's message; schema errors are located at their state too.
* Sharing the compiled schemas across definitions (validate.cjs) finds exactly what
  asl-validator's own per-definition build finds.
* The definitions the Python renderers produce from ``templates/`` (the smoke template;
  the dag-aggregate state machine, whose poll loops are the job-poller templates) pass,
  in one node process, without LocalStack.
* The session check (tests/asl_check.py) fails a session whose LocalStack received a
  broken definition, and LocalStack records what CreateStateMachine and
  UpdateStateMachine accept.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from sfn_patterns_cli.dag_aggregate.options import RenderOptions, Target
from sfn_patterns_cli.dag_aggregate.planner import plan_from_dir
from sfn_patterns_cli.dag_aggregate.render import render
from sfn_patterns_cli.dag_aggregate.strategies import STRATEGIES
from sfn_patterns_localstack.asl import render_tftpl
from sfn_patterns_localstack.asl_recorder import ENV
from sfn_patterns_localstack.asl_validation import Definition, Problem, validate

REPO_ROOT = Path(__file__).resolve().parents[2]
ROLE = "arn:aws:iam::000000000000:role/sfn-test"
FUNCTION = "arn:aws:lambda:us-east-1:123456789012:function:f"


def _text(states: dict, start: str = "A") -> str:
    return json.dumps({"StartAt": start, "States": states})


SMOKE = REPO_ROOT / "templates/smoke/definition.asl.json.tftpl"
VALID = _text({"A": {"Type": "Pass", "Next": "B"}, "B": {"Type": "Succeed"}})
MISSING_NEXT = _text({"A": {"Type": "Pass", "Next": "Nowhere"}, "B": {"Type": "Succeed"}})
NESTED_MISSING_NEXT = _text(
    {
        "M": {
            "Type": "Map",
            "ItemProcessor": {"StartAt": "X", "States": {"X": {"Type": "Pass", "Next": "Q"}}},
            "End": True,
        }
    },
    start="M",
)
WAIT_WITHOUT_DURATION = _text({"W": {"Type": "Wait", "End": True}}, start="W")


def _smoke() -> str:
    return render_tftpl(SMOKE, {"function_arn": FUNCTION, "partition": "aws"})


def _python_rendered() -> list[Definition]:
    """Every definition the Python renderers make from templates/, for each option."""
    found = [Definition("smoke", str(SMOKE.relative_to(REPO_ROOT)), _smoke())]
    plan = plan_from_dir(REPO_ROOT / "examples/dag-aggregate/sql")
    completions = {
        "poll": {"completion": "poll", "default_timeout": 600},
        "event": {"completion": "event", "completion_function_arn": FUNCTION},
    }
    target = Target(database="dev", workgroup_name="wg")
    for strategy in STRATEGIES:
        for label, completion in completions.items():
            options = RenderOptions(target=target, max_concurrency=4, **completion)
            text = render(plan, strategy, options)
            found.append(Definition(f"dag {strategy} {label}", "dag-aggregate render()", text))
    return found


def _broken_smoke() -> str:
    broken = json.loads(_smoke())
    del broken["States"]["Echo"]["End"]
    broken["States"]["Echo"]["Next"] = "Nowhere"
    return json.dumps(broken)


HANDMADE = [
    Definition("valid", "1", VALID),
    Definition("missing", "2", MISSING_NEXT),
    Definition("wait", "3", WAIT_WITHOUT_DURATION),
    Definition("nested", "4", NESTED_MISSING_NEXT),
    Definition("not-json", "5", "{nope"),
    Definition("broken-smoke", "made here", _broken_smoke()),
]


@pytest.fixture(scope="module")
def findings() -> dict[str, list[Problem]]:
    """One node process for the whole module: the rendered and the hand-made definitions."""
    rendered = _python_rendered()
    assert len(rendered) == 1 + 2 * len(STRATEGIES)
    by_name: dict[str, list[Problem]] = {d.name: [] for d in rendered + HANDMADE}
    for problem in validate(rendered + HANDMADE):
        by_name[problem.name].append(problem)
    return by_name


def test_a_next_to_a_missing_state_is_rejected_naming_the_state(
    findings: dict[str, list[Problem]],
) -> None:
    missing = Problem(
        "broken-smoke",
        "made here",
        "'Echo'",
        "MISSING_TRANSITION_TARGET",
        "Missing 'StartAt'|'Next'|'Default' target: Nowhere",
    )
    assert missing in findings["broken-smoke"]
    assert str(missing) == (
        "broken-smoke (made here): state 'Echo': MISSING_TRANSITION_TARGET: "
        "Missing 'StartAt'|'Next'|'Default' target: Nowhere"
    )


def test_definitions_rendered_from_templates_pass(findings: dict[str, list[Problem]]) -> None:
    rendered = [name for name in findings if name == "smoke" or name.startswith("dag ")]
    assert len(rendered) == 1 + 2 * len(STRATEGIES)
    assert {name: findings[name] for name in rendered} == {name: [] for name in rendered}


def test_problems_are_located_at_their_state(findings: dict[str, list[Problem]]) -> None:
    located = {
        (p.name, p.state, p.code)
        for name in ("missing", "nested", "wait", "valid")
        for p in findings[name]
    }
    assert located == {
        ("missing", "'A'", "MISSING_TRANSITION_TARGET"),
        ("missing", "'B'", "MISSING_TRANSITION_TARGET"),  # "State B is not reachable"
        ("nested", "'M'/'X'", "MISSING_TRANSITION_TARGET"),
        # "State machine fsm<n> is missing a terminal state": the validator's own name for
        # the Map's processor; located at the machine
        ("nested", "(state machine)", "MISSING_TERMINAL_STATE"),
        ("wait", "'W'", "WAIT_DURATION"),
    }
    assert findings["not-json"] == [
        Problem(
            "not-json",
            "5",
            "(not JSON)",
            "INVALID_JSON",
            "Expected property name or '}' in JSON at position 1",
        )
    ]


def test_shared_schemas_find_what_a_fresh_validator_finds(
    findings: dict[str, list[Problem]],
) -> None:
    """validate.cjs reuses the first definition's compiled schemas: same findings."""
    batch = HANDMADE[:3]  # valid first: the broken ones are checked on reused schemas
    assert validate(batch, fresh=True) == [p for d in batch for p in findings[d.name]]


SESSION_TEST = """
    import json
    import os
    from pathlib import Path

    from sfn_patterns_localstack.asl_recorder import ENV, record


    def test_deploys_two_machines():
        here = Path(os.environ[ENV])
        record(here, "fine-machine", "CreateStateMachine", {valid!r})
        record(here, "broken-machine", "CreateStateMachine", {broken!r})
"""


def test_the_session_fails_when_localstack_received_a_broken_definition(tmp_path: Path) -> None:
    """A whole pytest session: its tests pass, the definitions check fails it."""
    (tmp_path / "conftest.py").write_text(
        "from tests import asl_check\n\n\n"
        "def pytest_configure(config):\n    asl_check.configure(config)\n"
    )
    (tmp_path / "test_inner.py").write_text(
        textwrap.dedent(SESSION_TEST.format(valid=VALID, broken=MISSING_NEXT))
    )
    env = {k: v for k, v in os.environ.items() if k not in (ENV, "LOCALSTACK_ENDPOINT")}
    env["PYTHONPATH"] = str(REPO_ROOT)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "--rootdir",
            str(tmp_path),
            str(tmp_path),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    out = done.stdout
    assert done.returncode == 1, out
    assert "1 passed" in out
    assert "2 definitions recorded (2 distinct) from 1 test files" in out
    problems = [line for line in out.splitlines() if line.startswith("broken-machine (")]
    assert all("test_inner.py::test_deploys_two_machines" in line for line in problems)
    assert any(
        line.endswith(
            "state 'A': MISSING_TRANSITION_TARGET: "
            "Missing 'StartAt'|'Next'|'Default' target: Nowhere"
        )
        for line in problems
    ), problems
    assert "fine-machine" not in out


@pytest.mark.integration
def test_localstack_records_what_create_and_update_accept(aws: Callable) -> None:
    sfn = aws("stepfunctions")
    name = f"asl-record-{uuid.uuid4().hex[:8]}"
    first = _text({"A": {"Type": "Pass", "Result": {"n": 1}, "End": True}})
    second = _text({"A": {"Type": "Pass", "Result": {"n": 2}, "End": True}})
    arn = sfn.create_state_machine(name=name, definition=first, roleArn=ROLE)["stateMachineArn"]
    try:
        sfn.update_state_machine(stateMachineArn=arn, definition=second)
    finally:
        sfn.delete_state_machine(stateMachineArn=arn)
    recorded = [json.loads(p.read_text()) for p in Path(os.environ[ENV]).glob(f"{name}.*.json")]
    assert sorted((r["operation"], r["definition"]) for r in recorded) == [
        ("CreateStateMachine", first),
        ("UpdateStateMachine", second),
    ]
    assert {r["name"] for r in recorded} == {name}
