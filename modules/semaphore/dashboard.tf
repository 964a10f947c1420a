# A CloudWatch dashboard of this module (create_dashboard): executions, the pattern's
# own metrics, queues, Lambdas and the state of every alarm (modules/dashboard).
# Kept apart from main.tf.

module "dashboard" {
  source = "../dashboard"

  create         = var.create && var.create_dashboard
  name           = var.name
  period_seconds = var.alarms.period_seconds
  alarm_arns     = module.alarms.alarm_arns
  state_machines = local.create_wrapper ? { wrapper = local.wrapper_arn } : {}
  functions = concat(
    local.create_queue_table ? [local.callback_function_name] : [],
    local.create_reconciler ? ["${var.name}-reconciler"] : [],
    local.create_cleanup ? ["${var.name}-cleanup"] : [],
    local.create_gate ? [local.gate_function_name] : [],
  )

  pattern_metrics = {
    title      = "Slots held, waiters, hand-overs, slots reclaimed"
    namespace  = local.metrics_namespace
    dimensions = local.metrics_dimensions
    # Only what this strategy's functions print (an empty line on a dashboard reads as
    # "all quiet"): the reconciler's sweep (slots held; waiters where a queue exists; the
    # oldest waiter's age with callback), the callback's hand-overs, leaks reclaimed.
    metrics = concat(
      local.lock_item && local.create_reconciler ? [{ name = "SlotsHeld", stat = "Maximum", axis = "left" }] : [],
      (local.callback || local.fifo) && local.create_reconciler ? [{ name = "Waiters", stat = "Maximum", axis = "left" }] : [],
      local.callback ? [{ name = "HandOvers", stat = "Sum", axis = "left" }] : [],
      local.lock_item && (local.create_reconciler || local.create_cleanup) ? [{ name = "SlotsReclaimed", stat = "Sum", axis = "left" }] : [],
      local.callback && local.create_reconciler ? [{ name = "OldestWaiterAgeSeconds", stat = "Maximum", axis = "right" }] : [],
    )
  }
}
