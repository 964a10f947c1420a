# A CloudWatch dashboard of this module (create_dashboard): executions, the pattern's
# own metrics, queues, Lambdas and the state of every alarm (modules/dashboard).
# Kept apart from main.tf.

module "dashboard" {
  source = "../dashboard"

  create         = var.create && var.create_dashboard
  name           = var.name
  period_seconds = var.alarms.period_seconds
  alarm_arns     = module.alarms.alarm_arns
  state_machines = { poller = local.state_machine_arn }
  functions = concat(
    local.use_lambda ? [local.run_job_function_name, local.get_status_function_name] : [],
    local.event ? ["${local.completion_name}-completion"] : [],
  )

  pattern_metrics = {
    title      = "Loop timeouts, fallback checks, lost completion events"
    namespace  = local.metrics_namespace
    dimensions = local.metrics_dimensions
    metrics = [
      { name = "LoopTimeouts" },
      { name = "FallbackChecks" },
      { name = "LostCompletionEvents" },
    ]
  }
}
