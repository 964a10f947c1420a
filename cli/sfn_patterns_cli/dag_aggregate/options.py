"""The knobs of a rendered state machine, and the per-task limits they imply.

Both the renderer (render.py, dependency.py) and the history budget (history.py)
need them: the budget counts the polls a task may make, the renderer writes them
into the definition. They live here, below both, so that neither imports the other
for them (render.py checks the budget; history.py never imports render.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from sfn_patterns_cli.dag_aggregate.errors import RenderError
from sfn_patterns_cli.dag_aggregate.planner import Plan

# How a task notices its statement's end (RenderOptions.completion).
COMPLETIONS = ("event", "poll")


@dataclass(frozen=True)
class Target:
    """Where statements run: a provisioned cluster or a Redshift Serverless workgroup.

    Exactly one of ``cluster_identifier`` / ``workgroup_name``. A cluster needs either
    ``db_user`` (temporary credentials) or ``secret_arn``; a workgroup may use
    ``secret_arn`` (else the state machine role's IAM identity).
    """

    database: str
    cluster_identifier: str | None = None
    db_user: str | None = None
    secret_arn: str | None = None
    workgroup_name: str | None = None

    def parameters(self) -> dict[str, str]:
        """The Data API connection parameters, validated."""
        if not self.database:
            raise RenderError("target: --database is required")
        if bool(self.cluster_identifier) == bool(self.workgroup_name):
            raise RenderError("target: give exactly one of --cluster-identifier, --workgroup-name")
        params = {"Database": self.database}
        if self.cluster_identifier:
            if bool(self.db_user) == bool(self.secret_arn):
                raise RenderError(
                    "target: a cluster needs exactly one of --db-user or --secret-arn"
                )
            params["ClusterIdentifier"] = self.cluster_identifier
            if self.db_user:
                params["DbUser"] = self.db_user
        else:
            if self.db_user:
                raise RenderError("target: --db-user applies to clusters, not workgroups")
            params["WorkgroupName"] = str(self.workgroup_name)
        if self.secret_arn:
            params["SecretArn"] = self.secret_arn
        return params


@dataclass(frozen=True)
class RenderOptions:
    """Knobs of the rendered state machine (seconds unless named otherwise)."""

    target: Target
    max_concurrency: int = 10
    default_wait: int = 5
    poll_interval: int = 10
    default_timeout: int = 3600
    retry: dict[str, float] = field(
        default_factory=lambda: {"interval": 2, "backoff": 2.0, "attempts": 6, "max_delay": 60}
    )
    compact: bool = False
    # How a task notices its statement's end: "poll" (describeStatement every
    # poll_interval after default_wait) or "event" (WithEvent; its status-change event
    # resumes the parked task through completion_function_arn, with a describeStatement
    # every fallback_seconds in case the event is lost).
    completion: str = "poll"
    fallback_seconds: int = 300
    completion_function_arn: str | None = None
    partition: str = "aws"

    def validate(self) -> None:
        """Raise RenderError for options no definition can be rendered with."""
        if self.poll_interval < 1:
            raise RenderError("--poll-interval must be >= 1 second")
        if self.completion not in COMPLETIONS:
            raise RenderError(f"--completion must be one of {', '.join(COMPLETIONS)}")
        if self.completion == "event":
            if self.fallback_seconds < 1:
                raise RenderError("--fallback-seconds must be >= 1 second")
            if not self.completion_function_arn:
                raise RenderError(
                    "--completion event needs --completion-function-arn (the event-completion "
                    "function that parks the tasks' tokens)"
                )


def max_polls(wait: int, timeout: int, poll_interval: int) -> int:
    """Polls allowed so that initial wait + polls * interval covers the timeout."""
    return max(1, math.ceil(max(timeout - wait, 0) / max(poll_interval, 1)))


def task_max_polls(wait: int, timeout: int, options: RenderOptions) -> int:
    """A task's poll limit: polls after its initial wait, or fallback checks with events."""
    if options.completion == "event":
        return max(1, math.ceil(timeout / max(options.fallback_seconds, 1)))
    return max_polls(wait, timeout, options.poll_interval)


def task_limits(plan: Plan, task: str, options: RenderOptions) -> tuple[int, int]:
    """``(wait, max_polls)`` of one task: its ``wait=``/``timeout=`` or the defaults."""
    spec = plan.tasks[task]
    wait = spec.wait_seconds if spec.wait_seconds is not None else options.default_wait
    timeout = spec.timeout_seconds or options.default_timeout
    return wait, task_max_polls(wait, timeout, options)
