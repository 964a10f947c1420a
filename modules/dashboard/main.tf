# Shared building block: a CloudWatch dashboard of one pattern module. The module
# hands in what it owns; the widgets are laid out here, two to a row of the 24-column
# grid, and the body is built with jsonencode (valid JSON by construction):
#   executions started, succeeded and failed, and execution time (per state machine);
#   the pattern's own metrics; queues; Lambda errors and duration; tables;
#   the state of every alarm of the module.

data "aws_region" "current" {}

locals {
  region = data.aws_region.current.region

  # concat([], rows...), not flatten: flatten would also flatten each metric row.
  machine_rows = concat([], [
    for key, arn in var.state_machines : [
      for metric in ["ExecutionsStarted", "ExecutionsSucceeded", "ExecutionsFailed"] :
      ["AWS/States", metric, "StateMachineArn", arn, { label = "${key} ${metric}" }]
    ]
  ]...)
  pattern_rows = [
    for m in var.pattern_metrics.metrics : concat(
      [var.pattern_metrics.namespace, m.name],
      flatten([for k, v in var.pattern_metrics.dimensions : [k, v]]),
      [{ stat = m.stat, label = m.name, yAxis = m.axis }],
    )
  ]
  queue_rows = concat([], [
    for name in var.queues : [
      ["AWS/SQS", "ApproximateNumberOfMessagesVisible", "QueueName", name, { label = "${name} visible" }],
      ["AWS/SQS", "ApproximateAgeOfOldestMessage", "QueueName", name, { label = "${name} oldest (s)", yAxis = "right" }],
    ]
  ]...)
  function_rows = concat([], [
    for name in var.functions : [
      ["AWS/Lambda", "Errors", "FunctionName", name, { label = "${name} errors" }],
      ["AWS/Lambda", "Duration", "FunctionName", name, { stat = "Maximum", label = "${name} max ms", yAxis = "right" }],
    ]
  ]...)
  table_rows = concat([], [
    for name in var.tables : [
      ["AWS/DynamoDB", "ConsumedWriteCapacityUnits", "TableName", name, { label = "${name} write units" }],
      ["AWS/DynamoDB", "ConsumedReadCapacityUnits", "TableName", name, { label = "${name} read units" }],
      ["AWS/DynamoDB", "WriteThrottleEvents", "TableName", name, { label = "${name} write throttles", yAxis = "right" }],
      ["AWS/DynamoDB", "ReadThrottleEvents", "TableName", name, { label = "${name} read throttles", yAxis = "right" }],
    ]
  ]...)

  # Each panel: title, metric rows, default statistic. Empty panels are left out.
  panels = [
    for panel in [
      { title = "Executions started, succeeded, failed", rows = local.machine_rows, stat = "Sum" },
      { title = "Execution time (ms)", rows = [for key, arn in var.state_machines : ["AWS/States", "ExecutionTime", "StateMachineArn", arn, { label = "${key} average" }]], stat = "Average" },
      { title = var.pattern_metrics.title, rows = local.pattern_rows, stat = "Sum" },
      { title = "Queues", rows = local.queue_rows, stat = "Maximum" },
      { title = "Lambda errors and duration", rows = local.function_rows, stat = "Sum" },
      { title = "Tables: capacity used and throttles", rows = local.table_rows, stat = "Sum" },
    ] : panel if length(panel.rows) > 0
  ]

  metric_widgets = [
    for i, panel in local.panels : {
      type   = "metric"
      x      = (i % 2) * 12
      y      = floor(i / 2) * 6
      width  = 12
      height = 6
      properties = {
        title   = panel.title
        region  = local.region
        view    = "timeSeries"
        stat    = panel.stat
        period  = var.period_seconds
        metrics = panel.rows
      }
    }
  ]
  # The alarm-status widget takes 1 to 100 alarms: a full row after the graphs.
  alarm_widgets = [
    for arns in [slice(var.alarm_arns, 0, min(100, length(var.alarm_arns)))] : {
      type   = "alarm"
      x      = 0
      y      = ceil(length(local.panels) / 2) * 6
      width  = 24
      height = 6
      properties = {
        title  = "Alarms of ${var.name}"
        alarms = arns
      }
    } if length(arns) > 0
  ]
  body = jsonencode({ widgets = concat(local.metric_widgets, local.alarm_widgets) })
}

resource "aws_cloudwatch_dashboard" "this" {
  count = var.create ? 1 : 0

  dashboard_name = var.name
  dashboard_body = local.body
}
