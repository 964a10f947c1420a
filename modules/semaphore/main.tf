# A counting semaphore for Step Functions executions (seed 002, done safely).
#
# strategy = "callback" (the default): the lock item of the dynamodb strategy,
# plus a queue table with one small item per waiter. A blocked execution parks
# on its task token (lambda:invoke.waitForTaskToken) and makes no transition
# while it waits; a release hands the slot to the oldest waiter in one
# transaction and sends its token. A fallback re-check every fallback_seconds
# recovers a lost wake-up. See the README for the "no lost wake-up" argument.
#
# strategy = "dynamodb": one lock item holds holder_count and one lease
# attribute per holder. Acquire and release are conditional updateItem calls
# made by Step Functions itself (no Lambda); a blocked execution waits a
# jittered time and retries, bounded by acquire_timeout_seconds.
#
# fairness = "fifo" (dynamodb only): waiters draw a ticket (atomic ADD on the
# lock item) and only the head of the queue may take a free slot.
#
# strategy = "oldest-first": the seed's ListExecutions gate in a Lambda. It counts the
# holder executions that ended within lease_seconds while a task of theirs may still
# run (their history, GetExecutionHistory), besides the RUNNING ones.
#
# Every strategy with a lock item frees leaked slots with an EventBridge cleanup
# (FAILED/TIMED_OUT/ABORTED) and a scheduled reconciler (DescribeExecution); both
# give an ended holder's slot back only once none of its tasks can still run (its
# history, GetExecutionHistory); for the wrapper, both stop the target execution
# first and give the slot back only once it has ended.

data "aws_partition" "current" {}
data "aws_region" "current" {}
data "aws_caller_identity" "current" {}

# The service principal as the partition writes it (aws-cn and aws-us-gov included).
data "aws_service_principal" "events" {
  service_name = "events"
}

