# SQS throttle (seed 002, option 1): producers put start requests on a FIFO queue;
# a scheduled single-writer Lambda counts the target's running executions and
# starts at most MAX - N of them, idempotently, deleting a message only after its
# execution exists.

data "aws_partition" "current" {}
data "aws_region" "current" {}
data "aws_caller_identity" "current" {}

# The service principal as the partition writes it (aws-cn and aws-us-gov included).
data "aws_service_principal" "events" {
  service_name = "events"
}

locals {
  partition  = data.aws_partition.current.partition
  region     = data.aws_region.current.region
  account_id = data.aws_caller_identity.current.account_id

  queue_name    = "${var.name}.fifo"
  dlq_name      = "${var.name}-dlq.fifo"
  starter_name  = "${var.name}-starter"
  ledger_name   = "${var.name}-ledger"
  queue_arn     = "arn:${local.partition}:sqs:${local.region}:${local.account_id}:${local.queue_name}"
  ledger_arn    = "arn:${local.partition}:dynamodb:${local.region}:${local.account_id}:table/${local.ledger_name}"
  target_name   = element(split(":", var.target_state_machine_arn), 6)
  target_region = element(split(":", var.target_state_machine_arn), 3)
  target_acct   = element(split(":", var.target_state_machine_arn), 4)
  # DescribeExecution is authorized on the execution ARNs of the target.
  target_executions = "arn:${local.partition}:states:${local.target_region}:${local.target_acct}:execution:${local.target_name}:*"

  # One customer managed key (kms_key_arn) for the queues, the ledger, the log group
  # and the environment; null keeps SQS-managed SSE on the queues.
  sqs_kms = var.kms_key_arn != null

  # What a starter may do with the target: granted to its own role, or, across
  # accounts, to target_role_arn in the target's account (the starter assumes it).
  target_statements = [
    { sid = "StartTarget", effect = "Allow", actions = ["states:StartExecution", "states:ListExecutions"], resources = [var.target_state_machine_arn] },
    { sid = "DescribeTargetExecutions", effect = "Allow", actions = ["states:DescribeExecution"], resources = [local.target_executions] },
  ]

  starter_statements = concat(
    var.target_role_arn == null ? local.target_statements : [
      { sid = "AssumeTargetRole", effect = "Allow", actions = ["sts:AssumeRole"], resources = [var.target_role_arn] },
    ],
    [
      {
        sid       = "ConsumeQueue"
        effect    = "Allow"
        actions   = ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility", "sqs:GetQueueAttributes"]
        resources = [local.queue_arn]
      },
      { sid = "Ledger", effect = "Allow", actions = ["dynamodb:Scan", "dynamodb:PutItem", "dynamodb:DeleteItem"], resources = [local.ledger_arn] },
    ],
    # The key decrypts received messages (SQS) and the ledger's table key (DynamoDB
    # asks for kms:Decrypt as the caller on reads and writes alike); the starter sends
    # nothing to the queue, so it needs no data key.
    var.kms_key_arn == null ? [] : [
      { sid = "ModuleKey", effect = "Allow", actions = ["kms:Decrypt"], resources = [var.kms_key_arn] },
    ],
  )
}

# --- queues ---------------------------------------------------------------------------

resource "aws_sqs_queue" "dlq" {
  count = var.create ? 1 : 0

  name                              = local.dlq_name
  fifo_queue                        = true
  message_retention_seconds         = var.dlq_message_retention_seconds
  sqs_managed_sse_enabled           = local.sqs_kms ? null : true
  kms_master_key_id                 = var.kms_key_arn
  kms_data_key_reuse_period_seconds = local.sqs_kms ? var.kms_data_key_reuse_period_seconds : null

  # Only the request queue may use this DLQ (static ARN: no dependency cycle).
  redrive_allow_policy = jsonencode({
    redrivePermission = "byQueue"
    sourceQueueArns   = [local.queue_arn]
  })

  tags = var.tags
}

resource "aws_sqs_queue" "this" {
  count = var.create ? 1 : 0

  name                              = local.queue_name
  fifo_queue                        = true
  content_based_deduplication       = var.content_based_deduplication
  visibility_timeout_seconds        = var.visibility_timeout_seconds
  message_retention_seconds         = var.message_retention_seconds
  receive_wait_time_seconds         = 0
  sqs_managed_sse_enabled           = local.sqs_kms ? null : true
  kms_master_key_id                 = var.kms_key_arn
  kms_data_key_reuse_period_seconds = local.sqs_kms ? var.kms_data_key_reuse_period_seconds : null

  redrive_policy = jsonencode({
    deadLetterTargetArn = aws_sqs_queue.dlq[0].arn
    maxReceiveCount     = var.max_receive_count
  })

  tags = var.tags
}

# --- ledger: executions the starter started and has not yet seen finish ---------------

