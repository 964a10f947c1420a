# Every ARN in the rendered definition and in the IAM statements this module writes
# (state machine and Lambda roles) takes the partition from data.aws_partition:
# planned with aws_partition mocked as aws, aws-cn and aws-us-gov, for the Lambda
# variant (sample job, event completion) and the aws-sdk variant (event completion
# through the completion function, tasks acting through a role in the jobs' account).
# Each run also counts the ARNs, so a check that finds none fails.

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

mock_provider "local" {
  mock_data "local_command" {
    defaults = { stdout = "{\"base64sha256\": \"bW9jaw==\"}" }
  }
}

variables {
  name                  = "jp"
  initial_wait_seconds  = 10
  poll_interval_seconds = 5
  timeout_seconds       = 60
}

run "lambda_variant_in_aws" {
  command   = plan
  providers = { aws = aws.aws, local = local }

  variables {
    completion = "event"
  }

  assert {
    condition     = length(regexall("\\barn:[a-z0-9-]*:", jsonencode([output.definition, output.state_machine_arn_static, local.policy_statements]))) >= 12
    error_message = "The definition and the statements hold the ARNs of the Lambdas, the store, the token table and the state machine."
  }
  assert {
    condition     = alltrue([for prefix in regexall("\\barn:[a-z0-9-]*:", jsonencode([output.definition, output.state_machine_arn_static, local.policy_statements])) : prefix == "arn:aws:"])
    error_message = "Every ARN starts with arn:aws:."
  }
}

run "sdk_variant_in_aws" {
  command   = plan
  providers = { aws = aws.aws, local = local }

  variables {
    completion       = "event"
    fallback_seconds = 20
    aws_sdk_job = {
      start_action           = "sfn:startExecution"
      start_parameters_json  = "{\"StateMachineArn\":\"arn:aws:states:us-east-1:111111111111:stateMachine:child\"}"
      status_action          = "sfn:describeExecution"
      status_parameters_json = "{\"ExecutionArn.$\":\"$.job_poller.job.run.handle.ExecutionArn\"}"
      status_path            = "$.Status"
      succeeded_statuses     = ["SUCCEEDED"]
      failed_statuses        = ["FAILED", "TIMED_OUT", "ABORTED"]
      running_statuses       = ["RUNNING"]
      role_arn               = "arn:aws:iam::111111111111:role/jobs"
      policy_statements = [{
        sid       = "StartChild"
        actions   = ["states:StartExecution"]
        resources = ["arn:aws:states:us-east-1:111111111111:stateMachine:child"]
      }]
    }
    completion_event = {
      event_pattern      = "{\"source\":[\"aws.states\"]}"
      job_id_path        = "$.detail.executionArn"
      status_path        = "$.detail.status"
      succeeded_statuses = ["SUCCEEDED"]
      failed_statuses    = ["FAILED", "TIMED_OUT", "ABORTED"]
      job_id_state_path  = "$.job_poller.job.run.handle.ExecutionArn"
    }
  }

  assert {
    condition     = length(regexall("\\barn:[a-z0-9-]*:", jsonencode([output.definition, output.state_machine_arn_static, local.policy_statements]))) >= 8
    error_message = "The definition and the statements hold the service integrations, the completion function and the caller's ARNs."
  }
  assert {
    condition     = alltrue([for prefix in regexall("\\barn:[a-z0-9-]*:", jsonencode([output.definition, output.state_machine_arn_static, local.policy_statements])) : prefix == "arn:aws:"])
    error_message = "Every ARN starts with arn:aws:."
  }
  assert {
    condition     = jsondecode(output.definition).States["job Run Job"].Resource == "arn:aws:states:::aws-sdk:sfn:startExecution" && jsondecode(output.definition).States["job Await"].Resource == "arn:aws:states:::lambda:invoke.waitForTaskToken"
    error_message = "Service integrations are arn:aws:states:::..."
  }
}

run "lambda_variant_in_aws_cn" {
  command   = plan
  providers = { aws = aws.cn, local = local }

  variables {
    completion = "event"
  }

  assert {
    condition     = output.metadata_bucket_arn == "arn:aws-cn:s3:::jp-job-poller-123456789012" && output.metadata_table_arn == null
    error_message = "The s3 store's bucket ARN is known at plan time, in the partition; no table, no table ARN."
  }

  assert {
    condition     = length(regexall("\\barn:[a-z0-9-]*:", jsonencode([output.definition, output.state_machine_arn_static, local.policy_statements]))) >= 12
    error_message = "The definition and the statements hold the ARNs of the Lambdas, the store, the token table and the state machine."
  }
  assert {
    condition     = alltrue([for prefix in regexall("\\barn:[a-z0-9-]*:", jsonencode([output.definition, output.state_machine_arn_static, local.policy_statements])) : prefix == "arn:aws-cn:"])
    error_message = "Every ARN starts with arn:aws-cn:."
  }
}

