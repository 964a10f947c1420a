# terraform test (plan only) of strategy = "dependency": the planner really runs on
# tests/sql (the local provider is not mocked; see level.tftest.hcl), only aws is
# mocked. Expected values are derived by hand from tests/sql: events_daily ->
# revenue_daily -> kpi and events_by_type -> kpi, unit durations.

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

run "dependency_makes_the_run_state_the_runtime_and_two_machines" {
  command = plan

  variables {
    strategy            = "dependency"
    run_timeout_seconds = 7200
  }

  assert {
    condition     = output.state_machine_arn_static == "arn:aws:states:us-east-1:123456789012:stateMachine:dag" && module.coordinator.state_machine_arn_static == output.state_machine_arn_static
    error_message = "The state machine to start is the coordinator, <name>."
  }
  assert {
    condition     = module.task_machine.state_machine_arn_static == "arn:aws:states:us-east-1:123456789012:stateMachine:dag-task" && module.runtime.function_name == "dag-runtime"
    error_message = "A task machine <name>-task and a runtime Lambda <name>-runtime."
  }
  assert {
    condition     = [for s in local.operator_statements : s.Sid] == ["StartRuns", "FollowRuns", "ReadRunResults"] && local.operator_statements[0].Resource == output.state_machine_arn_static && local.operator_statements[1].Resource == "arn:aws:states:us-east-1:123456789012:execution:dag:*"
    error_message = "The operator policy starts and follows the coordinator's runs and reads their documents; without a key, no kms statement."
  }
  assert {
    condition     = module.state_machine.state_machine_arn_static == null && output.stages == null
    error_message = "No level state machine and no stages."
  }
  assert {
    condition     = aws_dynamodb_table.runs[0].name == "dag-runs" && aws_dynamodb_table.runs[0].hash_key == "pk" && aws_dynamodb_table.runs[0].range_key == "sk" && aws_dynamodb_table.runs[0].server_side_encryption[0].enabled
    error_message = "An encrypted runs table <name>-runs keyed by run id and item."
  }
  assert {
    condition     = aws_s3_bucket_public_access_block.plan[0].block_public_acls && aws_s3_bucket_public_access_block.plan[0].restrict_public_buckets && one(one(aws_s3_bucket_server_side_encryption_configuration.plan[0].rule).apply_server_side_encryption_by_default).sse_algorithm == "AES256"
    error_message = "The plan bucket is private and encrypted (SSE-S3 without a KMS key)."
  }
  assert {
    condition     = aws_s3_object.plan[0].key == "dag-aggregate/plans/${sha256(aws_s3_object.plan[0].content)}.json" && output.plan_key == aws_s3_object.plan[0].key
    error_message = "The plan document's key names the SHA-256 of its content."
  }
  assert {
    condition     = keys(jsondecode(aws_s3_object.plan[0].content).tasks) == ["events_by_type", "events_daily", "kpi", "revenue_daily"] && jsondecode(aws_s3_object.plan[0].content).tasks.kpi.parents == ["events_by_type", "revenue_daily"]
    error_message = "The plan document holds every task with its reduced parents."
  }
  assert {
    condition     = output.priorities == { events_by_type = 2, events_daily = 3, kpi = 1, revenue_daily = 2 }
    error_message = "Priority = the longest remaining path: events_daily -> revenue_daily -> kpi is 3."
  }
  assert {
    condition     = jsondecode(output.definition).States.Run.Resource == "arn:aws:states:::lambda:invoke.waitForTaskToken" && jsondecode(output.definition).States.Run.Parameters.FunctionName == "arn:aws:lambda:us-east-1:123456789012:function:dag-runtime" && jsondecode(output.definition).States.Run.TimeoutSeconds == 7200
    error_message = "The coordinator waits on a token for the runtime Lambda, at most run_timeout_seconds."
  }
  assert {
    condition     = strcontains(output.task_definition, "\"WithEvent\":true") && strcontains(output.task_definition, "arn:aws:lambda:us-east-1:123456789012:function:dag-runtime") && strcontains(output.task_definition, "arn:aws:lambda:us-east-1:123456789012:function:dag-completion")
    error_message = "Task executions run their statement WithEvent, park through the completion function and report to the runtime."
  }
  assert {
    condition     = jsondecode(aws_cloudwatch_event_rule.task_ended[0].event_pattern).detail.stateMachineArn == [module.task_machine.state_machine_arn_static]
    error_message = "Task executions that end without reporting are caught for the task machine only."
  }
  assert {
    condition     = [for s in local.runtime_policy_statements : s.resources if s.sid == "StartTasks"] == [[module.task_machine.state_machine_arn_static]] && [for s in local.runtime_policy_statements : s.resources if s.sid == "AnswerTheCoordinator"] == [["*"]]
    error_message = "The runtime starts task executions of its own task machine; it answers the coordinator's token on * (AWS gives SendTaskSuccess no resource)."
  }
  assert {
    condition     = contains([for s in local.task_machine_policy_statements : s.sid], "ParkOnCompletionEvents") && output.completion_function_name == "dag-completion"
    error_message = "With event completion the task machine parks through the completion function."
  }
}

run "dependency_with_poll_completion_has_no_completion_resources" {
  command = plan

  variables {
    strategy = "dependency"
    poll     = { completion = "poll" }
  }

  assert {
    condition     = output.token_table_name == null && output.completion_function_name == null && !strcontains(output.task_definition, "WithEvent")
    error_message = "Polling: no token table or completion function, no WithEvent."
  }
  assert {
    condition     = !contains([for s in local.task_machine_policy_statements : s.sid], "ParkOnCompletionEvents")
    error_message = "Polling: the task machine invokes no completion function."
  }
}

run "a_kms_key_encrypts_the_bucket_and_the_table" {
  command = plan

  variables {
    strategy    = "dependency"
    kms_key_arn = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
  }

  assert {
    condition     = one(one(aws_s3_bucket_server_side_encryption_configuration.plan[0].rule).apply_server_side_encryption_by_default).kms_master_key_id == var.kms_key_arn && aws_dynamodb_table.runs[0].server_side_encryption[0].kms_key_arn == var.kms_key_arn
    error_message = "The plan bucket and the runs table use the caller's key."
  }
  assert {
    condition     = [for s in local.runtime_policy_statements : s.resources if s.sid == "UseTheKmsKey"] == [[var.kms_key_arn]]
    error_message = "The runtime may use that key."
  }
  assert {
    condition     = [for s in local.operator_statements : s.Resource if s.Sid == "DecryptRunResults"] == [var.kms_key_arn]
    error_message = "The operator decrypts the run documents with that key."
  }
}

# The alarm counts docs/patterns/dag-aggregate.md gives under "Cost" (alarms created
# with create = true).
run "alarm_count_dependency_with_event_completion" {
  command = plan
  variables {
    alarms   = { create = true }
    strategy = "dependency"
  }
  assert {
    condition     = length(output.alarms) == 22
    error_message = "strategy = dependency with event completion has the 22 alarms the pattern guide prices."
  }
}

run "alarm_count_dependency_with_polls" {
  command = plan
  variables {
    alarms   = { create = true }
    strategy = "dependency"
    poll     = { completion = "poll" }
  }
  assert {
    condition     = length(output.alarms) == 15
    error_message = "strategy = dependency with poll.completion = poll has 15 alarms."
  }
}
