# CloudWatch alarms on this module's signals (README "What to watch"). Kept apart
# from main.tf: the alarms read the names main.tf gives and change nothing there.

locals {
  # rate(N unit) in seconds; a cron(...) schedule has no fixed interval.
  reconciler_rate = regexall("^rate\\(([0-9]+) (minute|hour|day)s?\\)$", local.reconciler_schedule_expression)
  reconciler_period = coalesce(
    var.alarms.dead_man_period_seconds,
    length(local.reconciler_rate) == 0 ? null : tonumber(local.reconciler_rate[0][0]) * { minute = 60, hour = 3600, day = 86400 }[local.reconciler_rate[0][1]],
    0,
  )
}

module "alarms" {
  source = "../alarms"

  create         = var.create && coalesce(var.alarms.create, length(var.alarms.alarm_actions) > 0)
  name           = var.name
  period_seconds = var.alarms.period_seconds
  alarm_actions  = var.alarms.alarm_actions
  ok_actions     = var.alarms.ok_actions
  thresholds     = var.alarms.thresholds
  tags           = var.tags

  state_machines = local.create_wrapper ? { wrapper = local.wrapper_arn } : {}
  functions = merge(
    local.create_queue_table ? { callback = { name = local.callback_function_name, timeout_seconds = 60 } } : {},
    local.create_reconciler ? { reconciler = { name = "${var.name}-reconciler", timeout_seconds = 60 } } : {},
    local.create_cleanup ? { cleanup = { name = "${var.name}-cleanup", timeout_seconds = 120 } } : {},
    local.create_gate ? { gate = { name = local.gate_function_name, timeout_seconds = 30 } } : {},
  )
  # The reconciler's sweep is what reclaims leaked slots: alarm when it stops running
  # (only for a rate(...) schedule, or with alarms.dead_man_period_seconds).
  scheduled_functions = local.create_reconciler && local.reconciler_period > 0 ? {
    reconciler = {
      name           = "${var.name}-reconciler"
      period_seconds = local.reconciler_period
      # The first sweep at deploy (a sweep of a new lock table finds nothing to release).
      first_run = { function_arn = module.reconciler.function_arn }
    }
  } : {}
  tables = merge(
    local.create_table ? { table = { name = local.table_name, operations = ["GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query"] } } : {},
    local.create_queue_table ? { queue-table = { name = local.queue_table_name, operations = ["GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query"] } } : {},
  )
  rules = merge(
    local.create_reconciler ? { reconcile-schedule = "${var.name}-semaphore-reconcile" } : {},
    local.create_cleanup ? { holder-ended = "${var.name}-semaphore-holder-ended" } : {},
  )

  # The pattern's own signals, from the metrics its functions print (EMF).
  signals = merge(
    local.lock_item && (local.create_reconciler || local.create_cleanup) ? {
      slots-reclaimed = {
        description = "A holder ended without releasing its slot, and the reconciler or the cleanup reclaimed it (SlotsReclaimed > ${var.alarms.thresholds.slots_reclaimed}): a leak. Find the holder's execution (the function's log names it) and why its release step did not run (a Catch that skips it, a stop)."
        namespace   = local.metrics_namespace
        metric_name = "SlotsReclaimed"
        dimensions  = local.metrics_dimensions
        threshold   = var.alarms.thresholds.slots_reclaimed
      }
    } : {},
    local.callback && local.create_reconciler ? {
      oldest-waiter-age = {
        description = "The oldest waiter has waited more than ${var.alarms.thresholds.oldest_waiter_seconds} s for a slot (OldestWaiterAgeSeconds, measured at each reconciler sweep): holders keep their slots long, or a hand-over was lost. Check SlotsHeld against the limit, and the holders' executions."
        namespace   = local.metrics_namespace
        metric_name = "OldestWaiterAgeSeconds"
        dimensions  = local.metrics_dimensions
        statistic   = "Maximum"
        threshold   = var.alarms.thresholds.oldest_waiter_seconds
      }
    } : {},
  )
}

# --- pattern metrics (EMF lines from the functions; sfn_patterns/metrics.py) -------------

locals {
  metrics_namespace = "sfn-patterns"
  # The runtime prints its metrics under this namespace, dimensions Module and Pattern.
  metrics_environment = {
    SFN_PATTERNS_METRICS_NAMESPACE = local.metrics_namespace
    SFN_PATTERNS_MODULE            = var.name
  }
  metrics_dimensions = { Module = var.name, Pattern = "semaphore" }
}
