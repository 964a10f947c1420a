# A CloudWatch dashboard of this module (create_dashboard): executions, the pattern's
# own metrics, queues, Lambdas and the state of every alarm (modules/dashboard).
# Kept apart from main.tf.

module "dashboard" {
  source = "../dashboard"

  create         = var.create && var.create_dashboard
  name           = var.name
  period_seconds = var.alarms.period_seconds
  alarm_arns     = module.alarms.alarm_arns
  state_machines = merge({ dag = local.dag_machine_arn }, local.dependency ? { task-machine = local.task_machine_arn } : {})
  functions = concat(
    local.dependency ? [local.runtime_function_name] : [],
    local.event_completion ? ["${var.name}-completion"] : [],
  )
  # The dependency runtime's metrics (a level-order DAG has no runtime: its executions'
  # metrics above are the run's).
  pattern_metrics = {
    title      = "Task failures, tasks skipped, run duration"
    namespace  = local.metrics_namespace
    dimensions = local.metrics_dimensions
    metrics = local.dependency ? [
      { name = "TaskFailures", stat = "Sum", axis = "left" },
      { name = "TasksSkipped", stat = "Sum", axis = "left" },
      { name = "RunDuration", stat = "Maximum", axis = "right" },
    ] : []
  }
}