locals {
  # The strategy-specific inputs default to null (variables.tf fails the plan when one is
  # set under a strategy it does nothing for); these are their values in effect. With
  # oldest-first, lease_seconds is how long after its stop an ended holder is looked at
  # (its history read at every gate call): 900 s by default, Lambda's largest timeout.
  fallback_seconds               = coalesce(var.fallback_seconds, 300)
  fairness                       = coalesce(var.fairness, "none")
  lock_key                       = coalesce(var.lock_key, "semaphore")
  lease_seconds                  = coalesce(var.lease_seconds, local.oldest_first ? 900 : 86400)
  wait_min_seconds               = coalesce(var.wait_min_seconds, 5)
  wait_max_seconds               = coalesce(var.wait_max_seconds, 15)
  reconciler_enabled             = coalesce(var.reconciler_enabled, true)
  reconciler_schedule_expression = coalesce(var.reconciler_schedule_expression, "rate(5 minutes)")
  point_in_time_recovery_enabled = coalesce(var.point_in_time_recovery_enabled, true)
  deletion_protection_enabled    = coalesce(var.deletion_protection_enabled, false)

  partition  = data.aws_partition.current.partition
  dns_suffix = data.aws_partition.current.dns_suffix # of kms:ViaService: states.REGION.SUFFIX
  region     = data.aws_region.current.region
  account_id = data.aws_caller_identity.current.account_id

  dynamodb     = var.strategy == "dynamodb"
  callback     = var.strategy == "callback"
  oldest_first = var.strategy == "oldest-first"
  fifo         = local.dynamodb && local.fairness == "fifo"
  # Strategies that keep leases on the lock item.
  lock_item = local.dynamodb || local.callback

  table_name = "${var.name}-semaphore"
  table_arn  = "arn:${local.partition}:dynamodb:${local.region}:${local.account_id}:table/${local.table_name}"

  queue_table_name = "${var.name}-semaphore-queue"
  queue_table_arn  = "arn:${local.partition}:dynamodb:${local.region}:${local.account_id}:table/${local.queue_table_name}"

  callback_function_name = "${var.name}-semaphore"
  callback_function_arn  = "arn:${local.partition}:lambda:${local.region}:${local.account_id}:function:${local.callback_function_name}"

  wrapper_name = "${var.name}-wrapper"
  wrapper_arn  = "arn:${local.partition}:states:${local.region}:${local.account_id}:stateMachine:${local.wrapper_name}"

  create_wrapper = var.create && var.create_wrapper

  # Every state machine whose executions can hold a slot.
  holder_machine_arns = distinct(concat(
    var.holder_state_machine_arns,
    var.create_wrapper ? [local.wrapper_arn] : [],
  ))
  # Whether any execution can hold a slot, from the inputs alone: the distinct() above
  # has an unknown length while a holder ARN is unknown at plan (a machine created in
  # the same apply), and counts must not depend on it.
  has_holders = length(var.holder_state_machine_arns) > 0 || var.create_wrapper
  holder_execution_arns = [
    for arn in local.holder_machine_arns : "${replace(arn, ":stateMachine:", ":execution:")}:*"
  ]

  create_table       = var.create && local.lock_item
  create_queue_table = var.create && local.callback
  create_reconciler  = local.create_table && local.reconciler_enabled
  # oldest-first has no lock item, but a stopped wrapper's target is still stopped.
  create_cleanup = var.create && var.event_cleanup_enabled && local.has_holders && (local.lock_item || var.create_wrapper)
  create_gate    = var.create && local.oldest_first

  target_execution_prefix = "${replace(coalesce(var.target_state_machine_arn, "none"), ":stateMachine:", ":execution:")}:"

  # What the cleanup, the reconciler and the callback Lambda read from their environment.
  semaphore_environment = merge(
    {
      SEMAPHORE_STRATEGY                = var.strategy
      SEMAPHORE_TABLE                   = local.table_name
      SEMAPHORE_LOCK_KEY                = local.lock_key
      SEMAPHORE_LIMIT                   = tostring(var.max_concurrency)
      SEMAPHORE_LEASE_SECONDS           = tostring(local.lease_seconds)
      SEMAPHORE_ACQUIRE_TIMEOUT_SECONDS = tostring(var.acquire_timeout_seconds)
      # Off: the event cleanup's retries free a slot kept while a task may still run.
      SEMAPHORE_RECONCILER = local.create_reconciler ? "on" : "off"
    },
    local.metrics_environment,
    local.callback ? { SEMAPHORE_QUEUE_TABLE = local.queue_table_name } : {},
    var.create_wrapper ? {
      WRAPPER_STATE_MACHINE_ARN = local.wrapper_arn
      TARGET_STATE_MACHINE_ARN  = var.target_state_machine_arn
    } : {},
    var.create_wrapper && var.target_role_arn != null ? { TARGET_ROLE_ARN = var.target_role_arn } : {},
  )

  # The tables' key: DynamoDB asks for kms:Decrypt as the caller on every read and
  # write of a table encrypted with the caller's key.
  table_key_statements = var.kms_key_arn == null ? [] : [{
    sid       = "UseTheTableKey"
    actions   = ["kms:Decrypt"]
    resources = [var.kms_key_arn]
  }]

  # Table permissions of every Lambda that hands slots over (callback: both tables).
  lock_statements = concat(
    [{
      sid       = "LockItem"
      actions   = ["dynamodb:GetItem", "dynamodb:UpdateItem"]
      resources = [local.table_arn]
    }],
    local.table_key_statements,
    local.callback ? [
      {
        sid       = "WaiterQueue"
        actions   = ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:Query"]
        resources = [local.queue_table_arn]
      },
      # SendTaskSuccess/Failure take no resource ARN (a task token is not a resource):
      # AWS accepts only "*" here. Only these Lambdas get them, not the state machines.
      {
        sid       = "WakeWaiters"
        actions   = ["states:SendTaskSuccess", "states:SendTaskFailure"]
        resources = ["*"]
      },
    ] : [],
  )
  describe_holders_statements = !local.has_holders ? [] : [{
    sid       = "DescribeHolders"
    actions   = ["states:DescribeExecution"]
    resources = local.holder_execution_arns
  }]
  # The cleanup and the reconciler read an ended holder's history: its slot goes back
  # only once none of its tasks can still run (a Lambda outlives its stopped execution).
  # A history is encrypted with its machine's key, and Step Functions decrypts it as the
  # caller: the keys of the machines the module does not own come from
  # holder_kms_key_arns, allowed only for Step Functions calls in each key's region (a
  # machine's key is in its region). Status reads need no key: the runtime asks for
  # metadata only.
  holder_history_statements = concat(
    !local.has_holders ? [] : [{
      sid       = "ReadHolderHistories"
      actions   = ["states:GetExecutionHistory"]
      resources = local.holder_execution_arns
    }],
    # Set only with holder_state_machine_arns (variables.tf).
    length(var.holder_kms_key_arns) == 0 ? [] : [{
      sid       = "DecryptHolderHistories"
      actions   = ["kms:Decrypt"]
      resources = var.holder_kms_key_arns
      conditions = [{
        test     = "StringEquals"
        variable = "kms:ViaService"
        values   = distinct([for key in var.holder_kms_key_arns : "states.${split(":", key)[3]}.${local.dns_suffix}"])
      }]
    }],
  )
  # The wrapper's .sync:2 follows the target with DescribeExecution as the wrapper's role
  # and returns the target's output, which Step Functions decrypts with the target's key
  # as that role (the cleanup and the reconciler read the target's status only).
  target_key_statements = var.target_kms_key_arn == null ? [] : [{
    sid       = "DecryptTargetOutput"
    actions   = ["kms:Decrypt"]
    resources = [var.target_kms_key_arn]
    conditions = [{
      test     = "StringEquals"
      variable = "kms:ViaService"
      values   = ["states.${split(":", var.target_kms_key_arn)[3]}.${local.dns_suffix}"]
    }]
  }]
  # Stop a stopped wrapper's target and wait for its end (same account only: a target
  # in another account is reached through target_role_arn).
  stop_target_statements = var.create_wrapper ? concat(
    var.target_role_arn == null ? [{
      sid       = "StopTarget"
      actions   = ["states:DescribeExecution", "states:StopExecution"]
      resources = ["${local.target_execution_prefix}*"]
      }] : [{
      sid       = "AssumeTargetRole"
      actions   = ["sts:AssumeRole"]
      resources = [var.target_role_arn]
    }],
  ) : []

  gate_function_name = "${var.name}-oldest-first-gate"
  gate_function_arn  = "arn:${local.partition}:lambda:${local.region}:${local.account_id}:function:${local.gate_function_name}"
  # The gate follows a stopped wrapper through its target when it can list the target's
  # executions (same account), and every other ended holder through its history.
  gate_follows_target = var.create_wrapper && var.target_role_arn == null
  gate_environment = merge(
    {
      SEMAPHORE_LIMIT         = tostring(var.max_concurrency)
      STATE_MACHINE_ARNS      = join(",", local.holder_machine_arns)
      SEMAPHORE_LEASE_SECONDS = tostring(local.lease_seconds)
      # Its own invocations only read: a waiter stopped while asking holds nothing.
      SEMAPHORE_GATE_STATE = "${var.fragment_state_prefix}Acquire"
    },
    local.gate_follows_target ? {
      TARGET_STATE_MACHINE_ARN  = var.target_state_machine_arn
      WRAPPER_STATE_MACHINE_ARN = local.wrapper_arn
    } : {},
  )
  gate_statements = concat(
    !local.has_holders ? [] : [{
      sid       = "ListHolderExecutions"
      actions   = ["states:ListExecutions"]
      resources = concat(local.holder_machine_arns, local.gate_follows_target ? [var.target_state_machine_arn] : [])
    }],
    local.holder_history_statements,
  )

  # --- History budget ---------------------------------------------------------
  # Events one pass of the wait loop writes, counted from the states it enters
  # (Task: Entered, Scheduled, Started, Succeeded/Failed/TimedOut, Exited; Choice,
  # Pass, Wait: Entered, Exited); a callback Task also writes TaskSubmitted.
  #  callback:     Acquire/Re-check parked until the timeout: 6 per fallback period, 7
  #                when a slow acquire call's TaskSubmitted lands after its timeout (seen
  #                on LocalStack, where it is written into the next state's events);
  #  dynamodb:     Acquire (5) + Check holder (5) + Held or wait? (2) + Count wait (2) + Wait (2) = 16;
  #  fifo:         Read queue (5) + My turn? (2) + Skip abandoned ticket (5) + Count wait (2) + Wait (2) = 16;
  #  oldest-first: Acquire (5) + Held or wait? (2) + Count wait (2) + Wait (2) = 11.
  # Retries of throttled calls come on top (3 events each).
  history_per_wait = {
    callback       = 7
    dynamodb       = 16
    "oldest-first" = 11
  }[var.strategy]
  history_max_waits = local.callback ? ceil(var.acquire_timeout_seconds / local.fallback_seconds) + 1 : ceil(var.acquire_timeout_seconds / local.wait_min_seconds)
  history = {
    per_wait  = local.history_per_wait
    wait_unit = local.callback ? "fallback period" : "wait"
    max_waits = local.history_max_waits
    # Entering the loop, the last attempt and the timeout's Fail.
    fixed      = local.fifo ? 32 : 20
    worst_case = local.history_per_wait * local.history_max_waits + (local.fifo ? 32 : 20)
  }

  # --- ASL fragments -------------------------------------------------------
  template_dir = "${path.module}/../../templates/semaphore"
  end_marker   = "__SEMAPHORE_END__"

  acquire_template = {
    callback       = "callback_acquire.states.json.tftpl"
    dynamodb       = local.fifo ? "fifo_acquire.states.json.tftpl" : "acquire.states.json.tftpl"
    "oldest-first" = "oldest_first_acquire.states.json.tftpl"
  }[var.strategy]
  acquire_start_state = local.callback ? "${var.fragment_state_prefix}Acquire" : "${var.fragment_state_prefix}Prepare"

  # The retriers AWS recommends, from the one list every pattern reads
  # (templates/retry/policy.json): Lambda's transient errors on every invoke, DynamoDB's
  # throttling (and transient) errors on every lock-table call. The acquire side gives
  # up after 6 attempts (the execution fails with the error, holding nothing); the
  # release side tries 10 times, a Timeout included, so a slot is not left held for the
  # reconciler. A conditional-check failure is the pattern's own signal: never retried.
  retry_policy = jsondecode(file("${path.module}/../../templates/retry/policy.json"))
  dynamodb_transient = concat(local.retry_policy.throttling.dynamodb, [
    "DynamoDB.InternalServerErrorException", "DynamoDB.TransactionConflictException",
  ])
  acquire_budget = { IntervalSeconds = 1, MaxAttempts = 6, BackoffRate = 2, MaxDelaySeconds = 20, JitterStrategy = "FULL" }
  release_budget = { IntervalSeconds = 1, MaxAttempts = 10, BackoffRate = 2, MaxDelaySeconds = 30, JitterStrategy = "FULL" }
  retriers = {
    lambda_retriers         = jsonencode(merge(local.acquire_budget, { ErrorEquals = local.retry_policy.lambda }))
    lambda_release_retriers = jsonencode(merge(local.release_budget, { ErrorEquals = local.retry_policy.lambda }))
    dynamodb_retriers       = jsonencode(merge(local.acquire_budget, { ErrorEquals = local.dynamodb_transient }))
    release_retriers        = jsonencode(merge(local.release_budget, { ErrorEquals = concat(local.dynamodb_transient, ["States.Timeout"]) }))
    # The oldest-first gate only reads (ListExecutions): a run whose process died or
    # timed out is safe to repeat.
    gate_retriers = jsonencode(merge(local.acquire_budget, { ErrorEquals = concat(local.retry_policy.lambda, ["Runtime.ExitError", "Sandbox.Timedout"]) }))
    # The wrapper's nested start: a throttled StartExecution started nothing, and a
    # repeated one (same name, same input) returns the running execution.
    start_retriers = jsonencode(merge(local.acquire_budget, { ErrorEquals = local.retry_policy.throttling.states }))
  }

  acquire_vars = {
    prefix                  = var.fragment_state_prefix
    partition               = local.partition
    function_arn            = local.callback_function_arn
    fallback_seconds        = local.fallback_seconds
    table_name              = local.table_name
    lock_key                = local.lock_key
    gate_function_arn       = local.gate_function_arn
    limit                   = var.max_concurrency
    lease_seconds           = local.lease_seconds
    wait_min_seconds        = local.wait_min_seconds
    wait_max_seconds        = local.wait_max_seconds
    acquire_timeout_seconds = var.acquire_timeout_seconds
    lambda_retriers         = local.retriers.lambda_retriers
    dynamodb_retriers       = local.retriers.dynamodb_retriers
    gate_retriers           = local.retriers.gate_retriers
  }
  acquire_states = jsondecode(templatefile("${local.template_dir}/${local.acquire_template}", merge(local.acquire_vars, {
    acquired_next = var.fragment_acquired_next
  })))

  release_template = {
    callback       = "callback_release.states.json.tftpl"
    dynamodb       = "release.states.json.tftpl"
    "oldest-first" = "oldest_first_release.states.json.tftpl"
  }[var.strategy]
  release_vars = {
    prefix                  = var.fragment_state_prefix
    partition               = local.partition
    function_arn            = local.callback_function_arn
    table_name              = local.table_name
    lock_key                = local.lock_key
    lambda_release_retriers = local.retriers.lambda_release_retriers
    release_retriers        = local.retriers.release_retriers
  }
  # Every strategy re-raises a critical section's error the same way.
  reraise_states = jsondecode(templatefile("${local.template_dir}/reraise.states.json.tftpl", {
    prefix = var.fragment_state_prefix
  }))
  # A null fragment_release_next ends the machine after the release: the
  # template's `"Next": "<marker>"` becomes `"End": true`.
  release_states = merge(jsondecode(replace(templatefile("${local.template_dir}/${local.release_template}", merge(local.release_vars, {
    release_next = coalesce(var.fragment_release_next, local.end_marker)
  })), "\"Next\": \"${local.end_marker}\"", "\"End\": true")), local.reraise_states)

  # Add this to the Catch of every state of your critical section.
  critical_section_catch = [{
    ErrorEquals = ["States.ALL"]
    ResultPath  = "$.semaphore_error"
    Next        = "${var.fragment_state_prefix}Release after failure"
  }]

  # --- Wrapper ---------------------------------------------------------------
  wrapper_release_states = merge(jsondecode(templatefile("${local.template_dir}/${local.release_template}", merge(local.release_vars, {
    release_next = "Return target output"
  }))), local.reraise_states)
  wrapper_acquire_states = jsondecode(templatefile("${local.template_dir}/${local.acquire_template}", merge(local.acquire_vars, {
    acquired_next = "Run target"
  })))
  wrapper_template_states = jsondecode(var.create_wrapper ? templatefile("${local.template_dir}/wrapper.states.json.tftpl", {
    prefix                   = var.fragment_state_prefix
    partition                = local.partition
    target_state_machine_arn = var.target_state_machine_arn
    start_retriers           = local.retriers.start_retriers
  }) : "{}")
  # A target in another account: the Task assumes target_role_arn (ASL Credentials).
  wrapper_credentials = jsondecode(var.target_role_arn == null ? "{}" : jsonencode({ Credentials = { RoleArn = var.target_role_arn } }))
  wrapper_states = jsondecode(var.create_wrapper ? jsonencode(merge(local.wrapper_template_states, {
    "Run target" = merge(try(local.wrapper_template_states["Run target"], {}), local.wrapper_credentials)
  })) : "{}")
  wrapper_definition = jsonencode({
    Comment = "Run ${coalesce(var.target_state_machine_arn, "-")} while holding a slot of semaphore ${var.name} (limit ${var.max_concurrency}, strategy ${var.strategy}, fairness ${local.fifo || local.callback ? "fifo" : "none"})."
    StartAt = local.acquire_start_state
    States  = merge(local.wrapper_acquire_states, local.wrapper_states, local.wrapper_release_states)
  })
}

