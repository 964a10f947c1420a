# Shared building block: one CloudWatch metric alarm per signal of a pattern module.
# The module hands in what it owns (state machines, functions, scheduled functions,
# dead-letter queues, tables, rules) and any pattern signal of its own; the baseline
# alarms of each kind are built here, the same way in every module.

data "aws_partition" "current" {}
data "aws_region" "current" {}
data "aws_caller_identity" "current" {}

locals {
  t = var.thresholds

  state_machine_signals = merge([
    for key, arn in var.state_machines : {
      for metric, what in {
        ExecutionsFailed   = "failed"
        ExecutionsTimedOut = "timed out"
        ExecutionsAborted  = "was stopped (aborted)"
        ExecutionThrottled = "was throttled"
        } : "${key}-${lower(replace(metric, "/([a-z])([A-Z])/", "$1-$2"))}" => {
        description = "An execution of ${element(split(":", arn), 6)} ${what} (${metric} > ${local.t.failed_executions}). Open the execution's history: its last failed state and error."
        namespace   = "AWS/States"
        metric_name = metric
        dimensions  = { StateMachineArn = arn }
        threshold   = local.t.failed_executions
      }
    }
  ]...)

  function_signals = merge([
    for key, fn in var.functions : {
      "${key}-errors" = {
        description = "Lambda ${fn.name} failed (Errors > ${local.t.lambda_errors}). Check its log group for the error."
        namespace   = "AWS/Lambda"
        metric_name = "Errors"
        dimensions  = { FunctionName = fn.name }
        threshold   = local.t.lambda_errors
      }
      "${key}-throttles" = {
        description = "Invocations of ${fn.name} were throttled (Throttles > ${local.t.lambda_throttles}): its reserved concurrency or the account's concurrency is exhausted."
        namespace   = "AWS/Lambda"
        metric_name = "Throttles"
        dimensions  = { FunctionName = fn.name }
        threshold   = local.t.lambda_throttles
      }
      "${key}-duration" = {
        description = "A run of ${fn.name} took more than ${local.t.lambda_duration_percent} % of its ${fn.timeout_seconds} s timeout: it is close to being killed mid-run."
        namespace   = "AWS/Lambda"
        metric_name = "Duration"
        dimensions  = { FunctionName = fn.name }
        statistic   = "Maximum"
        threshold   = fn.timeout_seconds * 1000 * local.t.lambda_duration_percent / 100
      }
    }
  ]...)

  scheduled_signals = {
    for key, fn in var.scheduled_functions : "${key}-not-running" => {
      description         = "${fn.name} did not run for two schedule periods (dead man's switch: Invocations < 1, missing data breaching). Check that its schedule rule is enabled and targets it."
      namespace           = "AWS/Lambda"
      metric_name         = "Invocations"
      dimensions          = { FunctionName = fn.name }
      comparison_operator = "LessThanThreshold"
      threshold           = 1
      evaluation_periods  = 2
      period              = fn.period_seconds
      treat_missing_data  = "breaching"
    }
  }

  dlq_signals = {
    for key, queue in var.dead_letter_queues : "${key}-messages" => {
      description = "Messages are in dead-letter queue ${queue} (visible > ${local.t.dlq_messages}): each failed every delivery. Read one, fix the cause, redrive."
      namespace   = "AWS/SQS"
      metric_name = "ApproximateNumberOfMessagesVisible"
      dimensions  = { QueueName = queue }
      statistic   = "Maximum"
      threshold   = local.t.dlq_messages
    }
  }

  table_signals = merge([
    for key, table in var.tables : {
      "${key}-read-throttles" = {
        description = "Reads of table ${table.name} were throttled (ReadThrottleEvents > ${local.t.table_throttles})."
        namespace   = "AWS/DynamoDB"
        metric_name = "ReadThrottleEvents"
        dimensions  = { TableName = table.name }
        threshold   = local.t.table_throttles
      }
      "${key}-write-throttles" = {
        description = "Writes to table ${table.name} were throttled (WriteThrottleEvents > ${local.t.table_throttles})."
        namespace   = "AWS/DynamoDB"
        metric_name = "WriteThrottleEvents"
        dimensions  = { TableName = table.name }
        threshold   = local.t.table_throttles
      }
      # SystemErrors is published per TableName and Operation only: sum the operations used.
      "${key}-system-errors" = {
        description = "DynamoDB answered calls on table ${table.name} with internal errors (SystemErrors of ${join(", ", table.operations)} > ${local.t.table_system_errors})."
        metric_name = "SystemErrors"
        sum_of      = [for op in table.operations : { namespace = "AWS/DynamoDB", metric_name = "SystemErrors", dimensions = { TableName = table.name, Operation = op } }]
        threshold   = local.t.table_system_errors
      }
    }
  ]...)

  rule_signals = {
    for key, rule in var.rules : "${key}-failed-invocations" => {
      description = "EventBridge failed to deliver rule ${rule}'s events to its target (FailedInvocations > ${local.t.rule_failed_invocations}): a missing permission or target."
      namespace   = "AWS/Events"
      metric_name = "FailedInvocations"
      dimensions  = { RuleName = rule }
      threshold   = local.t.rule_failed_invocations
    }
  }

  all_signals = merge(
    local.state_machine_signals, local.function_signals, local.scheduled_signals,
    local.dlq_signals, local.table_signals, local.rule_signals, var.signals,
  )
  # One shape for every signal (the kinds above differ in which fields they set, and
  # for_each needs a map of one type): the dimensions and the summed metrics as JSON.
  signals = {
    for key, s in local.all_signals : key => {
      description         = s.description
      namespace           = try(s.namespace, null)
      metric_name         = s.metric_name
      dimensions          = jsonencode(try(s.dimensions, {}))
      sum_of              = jsonencode(try(s.sum_of, []))
      statistic           = try(s.statistic, "Sum")
      comparison_operator = try(s.comparison_operator, "GreaterThanThreshold")
      threshold           = s.threshold
      evaluation_periods  = try(s.evaluation_periods, 1)
      period              = coalesce(try(s.period, null), var.period_seconds)
      treat_missing_data  = try(s.treat_missing_data, "notBreaching")
    } if var.create
  }

  # Static ARNs (known at plan time): arn:PARTITION:cloudwatch:REGION:ACCOUNT:alarm:NAME.
  arn_prefix = "arn:${data.aws_partition.current.partition}:cloudwatch:${data.aws_region.current.region}:${data.aws_caller_identity.current.account_id}:alarm:"
}

