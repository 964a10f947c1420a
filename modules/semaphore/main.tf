# A counting semaphore for Step Functions executions (seed 002, done safely).
#
# strategy = "dynamodb": one lock item in a table Terraform creates holds
# holder_count and one lease attribute per holder. Acquire and release are
# conditional updateItem calls made by Step Functions itself (no Lambda); a
# blocked execution waits a jittered time and retries, bounded by
# acquire_timeout_seconds. Leaked slots are freed by an EventBridge cleanup
# (FAILED/TIMED_OUT/ABORTED) and a scheduled reconciler (DescribeExecution).
#
# fairness = "fifo" (dynamodb only): waiters draw a ticket (atomic ADD on the
# lock item) and only the head of the queue may take a free slot; abandoned
# tickets are stepped over by the waiters, the cleanup and the reconciler.
#
# strategy = "oldest-first": the seed's ListExecutions gate in a Lambda.

data "aws_partition" "current" {}
data "aws_region" "current" {}
data "aws_caller_identity" "current" {}

locals {
  partition  = data.aws_partition.current.partition
  region     = data.aws_region.current.region
  account_id = data.aws_caller_identity.current.account_id

  dynamodb     = var.strategy == "dynamodb"
  oldest_first = var.strategy == "oldest-first"
  fifo         = local.dynamodb && var.fairness == "fifo"

  table_name = "${var.name}-semaphore"
  table_arn  = "arn:${local.partition}:dynamodb:${local.region}:${local.account_id}:table/${local.table_name}"

  wrapper_name = "${var.name}-wrapper"
  wrapper_arn  = "arn:${local.partition}:states:${local.region}:${local.account_id}:stateMachine:${local.wrapper_name}"

  create_wrapper = var.create && var.create_wrapper

  # Every state machine whose executions can hold a slot.
  holder_machine_arns = distinct(concat(
    var.holder_state_machine_arns,
    var.create_wrapper ? [local.wrapper_arn] : [],
  ))
  holder_execution_arns = [
    for arn in local.holder_machine_arns : "${replace(arn, ":stateMachine:", ":execution:")}:*"
  ]

  create_table      = var.create && local.dynamodb
  create_reconciler = local.create_table && var.enable_reconciler
  create_cleanup    = local.create_table && var.enable_event_cleanup && length(local.holder_machine_arns) > 0
  create_gate       = var.create && local.oldest_first

  gate_function_name = "${var.name}-oldest-first-gate"
  gate_function_arn  = "arn:${local.partition}:lambda:${local.region}:${local.account_id}:function:${local.gate_function_name}"

  # --- ASL fragments -------------------------------------------------------
  template_dir = "${path.module}/../../templates/semaphore"
  end_marker   = "__SEMAPHORE_END__"

  acquire_template = local.fifo ? "fifo_acquire.states.json.tftpl" : (local.dynamodb ? "acquire.states.json.tftpl" : "oldest_first_acquire.states.json.tftpl")
  acquire_vars = {
    prefix                  = var.fragment_state_prefix
    table_name              = local.table_name
    lock_key                = var.lock_key
    gate_function_arn       = local.gate_function_arn
    limit                   = var.semaphore_limit
    lease_seconds           = var.lease_seconds
    wait_min_seconds        = var.wait_min_seconds
    wait_max_seconds        = var.wait_max_seconds
    acquire_timeout_seconds = var.acquire_timeout_seconds
  }
  acquire_states = jsondecode(templatefile("${local.template_dir}/${local.acquire_template}", merge(local.acquire_vars, {
    acquired_next = var.fragment_acquired_next
  })))

  release_template = local.dynamodb ? "release.states.json.tftpl" : "oldest_first_release.states.json.tftpl"
  # A null fragment_release_next ends the machine after the release: the
  # template's `"Next": "<marker>"` becomes `"End": true`.
  release_states = jsondecode(replace(templatefile("${local.template_dir}/${local.release_template}", {
    prefix       = var.fragment_state_prefix
    release_next = coalesce(var.fragment_release_next, local.end_marker)
    table_name   = local.table_name
    lock_key     = var.lock_key
  }), "\"Next\": \"${local.end_marker}\"", "\"End\": true"))

  # Add this to the Catch of every state of your critical section.
  critical_section_catch = [{
    ErrorEquals = ["States.ALL"]
    ResultPath  = "$.semaphore_error"
    Next        = "${var.fragment_state_prefix}Release after failure"
  }]

  # --- Wrapper ---------------------------------------------------------------
  wrapper_release_states = jsondecode(templatefile("${local.template_dir}/${local.release_template}", {
    prefix       = var.fragment_state_prefix
    release_next = "Return target output"
    table_name   = local.table_name
    lock_key     = var.lock_key
  }))
  wrapper_acquire_states = jsondecode(templatefile("${local.template_dir}/${local.acquire_template}", merge(local.acquire_vars, {
    acquired_next = "Run target"
  })))
  wrapper_states = jsondecode(var.create_wrapper ? templatefile("${local.template_dir}/wrapper.states.json.tftpl", {
    prefix                   = var.fragment_state_prefix
    target_state_machine_arn = var.target_state_machine_arn
  }) : "{}")
  wrapper_definition = jsonencode({
    Comment = "Run ${coalesce(var.target_state_machine_arn, "-")} while holding a slot of semaphore ${var.name} (limit ${var.semaphore_limit}, strategy ${var.strategy}, fairness ${local.fifo ? "fifo" : "none"})."
    StartAt = "${var.fragment_state_prefix}Prepare"
    States  = merge(local.wrapper_acquire_states, local.wrapper_states, local.wrapper_release_states)
  })
}

