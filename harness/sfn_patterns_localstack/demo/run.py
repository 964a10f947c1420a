"""``sfn-patterns demo``: deploy every pattern to LocalStack, run each once, write a report.

This is what ``make demo`` runs. It needs no AWS account: LocalStack runs in-process
on loopback (or at ``--endpoint``), Terraform applies the configuration through the
offline provider mirror, and the state machines invoke real handler code from
``lambda_src/``. Progress goes to stderr (step lines, a ticker during long waits, a
progress bar while executions finish); the summary table goes to stdout, and a
self-contained HTML report (:mod:`sfn_patterns_localstack.demo.report`) to ``--report``.

The deployment is ``examples/complete`` (the root module with every pattern and its
stand-ins). Each pattern's run is a function of the Terraform outputs it needs (a
plain dict, see :data:`.patterns.RUNNERS`), so it does not care which configuration
provisioned them: :func:`pattern_outputs` cuts the example's outputs into those
dicts.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from sfn_patterns_localstack.clients import client_factory
from sfn_patterns_localstack.demo import report as report_module
from sfn_patterns_localstack.demo.patterns import RUNNERS, Aws, DagOutcome
from sfn_patterns_localstack.demo.progress import Progress
from sfn_patterns_localstack.demo.report import DemoReport, PatternResult
from sfn_patterns_localstack.demo.report import alarms as alarms_section
from sfn_patterns_localstack.emulation.redshift_data.workgroups import workgroup_variables

REPO_ROOT = Path(__file__).resolve().parents[3]
PATTERNS = ("job-poller", "sqs-throttle", "semaphore", "dag-aggregate", "status-table")
DEFAULT_PREFIX = "sfnp-demo"


# --- the deployment ----------------------------------------------------------------------

EXAMPLE = REPO_ROOT / "examples" / "complete"
DAG_STRATEGY = "parent-level"  # the one strategy examples/complete provisions


def workspace(endpoint: str, work_dir: Path, log: Callable[[str], None] | None = None) -> Any:
    """The Terraform workspace of the demo's deployment (state in ``work_dir``)."""
    from sfn_patterns_localstack.terraform.workspace import Workspace

    # The harness applies from a staging tree under work_dir: the checkout stays clean
    # and a test or a second demo can apply examples/complete at the same time.
    return Workspace(EXAMPLE, endpoint, Path(work_dir) / "terraform", log=log)


def variables(name_prefix: str, *, customer_key: bool = True) -> dict[str, Any]:
    """The variables the demo applies examples/complete with (tests re-plan with them).

    The warehouse (a DuckDB database on LocalStack) is named after the prefix: the
    demo drops and re-creates its schemas before each DAG run, which must never touch
    another deployment's data. ``customer_key``: every pattern encrypts with the
    customer managed key examples/complete creates (its key policy hands access to
    IAM, as an account's default key policy does), so each role's KMS grants are
    decided by the harness as AWS decides them; False keeps AWS's keys.
    """
    return {
        "name_prefix": name_prefix,
        **workgroup_variables(f"{name_prefix}-wg"),
        "dag_strategy": DAG_STRATEGY,
        "create_kms_key": customer_key,
    }


def pattern_outputs(
    outputs: dict[str, Any], dag_strategy: str = DAG_STRATEGY
) -> dict[str, dict[str, Any]]:
    """examples/complete's outputs cut into the dict each runner of :data:`RUNNERS` reads.

    The DAG runner takes a strategy -> state machine map, so a configuration that
    provisions several strategies (a ``state_machine_arns`` map) gets one Gantt chart
    each; examples/complete provisions ``dag_strategy`` only.
    """
    warehouse = outputs["dag_warehouse"]
    dag = outputs["dag_aggregate"]
    state_machines = dag.get("state_machine_arns") or {dag_strategy: dag["state_machine_arn"]}
    return {
        "job-poller": {"state_machine_arn": outputs["job_poller"]["state_machine_arn"]},
        "sqs-throttle": {
            **outputs["sqs_throttle"],
            "target_state_machine_arn": outputs["throttled_work_state_machine_arn"],
        },
        "semaphore": {
            **outputs["semaphore"],
            "target_state_machine_arn": outputs["critical_work_state_machine_arn"],
        },
        "dag-aggregate": {
            "state_machines": state_machines,
            "workgroup": warehouse["workgroup_name"],
            "database": warehouse["database"],
            "sql_dir": warehouse["sql_dir"],
            "setup_sql": warehouse["setup_sql"],
            "run_results": {dag_strategy: dag["run_results_uri"]}
            if dag.get("run_results_uri")
            else {},
        },
        "status-table": outputs["status_table"],
    }


# --- the command ---------------------------------------------------------------------------


