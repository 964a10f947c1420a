"""The portable suite: the pattern tests that hold on any LocalStack, and why the rest don't.

``make test-portable ENDPOINT=http://HOST:PORT`` runs the pattern tests (``PATTERN_DIRS``)
against an emulator somebody else runs: a LocalStack container in their CI, a paid
LocalStack with a token, or another emulator of the same wire protocol. Nothing there is
this project's: no IAM enforcement, no injected faults, no CloudWatch metrics AWS would
publish, no Redshift Data API, none of the fixes in
``harness/sfn_patterns_localstack/emulation/fixes``.

A test says what it needs beyond the AWS API in one of two ways, and on such an emulator
it is skipped with a reason that names it:

* ``@pytest.mark.needs("fix:sfn_stop", ...)`` on the test (or its module), for a harness
  fix whose AWS behaviour the test checks (the reason quotes the fix's docstring: what
  AWS does), or for the Redshift Data API, which the dag-aggregate fixtures call;
* :func:`require` inside the shared helpers that use an emulation (the alarm proof, the
  fault plans, the request meter, IAM denials), so each test that calls them is skipped
  without a marker of its own.

``SFNP_PORTABLE=1`` (set by ``make test-portable``) turns the skips on. Without it, on the
harness's own LocalStack, every capability is there and nothing is skipped.
``docs/compatibility.md`` is generated from one such run (``scripts/compatibility.py``).
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXES = REPO_ROOT / "harness" / "sfn_patterns_localstack" / "emulation" / "fixes"

# The pattern tests: what a team that reuses the modules would run in its own CI.
PATTERN_DIRS = (
    "tests/smoke",
    "tests/job_poller",
    "tests/sqs_throttle",
    "tests/semaphore",
    "tests/status_table",
    "tests/dag_aggregate",
)

# What an emulator lacks unless it is the harness's LocalStack: the AWS behaviour, then
# the part of the harness that supplies it.
CAPABILITIES = {
    "iam": (
        "IAM decides every call a role session makes (a call its policies do not allow is "
        "AccessDenied)",
        "emulation/iam",
    ),
    "faults": (
        "AWS's faults (throttling, 5xx, lost answers, redeliveries, killed handlers) "
        "injected from a seeded plan",
        "emulation/faults",
    ),
    "metrics": (
        "CloudWatch publishes the AWS/States, AWS/Lambda, AWS/SQS and AWS/Events metrics "
        "and evaluates alarms on them",
        "emulation/metrics",
    ),
    "redshift-data": (
        "the Redshift Data API (ExecuteStatement and its status events)",
        "emulation/redshift_data",
    ),
    "alarm-tags": (
        "an alarm's tags are kept as tags (ListTagsForResource), not in the alarm: stock "
        "LocalStack 4.14.0 keeps them in it, and DescribeAlarms then answers 500 to the "
        "Terraform provider's CBOR protocol",
        "emulation/metrics/alarm_tags.py",
    ),
    "harness": (
        "the harness's own routes and files (the request meter, the usage report)",
        "emulation",
    ),
}
ENV = "SFNP_PORTABLE"


def enabled() -> bool:
    """True when the tests run against somebody else's emulator (``SFNP_PORTABLE=1``)."""
    return os.environ.get(ENV) == "1"


def fix_summary(name: str) -> str:
    """The first line of a harness fix's docstring: the AWS behaviour it supplies."""
    path = FIXES / f"{name}.py"
    if not path.exists():
        raise ValueError(f"needs('fix:{name}'): there is no harness fix {path}")
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    return doc.splitlines()[0].rstrip(".") if doc else name


def reason(need: str) -> str:
    """The skip reason for one need: what AWS does, and what in the harness supplies it."""
    if need.startswith("fix:"):
        name = need.removeprefix("fix:")
        return f"needs {need}: {fix_summary(name)} (harness: emulation/fixes/{name}.py)"
    if need not in CAPABILITIES:
        raise ValueError(f"unknown need {need!r}: one of {sorted(CAPABILITIES)} or fix:NAME")
    behaviour, where = CAPABILITIES[need]
    return f"needs {need}: {behaviour} (harness: {where})"


def require(*needs: str) -> None:
    """Skip the calling test on a portable run: it needs what only the harness has."""
    for need in needs:
        reason(need)  # an unknown need fails on every run, not only on portable ones
    if enabled():
        pytest.skip("; ".join(reason(need) for need in needs))


def skip_marked(items: list[pytest.Item]) -> None:
    """On a portable run, skip every test marked ``needs(...)``, naming what it needs."""
    for item in items:
        needs = [need for marker in item.iter_markers("needs") for need in marker.args]
        if item.get_closest_marker("iam_denial") and "iam" not in needs:
            needs.append("iam")  # a denial provoked on purpose needs IAM to deny it
        reasons = [reason(need) for need in needs]  # checked on every run
        if needs and enabled():
            item.add_marker(pytest.mark.skip(reason="; ".join(reasons)))


def install_shims() -> None:
    """On a portable run, make the harness's test clients skip instead of failing.

    The fault plans and the request meter are reached through the harness's client
    modules; each call first skips its test on a portable run. Done before the test
    modules import them (from the root conftest). The Redshift Data API tests are marked
    ``needs("redshift-data")`` instead: they reach it from their fixtures.
    """
    if not enabled():
        return
    from sfn_patterns_localstack.emulation.faults import client as faults_client
    from sfn_patterns_localstack.emulation.meter import client as meter_client

    def guarded(function: Callable[..., Any], need: str) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            require(need)
            return function(*args, **kwargs)

        return call

    faults_client._request = guarded(faults_client._request, "faults")
    untagged_applies()
    meter_client._call = guarded(meter_client._call, "harness")


TAGS_VARIABLE = re.compile(r'^\s*variable\s+"tags"', re.MULTILINE)


def untagged_applies() -> None:
    """Apply, plan and destroy every configuration with ``tags = {}`` on a portable run.

    Stock LocalStack 4.14.0 stores a tagged alarm's tags inside the alarm, and its
    DescribeAlarms then fails to serialise the alarm for the Terraform provider (500,
    retried until the provider's timeout): every module's alarms take the caller's
    ``tags``, so no tagged example applies there. The harness fixes it
    (``alarm-tags`` in :data:`CAPABILITIES`); the portable suite applies the examples
    without tags instead, so the rest of what they do is still tested. A configuration
    without a ``tags`` variable, or a test that sets ``tags`` itself, is left alone.
    """
    from sfn_patterns_localstack.terraform import workspace

    original = workspace.Workspace.run
    if getattr(original, "_sfnp_untagged", False):
        return

    def run(self: Any, *args: str, check: bool = True) -> Any:
        # Applying a saved plan takes no variables (the plan has them): a positional
        # argument of apply is the plan file.
        saved_plan = (
            bool(args) and args[0] == "apply" and any(not a.startswith("-") for a in args[1:])
        )
        if (
            args
            and not saved_plan
            and args[0] in ("apply", "plan", "destroy")
            and not any(arg.startswith("-var=tags=") for arg in args)
            and any(TAGS_VARIABLE.search(tf.read_text()) for tf in self.config_dir.glob("*.tf"))
        ):
            args = (*args, "-var=tags={}")
        return original(self, *args, check=check)

    run._sfnp_untagged = True  # type: ignore[attr-defined]
    workspace.Workspace.run = run
