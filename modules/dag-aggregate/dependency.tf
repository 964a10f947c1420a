# strategy = "dependency": no stages. A coordinator execution per run waits on a task
# token while a runtime Lambda starts one task-machine execution per task as soon as
# its parents have succeeded, at most max_concurrency at once, the task with the
# longest remaining path first. State lives in a DynamoDB table (one run item with
# the ready and active maps, one item per task); the plan document (tasks, edges,
# priorities, SQL) is an S3 object written by Terraform. Design and guarantees: lambda_src/sfn_patterns/
# dag_aggregate/runtime/dispatch.py and this module's README.

locals {
  create_dependency = var.create && local.dependency

  dependency_document = local.create_dependency ? local.planned.dependency : null
  task_definition     = local.create_dependency ? local.planned.task_definition : null
  plan_key            = local.create_dependency ? "dag-aggregate/plans/${local.dependency_document.sha256}.json" : null
  run_results_prefix  = "dag-aggregate/runs/"
  run_results_uri     = local.create_dependency ? "s3://${aws_s3_bucket.plan[0].id}/${local.run_results_prefix}" : null

  runtime_function_name = "${var.name}-runtime"
  task_machine_name     = "${var.name}-task"
  runtime_function_arn  = "arn:${local.partition}:lambda:${local.region}:${local.account_id}:function:${local.runtime_function_name}"
  task_machine_arn      = "arn:${local.partition}:states:${local.region}:${local.account_id}:stateMachine:${local.task_machine_name}"
  runs_table_arn        = "arn:${local.partition}:dynamodb:${local.region}:${local.account_id}:table/${var.name}-runs"

  # Errors worth another try of the start Lambda (it is idempotent: a retry of the same
  # execution refreshes the run's token and dispatches what is ready): Lambda's transient
  # errors (templates/retry/policy.json, the list every pattern reads), a handler whose
  # process died (Runtime.ExitError: killed, out of memory) or timed out, an AWS call of
  # the runtime that failed past its own retries. A run id that is already running
  # under another execution (RunAlreadyRunningError) fails the execution at once.
  retry_policy = jsondecode(file("${path.module}/../../templates/retry/policy.json"))
  lambda_transient_errors = concat(local.retry_policy.lambda, [
    "Lambda.Unknown", "Runtime.ExitError", "Sandbox.Timedout", "ClientError",
  ])

  coordinator_definition = jsonencode({
    Comment = "dag-aggregate dependency strategy: one run per execution. Input (all optional): run_id (default: the execution name; re-running a run id skips its succeeded tasks), select and exclude (graph selectors: t, +t, t+, @t, tag:x), retry (true: re-run what failed or was skipped)."
    StartAt = "Run"
    States = {
      Run = {
        Type     = "Task"
        Comment  = "Records the run and starts the first tasks; the runtime sends this token back once nothing runs and nothing can start: success, or the first failed task's error."
        Resource = "arn:${local.partition}:states:::lambda:invoke.waitForTaskToken"
        Parameters = {
          FunctionName = local.runtime_function_arn
          Payload = {
            action          = "start"
            "input.$"       = "$"
            "execution.$"   = "$$.Execution.Id"
            "token.$"       = "$$.Task.Token"
            "retry_count.$" = "$$.State.RetryCount"
          }
        }
        TimeoutSeconds = var.run_timeout_seconds
        Retry = [{
          ErrorEquals     = local.lambda_transient_errors
          IntervalSeconds = 2
          BackoffRate     = 2
          MaxAttempts     = 5
          JitterStrategy  = "FULL"
        }]
        End = true
      }
    }
  })
}

# --- The plan document --------------------------------------------------------------

resource "aws_s3_bucket" "plan" {
  #checkov:skip=CKV_AWS_21:Each plan is a new key (its SHA-256) and run documents are rewritten from the runs table; versions would add nothing.
  #checkov:skip=CKV_AWS_18:Only the runtime Lambda and the caller's tools read these objects; access logging would need a second bucket.
  #checkov:skip=CKV_AWS_144:The plan document is rebuilt from sql_dir by any apply, run documents from the runs table: cross-region replication protects nothing.
  #checkov:skip=CKV2_AWS_62:Nothing consumes object events: the runtime reads the key named in its environment.
  #checkov:skip=CKV_AWS_145:Encrypted with SSE-KMS and the caller's key when kms_key_arn is set, with SSE-S3 (AES256) when it is null.
  count = local.create_dependency ? 1 : 0

  bucket_prefix = "${substr(replace(lower(var.name), "_", "-"), 0, 30)}-plan-"
  # Holds only plan documents Terraform writes from sql_dir: nothing to keep on destroy.
  force_destroy = true
  tags          = var.tags
}

