# Every ARN in the rendered definitions (rendered by the real planner from tests/sql:
# the local provider is not mocked) and in the IAM statements the module writes takes
# the partition from data.aws_partition: planned with aws_partition mocked as aws,
# aws-cn and aws-us-gov, for a level strategy and for dependency, both with event
# completion (the most ARNs). Each run also counts the ARNs, so a check that finds
# none fails. The plan bucket's ARN comes from the provider (unknown in a plan) and is
# left out.

mock_provider "aws" {
  alias = "aws"
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

override_data {
  target = module.completion.module.function.data.local_command.package
  values = { stdout = "{\"base64sha256\": \"bW9jaw==\"}" }
}

override_data {
  target = module.runtime.data.local_command.package
  values = { stdout = "{\"base64sha256\": \"bW9jaw==\"}" }
}

variables {
  name    = "dag"
  sql_dir = "tests/sql"
}

run "level_strategy_in_aws" {
  command   = plan
  providers = { aws = aws.aws }

  variables {
    redshift = {
      database           = "dev"
      cluster_identifier = "wh"
      db_user            = "etl"
    }
  }

  assert {
    condition     = length(regexall("\\barn:[a-z0-9-]*:", jsonencode([output.definition, output.state_machine_arn_static, local.state_machine_policy_statements]))) >= 20
    error_message = "The definition (three stages of statements, parks and describes) and the statements hold ARNs."
  }
  assert {
    condition     = alltrue([for prefix in regexall("\\barn:[a-z0-9-]*:", jsonencode([output.definition, output.state_machine_arn_static, local.state_machine_policy_statements])) : prefix == "arn:aws:"])
    error_message = "Every ARN starts with arn:aws:."
  }
  assert {
    condition     = jsondecode(output.definition).States["Stage 1: L_*2"].ItemProcessor.States["S1 Execute batch"].Resource == "arn:aws:states:::aws-sdk:redshiftdata:batchExecuteStatement"
    error_message = "Service integrations are arn:aws:states:::..."
  }
}

run "dependency_strategy_in_aws" {
  command   = plan
  providers = { aws = aws.aws }

  variables {
    strategy = "dependency"
    redshift = {
      database       = "dev"
      workgroup_name = "wg"
      workgroup_arn  = "arn:aws:redshift-serverless:us-east-1:123456789012:workgroup/0f1e"
      secret_arn     = "arn:aws:secretsmanager:us-east-1:123456789012:secret:dwh-AbCdEf"
    }
    kms_key_arn = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
  }

  assert {
    condition     = length(regexall("\\barn:[a-z0-9-]*:", jsonencode([output.definition, output.task_definition, output.state_machine_arn_static, module.task_machine.state_machine_arn_static, local.coordinator_policy_statements, local.task_machine_policy_statements, [for s in local.runtime_policy_statements : s if !contains(["ReadPlan", "WriteRunResults"], s.sid)], jsondecode(aws_cloudwatch_event_rule.task_ended[0].event_pattern)]))) >= 20
    error_message = "The coordinator and task definitions and the statements hold ARNs."
  }
  assert {
    condition     = alltrue([for prefix in regexall("\\barn:[a-z0-9-]*:", jsonencode([output.definition, output.task_definition, output.state_machine_arn_static, module.task_machine.state_machine_arn_static, local.coordinator_policy_statements, local.task_machine_policy_statements, [for s in local.runtime_policy_statements : s if !contains(["ReadPlan", "WriteRunResults"], s.sid)], jsondecode(aws_cloudwatch_event_rule.task_ended[0].event_pattern)])) : prefix == "arn:aws:"])
    error_message = "Every ARN starts with arn:aws:."
  }
}

run "level_strategy_in_aws_cn" {
  command   = plan
  providers = { aws = aws.cn }

  variables {
    redshift = {
      database           = "dev"
      cluster_identifier = "wh"
      db_user            = "etl"
    }
  }

  assert {
    condition     = length(regexall("\\barn:[a-z0-9-]*:", jsonencode([output.definition, output.state_machine_arn_static, local.state_machine_policy_statements]))) >= 20
    error_message = "The definition (three stages of statements, parks and describes) and the statements hold ARNs."
  }
  assert {
    condition     = alltrue([for prefix in regexall("\\barn:[a-z0-9-]*:", jsonencode([output.definition, output.state_machine_arn_static, local.state_machine_policy_statements])) : prefix == "arn:aws-cn:"])
    error_message = "Every ARN starts with arn:aws-cn:."
  }
  assert {
    condition     = jsondecode(output.definition).States["Stage 1: L_*2"].ItemProcessor.States["S1 Execute batch"].Resource == "arn:aws-cn:states:::aws-sdk:redshiftdata:batchExecuteStatement"
    error_message = "Service integrations are arn:aws-cn:states:::..."
  }
}

run "dependency_strategy_in_aws_cn" {
  command = plan

  # As terraform-provider-aws computes it in this partition (service_principal_data_source.go).
  override_data {
    target = data.aws_service_principal.events
    values = { name = "events.amazonaws.com", suffix = "amazonaws.com" }
  }
  providers = { aws = aws.cn }

  variables {
    strategy = "dependency"
    redshift = {
      database           = "dev"
      workgroup_name     = "wg"
      workgroup_arn      = "arn:aws-cn:redshift-serverless:cn-north-1:123456789012:workgroup/0f1e"
      secret_arn         = "arn:aws-cn:secretsmanager:cn-north-1:123456789012:secret:dwh-AbCdEf"
      secret_kms_key_arn = "arn:aws-cn:kms:cn-north-1:123456789012:key/5678abcd-12ab-34cd-56ef-1234567890ab"
    }
    kms_key_arn = "arn:aws-cn:kms:cn-north-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
  }

  assert {
    condition     = [for s in local.task_machine_policy_statements : s.conditions if s.sid == "DecryptDatabaseSecret"] == [[{ test = "StringEquals", variable = "kms:ViaService", values = ["secretsmanager.cn-north-1.amazonaws.com.cn"] }]]
    error_message = "The task machine decrypts the database secret with its key through Secrets Manager of that key's region and partition only."
  }

  assert {
    condition     = length(regexall("\\barn:[a-z0-9-]*:", jsonencode([output.definition, output.task_definition, output.state_machine_arn_static, module.task_machine.state_machine_arn_static, local.coordinator_policy_statements, local.task_machine_policy_statements, [for s in local.runtime_policy_statements : s if !contains(["ReadPlan", "WriteRunResults"], s.sid)], jsondecode(aws_cloudwatch_event_rule.task_ended[0].event_pattern)]))) >= 20
    error_message = "The coordinator and task definitions and the statements hold ARNs."
  }
  assert {
    condition     = alltrue([for prefix in regexall("\\barn:[a-z0-9-]*:", jsonencode([output.definition, output.task_definition, output.state_machine_arn_static, module.task_machine.state_machine_arn_static, local.coordinator_policy_statements, local.task_machine_policy_statements, [for s in local.runtime_policy_statements : s if !contains(["ReadPlan", "WriteRunResults"], s.sid)], jsondecode(aws_cloudwatch_event_rule.task_ended[0].event_pattern)])) : prefix == "arn:aws-cn:"])
    error_message = "Every ARN starts with arn:aws-cn:."
  }
  assert {
    condition     = aws_lambda_permission.task_ended[0].principal == "events.amazonaws.com"
    error_message = "EventBridge's principal comes from data.aws_service_principal: events.amazonaws.com in this partition too."
  }
}

run "level_strategy_in_aws_us_gov" {
  command   = plan
  providers = { aws = aws.gov }

  variables {
    redshift = {
      database           = "dev"
      cluster_identifier = "wh"
      db_user            = "etl"
    }
  }

  assert {
    condition     = length(regexall("\\barn:[a-z0-9-]*:", jsonencode([output.definition, output.state_machine_arn_static, local.state_machine_policy_statements]))) >= 20
    error_message = "The definition (three stages of statements, parks and describes) and the statements hold ARNs."
  }
  assert {
    condition     = alltrue([for prefix in regexall("\\barn:[a-z0-9-]*:", jsonencode([output.definition, output.state_machine_arn_static, local.state_machine_policy_statements])) : prefix == "arn:aws-us-gov:"])
    error_message = "Every ARN starts with arn:aws-us-gov:."
  }
  assert {
    condition     = jsondecode(output.definition).States["Stage 1: L_*2"].ItemProcessor.States["S1 Execute batch"].Resource == "arn:aws-us-gov:states:::aws-sdk:redshiftdata:batchExecuteStatement"
    error_message = "Service integrations are arn:aws-us-gov:states:::..."
  }
}

run "dependency_strategy_in_aws_us_gov" {
  command = plan

  # As terraform-provider-aws computes it in this partition (service_principal_data_source.go).
  override_data {
    target = data.aws_service_principal.events
    values = { name = "events.amazonaws.com", suffix = "amazonaws.com" }
  }
  providers = { aws = aws.gov }

  variables {
    strategy = "dependency"
    redshift = {
      database       = "dev"
      workgroup_name = "wg"
      workgroup_arn  = "arn:aws-us-gov:redshift-serverless:us-gov-west-1:123456789012:workgroup/0f1e"
      secret_arn     = "arn:aws-us-gov:secretsmanager:us-gov-west-1:123456789012:secret:dwh-AbCdEf"
    }
    kms_key_arn = "arn:aws-us-gov:kms:us-gov-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
  }

  assert {
    condition     = length(regexall("\\barn:[a-z0-9-]*:", jsonencode([output.definition, output.task_definition, output.state_machine_arn_static, module.task_machine.state_machine_arn_static, local.coordinator_policy_statements, local.task_machine_policy_statements, [for s in local.runtime_policy_statements : s if !contains(["ReadPlan", "WriteRunResults"], s.sid)], jsondecode(aws_cloudwatch_event_rule.task_ended[0].event_pattern)]))) >= 20
    error_message = "The coordinator and task definitions and the statements hold ARNs."
  }
  assert {
    condition     = alltrue([for prefix in regexall("\\barn:[a-z0-9-]*:", jsonencode([output.definition, output.task_definition, output.state_machine_arn_static, module.task_machine.state_machine_arn_static, local.coordinator_policy_statements, local.task_machine_policy_statements, [for s in local.runtime_policy_statements : s if !contains(["ReadPlan", "WriteRunResults"], s.sid)], jsondecode(aws_cloudwatch_event_rule.task_ended[0].event_pattern)])) : prefix == "arn:aws-us-gov:"])
    error_message = "Every ARN starts with arn:aws-us-gov:."
  }
  assert {
    condition     = aws_lambda_permission.task_ended[0].principal == "events.amazonaws.com"
    error_message = "EventBridge's principal comes from data.aws_service_principal: events.amazonaws.com in this partition too."
  }
}