# --- Lock table ----------------------------------------------------------------

resource "aws_dynamodb_table" "this" {
  #checkov:skip=CKV_AWS_28:Point-in-time recovery is on by default (point_in_time_recovery_enabled); checkov cannot resolve a value passed through the root module.
  count = local.create_table ? 1 : 0

  name                        = local.table_name
  billing_mode                = "PAY_PER_REQUEST"
  hash_key                    = "pk"
  deletion_protection_enabled = local.deletion_protection_enabled

  attribute {
    name = "pk"
    type = "S"
  }

  server_side_encryption {
    enabled     = true
    kms_key_arn = var.kms_key_arn
  }

  point_in_time_recovery {
    enabled = local.point_in_time_recovery_enabled
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
      pk           = { S = local.lock_key }
      holder_count = { N = "0" }
    },
    local.fifo ? {
      next_ticket = { N = "0" }
      served      = { N = "0" }
    } : {},
    local.callback ? {
      next_ticket = { N = "0" }
      waiting     = { N = "0" }
    } : {},
  ))

  # Executions change holder_count and the holder attributes at run time.
  lifecycle {
    ignore_changes = [item]
  }
}

# --- Waiter queue (strategy callback) ---------------------------------------------
#
# Two small items per waiter, none growing with the queue: the waiter
# (pk = "<lock_key>#queue", ticket = its ticket: execution ARN, task token) and its
# pointer (pk = "<lock_key>#waiter#<execution ARN>", ticket = 0). A Query on the
# queue partition in ticket order finds the oldest waiter in one read.
resource "aws_dynamodb_table" "queue" {
  #checkov:skip=CKV_AWS_28:Point-in-time recovery is on by default (point_in_time_recovery_enabled); checkov cannot resolve a value passed through the root module.
  count = local.create_queue_table ? 1 : 0

  name                        = local.queue_table_name
  billing_mode                = "PAY_PER_REQUEST"
  hash_key                    = "pk"
  range_key                   = "ticket"
  deletion_protection_enabled = local.deletion_protection_enabled

  attribute {
    name = "pk"
    type = "S"
  }

  attribute {
    name = "ticket"
    type = "N"
  }

  server_side_encryption {
    enabled     = true
    kms_key_arn = var.kms_key_arn
  }

  point_in_time_recovery {
    enabled = local.point_in_time_recovery_enabled
  }

  tags = var.tags
}