resource "aws_s3_bucket_public_access_block" "plan" {
  count = local.create_dependency ? 1 : 0

  bucket                  = aws_s3_bucket.plan[0].id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_server_side_encryption_configuration" "plan" {
  count = local.create_dependency ? 1 : 0

  bucket = aws_s3_bucket.plan[0].id
  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm     = var.kms_key_arn == null ? "AES256" : "aws:kms"
      kms_master_key_id = var.kms_key_arn
    }
    bucket_key_enabled = var.kms_key_arn != null
  }
}

# Run documents (dag-aggregate/runs/<run id>/run_results.json) expire; plan documents
# are Terraform's and stay.
resource "aws_s3_bucket_lifecycle_configuration" "plan" {
  count = local.create_dependency ? 1 : 0

  bucket = aws_s3_bucket.plan[0].id
  rule {
    id     = "expire-run-results"
    status = "Enabled"
    filter {
      prefix = local.run_results_prefix
    }
    expiration {
      days = var.run_results_expiration_days
    }
  }
  # Nothing uploads in parts; a stray multipart upload should not linger.
  rule {
    id     = "abort-incomplete-uploads"
    status = "Enabled"
    filter {}
    abort_incomplete_multipart_upload {
      days_after_initiation = 1
    }
  }
}

# The key holds the document's SHA-256: a changed plan is a new object, and the
# runtime (which caches the plan per container) reads the new key from its environment.
resource "aws_s3_object" "plan" {
  count = local.create_dependency ? 1 : 0

  bucket       = aws_s3_bucket.plan[0].id
  key          = local.plan_key
  content      = local.dependency_document.document
  content_type = "application/json"
  tags         = var.tags

  depends_on = [aws_s3_bucket_server_side_encryption_configuration.plan]
}

# --- Run state ---------------------------------------------------------------------

resource "aws_dynamodb_table" "runs" {
  #checkov:skip=CKV_AWS_28:Point-in-time recovery is on by default (point_in_time_recovery_enabled); checkov cannot resolve a value passed through the root module.
  count = local.create_dependency ? 1 : 0

  name         = "${var.name}-runs"
  billing_mode = "PAY_PER_REQUEST"
  hash_key     = "pk"
  range_key    = "sk"

  attribute {
    name = "pk"
    type = "S"
  }
  attribute {
    name = "sk"
    type = "S"
  }
  point_in_time_recovery {
    enabled = var.point_in_time_recovery_enabled
  }

  server_side_encryption {
    enabled     = true
    kms_key_arn = var.kms_key_arn
  }

  tags = var.tags
}

# --- Runtime Lambda: start, task_done, ended task executions ---------------------------

module "runtime" {
  source = "../lambda-function"
  create = local.create_dependency

  function_name = local.runtime_function_name
  source_path   = [{ path = "${path.module}/../../lambda_src", patterns = ["sfn_patterns/__init__.py", "sfn_patterns/clients.py", "sfn_patterns/metrics.py", "sfn_patterns/dag_aggregate/__init__.py", "sfn_patterns/dag_aggregate/runtime/**"] }]
  handler       = "sfn_patterns.dag_aggregate.runtime.handler.handler"
  timeout       = 120
  environment_variables = local.create_dependency ? merge(local.metrics_environment, {
    TABLE_NAME             = aws_dynamodb_table.runs[0].name
    PLAN_BUCKET            = aws_s3_bucket.plan[0].id
    PLAN_KEY               = aws_s3_object.plan[0].key
    TASK_STATE_MACHINE_ARN = local.task_machine_arn
    MAX_CONCURRENCY        = tostring(var.max_concurrency)
    RUN_RESULTS_BUCKET     = aws_s3_bucket.plan[0].id
  }) : {}
  cloudwatch_logs_retention_in_days = var.cloudwatch_logs_retention_in_days
  kms_key_arn                       = var.kms_key_arn
  python_executable                 = var.python_executable
  tags                              = var.tags

  policy_statements = local.runtime_policy_statements

  role_path                 = var.role_path
  role_permissions_boundary = var.role_permissions_boundary
}

