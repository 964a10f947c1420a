# Event completion: a token table, an EventBridge rule on the jobs' completion events
# and one function that parks tokens and answers them (lambda_src/sfn_patterns/
# event_completion). A task waiting for a job parks on a task token registered under
# the job's id; the job's completion event resumes it. Events are best effort, so the
# waiting task also times out every fallback_seconds and checks the job itself (the
# callers' ASL: templates/job-poller/poll-event*.tftpl).

data "aws_partition" "current" {}
data "aws_region" "current" {}
data "aws_caller_identity" "current" {}

# The service principal as the partition writes it (aws-cn and aws-us-gov included).
data "aws_service_principal" "events" {
  service_name = "events"
}

locals {
  partition     = data.aws_partition.current.partition
  region        = data.aws_region.current.region
  account_id    = data.aws_caller_identity.current.account_id
  table_name    = "${var.name}-tokens"
  table_arn     = "arn:${local.partition}:dynamodb:${local.region}:${local.account_id}:table/${local.table_name}"
  function_name = "${var.name}-completion"
  function_arn  = "arn:${local.partition}:lambda:${local.region}:${local.account_id}:function:${local.function_name}"
  rule_name     = "${var.name}-completion"

  # The function's IAM statements (tests/partition.tftest.hcl checks each ARN's partition).
  function_policy_statements = concat(
    [
      {
        sid       = "ParkAndCompleteTokens"
        actions   = ["dynamodb:UpdateItem"]
        resources = [local.table_arn]
      },
      # SendTaskSuccess takes no resource ARN (a task token is not a resource): AWS
      # accepts only "*", and denies a statement scoped to the waiting state machines.
      {
        sid       = "ResumeWaitingTasks"
        actions   = ["states:SendTaskSuccess"]
        resources = ["*"]
      },
    ],
    # The token table's key: DynamoDB asks for kms:Decrypt as the caller on reads and
    # writes alike. SendTaskSuccess encrypts the output with the waiting execution's
    # role, not the caller's.
    var.kms_key_arn == null ? [] : [{
      sid       = "UseTheKmsKey"
      actions   = ["kms:Decrypt"]
      resources = [var.kms_key_arn]
    }],
  )
}

resource "aws_dynamodb_table" "tokens" {
  #checkov:skip=CKV_AWS_28:Tokens and job ends live minutes to days and expire by TTL; a restore would bring back only tokens that no longer wait.
  count = var.create ? 1 : 0

  name         = local.table_name
  billing_mode = "PAY_PER_REQUEST"
  hash_key     = "pk"

  attribute {
    name = "pk"
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

module "function" {
  source = "../lambda-function"

  create        = var.create
  function_name = local.function_name
  source_path = [{
    path     = "${path.module}/../../lambda_src"
    patterns = ["sfn_patterns/__init__.py", "sfn_patterns/clients.py", "sfn_patterns/event_completion/**"]
  }]
  handler     = "sfn_patterns.event_completion.handler.handler"
  runtime     = var.lambda_runtime
  memory_size = var.lambda_memory_size
  timeout     = 30
  environment_variables = {
    TOKEN_TABLE       = local.table_name
    JOB_ID_PATH       = var.job_id_path
    STATUS_PATH       = var.status_path
    TERMINAL_STATUSES = jsonencode(var.terminal_statuses)
    TOKEN_TTL_SECONDS = tostring(var.token_ttl_seconds)
  }
  policy_statements                 = local.function_policy_statements
  kms_key_arn                       = var.kms_key_arn
  cloudwatch_logs_retention_in_days = var.cloudwatch_logs_retention_in_days
  python_executable                 = var.python_executable
  tags                              = var.tags

  role_path                 = var.role_path
  role_permissions_boundary = var.role_permissions_boundary
}

resource "aws_cloudwatch_event_rule" "completion" {
  count = var.create ? 1 : 0

  name          = local.rule_name
  description   = "Completion events of the jobs whose tasks park in ${local.table_name}: resume them."
  event_pattern = var.event_pattern
  tags          = var.tags
}

resource "aws_cloudwatch_event_target" "completion" {
  count = var.create ? 1 : 0

  rule      = aws_cloudwatch_event_rule.completion[0].name
  target_id = "completion"
  arn       = module.function.function_arn

  # A delivery that keeps failing is dropped; the waiting task's fallback check then
  # finds the job's end within fallback_seconds.
  retry_policy {
    maximum_event_age_in_seconds = 3600
    maximum_retry_attempts       = 20
  }

  # EventBridge invokes the function only once it may: the permission exists before
  # the target, and outlives it on destroy (a schedule firing in between is denied).
  depends_on = [aws_lambda_permission.completion]
}

resource "aws_lambda_permission" "completion" {
  count = var.create ? 1 : 0

  statement_id  = "AllowCompletionEvents"
  action        = "lambda:InvokeFunction"
  function_name = module.function.function_name
  principal     = data.aws_service_principal.events.name
  source_arn    = aws_cloudwatch_event_rule.completion[0].arn
}
