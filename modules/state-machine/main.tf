# Internal building block of the pattern modules: a state machine with its own
# role (inline policy: the caller's scoped statements plus log delivery), its own
# log group (retention, optional KMS key), logging on, X-Ray tracing when asked.

data "aws_partition" "current" {}
data "aws_region" "current" {}
data "aws_caller_identity" "current" {}

# The service principal as the partition writes it (aws-cn and aws-us-gov included).
data "aws_service_principal" "states" {
  service_name = "states"
}

locals {
  account_id     = data.aws_caller_identity.current.account_id
  arn_static     = "arn:${data.aws_partition.current.partition}:states:${data.aws_region.current.region}:${local.account_id}:stateMachine:${var.name}"
  log_group_name = "/aws/vendedlogs/states/${var.name}"
}

data "aws_iam_policy_document" "assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = [data.aws_service_principal.states.name]
    }
    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [local.account_id]
    }
  }
}

data "aws_iam_policy_document" "this" {
  source_policy_documents = var.policy_documents

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

  # CloudWatch Logs delivery APIs do not support resource-level permissions.
  statement {
    sid = "DeliverExecutionLogs"
    actions = [
      "logs:CreateLogDelivery", "logs:GetLogDelivery", "logs:UpdateLogDelivery",
      "logs:DeleteLogDelivery", "logs:ListLogDeliveries", "logs:PutResourcePolicy",
      "logs:DescribeResourcePolicies", "logs:DescribeLogGroups",
    ]
    resources = ["*"]
  }

  # The machine's own key (kms_key_arn): Step Functions encrypts the definition and each
  # execution's data with data keys it generates and decrypts as this role, with the
  # machine's ARN as encryption context (Data at rest encryption in Step Functions).
  dynamic "statement" {
    for_each = var.kms_key_arn == null ? [] : [1]
    content {
      sid       = "UseOwnKey"
      actions   = ["kms:GenerateDataKey", "kms:Decrypt"]
      resources = [var.kms_key_arn]
      condition {
        test     = "StringEquals"
        variable = "kms:EncryptionContext:aws:states:stateMachineArn"
        values   = [local.arn_static]
      }
    }
  }

  dynamic "statement" {
    for_each = var.tracing_enabled ? [1] : []
    content {
      sid = "WriteTraces"
      # X-Ray trace APIs do not support resource-level permissions.
      actions   = ["xray:PutTraceSegments", "xray:PutTelemetryRecords", "xray:GetSamplingRules", "xray:GetSamplingTargets"]
      resources = ["*"]
    }
  }
}

resource "aws_iam_role" "this" {
  count = var.create ? 1 : 0

  name                 = var.name
  assume_role_policy   = data.aws_iam_policy_document.assume.json
  path                 = var.role_path
  permissions_boundary = var.role_permissions_boundary
  tags                 = var.tags
}

# Inline and role-scoped: never an exclusive attachment.
resource "aws_iam_role_policy" "this" {
  count = var.create ? 1 : 0

  name   = "${var.name}-inline"
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

resource "aws_sfn_state_machine" "this" {
  #checkov:skip=CKV_AWS_285:Execution logging is always on (level ERROR by default); state input and output may carry job data, so including them is the caller's opt-in (logging_include_execution_data).
  count = var.create ? 1 : 0

  name       = var.name
  role_arn   = aws_iam_role.this[0].arn
  type       = var.type
  definition = var.definition

  logging_configuration {
    log_destination        = "${aws_cloudwatch_log_group.this[0].arn}:*"
    include_execution_data = var.logging_include_execution_data
    level                  = var.logging_level
  }

  # With kms_key_arn, the definition, executions and history are encrypted with the
  # caller's key (a second layer over Step Functions' own); data keys are reused for
  # 300 s, AWS's default, so a busy machine calls KMS a few times a minute.
  dynamic "encryption_configuration" {
    for_each = var.kms_key_arn == null ? [] : [1]
    content {
      type                              = "CUSTOMER_MANAGED_KMS_KEY"
      kms_key_id                        = var.kms_key_arn
      kms_data_key_reuse_period_seconds = 300
    }
  }

  # Only written when on: LocalStack 4.14.0 does not return the setting, so an
  # explicit "enabled = false" block would show as drift there.
  dynamic "tracing_configuration" {
    for_each = var.tracing_enabled ? [1] : []
    content {
      enabled = true
    }
  }

  tags = var.tags

  depends_on = [aws_iam_role_policy.this]
}
