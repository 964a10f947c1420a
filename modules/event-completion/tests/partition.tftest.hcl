# Every ARN this module writes (its plan-time ARN outputs, the statements it grants and
# the statements it hands to callers) takes the partition from data.aws_partition:
# planned with aws_partition mocked as aws, aws-cn and aws-us-gov. Each run counts the
# ARNs first (2 outputs, 2 granted: states:SendTaskSuccess is on *, 2 + 1 handed out), so a
# check that finds none fails.
# EventBridge's service principal is mocked per partition as terraform-provider-aws
# computes it (internal/service/meta/service_principal_data_source.go:
# events.amazonaws.com in aws, aws-cn and aws-us-gov alike).

mock_provider "aws" {
  alias = "aws"
  override_data {
    target = data.aws_service_principal.events
    values = { name = "events.amazonaws.com", suffix = "amazonaws.com" }
  }
  mock_data "aws_partition" {
    defaults = { partition = "aws", dns_suffix = "amazonaws.com" }
  }
  mock_data "aws_region" {
    defaults = { region = "us-east-1" }
  }
  mock_data "aws_caller_identity" {
    defaults = { account_id = "123456789012" }
  }
  mock_data "aws_iam_policy_document" {
    defaults = { json = "{}" }
  }
}

mock_provider "aws" {
  alias = "cn"
  override_data {
    target = data.aws_service_principal.events
    values = { name = "events.amazonaws.com", suffix = "amazonaws.com" }
  }
  mock_data "aws_partition" {
    defaults = { partition = "aws-cn", dns_suffix = "amazonaws.com.cn" }
  }
  mock_data "aws_region" {
    defaults = { region = "cn-north-1" }
  }
  mock_data "aws_caller_identity" {
    defaults = { account_id = "123456789012" }
  }
  mock_data "aws_iam_policy_document" {
    defaults = { json = "{}" }
  }
}

mock_provider "aws" {
  alias = "gov"
  override_data {
    target = data.aws_service_principal.events
    values = { name = "events.amazonaws.com", suffix = "amazonaws.com" }
  }
  mock_data "aws_partition" {
    defaults = { partition = "aws-us-gov", dns_suffix = "amazonaws.com" }
  }
  mock_data "aws_region" {
    defaults = { region = "us-gov-west-1" }
  }
  mock_data "aws_caller_identity" {
    defaults = { account_id = "123456789012" }
  }
  mock_data "aws_iam_policy_document" {
    defaults = { json = "{}" }
  }
}

mock_provider "local" {
  mock_data "local_command" {
    defaults = { stdout = "{\"base64sha256\": \"bW9jaw==\"}" }
  }
}

variables {
  name              = "stmts"
  event_pattern     = "{\"source\":[\"aws.redshift-data\"]}"
  job_id_path       = "$.detail.statementId"
  status_path       = "$.detail.state"
  terminal_statuses = ["FINISHED", "FAILED", "ABORTED"]
}

run "partition_aws" {
  command   = plan
  providers = { aws = aws.aws, local = local }

  variables {
    waiting_state_machine_arns = ["arn:aws:states:us-east-1:123456789012:stateMachine:waiter"]
    kms_key_arn                = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
  }

  assert {
    condition = length(regexall("arn:[a-z-]*:", jsonencode([output.table_arn, output.function_arn, local.function_policy_statements, output.park_policy_statements, output.token_writer_policy_statements]))) == 8 && alltrue([
      for prefix in regexall("arn:[a-z-]*:", jsonencode([output.table_arn, output.function_arn, local.function_policy_statements, output.park_policy_statements, output.token_writer_policy_statements])) : prefix == "arn:aws:"
    ])
    error_message = "Every ARN starts with arn:aws: in the aws partition."
  }
}

run "partition_aws_cn" {
  command   = plan
  providers = { aws = aws.cn, local = local }

  variables {
    waiting_state_machine_arns = ["arn:aws-cn:states:cn-north-1:123456789012:stateMachine:waiter"]
    kms_key_arn                = "arn:aws-cn:kms:cn-north-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
  }

  assert {
    condition = length(regexall("arn:[a-z-]*:", jsonencode([output.table_arn, output.function_arn, local.function_policy_statements, output.park_policy_statements, output.token_writer_policy_statements]))) == 8 && alltrue([
      for prefix in regexall("arn:[a-z-]*:", jsonencode([output.table_arn, output.function_arn, local.function_policy_statements, output.park_policy_statements, output.token_writer_policy_statements])) : prefix == "arn:aws-cn:"
    ])
    error_message = "Every ARN starts with arn:aws-cn: in the aws-cn partition."
  }
  assert {
    condition     = output.function_arn == "arn:aws-cn:lambda:cn-north-1:123456789012:function:stmts-completion"
    error_message = "The function ARN is built from partition, region and account."
  }
  assert {
    condition     = aws_lambda_permission.completion[0].principal == "events.amazonaws.com"
    error_message = "EventBridge's principal is events.amazonaws.com in this partition too (data.aws_service_principal)."
  }
}

run "partition_aws_us_gov" {
  command   = plan
  providers = { aws = aws.gov, local = local }

  variables {
    waiting_state_machine_arns = ["arn:aws-us-gov:states:us-gov-west-1:123456789012:stateMachine:waiter"]
    kms_key_arn                = "arn:aws-us-gov:kms:us-gov-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
  }

  assert {
    condition = length(regexall("arn:[a-z-]*:", jsonencode([output.table_arn, output.function_arn, local.function_policy_statements, output.park_policy_statements, output.token_writer_policy_statements]))) == 8 && alltrue([
      for prefix in regexall("arn:[a-z-]*:", jsonencode([output.table_arn, output.function_arn, local.function_policy_statements, output.park_policy_statements, output.token_writer_policy_statements])) : prefix == "arn:aws-us-gov:"
    ])
    error_message = "Every ARN starts with arn:aws-us-gov: in the aws-us-gov partition."
  }
  assert {
    condition     = aws_lambda_permission.completion[0].principal == "events.amazonaws.com"
    error_message = "EventBridge's principal is events.amazonaws.com in this partition too (data.aws_service_principal)."
  }
}
