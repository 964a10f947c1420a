# Every pattern module in every strategy and option the examples use, planned (never
# applied) by tests/terraform/test_iam_static.py: the IAM static check reads each
# state machine's definition and role policy from this plan and checks that the role
# allows what AWS documents for each Task. Names and ARNs are
# static, so every definition and nearly every policy is known at plan time (the test
# names the few that are not, and why). One instance of each module uses a customer
# managed key, as examples/complete does, so the modules' KMS statements are rendered
# too. The caller machines at the end embed the semaphore's and the job poller's
# fragments with only caller_policy_json or poll_loop_embedder_policy_json, as a
# caller would; the consumer roles attach every other policy output a module gives
# its users (sqs-throttle's producer and target-account policies, status-table's
# reader and writer policies). The differential test
# (tests/harness/iam/test_differential.py) decides requests against all of them.

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
  kms_key     = "${local.arn}:kms:${local.region}:${local.account}:key/0f1e2d3c-4b5a-4978-8a9b-0c1d2e3f4a5b"
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
  # The event variant encrypts its store and token table with the customer key.
  job_pollers = {
    retry       = { polling = "retry", completion = "poll", aws_sdk_job = null, timeout_strategy = "start-time", metadata_store = "s3" }
    loop-assign = { polling = "loop-assign", completion = "poll", aws_sdk_job = null, timeout_strategy = "wait-count", metadata_store = "s3" }
    loop        = { polling = "loop", completion = "poll", aws_sdk_job = null, timeout_strategy = "wait-count", metadata_store = "s3" }
    event       = { polling = null, completion = "event", aws_sdk_job = null, timeout_strategy = "start-time", metadata_store = "dynamodb" }
    sdk         = { polling = null, completion = "poll", aws_sdk_job = local.aws_sdk_job, timeout_strategy = "wait-count", metadata_store = "s3" }
    sdk-event   = { polling = null, completion = "event", aws_sdk_job = local.aws_sdk_job, timeout_strategy = "wait-count", metadata_store = "s3" }
    sdk-role    = { polling = "loop", completion = "poll", aws_sdk_job = merge(local.aws_sdk_job, { role_arn = local.jobs_role }), timeout_strategy = "wait-count", metadata_store = "s3" }
  }

  # semaphore: every strategy with the wrapper, fifo fairness (with the customer key), a
  # target in another account.
  semaphores = {
    callback     = { strategy = "callback", fairness = null, target_role_arn = null }
    dynamodb     = { strategy = "dynamodb", fairness = null, target_role_arn = null }
    fifo         = { strategy = "dynamodb", fairness = "fifo", target_role_arn = null }
    oldest-first = { strategy = "oldest-first", fairness = null, target_role_arn = null }
    cross        = { strategy = "callback", fairness = null, target_role_arn = local.target_role }
  }

  # dag-aggregate: every strategy; both completions; each kind of Redshift target;
  # simple-level with the customer key.
  workgroup = { database = "dev", workgroup_name = "wg", workgroup_arn = "${local.arn}:redshift-serverless:${local.region}:${local.account}:workgroup/0f1e2d3c" }
  dags = {
    simple-level = { strategy = "simple-level", completion = "event", redshift = local.workgroup }
    parent-level = { strategy = "parent-level", completion = "poll", redshift = { database = "dev", cluster_identifier = "c1", db_user = "etl" } }
    dependency   = { strategy = "dependency", completion = "event", redshift = local.workgroup }
    dep-poll     = { strategy = "dependency", completion = "poll", redshift = { database = "dev", cluster_identifier = "c1", secret_arn = "${local.arn}:secretsmanager:${local.region}:${local.account}:secret:dwh-AbCdEf" } }
  }
  # The instance of each module that uses the customer key.
  with_key = { job_poller = "event", semaphore = "fifo", dag_aggregate = "simple-level" }
  # One call of each pattern creates its roles under a path with a permissions boundary
  # (test_iam_static.py checks every role of it has both, and no other role has either).
  with_role_settings = { job_poller = "event", semaphore = "cross", dag_aggregate = "dependency", sqs_throttle = "cross" }
  role_path          = "/platform/workloads/"
  boundary           = "${local.arn}:iam::${local.account}:policy/${local.p}-boundary"

  # sqs-throttle: a target in this account, with and without the customer key, and one
  # in another account (the starter assumes target_role there).
  throttles = {
    local = { kms_key_arn = null, target_role_arn = null }
    kms   = { kms_key_arn = local.kms_key, target_role_arn = null }
    cross = { kms_key_arn = null, target_role_arn = local.target_role }
  }

  # status-table: with and without the customer key.
  status_tables = { plain = null, kms = local.kms_key }
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
  kms_key_arn       = each.key == local.with_key.job_poller ? local.kms_key : null
  python_executable = var.python_executable

  role_path                 = each.key == local.with_role_settings.job_poller ? local.role_path : "/"
  role_permissions_boundary = each.key == local.with_role_settings.job_poller ? local.boundary : null
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
  kms_key_arn              = each.key == local.with_key.semaphore ? local.kms_key : null
  python_executable        = var.python_executable

  role_path                 = each.key == local.with_role_settings.semaphore ? local.role_path : "/"
  role_permissions_boundary = each.key == local.with_role_settings.semaphore ? local.boundary : null
}