# A dead man's switch with every datum missing is breaching from its first
# evaluation: created before the schedule's first tick (up to one period after the
# deploy), it would page on every deploy, for up to two periods. So the scheduled
# function runs once here, before any alarm exists; the switch's window then holds
# that run until the schedule's own runs follow, and a schedule that never runs
# still trips it two periods later. The run is the schedule's work (the starter
# admits, the reconciler sweeps); it fails the apply if the function cannot run,
# which is also what the schedule would find.
resource "aws_lambda_invocation" "first_run" {
  for_each = { for key, fn in var.scheduled_functions : key => fn.first_run if var.create && fn.first_run != null }

  function_name = each.value.function_arn
  input         = each.value.input
}

resource "aws_cloudwatch_metric_alarm" "this" {
  for_each = local.signals

  alarm_name          = "${var.name}-${each.key}"
  alarm_description   = each.value.description
  comparison_operator = each.value.comparison_operator
  threshold           = each.value.threshold
  evaluation_periods  = each.value.evaluation_periods
  datapoints_to_alarm = each.value.evaluation_periods
  treat_missing_data  = each.value.treat_missing_data

  # One metric: namespace, name, dimensions, statistic.
  namespace   = each.value.sum_of == "[]" ? each.value.namespace : null
  metric_name = each.value.sum_of == "[]" ? each.value.metric_name : null
  dimensions  = each.value.sum_of == "[]" ? jsondecode(each.value.dimensions) : null
  statistic   = each.value.sum_of == "[]" ? each.value.statistic : null
  period      = each.value.sum_of == "[]" ? each.value.period : null

  # A metric AWS publishes only per some extra dimension: the sum of its series.
  dynamic "metric_query" {
    for_each = each.value.sum_of == "[]" ? [] : [jsondecode(each.value.sum_of)]
    content {
      id          = "total"
      expression  = join("+", [for i, _ in metric_query.value : "m${i}"])
      label       = each.value.metric_name
      return_data = true
    }
  }

  dynamic "metric_query" {
    for_each = { for i, m in jsondecode(each.value.sum_of) : "m${i}" => m }
    content {
      id = metric_query.key
      metric {
        namespace   = metric_query.value.namespace
        metric_name = metric_query.value.metric_name
        dimensions  = metric_query.value.dimensions
        stat        = each.value.statistic
        period      = each.value.period
      }
    }
  }

  actions_enabled = true
  alarm_actions   = var.alarm_actions
  ok_actions      = var.ok_actions
  tags            = var.tags

  depends_on = [aws_lambda_invocation.first_run]
}
