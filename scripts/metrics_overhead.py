"""The CPU cost of CloudWatch metrics and alarms on LocalStack, per mode.

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

    .venv/bin/python scripts/metrics_overhead.py [--invokes 360] [--alarms 30] [--idle 60]

Prints Markdown rows: mode, invokes CPU-s, alarm-evaluation CPU-s.
"""

from __future__ import annotations

import argparse
import io
import json
import time
import zipfile

from iam_overhead import cpu_seconds  # scripts/ is on the path of a script run

from sfn_patterns_localstack import server
from sfn_patterns_localstack.clients import client_factory

HANDLER = "def handler(event, context):\n    return 'ok'\n"
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
        trust = {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"Service": "lambda.amazonaws.com"},
                    "Action": "sts:AssumeRole",
                }
            ],
        }
        role = aws("iam").create_role(RoleName="fn", AssumeRolePolicyDocument=json.dumps(trust))
        fn = aws("lambda")
        fn.create_function(
            FunctionName="fn",
            Runtime="python3.12",
            Role=role["Role"]["Arn"],
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


def main() -> None:
    """Measure each mode once and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--invokes", type=int, default=360, help="Invokes (default 360).")
    parser.add_argument("--alarms", type=int, default=30, help="10 s alarms (default 30).")
    parser.add_argument("--idle", type=float, default=60, help="Seconds of evaluation (60).")
    args = parser.parse_args()
    print(
        f"| mode | {args.invokes} invokes: LocalStack CPU-s | "
        f"{args.alarms} alarms x {args.idle:.0f} s: CPU-s |"
    )
    print("|---|---|---|")
    for mode in ("off", "localstack", "sink"):
        invoke_cpu, alarm_cpu = measure(mode, args.invokes, args.alarms, args.idle)
        alarm_text = "-" if alarm_cpu is None else f"{alarm_cpu:.2f}"
        print(f"| {mode} | {invoke_cpu:.2f} | {alarm_text} |", flush=True)


if __name__ == "__main__":
    main()