module "dag_aggregate" {
  source   = "../../../modules/dag-aggregate"
  for_each = local.dags

  name              = "${local.p}-dag-${each.key}"
  sql_dir           = local.sql_dir
  strategy          = each.value.strategy
  redshift          = each.value.redshift
  poll              = { completion = each.value.completion, timeout_seconds = 600 }
  kms_key_arn       = each.key == local.with_key.dag_aggregate ? local.kms_key : null
  python_executable = var.python_executable

  role_path                 = each.key == local.with_role_settings.dag_aggregate ? local.role_path : "/"
  role_permissions_boundary = each.key == local.with_role_settings.dag_aggregate ? local.boundary : null
}

module "sqs_throttle" {
  source   = "../../../modules/sqs-throttle"
  for_each = local.throttles

  name                     = "${local.p}-thr-${each.key}"
  target_state_machine_arn = each.value.target_role_arn == null ? local.target : replace(local.target, local.account, "111111111111")
  target_role_arn          = each.value.target_role_arn
  kms_key_arn              = each.value.kms_key_arn
  python_executable        = var.python_executable

  role_path                 = each.key == local.with_role_settings.sqs_throttle ? local.role_path : "/"
  role_permissions_boundary = each.key == local.with_role_settings.sqs_throttle ? local.boundary : null
}

module "status_table" {
  source   = "../../../modules/status-table"
  for_each = local.status_tables

  name        = "${local.p}-tasks-${each.key}"
  kms_key_arn = each.value
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

# A caller's own machine running the job poller's loop (poll_loop_fragment_json) after
# a start of its own, with poll_loop_embedder_policy_json as its only grant for it.
module "job_poller_embedder" {
  source   = "../../../modules/state-machine"
  for_each = local.job_pollers

  name = "${local.p}-embed-${each.key}"
  definition = jsonencode({
    StartAt = "Job started"
    States = merge(
      { "Job started" = { Type = "Pass", Next = module.job_poller[each.key].poll_loop_entry_state } },
      jsondecode(module.job_poller[each.key].poll_loop_fragment_json),
      { (module.job_poller[each.key].poll_loop_exit_states.succeeded) = { Type = "Succeed" } },
      {
        for exit, state in module.job_poller[each.key].poll_loop_exit_states :
        state => { Type = "Fail", Error = "Caller.Job${title(exit)}" } if exit != "succeeded"
      },
    )
  })
  policy_documents = [module.job_poller[each.key].poll_loop_embedder_policy_json]
}

# The roles a user attaches the other policy outputs to: a producer of each throttle,
# the role in the target's account a cross-account starter assumes (its trust and
# permissions outputs), a reader and a writer of each task table.
data "aws_service_principal" "lambda" {
  service_name = "lambda"
}

locals {
  lambda_trust = jsonencode({
    Version   = "2012-10-17"
    Statement = [{ Effect = "Allow", Action = "sts:AssumeRole", Principal = { Service = data.aws_service_principal.lambda.name } }]
  })
  consumers = merge(
    { for k, m in module.sqs_throttle : "thr-${k}-producer" => { trust = local.lambda_trust, policy = m.producer_policy_json } },
    {
      for k, m in module.sqs_throttle : "thr-${k}-target" => { trust = m.target_role_trust_policy_json, policy = m.target_role_policy_json }
      if local.throttles[k].target_role_arn != null
    },
    { for k, m in module.status_table : "tasks-${k}-reader" => { trust = local.lambda_trust, policy = m.iam_policy_read_only_json } },
    { for k, m in module.status_table : "tasks-${k}-writer" => { trust = local.lambda_trust, policy = m.iam_policy_read_write_json } },
  )
}

resource "aws_iam_role" "consumer" {
  for_each = local.consumers

  name               = "${local.p}-${each.key}"
  assume_role_policy = each.value.trust
}

resource "aws_iam_role_policy" "consumer" {
  for_each = local.consumers

  name   = "${local.p}-${each.key}"
  role   = aws_iam_role.consumer[each.key].name
  policy = each.value.policy
}
