"""`sfn-patterns demo` end to end on the session LocalStack: every pattern succeeds.

The demo runs as a user runs it (the CLI in a subprocess) against the session
LocalStack with a prefix of its own and ``--keep``, so this test can then re-plan the
same deployment (no changes) and open the report in headless Chromium. Nothing is
destroyed (destroying the sqs-throttle queue alone takes minutes on LocalStack):
every resource name starts with the unique prefix, the DAG warehouse is named after
it too, and the scheduled rules are disabled at the end so nothing keeps firing
while later tests run.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sfn_patterns_localstack.demo import run as demo
from sfn_patterns_localstack.demo.report import browser, gantt
from sfn_patterns_localstack.terraform.workspace import Workspace

from .test_browser import assert_renders

pytestmark = [pytest.mark.integration, pytest.mark.terraform, pytest.mark.slow]

ROW = re.compile(
    r"^(?P<pattern>[a-z-]+)\s+(?P<status>[A-Z_]+)\s+(?P<seconds>[\d.]+)\s+(?P<transitions>\d+)\s"
)


def _any_true(marks: Any) -> bool:
    """Whether a plan's nested unknown/sensitive marks hold any True."""
    if isinstance(marks, dict):
        return any(_any_true(v) for v in marks.values())
    if isinstance(marks, list):
        return any(_any_true(v) for v in marks)
    return bool(marks)


def planned_changes(workspace: Any, variables: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(real changes, type-only output updates) of a plan of the applied workspace.

    Real changes: every resource action other than no-op, and every output whose value
    differs or is unknown. Type-only updates: outputs Terraform marks "update" although
    before == after, which happens when a null inside an output object is typed
    ``dynamic`` in the state and ``string`` in the plan (``try(x, null)``); Terraform
    then prints "No changes." yet ``-detailed-exitcode`` exits 2. Both lists must be
    empty; keeping them apart makes a failure say which kind it is.

    ``-detailed-exitcode`` exits 0 only when the plan has neither kind (Terraform's own
    verdict), so the plan is rendered as JSON (``terraform show``, several CPU-seconds
    for examples/complete's plan) only when there is something to sort.
    """
    saved = workspace.scratch_dir / "replan.tfplan"
    var_args = Workspace.var_args(variables)
    proc = workspace.run(
        "plan",
        "-input=false",
        "-no-color",
        "-detailed-exitcode",
        f"-out={saved}",
        *var_args,
        check=False,
    )
    if proc.returncode == 0:
        return [], []
    assert proc.returncode == 2, f"plan failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    plan = json.loads(workspace.run("show", "-json", str(saved)).stdout)
    changes = [
        f"{change['address']}: {'/'.join(change['change']['actions'])}"
        for change in plan.get("resource_changes", [])
        if change["change"]["actions"] != ["no-op"]
    ]
    type_only = []
    for name, change in plan.get("output_changes", {}).items():
        if change["actions"] == ["no-op"]:
            continue
        unknown = _any_true(change.get("after_unknown"))
        same = change.get("before") == change.get("after") and not unknown
        (type_only if same else changes).append(f"output {name}: {'/'.join(change['actions'])}")
    return changes, type_only


def test_demo_runs_every_pattern_and_reports_it(
    localstack_endpoint: str, aws: Callable, tmp_path: Path
) -> None:
    prefix = f"demo{uuid.uuid4().hex[:6]}"
    report = tmp_path / "report" / "index.html"
    work_dir = tmp_path / "work"
    started = time.monotonic()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sfn_patterns_cli.cli",
            "demo",
            "--endpoint",
            localstack_endpoint,
            "--keep",
            "--name-prefix",
            prefix,
            "--work-dir",
            str(work_dir),
            "--report",
            str(report),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    print(f"\ndemo took {time.monotonic() - started:.0f} s\n{proc.stdout}")
    try:
        assert proc.returncode == 0, f"{proc.stdout}\n{proc.stderr[-6000:]}"
        rows = {m["pattern"]: m for line in proc.stdout.splitlines() if (m := ROW.match(line))}
        assert sorted(rows) == sorted(demo.PATTERNS), proc.stdout
        assert {p: m["status"] for p, m in rows.items()} == dict.fromkeys(
            demo.PATTERNS, "SUCCEEDED"
        )
        for pattern in ("job-poller", "sqs-throttle", "semaphore", "dag-aggregate"):
            assert int(rows[pattern]["transitions"]) > 0, pattern  # real executions ran
        assert f"report: {report.resolve()}" in proc.stdout
        for pattern in demo.PATTERNS:  # progress went to stderr, not into the summary
            assert f"==> [{pattern}] running the pattern" in proc.stderr
            assert "==>" not in proc.stdout

        html = report.read_text(encoding="utf-8")
        assert "every pattern succeeded" in html
        gantt_charts = re.findall(r'<div class="figure gantt" data-strategy="([^"]+)">', html)
        assert gantt_charts, "no Gantt chart in the report"
        assert html.count('<g class="span"') == 12 * len(gantt_charts)  # the example's 12 tasks

        # The Alarms section: the modules' alarms, named after each module instance.
        alarm_names = re.findall(r'<tr><td><code>([^<]+)</code></td><td><span class="status', html)
        assert any(n.startswith(f"{prefix}-throttle-") for n in alarm_names), alarm_names
        assert any(n.startswith(f"{prefix}-semaphore-") for n in alarm_names), alarm_names

        assert_renders(browser.capture(report), [gantt.STAGE_COLOURS[0], "#2e7d32"])

        workspace = demo.workspace(localstack_endpoint, work_dir)
        try:
            changes, type_only = planned_changes(workspace, demo.variables(prefix))
        finally:
            workspace.close()
        assert changes == [], f"the second plan is not empty: {changes}"
        # Modules type their null outputs (one(x[*].attr), tostring(null)), so even a
        # type-only output update is a regression: `plan -detailed-exitcode` exits 2.
        assert type_only == [], f"outputs re-plan as updates with equal values: {type_only}"

    finally:
        events = aws("events")
        for rule in events.list_rules(NamePrefix=prefix)["Rules"]:
            events.disable_rule(Name=rule["Name"])
