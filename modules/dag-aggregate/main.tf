# dag-aggregate: SQL files -> dependency DAG -> one Map state per stage, rendered
# at plan time by the Python planner (lambda_src/sfn_patterns/dag_aggregate) from
# the Jinja templates in templates/dag-aggregate. A cycle, invalid SQL or a table
# produced twice fails the plan with the planner's message.

data "aws_partition" "current" {}
data "aws_region" "current" {}
data "aws_caller_identity" "current" {}

locals {
  partition  = data.aws_partition.current.partition
  region     = data.aws_region.current.region
  account_id = data.aws_caller_identity.current.account_id

  lambda_src = abspath("${path.module}/../../lambda_src")
  # Any python3 with the planner's dependencies can run it from the checkout.
  bootstrap = "import sys; sys.path.insert(0, sys.argv.pop(1)); from sfn_patterns.dag_aggregate.cli import group; group()"
  target_args = concat(
    ["--database", var.redshift.database],
    var.redshift.cluster_identifier != null ? ["--cluster-identifier", var.redshift.cluster_identifier] : [],
    var.redshift.db_user != null ? ["--db-user", var.redshift.db_user] : [],
    var.redshift.workgroup_name != null ? ["--workgroup-name", var.redshift.workgroup_name] : [],
    var.redshift.secret_arn != null ? ["--secret-arn", var.redshift.secret_arn] : [],
  )

  plan       = var.create ? jsondecode(data.local_command.plan[0].stdout) : null
  definition = var.create ? data.local_command.render[0].stdout : null

  state_machine_arn = "arn:${local.partition}:states:${local.region}:${local.account_id}:stateMachine:${var.name}"
  log_group_name    = "/aws/vendedlogs/states/${var.name}"

  cluster_arn = var.redshift.cluster_identifier == null ? null : "arn:${local.partition}:redshift:${local.region}:${local.account_id}:cluster:${var.redshift.cluster_identifier}"
}

data "local_command" "plan" {
  count = var.create ? 1 : 0

  command   = var.python_executable
  arguments = ["-c", local.bootstrap, local.lambda_src, "plan", "--sql-dir", var.sql_dir, "--schema", var.sql_schema]
}

data "local_command" "render" {
  count = var.create ? 1 : 0

  command = var.python_executable
  arguments = concat(
    ["-c", local.bootstrap, local.lambda_src, "render",
      "--sql-dir", var.sql_dir, "--schema", var.sql_schema,
      "--strategy", var.strategy, "--max-concurrency", tostring(var.max_concurrency),
      "--default-wait", tostring(var.poll.initial_wait_seconds),
      "--poll-interval", tostring(var.poll.poll_interval_seconds),
      "--default-timeout", tostring(var.poll.timeout_seconds),
    "--compact"],
    local.target_args,
  )
}

data "aws_iam_policy_document" "assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["states.amazonaws.com"]
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
    sid       = "RunStatementsOnTheTarget"
    actions   = ["redshift-data:ExecuteStatement", "redshift-data:BatchExecuteStatement"]
    resources = compact([local.cluster_arn, var.redshift.workgroup_arn])
  }

  # These Data API actions have no resource-level permissions; the owner condition
  # limits them to statements this role started.
  statement {
    sid       = "FollowOwnStatements"
    actions   = ["redshift-data:DescribeStatement", "redshift-data:CancelStatement", "redshift-data:GetStatementResult"]
    resources = ["*"]
    condition {
      test     = "StringEquals"
      variable = "redshift-data:statement-owner-iam-userid"
      values   = ["$${aws:userid}"]
    }
  }

  dynamic "statement" {
    for_each = var.redshift.db_user != null ? [1] : []
    content {
      sid     = "TemporaryClusterCredentials"
      actions = ["redshift:GetClusterCredentials"]
      resources = [
        "arn:${local.partition}:redshift:${local.region}:${local.account_id}:dbuser:${var.redshift.cluster_identifier}/${var.redshift.db_user}",
        "arn:${local.partition}:redshift:${local.region}:${local.account_id}:dbname:${var.redshift.cluster_identifier}/${var.redshift.database}",
      ]
    }
  }

  dynamic "statement" {
    for_each = var.redshift.workgroup_name != null && var.redshift.secret_arn == null ? [1] : []
    content {
      sid       = "TemporaryServerlessCredentials"
      actions   = ["redshift-serverless:GetCredentials"]
      resources = [var.redshift.workgroup_arn]
    }
  }

  dynamic "statement" {
    for_each = var.redshift.secret_arn != null ? [1] : []
    content {
      sid       = "ReadDatabaseSecret"
      actions   = ["secretsmanager:GetSecretValue"]
      resources = [var.redshift.secret_arn]
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
}

resource "aws_iam_role" "this" {
  count = var.create ? 1 : 0

  name               = var.name
  assume_role_policy = data.aws_iam_policy_document.assume.json
  tags               = var.tags
}

resource "aws_iam_role_policy" "this" {
  count = var.create ? 1 : 0

  name   = "${var.name}-inline"
  role   = aws_iam_role.this[0].id
  policy = data.aws_iam_policy_document.this.json
}

resource "aws_cloudwatch_log_group" "this" {
  count = var.create ? 1 : 0

  name              = local.log_group_name
  retention_in_days = var.cloudwatch_logs_retention_in_days
  kms_key_id        = var.kms_key_arn
  tags              = var.tags
}

resource "aws_sfn_state_machine" "this" {
  count = var.create ? 1 : 0

  name       = var.name
  role_arn   = aws_iam_role.this[0].arn
  type       = "STANDARD"
  definition = local.definition

  logging_configuration {
    log_destination        = "${aws_cloudwatch_log_group.this[0].arn}:*"
    include_execution_data = true
    level                  = "ALL"
  }

  tags = var.tags

  depends_on = [aws_iam_role_policy.this]
}
