# A CloudWatch dashboard of this module (create_dashboard): executions, the pattern's
# own metrics, queues, Lambdas and the state of every alarm (modules/dashboard).
# Kept apart from main.tf.

module "dashboard" {
  source = "../dashboard"

  create         = var.create && var.create_dashboard
  name           = var.name
  period_seconds = var.alarms.period_seconds
  alarm_arns     = module.alarms.alarm_arns
  tables         = [var.name]
  pattern_metrics = {
    title      = "Lease expiries, retries exhausted, oldest pending task (Tracker)"
    namespace  = local.metrics_namespace
    dimensions = local.metrics_dimensions
    metrics = [
      { name = "LeaseExpiries" },
      { name = "RetriesExhausted" },
      { name = "OldestPendingAge", stat = "Maximum", axis = "right" },
    ]
  }
}