# Acquire (take a free slot or queue with the task token) and release (hand over).
module "callback" {
  source = "../lambda-function"
  create = local.create_queue_table

  function_name                     = local.callback_function_name
  source_path                       = [{ path = "${path.module}/../../lambda_src", patterns = ["sfn_patterns/__init__.py", "sfn_patterns/clients.py", "sfn_patterns/metrics.py", "sfn_patterns/semaphore/**"] }]
  handler                           = "sfn_patterns.semaphore.callback.handler"
  timeout                           = 60
  environment_variables             = local.semaphore_environment
  cloudwatch_logs_retention_in_days = var.cloudwatch_logs_retention_in_days
  kms_key_arn                       = var.kms_key_arn
  build_dir                         = var.build_dir
  python_executable                 = var.python_executable
  tags                              = var.tags

  policy_statements = concat(local.lock_statements, local.describe_holders_statements)

  role_path                 = var.role_path
  role_permissions_boundary = var.role_permissions_boundary
}

# --- Reconciler (scheduled) and event cleanup ------------------------------------

module "reconciler" {
  source = "../lambda-function"
  create = local.create_reconciler

  function_name                     = "${var.name}-reconciler"
  source_path                       = [{ path = "${path.module}/../../lambda_src", patterns = ["sfn_patterns/__init__.py", "sfn_patterns/clients.py", "sfn_patterns/metrics.py", "sfn_patterns/semaphore/**"] }]
  handler                           = "sfn_patterns.semaphore.reconciler.reconcile_handler"
  timeout                           = 60
  reserved_concurrent_executions    = 1
  environment_variables             = local.semaphore_environment
  cloudwatch_logs_retention_in_days = var.cloudwatch_logs_retention_in_days
  kms_key_arn                       = var.kms_key_arn
  build_dir                         = var.build_dir
  python_executable                 = var.python_executable
  tags                              = var.tags