resource "aws_dynamodb_table" "ledger" {
  #checkov:skip=CKV_AWS_28:The ledger is a TTL'd cache of started executions; ListExecutions rebuilds the count, so point-in-time recovery protects nothing.
  count = var.create ? 1 : 0

  name         = local.ledger_name
  billing_mode = "PAY_PER_REQUEST"
  hash_key     = "name"

  attribute {
    name = "name"
    type = "S"
  }

  ttl {
    attribute_name = "expires_at"
    enabled        = true
  }

  server_side_encryption {
    enabled     = true
    kms_key_arn = var.kms_key_arn
  }

  tags = var.tags
}

# --- starter ----------------------------------------------------------------------------

module "starter" {
  source = "../lambda-function"

  create        = var.create
  function_name = local.starter_name
  source_path   = [{ path = "${path.module}/../../lambda_src", patterns = ["sfn_patterns/__init__.py", "sfn_patterns/clients.py", "sfn_patterns/metrics.py", "sfn_patterns/sqs_throttle/**"] }]
  handler       = "sfn_patterns.sqs_throttle.starter.handler"
  runtime       = var.lambda_runtime
  memory_size   = var.lambda_memory_size
  timeout       = var.max_seconds_per_run + 30
  # Single writer: two runs never count and start at the same time.
  reserved_concurrent_executions = 1

  environment_variables = merge({
    QUEUE_URL                 = try(aws_sqs_queue.this[0].url, "")
    TARGET_STATE_MACHINE_ARN  = var.target_state_machine_arn
    MAX_CONCURRENT_EXECUTIONS = tostring(var.max_concurrency)
    LEDGER_TABLE              = local.ledger_name
    MAX_MESSAGES_PER_RUN      = tostring(var.max_messages_per_run)
    MAX_SECONDS_PER_RUN       = tostring(var.max_seconds_per_run)
    RECHECK_SECONDS           = tostring(var.recheck_seconds)
    LEDGER_TTL_SECONDS        = tostring(var.ledger_ttl_seconds)
  }, var.target_role_arn == null ? {} : { TARGET_ROLE_ARN = var.target_role_arn }, local.metrics_environment)

  policy_statements                 = local.starter_statements
  kms_key_arn                       = var.kms_key_arn
  cloudwatch_logs_retention_in_days = var.cloudwatch_logs_retention_in_days
  python_executable                 = var.python_executable
  tags                              = var.tags

  role_path                 = var.role_path
  role_permissions_boundary = var.role_permissions_boundary
}

# A tick that finds the previous run still going is dropped, not queued for hours:
# the next tick comes soon, and queued retries would only pile up behind the
# reserved concurrency of 1.
resource "aws_lambda_function_event_invoke_config" "starter" {
  count = var.create ? 1 : 0

  function_name                = module.starter.function_name
  maximum_retry_attempts       = 0
  maximum_event_age_in_seconds = 60
}

resource "aws_cloudwatch_event_rule" "starter" {
  count = var.create ? 1 : 0

  name                = local.starter_name
  description         = "Runs the sqs-throttle starter of ${local.queue_name}."
  schedule_expression = var.schedule_expression
  state               = var.schedule_enabled ? "ENABLED" : "DISABLED"
  tags                = var.tags
}

resource "aws_cloudwatch_event_target" "starter" {
  count = var.create ? 1 : 0

  rule      = aws_cloudwatch_event_rule.starter[0].name
  target_id = "starter"
  arn       = module.starter.function_arn

  # EventBridge invokes the function only once it may: the permission exists before
  # the target, and outlives it on destroy (a schedule firing in between is denied).
  depends_on = [aws_lambda_permission.schedule]
}

resource "aws_lambda_permission" "schedule" {
  count = var.create ? 1 : 0

  statement_id  = "AllowEventBridgeSchedule"
  action        = "lambda:InvokeFunction"
  function_name = module.starter.function_name
  principal     = data.aws_service_principal.events.name
  source_arn    = aws_cloudwatch_event_rule.starter[0].arn
}

# --- across accounts: what the role in the target's account must allow and trust -------

data "aws_iam_policy_document" "target_role" {
  dynamic "statement" {
    for_each = local.target_statements
    content {
      sid       = statement.value.sid
      actions   = statement.value.actions
      resources = statement.value.resources
    }
  }
}

data "aws_iam_policy_document" "target_role_trust" {
  statement {
    sid     = "TheStarterAssumesThisRole"
    actions = ["sts:AssumeRole"]
    principals {
      type        = "AWS"
      identifiers = ["arn:${local.partition}:iam::${local.account_id}:role${var.role_path}${local.starter_name}"]
    }
  }
}

# --- producer policy (for callers to attach) -------------------------------------------

data "aws_iam_policy_document" "producer" {
  statement {
    sid       = "EnqueueStartRequests"
    actions   = ["sqs:SendMessage"]
    resources = [local.queue_arn]
  }

  dynamic "statement" {
    for_each = local.sqs_kms ? [1] : []
    content {
      sid       = "EncryptRequests"
      actions   = ["kms:GenerateDataKey", "kms:Decrypt"]
      resources = [var.kms_key_arn]
    }
  }
}