# --- Lock table ----------------------------------------------------------------

resource "aws_dynamodb_table" "this" {
  #checkov:skip=CKV_AWS_28:Point-in-time recovery is on by default (point_in_time_recovery); checkov cannot resolve a value passed through the root module.
  count = local.create_table ? 1 : 0

  name                        = local.table_name
  billing_mode                = "PAY_PER_REQUEST"
  hash_key                    = "pk"
  deletion_protection_enabled = var.deletion_protection

  attribute {
    name = "pk"
    type = "S"
  }

  server_side_encryption {
    enabled     = true
    kms_key_arn = var.kms_key_arn
  }

  point_in_time_recovery {
    enabled = var.point_in_time_recovery
  }

  tags = var.tags
}

# The lock item exists before the first acquire, so the acquire condition can be
# a true `holder_count < limit` (no create-on-first-use branch, no `<>`). With
# fairness fifo it also holds the ticket counters: next_ticket (the next ticket
# to hand out) and served (the ticket whose turn it is).
resource "aws_dynamodb_table_item" "lock" {
  count = local.create_table ? 1 : 0

  table_name = aws_dynamodb_table.this[0].name
  hash_key   = aws_dynamodb_table.this[0].hash_key
  item = jsonencode(merge(
    {
      pk           = { S = var.lock_key }
      holder_count = { N = "0" }
    },
    local.fifo ? {
      next_ticket = { N = "0" }
      served      = { N = "0" }
    } : {},
  ))

  # Executions change holder_count and the holder attributes at run time.
  lifecycle {
    ignore_changes = [item]
  }
}

# --- Reconciler (scheduled) and event cleanup ------------------------------------

module "reconciler" {
  source = "../lambda-function"
  create = local.create_reconciler

  function_name                     = "${var.name}-reconciler"
  source_path                       = [{ path = "${path.module}/../../lambda_src", patterns = ["sfn_patterns/__init__.py", "sfn_patterns/semaphore/**"] }]
  handler                           = "sfn_patterns.semaphore.reconciler.reconcile_handler"
  timeout                           = 60
  reserved_concurrent_executions    = 1
  environment_variables             = { SEMAPHORE_TABLE = local.table_name, SEMAPHORE_LOCK_KEY = var.lock_key }
  cloudwatch_logs_retention_in_days = var.cloudwatch_logs_retention_in_days
  kms_key_arn                       = var.kms_key_arn
  build_dir                         = var.build_dir
  python_executable                 = var.python_executable
  tags                              = var.tags

  policy_statements = concat([{
    sid       = "LockItem"
    actions   = ["dynamodb:GetItem", "dynamodb:UpdateItem"]
    resources = [local.table_arn]
    }], length(local.holder_execution_arns) == 0 ? [] : [{
    sid       = "DescribeHolders"
    actions   = ["states:DescribeExecution"]
    resources = local.holder_execution_arns
  }])
}

resource "aws_cloudwatch_event_rule" "reconcile" {
  count = local.create_reconciler ? 1 : 0

  name                = "${var.name}-semaphore-reconcile"
  description         = "Release semaphore ${var.name} slots held by executions that are no longer RUNNING."
  schedule_expression = var.reconciler_schedule_expression
  tags                = var.tags
}

resource "aws_cloudwatch_event_target" "reconcile" {
  count = local.create_reconciler ? 1 : 0

  rule      = aws_cloudwatch_event_rule.reconcile[0].name
  target_id = "semaphore-reconciler"
  arn       = module.reconciler.function_arn
}

resource "aws_lambda_permission" "reconcile" {
  count = local.create_reconciler ? 1 : 0

  statement_id  = "AllowScheduledReconcile"
  action        = "lambda:InvokeFunction"
  function_name = module.reconciler.function_name
  principal     = "events.amazonaws.com"
  source_arn    = aws_cloudwatch_event_rule.reconcile[0].arn
}

module "cleanup" {
  source = "../lambda-function"
  create = local.create_cleanup

  function_name                     = "${var.name}-cleanup"
  source_path                       = [{ path = "${path.module}/../../lambda_src", patterns = ["sfn_patterns/__init__.py", "sfn_patterns/semaphore/**"] }]
  handler                           = "sfn_patterns.semaphore.reconciler.cleanup_handler"
  timeout                           = 30
  environment_variables             = { SEMAPHORE_TABLE = local.table_name, SEMAPHORE_LOCK_KEY = var.lock_key }
  cloudwatch_logs_retention_in_days = var.cloudwatch_logs_retention_in_days
  kms_key_arn                       = var.kms_key_arn
  build_dir                         = var.build_dir
  python_executable                 = var.python_executable
  tags                              = var.tags