run "sdk_variant_in_aws_cn" {
  command   = plan
  providers = { aws = aws.cn, local = local }

  variables {
    completion       = "event"
    fallback_seconds = 20
    aws_sdk_job = {
      start_action           = "sfn:startExecution"
      start_parameters_json  = "{\"StateMachineArn\":\"arn:aws-cn:states:cn-north-1:111111111111:stateMachine:child\"}"
      status_action          = "sfn:describeExecution"
      status_parameters_json = "{\"ExecutionArn.$\":\"$.job_poller.job.run.handle.ExecutionArn\"}"
      status_path            = "$.Status"
      succeeded_statuses     = ["SUCCEEDED"]
      failed_statuses        = ["FAILED", "TIMED_OUT", "ABORTED"]
      running_statuses       = ["RUNNING"]
      role_arn               = "arn:aws-cn:iam::111111111111:role/jobs"
      policy_statements = [{
        sid       = "StartChild"
        actions   = ["states:StartExecution"]
        resources = ["arn:aws-cn:states:cn-north-1:111111111111:stateMachine:child"]
      }]
    }
    completion_event = {
      event_pattern      = "{\"source\":[\"aws.states\"]}"
      job_id_path        = "$.detail.executionArn"
      status_path        = "$.detail.status"
      succeeded_statuses = ["SUCCEEDED"]
      failed_statuses    = ["FAILED", "TIMED_OUT", "ABORTED"]
      job_id_state_path  = "$.job_poller.job.run.handle.ExecutionArn"
    }
  }

  assert {
    condition     = length(regexall("\\barn:[a-z0-9-]*:", jsonencode([output.definition, output.state_machine_arn_static, local.policy_statements]))) >= 8
    error_message = "The definition and the statements hold the service integrations, the completion function and the caller's ARNs."
  }
  assert {
    condition     = alltrue([for prefix in regexall("\\barn:[a-z0-9-]*:", jsonencode([output.definition, output.state_machine_arn_static, local.policy_statements])) : prefix == "arn:aws-cn:"])
    error_message = "Every ARN starts with arn:aws-cn:."
  }
  assert {
    condition     = jsondecode(output.definition).States["job Run Job"].Resource == "arn:aws-cn:states:::aws-sdk:sfn:startExecution" && jsondecode(output.definition).States["job Await"].Resource == "arn:aws-cn:states:::lambda:invoke.waitForTaskToken"
    error_message = "Service integrations are arn:aws-cn:states:::..."
  }
}

run "lambda_variant_in_aws_us_gov" {
  command   = plan
  providers = { aws = aws.gov, local = local }

  variables {
    completion     = "event"
    metadata_store = "dynamodb"
  }

  assert {
    condition     = output.metadata_table_arn == "arn:aws-us-gov:dynamodb:us-gov-west-1:123456789012:table/jp-job-poller" && output.metadata_bucket_arn == null
    error_message = "The dynamodb store's table ARN is known at plan time, in the partition and region; no bucket, no bucket ARN."
  }

  assert {
    condition     = length(regexall("\\barn:[a-z0-9-]*:", jsonencode([output.definition, output.state_machine_arn_static, local.policy_statements]))) >= 12
    error_message = "The definition and the statements hold the ARNs of the Lambdas, the store, the token table and the state machine."
  }
  assert {
    condition     = alltrue([for prefix in regexall("\\barn:[a-z0-9-]*:", jsonencode([output.definition, output.state_machine_arn_static, local.policy_statements])) : prefix == "arn:aws-us-gov:"])
    error_message = "Every ARN starts with arn:aws-us-gov:."
  }
}

run "sdk_variant_in_aws_us_gov" {
  command   = plan
  providers = { aws = aws.gov, local = local }

  variables {
    completion       = "event"
    fallback_seconds = 20
    aws_sdk_job = {
      start_action           = "sfn:startExecution"
      start_parameters_json  = "{\"StateMachineArn\":\"arn:aws-us-gov:states:us-gov-west-1:111111111111:stateMachine:child\"}"
      status_action          = "sfn:describeExecution"
      status_parameters_json = "{\"ExecutionArn.$\":\"$.job_poller.job.run.handle.ExecutionArn\"}"
      status_path            = "$.Status"
      succeeded_statuses     = ["SUCCEEDED"]
      failed_statuses        = ["FAILED", "TIMED_OUT", "ABORTED"]
      running_statuses       = ["RUNNING"]
      role_arn               = "arn:aws-us-gov:iam::111111111111:role/jobs"
      policy_statements = [{
        sid       = "StartChild"
        actions   = ["states:StartExecution"]
        resources = ["arn:aws-us-gov:states:us-gov-west-1:111111111111:stateMachine:child"]
      }]
    }
    completion_event = {
      event_pattern      = "{\"source\":[\"aws.states\"]}"
      job_id_path        = "$.detail.executionArn"
      status_path        = "$.detail.status"
      succeeded_statuses = ["SUCCEEDED"]
      failed_statuses    = ["FAILED", "TIMED_OUT", "ABORTED"]
      job_id_state_path  = "$.job_poller.job.run.handle.ExecutionArn"
    }
  }

  assert {
    condition     = length(regexall("\\barn:[a-z0-9-]*:", jsonencode([output.definition, output.state_machine_arn_static, local.policy_statements]))) >= 8
    error_message = "The definition and the statements hold the service integrations, the completion function and the caller's ARNs."
  }
  assert {
    condition     = alltrue([for prefix in regexall("\\barn:[a-z0-9-]*:", jsonencode([output.definition, output.state_machine_arn_static, local.policy_statements])) : prefix == "arn:aws-us-gov:"])
    error_message = "Every ARN starts with arn:aws-us-gov:."
  }
  assert {
    condition     = jsondecode(output.definition).States["job Run Job"].Resource == "arn:aws-us-gov:states:::aws-sdk:sfn:startExecution" && jsondecode(output.definition).States["job Await"].Resource == "arn:aws-us-gov:states:::lambda:invoke.waitForTaskToken"
    error_message = "Service integrations are arn:aws-us-gov:states:::..."
  }
}
