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

  tables = { table = { name = var.name, operations = ["GetItem", "PutItem", "UpdateItem", "Query", "TransactWriteItems", "BatchWriteItem"] } }
}

# --- pattern metrics (EMF lines the Tracker prints in the caller's workers) -------------

locals {
  metrics_namespace = "sfn-patterns"
  # The Tracker prints its metrics under this namespace, dimensions Module and Pattern,
  # wherever these variables are in the environment (output metrics_environment).
  metrics_environment = {
    SFN_PATTERNS_METRICS_NAMESPACE = local.metrics_namespace
    SFN_PATTERNS_MODULE            = var.name
  }
  metrics_dimensions = { Module = var.name, Pattern = "status-table" }
}
