# CloudWatch alarms on this module's signals (README "What to watch"). Kept apart
# from main.tf: the alarms read the names main.tf gives and change nothing there.

locals {
  # rate(N unit) in seconds: the starter is expected once per interval.
  schedule_parts   = regex("^rate\\(([0-9]+) (minute|hour|day)s?\\)$", var.schedule_expression)
  schedule_seconds = tonumber(local.schedule_parts[0]) * { minute = 60, hour = 3600, day = 86400 }[local.schedule_parts[1]]
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

  functions = { starter = { name = local.starter_name, timeout_seconds = var.max_seconds_per_run + 30 } }
  # Only while the schedule runs: a paused schedule stops the starter on purpose.
  scheduled_functions = var.schedule_enabled ? {
    starter = {
      name           = local.starter_name
      period_seconds = coalesce(var.alarms.dead_man_period_seconds, local.schedule_seconds)
      # The first tick at deploy, short: admit what is queued for a second, then return.
      first_run = { function_arn = module.starter.function_arn, input = jsonencode({ max_seconds = 1 }) }
    }
  } : {}
  dead_letter_queues = { dlq = local.dlq_name }
  # What the starter calls on its ledger (sfn_patterns/sqs_throttle/ledger.py): Scan
  # (the count), TransactWriteItems (an admission, recorded with the lease renewal),
  # PutItem (the run lease), DeleteItem (a forgotten entry, the lease's release).
  tables = { ledger = { name = local.ledger_name, operations = ["Scan", "TransactWriteItems", "PutItem", "DeleteItem"] } }
  rules  = { schedule = local.starter_name }

  signals = {
    queue-oldest-message = {
      description         = "The oldest request has waited ${var.alarms.thresholds.oldest_message_seconds} s or more in ${local.queue_name}: admissions are stalled (starter not running, MAX slots held by stuck executions) or demand outruns MAX."
      namespace           = "AWS/SQS"
      metric_name         = "ApproximateAgeOfOldestMessage"
      dimensions          = { QueueName = local.queue_name }
      statistic           = "Maximum"
      comparison_operator = "GreaterThanOrEqualToThreshold"
      threshold           = var.alarms.thresholds.oldest_message_seconds
    }
  }
}

# --- pattern metrics (EMF lines from the starter; sfn_patterns/metrics.py) ---------------

locals {
  metrics_namespace = "sfn-patterns"
  # The runtime prints its metrics under this namespace, dimensions Module and Pattern.
  metrics_environment = {
    SFN_PATTERNS_METRICS_NAMESPACE = local.metrics_namespace
    SFN_PATTERNS_MODULE            = var.name
  }
  metrics_dimensions = { Module = var.name, Pattern = "sqs-throttle" }
}
