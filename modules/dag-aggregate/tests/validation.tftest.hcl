# terraform test (plan only): every input validation of the module refuses a bad value,
# and the limits that depend on other inputs accept what they should.

mock_provider "aws" {
  mock_data "aws_caller_identity" {
    defaults = { account_id = "123456789012" }
  }
  mock_data "aws_partition" {
    defaults = { partition = "aws", dns_suffix = "amazonaws.com" }
  }
  mock_data "aws_region" {
    defaults = { region = "us-east-1" }
  }
  mock_data "aws_iam_policy_document" {
    defaults = { json = "{\"Version\":\"2012-10-17\",\"Statement\":[]}" }
  }
}

# Lambda zips are modules/lambda-function's business (its own tests): no packaging here.
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
  redshift = {
    database           = "dev"
    cluster_identifier = "wh"
    db_user            = "etl"
  }
}


run "rejects_an_unknown_strategy" {
  command = plan
  variables {
    strategy = "fastest"
  }
  expect_failures = [var.strategy]
}

run "rejects_an_unknown_completion" {
  command = plan
  variables {
    poll = { completion = "callback" }
  }
  expect_failures = [var.poll]
}

run "rejects_a_fallback_under_a_second" {
  command = plan
  variables {
    poll = { fallback_seconds = 0 }
  }
  expect_failures = [var.poll]
}

run "rejects_a_timeout_shorter_than_the_poll_interval" {
  command = plan
  variables {
    poll = { completion = "poll", poll_interval_seconds = 60, timeout_seconds = 30 }
  }
  expect_failures = [var.poll]
}

# 54 characters: too long to prefix <name>-completion (64 at most) with events, fine
# when polling (64 at most for a level strategy).
run "rejects_a_name_too_long_for_the_completion_resources" {
  command = plan
  variables {
    name = "a-dag-name-of-fifty-four-characters-0123456789abcdefgh"
  }
  expect_failures = [var.name]
}

run "accepts_the_same_name_when_polling" {
  command = plan
  variables {
    name = "a-dag-name-of-fifty-four-characters-0123456789abcdefgh"
    poll = { completion = "poll" }
  }
  assert {
    condition     = length(var.name) == 54 && output.state_machine_arn_static == "arn:aws:states:us-east-1:123456789012:stateMachine:${var.name}"
    error_message = "A level strategy that polls takes names up to 64 characters."
  }
}

run "rejects_a_name_too_long_for_the_dependency_resources" {
  command = plan
  variables {
    strategy = "dependency"
    name     = "a-dag-name-of-fifty-seven-characters-0123456789abcdefghij"
    poll     = { completion = "poll" }
  }
  expect_failures = [var.name]
}

run "rejects_a_name_with_spaces" {
  command = plan
  variables {
    name = "my dag"
  }
  expect_failures = [var.name]
}

run "rejects_more_than_40_concurrent_tasks_per_map" {
  command = plan
  variables {
    max_concurrency = 41
  }
  expect_failures = [var.max_concurrency]
}

run "accepts_more_concurrent_tasks_with_dependency" {
  command = plan
  variables {
    strategy        = "dependency"
    max_concurrency = 41
  }
  assert {
    condition     = length(output.tasks) == 4
    error_message = "strategy = dependency allows up to 500 tasks at once."
  }
}

run "rejects_a_missing_sql_dir" {
  command = plan
  variables {
    sql_dir = "tests/no-such-dir"
  }
  expect_failures = [var.sql_dir]
}

run "rejects_an_upper_case_schema" {
  command = plan
  variables {
    sql_schema = "Agg"
  }
  expect_failures = [var.sql_schema]
}

run "rejects_an_external_table_without_a_schema" {
  command = plan
  variables {
    external_tables = ["events"]
  }
  expect_failures = [var.external_tables]
}

run "rejects_a_bad_search_path_entry" {
  command = plan
  variables {
    search_path = ["Public"]
  }
  expect_failures = [var.search_path]
}

run "rejects_two_targets" {
  command = plan
  variables {
    redshift = {
      database           = "dev"
      cluster_identifier = "wh"
      db_user            = "etl"
      workgroup_name     = "wg"
      workgroup_arn      = "arn:aws:redshift-serverless:us-east-1:123456789012:workgroup/0f1e"
    }
  }
  expect_failures = [var.redshift]
}

run "rejects_a_cluster_without_credentials" {
  command = plan
  variables {
    redshift = { database = "dev", cluster_identifier = "wh" }
  }
  expect_failures = [var.redshift]
}

run "rejects_a_workgroup_without_its_arn" {
  command = plan
  variables {
    redshift = { database = "dev", workgroup_name = "wg" }
  }
  expect_failures = [var.redshift]
}

run "rejects_a_run_timeout_under_a_minute" {
  command = plan
  variables {
    strategy            = "dependency"
    run_timeout_seconds = 30
  }
  expect_failures = [var.run_timeout_seconds]
}

run "rejects_a_fractional_task_timeout" {
  command = plan
  variables {
    strategy                       = "dependency"
    task_execution_timeout_seconds = 1.5
  }
  expect_failures = [var.task_execution_timeout_seconds]
}

run "rejects_task_logging_off" {
  command = plan
  variables {
    strategy      = "dependency"
    logging_level = "OFF"
  }
  expect_failures = [var.logging_level]
}

run "rejects_run_results_kept_under_a_day" {
  command = plan
  variables {
    strategy                    = "dependency"
    run_results_expiration_days = 0
  }
  expect_failures = [var.run_results_expiration_days]
}

run "rejects_a_kms_key_id_instead_of_an_arn" {
  command = plan
  variables {
    kms_key_arn = "1234abcd-12ab-34cd-56ef-1234567890ab"
  }
  expect_failures = [var.kms_key_arn]
}

run "rejects_an_alias_arn_as_kms_key_arn" {
  command = plan
  variables {
    kms_key_arn = "arn:aws-cn:kms:cn-north-1:123456789012:alias/data"
  }
  expect_failures = [var.kms_key_arn]
}

run "rejects_the_old_name_of_logging_level" {
  command = plan
  variables {
    task_logging_level = "ALL"
  }
  expect_failures = [var.task_logging_level]
}

run "rejects_a_retention_cloudwatch_logs_does_not_offer" {
  command = plan
  variables {
    cloudwatch_logs_retention_in_days = 45
  }
  expect_failures = [var.cloudwatch_logs_retention_in_days]
}

run "rejects_a_secret_key_without_a_secret" {
  command = plan
  variables {
    redshift = {
      database           = "dev"
      cluster_identifier = "wh"
      db_user            = "etl"
      secret_kms_key_arn = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    }
  }
  expect_failures = [var.redshift]
}

run "rejects_an_alias_as_the_secret_key" {
  command = plan
  variables {
    redshift = {
      database           = "dev"
      cluster_identifier = "wh"
      secret_arn         = "arn:aws:secretsmanager:us-east-1:123456789012:secret:dwh-AbCdEf"
      secret_kms_key_arn = "arn:aws:kms:us-east-1:123456789012:alias/dwh"
    }
  }
  expect_failures = [var.redshift]
}
