# Test-only configuration: examples/dag-aggregate's module call once per level
# strategy (simple-level and parent-level), each on a workgroup of its own, in ONE
# deployment for tests/dag_aggregate/test_example_on_localstack.py. Two deployments
# of the example cost two inits, applies, second plans and destroys (a Terraform
# start, a refresh and the provider's schemas each); one deployment of both module
# calls costs one of each. The arguments are the example's (examples/dag-aggregate/
# main.tf) with its defaults; the example itself is applied, planned and destroyed
# by tests/dag_aggregate/test_dependency_on_localstack.py.

provider "aws" {
  region = "us-east-1"
}

data "aws_caller_identity" "current" {}
data "aws_partition" "current" {}

module "dag" {
  source   = "../../../modules/dag-aggregate"
  for_each = var.strategies

  # No test here reads an alarm (test_dependency_on_localstack.py's deployment of
  # the example keeps them).
  alarms = { create = false }

  name            = "${var.name_prefix}-${each.key}"
  sql_dir         = "${path.module}/../../../examples/dag-aggregate/sql"
  strategy        = each.key
  max_concurrency = var.max_concurrency

  redshift = {
    database       = "dev"
    workgroup_name = each.value.workgroup_name
    workgroup_arn  = "arn:${data.aws_partition.current.partition}:redshift-serverless:us-east-1:${data.aws_caller_identity.current.account_id}:workgroup/${each.value.workgroup_id}"
  }

  # The example's poll defaults (its variables completion, fallback_seconds,
  # poll_seconds and task_timeout_seconds).
  poll = {
    completion            = "event"
    fallback_seconds      = 300
    initial_wait_seconds  = 1
    poll_interval_seconds = 1
    timeout_seconds       = 600
  }

  python_executable = var.python_executable
  tags              = { Project = "sfn-patterns", Example = "dag-aggregate" }
}