  policy_statements = concat(local.lock_statements, local.describe_holders_statements, local.holder_history_statements, local.stop_target_statements)

  role_path                 = var.role_path
  role_permissions_boundary = var.role_permissions_boundary
}

resource "aws_cloudwatch_event_rule" "reconcile" {
  count = local.create_reconciler ? 1 : 0

  name                = "${var.name}-semaphore-reconcile"
  description         = "Release semaphore ${var.name} slots held by executions that are no longer RUNNING."
  schedule_expression = local.reconciler_schedule_expression
  tags                = var.tags
}

resource "aws_cloudwatch_event_target" "reconcile" {
  count = local.create_reconciler ? 1 : 0

  rule      = aws_cloudwatch_event_rule.reconcile[0].name
  target_id = "semaphore-reconciler"
  arn       = module.reconciler.function_arn

  # EventBridge invokes the function only once it may: the permission exists before
  # the target, and outlives it on destroy (a schedule firing in between is denied).
  depends_on = [aws_lambda_permission.reconcile]
}

resource "aws_lambda_permission" "reconcile" {
  count = local.create_reconciler ? 1 : 0

  statement_id  = "AllowScheduledReconcile"
  action        = "lambda:InvokeFunction"
  function_name = module.reconciler.function_name
  principal     = data.aws_service_principal.events.name
  source_arn    = aws_cloudwatch_event_rule.reconcile[0].arn
}

