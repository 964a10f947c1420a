# terraform test of the root module (mock providers, nothing reaches AWS): every
# pattern off by default, `create` switching each on, the module field names passed
# through (name, stream_enabled, reconciler_enabled, event_cleanup_enabled, ...), the
# partition reaching the patterns, and the root's own validations. Run from the
# repository root with -test-directory=tests/terraform/root_native by
# tests/terraform/test_native.py. dag_aggregate's planner runs Python at plan time, so
# only its switch and validation are covered here; tests/terraform/test_root_module.py
# plans every pattern for real against LocalStack.

mock_provider "aws" {
  mock_data "aws_partition" {
    defaults = { partition = "aws", dns_suffix = "amazonaws.com" }
  }
  mock_data "aws_region" {
    defaults = { region = "eu-west-1" }
  }
  mock_data "aws_caller_identity" {
    defaults = { account_id = "123456789012" }
  }
  mock_data "aws_iam_policy_document" {
    defaults = { json = "{}" }
  }
  # `command = apply` (the root's outputs are known only after apply): computed ARNs
  # the provider validates on other resources must look like ARNs.
  mock_resource "aws_iam_role" {
    defaults = { arn = "arn:aws:iam::123456789012:role/mock" }
  }
  mock_resource "aws_lambda_function" {
    defaults = { arn = "arn:aws:lambda:eu-west-1:123456789012:function:mock", qualified_arn = "arn:aws:lambda:eu-west-1:123456789012:function:mock:1", invoke_arn = "arn:aws:apigateway:eu-west-1:lambda:path/mock" }
  }
  mock_resource "aws_cloudwatch_event_rule" {
    defaults = { arn = "arn:aws:events:eu-west-1:123456789012:rule/mock" }
  }
  mock_resource "aws_cloudwatch_log_group" {
    defaults = { arn = "arn:aws:logs:eu-west-1:123456789012:log-group:mock" }
  }
  mock_resource "aws_sfn_state_machine" {
    defaults = { arn = "arn:aws:states:eu-west-1:123456789012:stateMachine:mock" }
  }
  mock_resource "aws_sqs_queue" {
    defaults = { arn = "arn:aws:sqs:eu-west-1:123456789012:mock.fifo", url = "https://sqs.eu-west-1.amazonaws.com/123456789012/mock.fifo" }
  }
  mock_resource "aws_dynamodb_table" {
    defaults = { arn = "arn:aws:dynamodb:eu-west-1:123456789012:table/mock", stream_arn = "arn:aws:dynamodb:eu-west-1:123456789012:table/mock/stream/x" }
  }
  mock_resource "aws_s3_bucket" {
    defaults = { arn = "arn:aws:s3:::mock" }
  }
}

mock_provider "local" {
  mock_data "local_command" {
    defaults = { stdout = "{\"filename\": \"x.zip\", \"base64sha256\": \"c2hh\", \"sha256\": \"73\", \"size\": \"1\"}" }
  }
}

variables {
  name_prefix = "orders"
  # The plan-time package is mocked above, so nothing runs Python at plan; at apply,
  # lambda-function's rebuild of each zip (terraform_data.package) would check the
  # real sources against the mocked hash. These runs check the root's wiring, not
  # packaging (tests/smoke applies a saved plan and rebuilds for real): `true` takes
  # the rebuild's arguments and succeeds.
  python_executable = "true"
}

run "everything_is_off_by_default" {
  command = apply

  assert {
    condition     = output.job_poller == null && output.sqs_throttle == null && output.semaphore == null && output.dag_aggregate == null && output.status_table == null
    error_message = "Every pattern is off unless its create is true."
  }
  assert {
    condition     = output.state_machine_arns == {}
    error_message = "No state machine without a pattern."
  }
}

run "status_table_default_name" {
  command = apply

  variables {
    status_table = { create = true }
  }

  assert {
    condition     = output.status_table.table_name == "orders-tasks" && output.status_table.table_stream_arn == null
    error_message = "The status table is <name_prefix>-tasks, without a stream by default."
  }
}

run "status_table_takes_the_module_field_names" {
  command = apply

  variables {
    status_table = { create = true, name = "orders-ledger", stream_enabled = true, stream_view_type = "KEYS_ONLY" }
  }

  assert {
    condition     = output.status_table.table_name == "orders-ledger" && output.status_table.table_stream_arn != null
    error_message = "status_table.name names the table; stream_enabled reaches the module."
  }
}

run "semaphore_defaults" {
  command = apply

  variables {
    semaphore = {
      create                    = true
      strategy                  = "dynamodb"
      holder_state_machine_arns = ["arn:aws:states:eu-west-1:123456789012:stateMachine:worker"]
    }
  }

  assert {
    condition     = output.semaphore.table_name == "orders-semaphore-semaphore" && output.semaphore.reconciler_function_name != null && output.semaphore.cleanup_function_name != null
    error_message = "The semaphore is <name_prefix>-semaphore, with its reconciler and event cleanup on by default."
  }
}

run "semaphore_switches_reach_the_module" {
  command = apply

  variables {
    semaphore = {
      create                    = true
      name                      = "writers"
      strategy                  = "dynamodb"
      holder_state_machine_arns = ["arn:aws:states:eu-west-1:123456789012:stateMachine:worker"]
      reconciler_enabled        = false
      event_cleanup_enabled     = false
      create_wrapper            = true
      target_state_machine_arn  = "arn:aws:states:eu-west-1:123456789012:stateMachine:target"
    }
  }

  assert {
    condition     = output.semaphore.reconciler_function_name == null && output.semaphore.cleanup_function_name == null
    error_message = "reconciler_enabled and event_cleanup_enabled reach the module."
  }
  assert {
    condition     = output.semaphore.wrapper_state_machine_arn_static == "arn:aws:states:eu-west-1:123456789012:stateMachine:writers-wrapper" && output.state_machine_arns.semaphore_wrapper != null
    error_message = "create_wrapper makes the wrapper, named after semaphore.name."
  }
}