# Every IAM statement of the dependency strategy, by role (tests/partition.tftest.hcl
# checks that each ARN in them carries the partition).
locals {
  runtime_policy_statements = concat(
    [
      {
        sid = "RunState"
        # DeleteItem and ConditionCheckItem: a claim deletes its ready items and checks
        # their tasks are pending, inside a transaction, which needs each item's own
        # action (there is no TransactWriteItems action to grant).
        actions   = ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:ConditionCheckItem", "dynamodb:Query"]
        resources = [local.runs_table_arn]
      },
      {
        sid       = "ReadPlan"
        actions   = ["s3:GetObject"]
        resources = [for arn in aws_s3_bucket.plan[*].arn : "${arn}/dag-aggregate/plans/*"]
      },
      {
        sid       = "WriteRunResults"
        actions   = ["s3:PutObject"]
        resources = [for arn in aws_s3_bucket.plan[*].arn : "${arn}/${local.run_results_prefix}*"]
      },
      {
        sid       = "StartTasks"
        actions   = ["states:StartExecution"]
        resources = [local.task_machine_arn]
      },
      # SendTaskSuccess/Failure take no resource ARN (a task token is not a resource):
      # AWS accepts only "*" here, and denies a statement scoped to the coordinator
      # (found by the harness's IAM emulation: every run's first answer was denied).
      {
        sid       = "AnswerTheCoordinator"
        actions   = ["states:SendTaskSuccess", "states:SendTaskFailure"]
        resources = ["*"]
      },
      {
        # To take over a run id whose coordinator execution ended without finishing.
        sid       = "SeeCoordinatorExecutions"
        actions   = ["states:DescribeExecution"]
        resources = ["arn:${local.partition}:states:${local.region}:${local.account_id}:execution:${var.name}:*"]
      },
    ],
    var.kms_key_arn == null ? [] : [{
      sid       = "UseTheKmsKey"
      actions   = ["kms:Decrypt", "kms:GenerateDataKey"]
      resources = [var.kms_key_arn]
    }],
  )
  task_machine_policy_statements = concat(local.redshift_policy_statements, [{
    sid        = "ReportToTheRuntime"
    actions    = ["lambda:InvokeFunction"]
    resources  = [local.runtime_function_arn, "${local.runtime_function_arn}:*"]
    conditions = []
    }], [for statement in module.completion.park_policy_statements : merge(statement, { conditions = [] })],
  )
  coordinator_policy_statements = [{
    sid       = "StartTheRun"
    actions   = ["lambda:InvokeFunction"]
    resources = [local.runtime_function_arn, "${local.runtime_function_arn}:*"]
  }]
}

# --- State machines -----------------------------------------------------------------

module "task_machine" {
  source = "../state-machine"

  create     = local.create_dependency
  name       = local.task_machine_name
  definition = local.create_dependency ? local.task_definition : "{}"
  # Thousands of executions per run: their outcomes are in the run document.
  logging_level                  = var.logging_level
  logging_include_execution_data = var.logging_include_execution_data

  policy_statements = local.task_machine_policy_statements

  cloudwatch_logs_retention_in_days = var.cloudwatch_logs_retention_in_days
  kms_key_arn                       = var.kms_key_arn
  tags                              = var.tags

  role_path                 = var.role_path
  role_permissions_boundary = var.role_permissions_boundary
}

module "coordinator" {
  source = "../state-machine"

  create     = local.create_dependency
  name       = var.name
  definition = local.coordinator_definition

  policy_statements = local.coordinator_policy_statements

  logging_level                     = var.logging_level
  logging_include_execution_data    = var.logging_include_execution_data
  cloudwatch_logs_retention_in_days = var.cloudwatch_logs_retention_in_days
  kms_key_arn                       = var.kms_key_arn
  # `sfn-patterns dag status|retry --state-machine-arn` find the run documents here.
  tags = merge(var.tags, local.create_dependency ? { "sfn-patterns:run-results" = local.run_results_uri } : {})

  role_path                 = var.role_path
  role_permissions_boundary = var.role_permissions_boundary
}

# --- Task executions that end without reporting (aborted, timed out, crashed) ---------

resource "aws_cloudwatch_event_rule" "task_ended" {
  count = local.create_dependency ? 1 : 0

  name        = "${var.name}-ended"
  description = "Report ${local.task_machine_name} executions that ended FAILED, TIMED_OUT or ABORTED to the runtime (a no-op when they already reported)."
  event_pattern = jsonencode({
    source        = ["aws.states"]
    "detail-type" = ["Step Functions Execution Status Change"]
    detail = {
      status          = ["FAILED", "TIMED_OUT", "ABORTED"]
      stateMachineArn = [local.task_machine_arn]
    }
  })
  tags = var.tags
}

resource "aws_cloudwatch_event_target" "task_ended" {
  count = local.create_dependency ? 1 : 0

  rule      = aws_cloudwatch_event_rule.task_ended[0].name
  target_id = "dag-runtime"
  arn       = module.runtime.function_arn

  retry_policy {
    maximum_event_age_in_seconds = 3600
    maximum_retry_attempts       = 20
  }

  # EventBridge invokes the function only once it may: the permission exists before
  # the target, and outlives it on destroy (a schedule firing in between is denied).
  depends_on = [aws_lambda_permission.task_ended]
}

resource "aws_lambda_permission" "task_ended" {
  count = local.create_dependency ? 1 : 0

  statement_id  = "AllowTaskEndedEvents"
  action        = "lambda:InvokeFunction"
  function_name = module.runtime.function_name
  principal     = data.aws_service_principal.events.name
  source_arn    = aws_cloudwatch_event_rule.task_ended[0].arn
}
