# CloudWatch alarms on this module's signals (README "What to watch"). Kept apart
# from main.tf: the alarms read the names main.tf gives and change nothing there.

locals {
  dag_machine_arn = "arn:${local.partition}:states:${local.region}:${local.account_id}:stateMachine:${var.name}"
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

  # The DAG's machine (level-order), or the coordinator and each task's machine.
  state_machines = merge(
    { dag = local.dag_machine_arn },
    local.dependency ? { task-machine = local.task_machine_arn } : {},
  )
  functions = merge(
    local.dependency ? { runtime = { name = local.runtime_function_name, timeout_seconds = 120 } } : {},
    local.event_completion ? { completion = { name = "${var.name}-completion", timeout_seconds = 30 } } : {},
  )
  tables = merge(
    local.dependency ? { runs = { name = "${var.name}-runs", operations = ["GetItem", "PutItem", "UpdateItem", "Query", "TransactWriteItems"] } } : {},
    local.event_completion ? { tokens = { name = "${var.name}-tokens", operations = ["PutItem", "UpdateItem"] } } : {},
  )
  rules = merge(
    local.dependency ? { task-ended = "${var.name}-ended" } : {},
    local.event_completion ? { completion-rule = "${var.name}-completion" } : {},
  )
}

# --- pattern metrics (EMF lines from the dependency runtime; sfn_patterns/metrics.py) ---

locals {
  metrics_namespace = "sfn-patterns"
  # The runtime prints its metrics under this namespace, dimensions Module and Pattern.
  metrics_environment = {
    SFN_PATTERNS_METRICS_NAMESPACE = local.metrics_namespace
    SFN_PATTERNS_MODULE            = var.name
  }
  metrics_dimensions = { Module = var.name, Pattern = "dag-aggregate" }
}
