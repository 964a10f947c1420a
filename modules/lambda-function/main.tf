# A Lambda function with its own role (inline, resource-scoped policy), its own
# encrypted log group and no wildcard actions. Its code is one of: source_path
# (packaged deterministically at plan time by package.py), a prebuilt zip
# (local_existing_package) or an S3 object (s3_existing_package). Every pattern
# module builds its Lambdas through this one.

data "aws_partition" "current" {}
data "aws_region" "current" {}
data "aws_caller_identity" "current" {}

# The service principal as the partition writes it (aws-cn and aws-us-gov included).
data "aws_service_principal" "lambda" {
  service_name = "lambda"
}

locals {
  build_dir = coalesce(var.build_dir, "${path.root}/.build/lambda")
  # Relative to the root module, so the same checkout path never matters.
  filename = "${local.build_dir}/${var.function_name}.zip"

  partition      = data.aws_partition.current.partition
  region         = data.aws_region.current.region
  account_id     = data.aws_caller_identity.current.account_id
  log_group_name = "/aws/lambda/${var.function_name}"
  log_group_arn  = "arn:${local.partition}:logs:${local.region}:${local.account_id}:log-group:${local.log_group_name}"
  # Static ARN, known at plan time, so callers can reference it without cycles.
  function_arn = "arn:${local.partition}:lambda:${local.region}:${local.account_id}:function:${var.function_name}"

  build_package = var.create && length(var.source_path) > 0
  # package.py's arguments but the sources, the same at plan and at the apply-time rebuild.
  package_arguments = concat(
    ["-S", "${path.module}/package.py", "--out", local.filename],
    flatten([for requirement in var.pip_requirements : ["--requirement", requirement]]),
  )
  package = local.build_package ? jsondecode(data.local_command.package[0].stdout) : null
  code = local.build_package ? {
    filename         = local.filename
    source_code_hash = local.package.base64sha256
    } : var.local_existing_package != null ? {
    filename         = var.local_existing_package
    source_code_hash = filebase64sha256(var.local_existing_package)
  } : { filename = null, source_code_hash = null }
}

# Builds the zip at plan time; the bytes depend only on the sources, so the hash
# (and therefore the plan) is the same from any checkout. -S: package.py needs only the
# standard library, so the interpreter skips `site` (its .pth files and whatever the
# environment installed there: 36 of a run's 70-100 ms in a virtualenv with editable
# installs, once per function per plan); pip, for pip_requirements, runs in a process
# of its own with its site-packages.
data "local_command" "package" {
  count = local.build_package ? 1 : 0

  command   = var.python_executable
  arguments = concat(local.package_arguments, ["--sources", jsonencode(var.source_path)])
}

# A saved plan applied elsewhere (a CI apply job that keeps only the plan file, another
# runner of Atlantis or HCP Terraform) has no .build/lambda: Terraform does not read data
# sources again when it applies a saved plan, so the zip the plan built is not there.
# This builds it again at apply, whenever the function is created or its code changes
# (the only applies in which the provider reads the file), and fails if the sources no
# longer pack the planned hash. The zip is deterministic, so the bytes are the plan's;
# where the zip is still there and current, package.py only checks its record.
resource "terraform_data" "package" {
  count = local.build_package ? 1 : 0

  triggers_replace = [var.function_name, local.package.base64sha256]

  provisioner "local-exec" {
    interpreter = concat(
      [var.python_executable],
      local.package_arguments,
      ["--expect-base64sha256", local.package.base64sha256, "--sources"],
    )
    command = jsonencode(var.source_path)
  }
}

data "aws_iam_policy_document" "assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = [data.aws_service_principal.lambda.name]
    }
    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [local.account_id]
    }
  }
}

data "aws_iam_policy_document" "this" {
  statement {
    sid       = "WriteOwnLogs"
    actions   = ["logs:CreateLogStream", "logs:PutLogEvents"]
    resources = ["${local.log_group_arn}:*"]
  }

  dynamic "statement" {
    for_each = var.policy_statements
    content {
      sid       = statement.value.sid
      effect    = statement.value.effect
      actions   = statement.value.actions
      resources = statement.value.resources

      dynamic "condition" {
        for_each = statement.value.conditions
        content {
          test     = condition.value.test
          variable = condition.value.variable
          values   = condition.value.values
        }
      }
    }
  }
}

resource "aws_iam_role" "this" {
  count = var.create ? 1 : 0

  name                 = var.function_name
  assume_role_policy   = data.aws_iam_policy_document.assume.json
  path                 = var.role_path
  permissions_boundary = var.role_permissions_boundary
  tags                 = var.tags
}

# Inline and role-scoped: never an exclusive attachment that could detach a
# policy someone else attached to a shared role.
resource "aws_iam_role_policy" "this" {
  count = var.create ? 1 : 0

  name   = "${var.function_name}-inline"
  role   = aws_iam_role.this[0].id
  policy = data.aws_iam_policy_document.this.json
}

resource "aws_cloudwatch_log_group" "this" {
  #checkov:skip=CKV_AWS_338:Retention is the caller's cloudwatch_logs_retention_in_days (default 30): these are operational logs, not an audit trail.
  count = var.create ? 1 : 0

  name              = local.log_group_name
  retention_in_days = var.cloudwatch_logs_retention_in_days
  kms_key_id        = var.kms_key_arn
  tags              = var.tags
}

resource "aws_lambda_function" "this" {
  #checkov:skip=CKV_AWS_116:Step Functions and EventBridge invoke these synchronously and retry/catch errors; the one async invoke (sample job) is bounded by the poller's timeout.
  #checkov:skip=CKV_AWS_117:The functions call only AWS APIs; a VPC would add NAT or endpoints at the caller's cost and is the caller's network choice.
  #checkov:skip=CKV_AWS_272:Zips are built deterministically from the checked-out source at plan time; an AWS Signer profile is an account-level choice.
  count = var.create ? 1 : 0

  function_name                  = var.function_name
  role                           = aws_iam_role.this[0].arn
  handler                        = var.handler
  runtime                        = var.runtime
  timeout                        = var.timeout
  memory_size                    = var.memory_size
  reserved_concurrent_executions = var.reserved_concurrent_executions
  kms_key_arn                    = length(var.environment_variables) > 0 ? var.kms_key_arn : null
  filename                       = local.code.filename
  source_code_hash               = local.code.source_code_hash
  s3_bucket                      = try(var.s3_existing_package.bucket, null)
  s3_key                         = try(var.s3_existing_package.key, null)
  s3_object_version              = try(var.s3_existing_package.version_id, null)

  dynamic "environment" {
    for_each = length(var.environment_variables) > 0 ? [1] : []
    content {
      variables = var.environment_variables
    }
  }

  # PassThrough: a function joins a trace when its caller samples it (a state
  # machine with tracing_enabled), and costs nothing otherwise.
  tracing_config {
    mode = "PassThrough"
  }

  logging_config {
    log_format = "Text"
    log_group  = aws_cloudwatch_log_group.this[0].name
  }

  tags = var.tags

  depends_on = [aws_iam_role_policy.this, terraform_data.package]
}
