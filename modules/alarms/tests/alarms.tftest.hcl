# terraform test (plan only, mock providers): one alarm per signal with the documented
# names, metrics and thresholds, static ARNs with the partition, the create switch and
# the validations. Run: make test (tests/terraform/test_native.py).

mock_provider "aws" {
  mock_data "aws_partition" {
    defaults = { partition = "aws-cn" }
  }
  mock_data "aws_region" {
    defaults = { region = "cn-north-1" }
  }
  mock_data "aws_caller_identity" {
    defaults = { account_id = "123456789012" }
  }
}

variables {
  name           = "orders"
  state_machines = { flow = "arn:aws-cn:states:cn-north-1:123456789012:stateMachine:orders-flow" }
  functions      = { worker = { name = "orders-worker", timeout_seconds = 60 } }
  tables         = { lock = { name = "orders-lock", operations = ["GetItem", "UpdateItem"] } }
  alarm_actions  = ["arn:aws-cn:sns:cn-north-1:123456789012:ops"]
}

run "one_alarm_per_signal_with_static_arns" {
  command = plan

  assert {
    condition = toset(keys(output.alarms)) == toset([
      "flow-executions-failed", "flow-executions-timed-out", "flow-executions-aborted", "flow-execution-throttled",
      "worker-errors", "worker-throttles", "worker-duration",
      "lock-read-throttles", "lock-write-throttles", "lock-system-errors",
    ])
    error_message = "Four alarms per state machine, three per function, three per table, keyed <key>-<signal>."
  }
  assert {
    condition     = output.alarms["worker-errors"].arn == "arn:aws-cn:cloudwatch:cn-north-1:123456789012:alarm:orders-worker-errors"
    error_message = "Alarm ARNs are static and built from the partition, region and account."
  }
  assert {
    condition     = length(output.alarm_arns) == 10 && length(aws_cloudwatch_metric_alarm.this) == 10
    error_message = "alarm_arns lists every alarm the module creates."
  }
  assert {
    condition     = aws_cloudwatch_metric_alarm.this["worker-duration"].threshold == 54000 && aws_cloudwatch_metric_alarm.this["worker-duration"].statistic == "Maximum"
    error_message = "Duration alarms at 90 % of the 60 s timeout (54000 ms), on the Maximum."
  }
  assert {
    condition     = aws_cloudwatch_metric_alarm.this["flow-executions-failed"].metric_name == "ExecutionsFailed" && aws_cloudwatch_metric_alarm.this["flow-executions-failed"].namespace == "AWS/States"
    error_message = "The failed-executions alarm watches AWS/States ExecutionsFailed."
  }
  assert {
    condition     = length(aws_cloudwatch_metric_alarm.this["lock-system-errors"].metric_query) == 3
    error_message = "Table system errors are a sum over the operations used: one expression and one query per operation."
  }
  assert {
    condition     = aws_cloudwatch_metric_alarm.this["worker-errors"].alarm_actions == toset(["arn:aws-cn:sns:cn-north-1:123456789012:ops"])
    error_message = "alarm_actions reach every alarm."
  }
}

run "a_dead_mans_switch_starts_with_a_run" {
  command = plan

  variables {
    scheduled_functions = {
      starter = {
        name           = "orders-starter"
        period_seconds = 60
        first_run      = { function_arn = "arn:aws-cn:lambda:cn-north-1:123456789012:function:orders-starter", input = "{\"max_seconds\": 1}" }
      }
      sweeper = { name = "orders-sweeper", period_seconds = 300 }
    }
  }

  assert {
    condition     = aws_cloudwatch_metric_alarm.this["starter-not-running"].treat_missing_data == "breaching" && aws_cloudwatch_metric_alarm.this["starter-not-running"].evaluation_periods == 2 && aws_cloudwatch_metric_alarm.this["starter-not-running"].period == 60
    error_message = "The switch is Invocations < 1 over two schedule periods, missing data breaching: a schedule that stops trips it."
  }
  assert {
    condition     = keys(aws_lambda_invocation.first_run) == ["starter"] && aws_lambda_invocation.first_run["starter"].input == "{\"max_seconds\": 1}" && aws_lambda_invocation.first_run["starter"].function_name == "arn:aws-cn:lambda:cn-north-1:123456789012:function:orders-starter"
    error_message = "A scheduled function with first_run is invoked once with its input (and only such a one)."
  }
}

run "create_false_makes_nothing" {
  command = plan

  variables {
    create              = false
    scheduled_functions = { starter = { name = "orders-starter", period_seconds = 60, first_run = { function_arn = "arn:aws-cn:lambda:cn-north-1:123456789012:function:orders-starter" } } }
  }

  assert {
    condition     = length(aws_cloudwatch_metric_alarm.this) == 0 && length(output.alarms) == 0 && length(aws_lambda_invocation.first_run) == 0
    error_message = "create = false makes no alarm, maps no signal and invokes nothing."
  }
}

run "rejects_a_period_cloudwatch_does_not_take" {
  command = plan

  variables {
    period_seconds = 45
  }

  expect_failures = [var.period_seconds]
}

run "rejects_a_signal_without_namespace" {
  command = plan

  variables {
    signals = { leak = { description = "x", metric_name = "SlotsReclaimed", threshold = 0 } }
  }

  expect_failures = [var.signals]
}
