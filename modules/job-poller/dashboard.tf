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
    # Only what this poller's Get Job Status prints (none without Lambdas): a loop
    # timeout it decides (start-time, or event completion's fallback-check count), and
    # with completion = "event" its fallback checks and the lost events they found.
    metrics = concat(
      local.use_lambda && (local.start_time || local.event) ? [{ name = "LoopTimeouts", stat = "Sum", axis = "left" }] : [],
      local.use_lambda && local.event ? [
        { name = "FallbackChecks", stat = "Sum", axis = "left" },
        { name = "LostCompletionEvents", stat = "Sum", axis = "left" },
      ] : [],
    )
  }
}
