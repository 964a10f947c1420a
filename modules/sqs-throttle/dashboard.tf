# A CloudWatch dashboard of this module (create_dashboard): executions, the pattern's
# own metrics, queues, Lambdas and the state of every alarm (modules/dashboard).
# Kept apart from main.tf.

module "dashboard" {
  source = "../dashboard"

  create         = var.create && var.create_dashboard
  name           = var.name
  period_seconds = var.alarms.period_seconds
  alarm_arns     = module.alarms.alarm_arns
  functions      = [local.starter_name]
  queues         = [local.queue_name, local.dlq_name]

  pattern_metrics = {
    title      = "Running against MAX, admitted per tick"
    namespace  = local.metrics_namespace
    dimensions = local.metrics_dimensions
    metrics = [
      { name = "Running", stat = "Maximum" },
      { name = "MaxConcurrent", stat = "Maximum" },
      { name = "Admitted" },
      { name = "Poison" },
    ]
  }
}
