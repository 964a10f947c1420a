# CloudWatch alarms on this module's signals (README "What to watch"). Kept apart
# from main.tf: the alarms read the names main.tf gives and change nothing there.

module "alarms" {
  source = "../alarms"

  create         = var.create && coalesce(var.alarms.create, length(var.alarms.alarm_actions) > 0)
  name           = var.name
  period_seconds = var.alarms.period_seconds
  alarm_actions  = var.alarms.alarm_actions
  ok_actions     = var.alarms.ok_actions
  thresholds     = var.alarms.thresholds
  tags           = var.tags

  state_machines = { state-machine = local.state_machine_arn }
  functions = merge(
    local.use_lambda ? {
      run-job        = { name = local.run_job_function_name, timeout_seconds = var.lambda_timeout }
      get-job-status = { name = local.get_status_function_name, timeout_seconds = var.lambda_timeout }
    } : {},
    local.sample_job ? { sample-job = { name = local.sample_job_function_name, timeout_seconds = 660 } } : {},
    local.event ? { completion = { name = "${local.completion_name}-completion", timeout_seconds = 30 } } : {},
  )
  tables = merge(
    local.create_ddb ? { metadata = { name = local.table_name, operations = ["GetItem", "PutItem"] } } : {},
    local.event ? { tokens = { name = "${local.completion_name}-tokens", operations = ["PutItem", "UpdateItem"] } } : {},
  )
  rules = local.event ? { completion-rule = "${local.completion_name}-completion" } : {}

  # The pattern's own signal: a fallback check found the job already finished, so its
  # completion event never resumed the execution (lost, or later than the fallback).
  signals = local.event && local.use_lambda ? {
    lost-completion-events = {
      description = "A fallback check found the job already finished (LostCompletionEvents > ${var.alarms.thresholds.lost_events}): its completion event did not resume the execution, so every job now waits for the fallback. Check rule ${local.completion_name}-completion is enabled and matches the job's events, and the completion function's errors."
      namespace   = local.metrics_namespace
      metric_name = "LostCompletionEvents"
      dimensions  = local.metrics_dimensions
      threshold   = var.alarms.thresholds.lost_events
    }
  } : {}
}

# --- pattern metrics (EMF lines from Get Job Status; sfn_patterns/metrics.py) ------------

locals {
  metrics_namespace = "sfn-patterns"
  # The runtime prints its metrics under this namespace, dimensions Module and Pattern.
  metrics_environment = {
    SFN_PATTERNS_METRICS_NAMESPACE = local.metrics_namespace
    SFN_PATTERNS_MODULE            = var.name
  }
  metrics_dimensions = { Module = var.name, Pattern = "job-poller" }
}
