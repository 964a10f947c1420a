# Every pattern module in every strategy and option the examples use, planned (never
# applied) by tests/terraform/test_iam_static.py: the IAM static check reads each
# state machine's definition and role policy from this plan and checks that the role
# allows what AWS documents for each Task (issue 27 item 3). Names and ARNs are
# static, so every definition and policy is known at plan time. The caller machines
# at the end embed the semaphore's fragments with only caller_policy_json, as a
# caller would.

provider "aws" {
  region = "us-east-1"
}

data "aws_partition" "current" {}
data "aws_region" "current" {}
data "aws_caller_identity" "current" {}

locals {
  partition = data.aws_partition.current.partition
  region    = data.aws_region.current.region
  account   = data.aws_caller_identity.current.account_id
  arn       = "arn:${local.partition}"
  p         = var.name_prefix

  target      = "${local.arn}:states:${local.region}:${local.account}:stateMachine:${local.p}-target"
  child       = "${local.arn}:states:${local.region}:${local.account}:stateMachine:${local.p}-child"
  jobs_role   = "${local.arn}:iam::111111111111:role/${local.p}-jobs"
  target_role = "${local.arn}:iam::111111111111:role/${local.p}-target"
  sql_dir     = "${path.module}/../../../examples/dag-aggregate/sql"

  aws_sdk_job = {
    start_action           = "sfn:startExecution"
    start_parameters_json  = jsonencode({ StateMachineArn = local.child, "Input.$" = "$" })
    status_action          = "sfn:describeExecution"
    status_parameters_json = jsonencode({ "ExecutionArn.$" = "$.job_poller.job.run.handle.ExecutionArn" })
    status_path            = "$.Status"
    succeeded_statuses     = ["SUCCEEDED"]
    failed_statuses        = ["FAILED", "TIMED_OUT", "ABORTED"]
    running_statuses       = ["RUNNING"]
    policy_statements = [
      { sid = "StartChild", actions = ["states:StartExecution"], resources = [local.child] },
      { sid = "DescribeChild", actions = ["states:DescribeExecution"], resources = ["${local.arn}:states:${local.region}:${local.account}:execution:${local.p}-child:*"] },
    ]
  }
  completion_event = {
    event_pattern      = jsonencode({ source = ["aws.states"], "detail-type" = ["Step Functions Execution Status Change"] })
    job_id_path        = "$.detail.executionArn"
    status_path        = "$.detail.status"
    succeeded_statuses = ["SUCCEEDED"]
    failed_statuses    = ["FAILED", "TIMED_OUT", "ABORTED"]
    job_id_state_path  = "$.job_poller.job.run.handle.ExecutionArn"
  }

  # job-poller: the Lambda variant in each polling shape and with event completion,
  # the aws-sdk variant polling, with event completion and through another account.
  job_pollers = {
    retry       = { polling = "retry", completion = "poll", aws_sdk_job = null, timeout_strategy = "start-time", metadata_store = "s3" }
    loop-assign = { polling = "loop-assign", completion = "poll", aws_sdk_job = null, timeout_strategy = "wait-count", metadata_store = "s3" }
    loop        = { polling = "loop", completion = "poll", aws_sdk_job = null, timeout_strategy = "wait-count", metadata_store = "s3" }
    event       = { polling = null, completion = "event", aws_sdk_job = null, timeout_strategy = "start-time", metadata_store = "dynamodb" }
    sdk         = { polling = null, completion = "poll", aws_sdk_job = local.aws_sdk_job, timeout_strategy = "wait-count", metadata_store = "s3" }
    sdk-event   = { polling = null, completion = "event", aws_sdk_job = local.aws_sdk_job, timeout_strategy = "wait-count", metadata_store = "s3" }
    sdk-role    = { polling = "loop", completion = "poll", aws_sdk_job = merge(local.aws_sdk_job, { role_arn = local.jobs_role }), timeout_strategy = "wait-count", metadata_store = "s3" }
  }

  # semaphore: every strategy with the wrapper, fifo fairness, a target in another account.
  semaphores = {
    callback     = { strategy = "callback", fairness = null, target_role_arn = null }
    dynamodb     = { strategy = "dynamodb", fairness = null, target_role_arn = null }
    fifo         = { strategy = "dynamodb", fairness = "fifo", target_role_arn = null }
    oldest-first = { strategy = "oldest-first", fairness = null, target_role_arn = null }
    cross        = { strategy = "callback", fairness = null, target_role_arn = local.target_role }
  }

  # dag-aggregate: every strategy; both completions; each kind of Redshift target.
  workgroup = { database = "dev", workgroup_name = "wg", workgroup_arn = "${local.arn}:redshift-serverless:${local.region}:${local.account}:workgroup/0f1e2d3c" }
  dags = {
    simple-level = { strategy = "simple-level", completion = "event", redshift = local.workgroup }
    parent-level = { strategy = "parent-level", completion = "poll", redshift = { database = "dev", cluster_identifier = "c1", db_user = "etl" } }
    dependency   = { strategy = "dependency", completion = "event", redshift = local.workgroup }
    dep-poll     = { strategy = "dependency", completion = "poll", redshift = { database = "dev", cluster_identifier = "c1", secret_arn = "${local.arn}:secretsmanager:${local.region}:${local.account}:secret:dwh-AbCdEf" } }
  }
}

module "job_poller" {
  source   = "../../../modules/job-poller"
  for_each = local.job_pollers

  name              = "${local.p}-jp-${each.key}"
  polling           = each.value.polling
  completion        = each.value.completion
  fallback_seconds  = 60
  timeout_seconds   = 600
  timeout_strategy  = each.value.timeout_strategy
  metadata_store    = each.value.metadata_store
  aws_sdk_job       = each.value.aws_sdk_job
  completion_event  = each.value.aws_sdk_job == null ? null : local.completion_event
  python_executable = var.python_executable
}

module "semaphore" {
  source   = "../../../modules/semaphore"
  for_each = local.semaphores

  name                     = "${local.p}-sem-${each.key}"
  strategy                 = each.value.strategy
  fairness                 = each.value.fairness
  create_wrapper           = true
  target_state_machine_arn = each.value.target_role_arn == null ? local.target : replace(local.target, local.account, "111111111111")
  target_role_arn          = each.value.target_role_arn
  python_executable        = var.python_executable
}

module "dag_aggregate" {
  source   = "../../../modules/dag-aggregate"
  for_each = local.dags

  name              = "${local.p}-dag-${each.key}"
  sql_dir           = local.sql_dir
  strategy          = each.value.strategy
  redshift          = each.value.redshift
  poll              = { completion = each.value.completion, timeout_seconds = 600 }
  python_executable = var.python_executable
}

# A caller's own machine running the semaphore's acquire and release fragments around
# its critical section, with the module's caller_policy_json as its only grant for them.
module "semaphore_caller" {
  source   = "../../../modules/state-machine"
  for_each = local.semaphores

  name = "${local.p}-caller-${each.key}"
  definition = jsonencode({
    StartAt = module.semaphore[each.key].acquire_start_state
    States = merge(
      module.semaphore[each.key].acquire_states,
      { "Critical section" = { Type = "Pass", Next = module.semaphore[each.key].release_state } },
      module.semaphore[each.key].release_states,
    )
  })
  policy_documents = [module.semaphore[each.key].caller_policy_json]
}