module "cleanup" {
  source = "../lambda-function"
  create = local.create_cleanup

  function_name = "${var.name}-cleanup"
  source_path   = [{ path = "${path.module}/../../lambda_src", patterns = ["sfn_patterns/__init__.py", "sfn_patterns/clients.py", "sfn_patterns/metrics.py", "sfn_patterns/semaphore/**"] }]
  handler       = "sfn_patterns.semaphore.reconciler.cleanup_handler"
  # Long enough to stop a wrapper's target and see it end; a target still running
  # then fails the invocation, and EventBridge retries it (retry_policy below).
  timeout                           = 120
  environment_variables             = local.semaphore_environment
  cloudwatch_logs_retention_in_days = var.cloudwatch_logs_retention_in_days
  kms_key_arn                       = var.kms_key_arn
  build_dir                         = var.build_dir
  python_executable                 = var.python_executable
  tags                              = var.tags

  policy_statements = concat(local.lock_item ? local.lock_statements : [], local.describe_holders_statements, local.holder_history_statements, local.stop_target_statements)

  role_path                 = var.role_path
  role_permissions_boundary = var.role_permissions_boundary
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

  # EventBridge invokes the function only once it may: the permission exists before
  # the target, and outlives it on destroy (a schedule firing in between is denied).
  depends_on = [aws_lambda_permission.ended]
}

