# Semaphore example: at most max_concurrency executions run the critical section
# at once. Two ways to use modules/semaphore are shown:
#
# * "embedded": your own state machine merges the module's acquire and release
#   fragments around its critical section (a Lambda that records when it entered
#   and left, so tests can count concurrent holders from the holders' own times);
# * "wrapper": the module's ready-made wrapper runs another state machine
#   ("target") with startExecution.sync:2 while it holds a slot.
#
# strategy and fairness choose the admission scheme: callback (default: waiters
# park on a task token), dynamodb counter with waiters racing, dynamodb with FIFO
# tickets, or the oldest-first gate.

provider "aws" {
  region = var.region
}

data "aws_partition" "current" {}
data "aws_region" "current" {}
data "aws_caller_identity" "current" {}

locals {
  sm_prefix     = "arn:${data.aws_partition.current.partition}:states:${data.aws_region.current.region}:${data.aws_caller_identity.current.account_id}:stateMachine:"
  embedded_name = "${var.name_prefix}-embedded"
  target_name   = "${var.name_prefix}-target"
  embedded_arn  = "${local.sm_prefix}${local.embedded_name}"
  target_arn    = "${local.sm_prefix}${local.target_name}"
}

# --8<-- [start:usage]
module "semaphore" {
  source = "../../modules/semaphore"

  alarms           = var.alarms
  create_dashboard = var.create_dashboard

  name                           = var.name_prefix
  strategy                       = var.strategy
  fairness                       = var.fairness
  fallback_seconds               = var.fallback_seconds
  max_concurrency                = var.max_concurrency
  wait_min_seconds               = var.wait_min_seconds
  wait_max_seconds               = var.wait_max_seconds
  acquire_timeout_seconds        = var.acquire_timeout_seconds
  reconciler_schedule_expression = var.reconciler_schedule_expression
  holder_state_machine_arns      = [local.embedded_arn]
  create_wrapper                 = true
  target_state_machine_arn       = coalesce(var.external_target_state_machine_arn, local.target_arn)
  target_role_arn                = var.target_role_arn
  target_kms_key_arn             = var.target_kms_key_arn
  fragment_acquired_next         = "Critical section"
  logging_level                  = "ERROR" # the wrapper's executions: failures only
  tags                           = var.tags
}
# --8<-- [end:usage]

# --- The demo critical section: records enter/leave times ---------------------

resource "aws_dynamodb_table" "records" {
  #checkov:skip=CKV_AWS_119:Demo table of enter/leave times, encrypted with the AWS owned key; the example has no customer managed key.
  name         = "${var.name_prefix}-records"
  billing_mode = "PAY_PER_REQUEST"
  hash_key     = "execution_id"

  attribute {
    name = "execution_id"
    type = "S"
  }

  server_side_encryption {
    enabled = true
  }

  point_in_time_recovery {
    enabled = true
  }

  tags = var.tags
}

module "worker" {
  source = "../../modules/lambda-function"

  function_name         = "${var.name_prefix}-worker"
  source_path           = [{ path = "${path.module}/../../lambda_src", patterns = ["sfn_patterns_samples/__init__.py", "sfn_patterns_samples/semaphore/**"] }]
  handler               = "sfn_patterns_samples.semaphore.demo_worker.handler"
  timeout               = coalesce(var.critical_section_timeout_seconds, 120)
  environment_variables = { RECORD_TABLE = aws_dynamodb_table.records.name }
  tags                  = var.tags

  policy_statements = [{
    sid       = "RecordTimes"
    actions   = ["dynamodb:PutItem", "dynamodb:UpdateItem"]
    resources = [aws_dynamodb_table.records.arn]
  }]
}

locals {
  record_task = {
    Type     = "Task"
    Resource = "arn:${data.aws_partition.current.partition}:states:::lambda:invoke"
    Parameters = {
      FunctionName = module.worker.function_arn
      Payload = {
        "execution_id.$" = "$$.Execution.Id"
        "input.$"        = "$$.Execution.Input"
      }
    }
    ResultSelector = { "recorded.$" = "$.Payload" }
    ResultPath     = "$.work"
  }

  timeout = var.execution_timeout_seconds == null ? {} : { TimeoutSeconds = var.execution_timeout_seconds }
  # The worker's own timeout is the same: when the task times out, its Lambda has ended.
  critical_timeout = var.critical_section_timeout_seconds == null ? {} : { TimeoutSeconds = var.critical_section_timeout_seconds }

  # --8<-- [start:embedded-definition]
  embedded_definition = jsonencode(merge(local.timeout, {
    Comment = "Record enter/leave times inside semaphore ${var.name_prefix} (limit ${var.max_concurrency})."
    StartAt = module.semaphore.acquire_start_state
    States = merge(
      module.semaphore.acquire_states,
      {
        "Critical section" = merge(local.record_task, local.critical_timeout, {
          Catch = module.semaphore.critical_section_catch
          Next  = module.semaphore.release_state
        })
      },
      module.semaphore.release_states,
    )
  }))
  # --8<-- [end:embedded-definition]

  target_definition = jsonencode(merge(local.timeout, {
    Comment = "The wrapper's target: the same recording Lambda, as a machine of its own."
    StartAt = "Record"
    States = {
      Record = merge(local.record_task, { End = true })
    }
  }))
}

# --- State machines --------------------------------------------------------

# --8<-- [start:embedded-machine]
module "embedded" {
  source = "../../modules/state-machine"

  name       = local.embedded_name
  definition = local.embedded_definition
  policy_statements = [{
    sid       = "InvokeWorker"
    actions   = ["lambda:InvokeFunction"]
    resources = [module.worker.function_arn_static, "${module.worker.function_arn_static}:*"]
  }]
  # The embedded machine also runs the acquire/release fragments.
  policy_documents = [module.semaphore.caller_policy_json]
  # A stand-in workflow: log failed executions only (ALL logs every history event).
  logging_level                  = "ERROR"
  logging_include_execution_data = false
  tags                           = var.tags
}
# --8<-- [end:embedded-machine]

module "target" {
  source = "../../modules/state-machine"

  name       = local.target_name
  definition = local.target_definition
  policy_statements = [{
    sid       = "InvokeWorker"
    actions   = ["lambda:InvokeFunction"]
    resources = [module.worker.function_arn_static, "${module.worker.function_arn_static}:*"]
  }]
  logging_level                  = "ERROR"
  logging_include_execution_data = false
  tags                           = var.tags
}
