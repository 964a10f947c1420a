# The longest names the module accepts plan in both completion modes: every resource
# it prefixes, including the event-completion module's <name>-job-poller-completion
# function and the metadata bucket <name>-job-poller-<account id>, stays within
# AWS's limits (a 40-character name used to fail both with the plan's raw errors).

mock_provider "aws" {
  mock_data "aws_caller_identity" {
    defaults = { account_id = "123456789012" }
  }
  mock_data "aws_partition" {
    defaults = { partition = "aws" }
  }
  mock_data "aws_region" {
    defaults = { region = "us-east-1" }
  }
  mock_data "aws_iam_policy_document" {
    defaults = { json = "{\"Version\":\"2012-10-17\",\"Statement\":[]}" }
  }
}

mock_provider "local" {
  mock_data "local_command" {
    defaults = { stdout = "{\"base64sha256\": \"bW9jaw==\"}" }
  }
}

variables {
  name                  = "a-job-poller-name-of-forty-characters-xy"
  initial_wait_seconds  = 10
  poll_interval_seconds = 5
  timeout_seconds       = 60
}

run "the_longest_name_plans_when_polling" {
  command = plan

  variables {
    metadata_store = "dynamodb"
  }

  assert {
    condition     = length(var.name) == 40 && output.state_machine_arn_static == "arn:aws:states:us-east-1:123456789012:stateMachine:${var.name}-job-poller"
    error_message = "A 40-character name plans with polling."
  }
}

run "the_longest_name_plans_with_event_completion" {
  command = plan

  variables {
    completion     = "event"
    metadata_store = "dynamodb"
  }

  assert {
    condition     = output.completion_function_name == "${var.name}-job-poller-completion" && length(output.completion_function_name) <= 64
    error_message = "A 40-character name plans with event completion; the completion function's name fits Lambda's 64 characters."
  }
}

run "an_s3_store_takes_39_characters" {
  command = plan

  variables {
    name = "a-job-poller-name-of-39-characters-xyzw"
  }

  assert {
    condition     = length(var.name) == 39 && length(aws_s3_bucket.metadata[0].bucket) == 63
    error_message = "The bucket <name>-job-poller-<account id> of a 39-character name has S3's 63 characters."
  }
}

run "an_s3_store_refuses_40_characters_with_a_message" {
  command = plan

  expect_failures = [var.name]
}

run "a_longer_name_is_refused" {
  command = plan

  variables {
    name           = "a-job-poller-name-of-forty-one-characters"
    metadata_store = "dynamodb"
  }

  expect_failures = [var.name]
}

run "rejects_a_kms_key_id_instead_of_an_arn" {
  command = plan
  variables {
    name        = "jp"
    kms_key_arn = "1234abcd-12ab-34cd-56ef-1234567890ab"
  }
  expect_failures = [var.kms_key_arn]
}

run "rejects_an_alias_arn_as_kms_key_arn" {
  command = plan
  variables {
    name        = "jp"
    kms_key_arn = "arn:aws-cn:kms:cn-north-1:123456789012:alias/data"
  }
  expect_failures = [var.kms_key_arn]
}

run "rejects_a_retention_cloudwatch_logs_does_not_offer" {
  command = plan
  variables {
    name                              = "jp"
    cloudwatch_logs_retention_in_days = 45
  }
  expect_failures = [var.cloudwatch_logs_retention_in_days]
}

run "rejects_a_runtime_that_is_not_a_supported_python" {
  command = plan
  variables {
    name           = "jp"
    lambda_runtime = "python3.8"
  }
  expect_failures = [var.lambda_runtime]
}

run "rejects_memory_outside_lambdas_range" {
  command = plan
  variables {
    name               = "jp"
    lambda_memory_size = 20480
  }
  expect_failures = [var.lambda_memory_size]
}

run "rejects_a_timeout_over_lambdas_15_minutes" {
  command = plan
  variables {
    name           = "jp"
    lambda_timeout = 901
  }
  expect_failures = [var.lambda_timeout]
}