resource "aws_lambda_permission" "ended" {
  count = local.create_cleanup ? 1 : 0

  statement_id  = "AllowHolderEndedEvents"
  action        = "lambda:InvokeFunction"
  function_name = module.cleanup.function_name
  principal     = data.aws_service_principal.events.name
  source_arn    = aws_cloudwatch_event_rule.ended[0].arn
}

# --- oldest-first gate -------------------------------------------------------------

module "gate" {
  source = "../lambda-function"
  create = local.create_gate

  function_name = local.gate_function_name
  source_path   = [{ path = "${path.module}/../../lambda_src", patterns = ["sfn_patterns/__init__.py", "sfn_patterns/clients.py", "sfn_patterns/metrics.py", "sfn_patterns/semaphore/**"] }]
  handler       = "sfn_patterns.semaphore.oldest_first.handler"
  timeout       = 30
  # A stopped wrapper's target, and a stopped holder's task, still hold their slot.
  environment_variables             = local.gate_environment
  cloudwatch_logs_retention_in_days = var.cloudwatch_logs_retention_in_days
  kms_key_arn                       = var.kms_key_arn
  build_dir                         = var.build_dir
  python_executable                 = var.python_executable
  tags                              = var.tags

  policy_statements = local.gate_statements

  role_path                 = var.role_path
  role_permissions_boundary = var.role_permissions_boundary
}