  policy_statements = [{
    sid       = "LockItem"
    actions   = ["dynamodb:GetItem", "dynamodb:UpdateItem"]
    resources = [local.table_arn]
  }]
}

resource "aws_cloudwatch_event_rule" "ended" {
  count = local.create_cleanup ? 1 : 0

  name        = "${var.name}-semaphore-holder-ended"
  description = "Release the semaphore ${var.name} slot of an execution that ended FAILED, TIMED_OUT or ABORTED."
  event_pattern = jsonencode({
    source        = ["aws.states"]
    "detail-type" = ["Step Functions Execution Status Change"]
    detail = {
      status          = ["FAILED", "TIMED_OUT", "ABORTED"]
      stateMachineArn = local.holder_machine_arns
    }
  })
  tags = var.tags
}

resource "aws_cloudwatch_event_target" "ended" {
  count = local.create_cleanup ? 1 : 0

  rule      = aws_cloudwatch_event_rule.ended[0].name
  target_id = "semaphore-cleanup"
  arn       = module.cleanup.function_arn

  retry_policy {
    maximum_event_age_in_seconds = 3600
    maximum_retry_attempts       = 20
  }
}

resource "aws_lambda_permission" "ended" {
  count = local.create_cleanup ? 1 : 0

  statement_id  = "AllowHolderEndedEvents"
  action        = "lambda:InvokeFunction"
  function_name = module.cleanup.function_name
  principal     = "events.amazonaws.com"
  source_arn    = aws_cloudwatch_event_rule.ended[0].arn
}

# --- oldest-first gate -------------------------------------------------------------

module "gate" {
  source = "../lambda-function"
  create = local.create_gate

  function_name = local.gate_function_name
  source_path   = [{ path = "${path.module}/../../lambda_src", patterns = ["sfn_patterns/__init__.py", "sfn_patterns/semaphore/**"] }]
  handler       = "sfn_patterns.semaphore.oldest_first.handler"
  timeout       = 30
  environment_variables = {
    SEMAPHORE_LIMIT    = tostring(var.semaphore_limit)
    STATE_MACHINE_ARNS = join(",", local.holder_machine_arns)
  }
  cloudwatch_logs_retention_in_days = var.cloudwatch_logs_retention_in_days
  kms_key_arn                       = var.kms_key_arn
  build_dir                         = var.build_dir
  python_executable                 = var.python_executable
  tags                              = var.tags

  policy_statements = length(local.holder_machine_arns) == 0 ? [] : [{
    sid       = "ListHolderExecutions"
    actions   = ["states:ListExecutions"]
    resources = local.holder_machine_arns
  }]
}

# --- Wrapper state machine ----------------------------------------------------------

module "wrapper" {
  source = "../state-machine"

  create     = local.create_wrapper
  name       = local.wrapper_name
  definition = coalesce(local.wrapper_definition, "{}")

  policy_statements = concat(
    local.dynamodb ? [{
      sid       = "AcquireAndRelease"
      actions   = ["dynamodb:GetItem", "dynamodb:UpdateItem"]
      resources = [local.table_arn]
    }] : [],
    local.oldest_first ? [{
      sid       = "InvokeGate"
      actions   = ["lambda:InvokeFunction"]
      resources = [local.gate_function_arn, "${local.gate_function_arn}:*"]
    }] : [],
    [
      {
        sid       = "StartTarget"
        actions   = ["states:StartExecution"]
        resources = [coalesce(var.target_state_machine_arn, "none")]
      },
      {
        sid       = "FollowTarget"
        actions   = ["states:DescribeExecution", "states:StopExecution"]
        resources = ["${replace(coalesce(var.target_state_machine_arn, "none"), ":stateMachine:", ":execution:")}:*"]
      },
      # startExecution.sync completes through this managed rule.
      {
        sid       = "SyncRule"
        actions   = ["events:PutTargets", "events:PutRule", "events:DescribeRule"]
        resources = ["arn:${local.partition}:events:${local.region}:${local.account_id}:rule/StepFunctionsGetEventsForStepFunctionsExecutionRule"]
      },
    ],
  )

  logging_level                     = var.logging_level
  cloudwatch_logs_retention_in_days = var.cloudwatch_logs_retention_in_days
  kms_key_arn                       = var.kms_key_arn
  tags                              = var.tags
}

# --- Policy for callers that embed the fragments -------------------------------------

data "aws_iam_policy_document" "caller" {
  count = var.create ? 1 : 0

  dynamic "statement" {
    for_each = local.dynamodb ? [1] : []
    content {
      sid       = "SemaphoreAcquireAndRelease"
      actions   = ["dynamodb:GetItem", "dynamodb:UpdateItem"]
      resources = [local.table_arn]
    }
  }

  dynamic "statement" {
    for_each = local.oldest_first ? [1] : []
    content {
      sid       = "SemaphoreInvokeGate"
      actions   = ["lambda:InvokeFunction"]
      resources = [local.gate_function_arn, "${local.gate_function_arn}:*"]
    }
  }
}
