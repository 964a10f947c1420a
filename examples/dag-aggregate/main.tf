# dag-aggregate example: the 12 aggregate tasks in ./sql (MIN/MAX/COUNT/SUM over
# raw.events, four levels deep) run with the chosen strategy (level stages, or
# dependency-driven with a coordinator, a task state machine and a runtime Lambda)
# on a Redshift Serverless workgroup through the Redshift Data API.

provider "aws" {
  region = var.region
}

data "aws_caller_identity" "current" {}
data "aws_partition" "current" {}

# --8<-- [start:usage]
module "dag" {
  source = "../../modules/dag-aggregate"

  alarms           = var.alarms
  create_dashboard = var.create_dashboard

  name            = "${var.name_prefix}-${var.strategy}"
  sql_dir         = coalesce(var.sql_dir, "${path.module}/sql")
  strategy        = var.strategy
  max_concurrency = var.max_concurrency
  external_tables = var.external_tables

  task_execution_timeout_seconds = var.task_execution_timeout_seconds

  redshift = {
    database       = var.redshift_database
    workgroup_name = var.redshift_workgroup_name
    workgroup_arn  = "arn:${data.aws_partition.current.partition}:redshift-serverless:${var.region}:${data.aws_caller_identity.current.account_id}:workgroup/${var.redshift_workgroup_id}"
  }

  poll = {
    completion            = var.completion
    fallback_seconds      = var.fallback_seconds
    initial_wait_seconds  = var.poll_seconds
    poll_interval_seconds = var.poll_seconds
    timeout_seconds       = var.task_timeout_seconds
  }

  kms_key_arn       = var.kms_key_arn
  python_executable = var.python_executable
  tags              = var.tags
}
# --8<-- [end:usage]
