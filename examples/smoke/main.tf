# Smoke example: one Lambda from lambda_src/ and a STANDARD state machine that
# calls it with the context object ("Payload.$": "$$"), as seed 000 recommends.
# It proves the toolchain end to end: packaging, IAM, Lambda, Step Functions.

provider "aws" {
  region = var.region
}

data "aws_partition" "current" {}
data "aws_region" "current" {}
data "aws_caller_identity" "current" {}

locals {
  state_machine_name = "${var.name_prefix}-machine"
  state_machine_arn  = "arn:${data.aws_partition.current.partition}:states:${data.aws_region.current.region}:${data.aws_caller_identity.current.account_id}:stateMachine:${local.state_machine_name}"
}

module "echo" {
  source = "../../modules/lambda-function"

  function_name = "${var.name_prefix}-echo"
  bundle        = "smoke"
  handler       = "sfn_patterns.smoke.handler.handler"
  timeout       = 10
  tags          = var.tags
}

data "aws_iam_policy_document" "sfn_assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["states.amazonaws.com"]
    }
    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [data.aws_caller_identity.current.account_id]
    }
  }
}

data "aws_iam_policy_document" "sfn" {
  statement {
    sid       = "InvokeEcho"
    actions   = ["lambda:InvokeFunction"]
    resources = [module.echo.function_arn_static, "${module.echo.function_arn_static}:*"]
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

resource "aws_iam_role" "sfn" {
  name               = "${var.name_prefix}-sfn"
  assume_role_policy = data.aws_iam_policy_document.sfn_assume.json
  tags               = var.tags
}

resource "aws_iam_role_policy" "sfn" {
  name   = "${var.name_prefix}-sfn-inline"
  role   = aws_iam_role.sfn.id
  policy = data.aws_iam_policy_document.sfn.json
}

resource "aws_cloudwatch_log_group" "sfn" {
  name              = "/aws/vendedlogs/states/${local.state_machine_name}"
  retention_in_days = 30
  tags              = var.tags
}

resource "aws_sfn_state_machine" "this" {
  name     = local.state_machine_name
  role_arn = aws_iam_role.sfn.arn
  type     = "STANDARD"
  definition = templatefile("${path.module}/../../templates/smoke/definition.asl.json.tftpl", {
    function_arn = module.echo.function_arn
  })

  logging_configuration {
    log_destination        = "${aws_cloudwatch_log_group.sfn.arn}:*"
    include_execution_data = true
    level                  = "ALL"
  }

  tags = var.tags

  depends_on = [aws_iam_role_policy.sfn]
}
