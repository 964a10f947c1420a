"""What the CloudWatch emulation costs: metrics and alarms on LocalStack, per mode.

Modes (each its own LocalStack, the services being chosen at start):
  off         CloudWatch not among the services (the baseline: no metrics, no alarms);
  localstack  CloudWatch on, LocalStack's own publishing and alarm evaluation
              (SFNP_METRICS=localstack): an internal PutMetricData request per metric,
              DescribeAlarms + GetMetricData requests per alarm evaluation;
  sink        CloudWatch on with emulation/metrics (the default): metrics through the
              buffered sink, alarms evaluated by direct provider calls.

Workload per mode: ``--invokes`` synchronous invokes of a trivial function, then
``--alarms`` alarms with 10 s periods left to evaluate for ``--idle`` seconds.
LocalStack's CPU time (user + system, its process and children) is read around each.

Printed: per mode, the invokes' CPU-seconds and the alarm evaluations' CPU-seconds;
then the ratio rows of each CloudWatch mode against ``off`` (the invokes) and of
``sink`` against ``localstack`` (both columns).

The comparison needs a LocalStack in each mode, so the script starts its own and stops
them (LOCALSTACK_ENDPOINT is not used). ``--smoke`` (make test: the script keeps
working, its figures are not quoted) makes 5 invokes and leaves 2 alarms for 10 s.

Examples::

    .venv/bin/python scripts/bench_metrics_overhead.py          # 360 invokes, 30 alarms, 60 s
    .venv/bin/python scripts/bench_metrics_overhead.py --smoke  # smallest (make test)
"""

from __future__ import annotations

import argparse
import io
import sys
import time
import zipfile

from bench_iam_overhead import cpu_seconds, ratio  # scripts/ is on the path of a script run

from sfn_patterns_localstack import server
from sfn_patterns_localstack.clients import client_factory
from sfn_patterns_localstack.roles import function_role

HANDLER = "def handler(event, context):\n    return 'ok'\n"
MODES = ("off", "localstack", "sink")
NO_CLOUDWATCH = ",".join(s for s in server.SERVICES if s != "cloudwatch")


def _zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("app.py", HANDLER)
    return buffer.getvalue()


def measure(mode: str, invokes: int, alarms: int, idle: float) -> tuple[float, float | None]:
    """LocalStack CPU-seconds of the invokes, and of the idle alarm evaluations."""
    env = {"SERVICES": NO_CLOUDWATCH} if mode == "off" else {"SFNP_METRICS": mode}
    instance = server.start(extra_env=env)
    try:
        aws = client_factory(instance.endpoint)
        # A role that may write the function's logs: what the harness's IAM lets through.
        role = function_role(aws("iam"), "fn", ["fn"])
        fn = aws("lambda")
        fn.create_function(
            FunctionName="fn",
            Runtime="python3.12",
            Role=role,
            Handler="app.handler",
            Code={"ZipFile": _zip()},
        )
        fn.get_waiter("function_active_v2").wait(FunctionName="fn")
        for _ in range(10):  # warm up: the worker, first-call imports
            fn.invoke(FunctionName="fn")
        time.sleep(2)
        before = cpu_seconds(instance.process.pid)
        for _ in range(invokes):
            fn.invoke(FunctionName="fn")
        time.sleep(2)  # let the metrics of the last invokes be written
        invoke_cpu = cpu_seconds(instance.process.pid) - before
        if mode == "off":
            return invoke_cpu, None
        cloudwatch = aws("cloudwatch")
        for i in range(alarms):
            cloudwatch.put_metric_alarm(
                AlarmName=f"a{i}",
                Namespace="AWS/Lambda",
                MetricName="Errors",
                Dimensions=[{"Name": "FunctionName", "Value": "fn"}],
                Statistic="Sum",
                Period=10,
                EvaluationPeriods=1,
                Threshold=0,
                ComparisonOperator="GreaterThanThreshold",
                TreatMissingData="notBreaching",
            )
        before = cpu_seconds(instance.process.pid)
        time.sleep(idle)
        return invoke_cpu, cpu_seconds(instance.process.pid) - before
    finally:
        instance.stop()


def table(
    invokes: int, alarms: int, idle: float, results: dict[str, tuple[float, float | None]]
) -> list[str]:
    """The Markdown table: a row per mode, then the ratio rows."""
    lines = [
        f"| mode | {invokes} invokes: LocalStack CPU-s | {alarms} alarms x {idle:.0f} s: CPU-s |",
        "|---|---:|---:|",
    ]
    for mode, (invoke_cpu, alarm_cpu) in results.items():
        alarm_text = "-" if alarm_cpu is None else f"{alarm_cpu:.2f}"
        lines.append(f"| {mode} | {invoke_cpu:.2f} | {alarm_text} |")
    off = results["off"][0]
    for mode in ("localstack", "sink"):
        lines.append(f"| {mode} / off | {ratio(results[mode][0], off)} | - |")
    sink, own = results["sink"], results["localstack"]
    lines.append(f"| sink / localstack | {ratio(sink[0], own[0])} | {ratio(sink[1], own[1])} |")
    return lines


def main() -> None:
    """Measure each mode once and print the table."""
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Progress goes to stderr, the table to stdout.",
    )
    parser.add_argument("--invokes", type=int, default=360, help="Invokes (default 360).")
    parser.add_argument("--alarms", type=int, default=30, help="10 s alarms (default 30).")
    parser.add_argument("--idle", type=float, default=60, help="Seconds of evaluation (60).")
    parser.add_argument(
        "--smoke", action="store_true", help="smallest run that fills every column (make test)"
    )
    args = parser.parse_args()
    invokes, alarms, idle = (5, 2, 10.0) if args.smoke else (args.invokes, args.alarms, args.idle)
    if invokes < 1 or alarms < 1 or idle <= 0:
        parser.error("--invokes and --alarms must be at least 1, --idle above 0")
    results: dict[str, tuple[float, float | None]] = {}
    for mode in MODES:
        print(f"{mode}: starting LocalStack, {invokes} invokes", file=sys.stderr, flush=True)
        results[mode] = measure(mode, invokes, alarms, idle)
        print(f"{mode}: done", file=sys.stderr, flush=True)
    print(f"CloudWatch emulation: {invokes} invokes, then {alarms} alarms for {idle:.0f} s\n")
    print("\n".join(table(invokes, alarms, idle, results)))


if __name__ == "__main__":
    main()