def print_summary(results: Sequence[PatternResult]) -> None:
    """The summary table on stdout."""
    click.echo("")
    click.secho("sfn-patterns demo summary", bold=True)
    click.echo(f"{'pattern':<15}{'outcome':<11}{'seconds':>8}{'transitions':>13}  detail")
    for result in results:
        colour = "green" if result.ok else "red"
        click.echo(
            f"{result.pattern:<15}"
            + click.style(f"{result.status:<11}", fg=colour)
            + f"{result.seconds:>8.1f}{result.transitions:>13}  {result.detail}"
        )


def run_patterns(
    by_pattern: dict[str, dict[str, Any]], aws: Aws, progress: Progress
) -> tuple[list[PatternResult], DagOutcome | None]:
    """Run each pattern once, in :data:`PATTERNS` order; a crash fails that pattern only."""
    results: list[PatternResult] = []
    dag: DagOutcome | None = None
    for pattern in PATTERNS:
        progress.step(f"[{pattern}] running the pattern")
        try:
            outcome = RUNNERS[pattern](by_pattern[pattern], aws, progress)
        except Exception as error:  # one broken pattern must not hide the others
            progress.log(f"{pattern} failed: {type(error).__name__}: {error}")
            outcome = PatternResult(pattern, "ERROR", 0.0, 0, f"{type(error).__name__}: {error}")
        if isinstance(outcome, DagOutcome):
            dag, outcome = outcome, outcome.result
        results.append(outcome)
        progress.log(f"{pattern}: {outcome.status} in {outcome.seconds:.1f} s")
    return results, dag


def run(
    *,
    endpoint: str | None = None,
    keep: bool = False,
    report_path: Path | None = None,
    name_prefix: str = DEFAULT_PREFIX,
    work_dir: Path | None = None,
    customer_key: bool = True,
) -> int:
    """Run the demo; return the process exit code (0 when every pattern succeeded).

    Without ``endpoint`` a LocalStack is started here and stopped at the end (its
    resources vanish with it); with ``endpoint`` the deployment is destroyed at the end
    unless ``keep``. ``work_dir`` holds Terraform state (a temporary directory by
    default), so a caller can re-plan the same deployment afterwards.
    """
    from sfn_patterns_localstack import server
    from sfn_patterns_localstack.terraform.workspace import TerraformError

    progress = Progress()
    report_path = Path(report_path or Path.cwd() / "build" / "demo-report" / "index.html")
    scratch = None if work_dir else Path(tempfile.mkdtemp(prefix="sfnp-demo-"))
    work_dir = Path(work_dir or scratch)
    localstack = None
    if endpoint is None:
        progress.step("starting LocalStack in-process on 127.0.0.1 (no Docker)")
        with progress.ticking("LocalStack start-up"):
            localstack = server.start()
        endpoint = localstack.endpoint
    progress.step(f"LocalStack ready at {endpoint}")

    settings = variables(name_prefix, customer_key=customer_key)
    deployment = workspace(endpoint, work_dir, log=progress.log)
    try:
        progress.step("[examples/complete] terraform init + apply (every pattern, stand-ins)")
        with progress.ticking("terraform init"):
            deployment.init()
        with progress.ticking("terraform apply"):
            deployment.apply(settings)
        by_pattern = pattern_outputs(deployment.outputs(), settings["dag_strategy"])
        results, dag = run_patterns(by_pattern, client_factory(endpoint), progress)
        cloudwatch = client_factory(endpoint)("cloudwatch")
        report = DemoReport(
            patterns=results,
            dag_runs=dag.runs if dag else [],
            dag_svg=dag.dag_svg if dag else None,
            endpoint=endpoint,
            workspace="examples/complete",
            alarms=alarms_section.alarms(cloudwatch, name_prefix),
            metrics=alarms_section.pattern_metrics(cloudwatch, name_prefix),
        )
        written = report_module.write(report, report_path)
        if localstack is None and not keep:
            progress.step("[examples/complete] terraform destroy")
            with progress.ticking("terraform destroy"):
                deployment.destroy(settings)
    except TerraformError as error:  # a clear message instead of a traceback
        click.secho(f"error: {error}", fg="red", err=True)
        click.echo(f"Terraform state kept in {work_dir}", err=True)
        return 1
    finally:
        deployment.close()
        if localstack is not None and not keep:
            localstack.stop()

    if scratch is not None and not keep:  # our temporary state: kept only after an error
        shutil.rmtree(scratch, ignore_errors=True)
    print_summary(results)
    click.echo(f"\nreport: {written}")
    if keep:
        click.echo(f"Terraform state kept in {work_dir}")
        if localstack is not None:
            click.echo(f"LocalStack left running at {endpoint} (pid {localstack.process.pid}).")
    return 0 if report.ok else 1