# --- Wrapper state machine ----------------------------------------------------------

module "wrapper" {
  source = "../state-machine"

  create     = local.create_wrapper
  name       = local.wrapper_name
  definition = coalesce(local.wrapper_definition, "{}")

  policy_statements = concat(
    local.dynamodb ? concat([{
      sid       = "AcquireAndRelease"
      actions   = ["dynamodb:GetItem", "dynamodb:UpdateItem"]
      resources = [local.table_arn]
    }], local.table_key_statements) : [],
    local.callback ? [{
      sid       = "InvokeSemaphore"
      actions   = ["lambda:InvokeFunction"]
      resources = [local.callback_function_arn, "${local.callback_function_arn}:*"]
    }] : [],
    local.oldest_first ? [{
      sid       = "InvokeGate"
      actions   = ["lambda:InvokeFunction"]
      resources = [local.gate_function_arn, "${local.gate_function_arn}:*"]
    }] : [],
    # A target in another account is started through target_role_arn instead.
    var.target_role_arn != null ? [{
      sid       = "AssumeTargetRole"
      actions   = ["sts:AssumeRole"]
      resources = [var.target_role_arn]
      }] : [
      {
        sid       = "StartTarget"
        actions   = ["states:StartExecution"]
        resources = [coalesce(var.target_state_machine_arn, "none")]
      },
      {
        sid       = "FollowTarget"
        actions   = ["states:DescribeExecution", "states:StopExecution"]
        resources = ["${local.target_execution_prefix}*"]
      },
    ],
    local.target_key_statements,
    [
      # startExecution.sync completes through this managed rule.
      {
        sid       = "SyncRule"
        actions   = ["events:PutTargets", "events:PutRule", "events:DescribeRule"]
        resources = ["arn:${local.partition}:events:${local.region}:${local.account_id}:rule/StepFunctionsGetEventsForStepFunctionsExecutionRule"]
      },
    ],
  )

  logging_level                     = var.logging_level
  logging_include_execution_data    = var.logging_include_execution_data
  cloudwatch_logs_retention_in_days = var.cloudwatch_logs_retention_in_days
  kms_key_arn                       = var.kms_key_arn
  tags                              = var.tags

  role_path                 = var.role_path
  role_permissions_boundary = var.role_permissions_boundary
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
    for_each = local.dynamodb && var.kms_key_arn != null ? [1] : []
    content {
      sid       = "SemaphoreTableKey"
      actions   = ["kms:Decrypt"]
      resources = [var.kms_key_arn]
    }
  }

  dynamic "statement" {
    for_each = local.callback ? [1] : []
    content {
      sid       = "SemaphoreInvokeCallback"
      actions   = ["lambda:InvokeFunction"]
      resources = [local.callback_function_arn, "${local.callback_function_arn}:*"]
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