run "sqs_throttle_switch" {
  command = apply

  variables {
    sqs_throttle = {
      create                   = true
      target_state_machine_arn = "arn:aws:states:eu-west-1:123456789012:stateMachine:etl"
      schedule_enabled         = false
    }
  }

  assert {
    condition     = output.sqs_throttle.queue_name == "orders-throttle.fifo" && output.sqs_throttle.starter_function_name == "orders-throttle-starter"
    error_message = "The throttle is <name_prefix>-throttle."
  }
}

run "job_poller_switch" {
  command = apply

  variables {
    job_poller = { create = true }
  }

  assert {
    condition     = output.job_poller != null && output.state_machine_arns.job_poller != null
    error_message = "job_poller.create makes the job poller."
  }
}

run "partition_reaches_the_patterns" {
  command = apply

  override_data {
    target = module.semaphore[0].data.aws_partition.current
    values = { partition = "aws-cn", dns_suffix = "amazonaws.com.cn" }
  }
  override_data {
    target = module.semaphore[0].data.aws_region.current
    values = { region = "cn-north-1" }
  }

  variables {
    semaphore = {
      create                   = true
      strategy                 = "dynamodb"
      create_wrapper           = true
      target_state_machine_arn = "arn:aws-cn:states:cn-north-1:123456789012:stateMachine:target"
    }
  }

  assert {
    condition     = output.semaphore.wrapper_state_machine_arn_static == "arn:aws-cn:states:cn-north-1:123456789012:stateMachine:orders-semaphore-wrapper"
    error_message = "The semaphore's static ARNs take the partition through the root."
  }
  assert {
    condition     = alltrue([for s in jsondecode(output.semaphore.wrapper_definition).States : startswith(s.Resource, "arn:aws-cn:states:::") if s.Type == "Task"])
    error_message = "The wrapper's integrations are in aws-cn."
  }
}

run "rejects_a_throttle_without_a_target" {
  command = plan
  variables {
    sqs_throttle = { create = true }
  }
  expect_failures = [var.sqs_throttle]
}

run "rejects_a_dag_without_sql_dir_and_redshift" {
  command = plan
  variables {
    dag_aggregate = { create = true }
  }
  expect_failures = [var.dag_aggregate]
}

run "rejects_a_wrapper_without_a_target" {
  command = plan
  variables {
    semaphore = { create = true, create_wrapper = true }
  }
  expect_failures = [var.semaphore]
}

run "rejects_a_bad_table_name" {
  command = plan
  variables {
    status_table = { create = true, name = "a b" }
  }
  expect_failures = [var.status_table]
}

run "rejects_a_bad_prefix" {
  command = plan
  variables {
    name_prefix = "Orders"
  }
  expect_failures = [var.name_prefix]
}

run "rejects_a_key_that_is_not_an_arn" {
  command = plan
  variables {
    kms_key_arn = "alias/data"
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

# --- Fields renamed or removed in 1.0.0: setting an old one fails the plan ----------
# (Terraform would drop an undeclared field silently: `enabled = true` would become
# create = false.) Each object with every old field UPGRADING.md's table lists for it.

run "rejects_job_poller_fields_renamed_in_1_0" {
  command = plan
  variables {
    job_poller = { create = true, enabled = true, lambda_bundle = "job-poller" }
  }
  expect_failures = [var.job_poller]
}

run "rejects_sqs_throttle_fields_renamed_in_1_0" {
  command = plan
  variables {
    sqs_throttle = {
      create                                = true
      target_state_machine_arn              = "arn:aws:states:eu-west-1:123456789012:stateMachine:work"
      enabled                               = true
      max_concurrent_executions             = 3
      sqs_kms_data_key_reuse_period_seconds = 600
    }
  }
  expect_failures = [var.sqs_throttle]
}

run "rejects_semaphore_fields_renamed_in_1_0" {
  command = plan
  variables {
    semaphore = {
      create                 = true
      enabled                = true
      semaphore_limit        = 3
      enable_reconciler      = true
      enable_event_cleanup   = false
      point_in_time_recovery = true
      deletion_protection    = true
    }
  }
  expect_failures = [var.semaphore]
}

run "rejects_dag_aggregate_fields_renamed_in_1_0" {
  command = plan
  variables {
    dag_aggregate = {
      enabled                                   = true
      task_logging_level                        = "ALL"
      runs_table_point_in_time_recovery_enabled = false
    }
  }
  expect_failures = [var.dag_aggregate]
}

run "rejects_status_table_fields_renamed_in_1_0" {
  command = plan
  variables {
    status_table = {
      create                               = true
      enabled                              = true
      table_name                           = "tasks"
      table_billing_mode                   = "PROVISIONED"
      table_provisioned_capacity           = { read = 5, write = 5 }
      table_point_in_time_recovery_enabled = false
      table_deletion_protection_enabled    = true
      table_ttl_enabled                    = false
      table_stream_enabled                 = true
      table_stream_view_type               = "NEW_IMAGE"
    }
  }
  expect_failures = [var.status_table]
}

run "an_old_field_alone_fails_too" {
  # The 0.x switch on its own: without the check this plans the pattern away.
  command = plan
  variables {
    status_table = { enabled = true }
  }
  expect_failures = [var.status_table]
}
