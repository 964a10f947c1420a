# terraform test (plan only, mock providers): the resources event completion creates,
# its plan-time outputs, the create switch and every input validation. Run by
# tests/terraform/test_native.py (make test). Partitions: partition.tftest.hcl.

mock_provider "aws" {
  mock_data "aws_caller_identity" {
    defaults = { account_id = "123456789012" }
  }
  mock_data "aws_partition" {
    defaults = { partition = "aws", dns_suffix = "amazonaws.com" }
  }
  mock_data "aws_region" {
    defaults = { region = "eu-west-1" }
  }
  mock_data "aws_iam_policy_document" {
    defaults = { json = "{\"Version\":\"2012-10-17\",\"Statement\":[]}" }
  }
}

# The function's zip is built by modules/lambda-function (its own tests); here its
# hash only has to be a value.
mock_provider "local" {
  mock_data "local_command" {
    defaults = { stdout = "{\"base64sha256\": \"bW9jaw==\"}" }
  }
}

variables {
  name = "stmts"
  event_pattern = jsonencode({
    source        = ["aws.redshift-data"]
    "detail-type" = ["Redshift Data Statement Status Change"]
  })
  job_id_path       = "$.detail.statementId"
  status_path       = "$.detail.state"
  terminal_statuses = ["FINISHED", "FAILED", "ABORTED"]
}

run "creates_the_table_the_function_and_the_rule" {
  command = plan

  assert {
    condition     = aws_dynamodb_table.tokens[0].name == "stmts-tokens" && aws_dynamodb_table.tokens[0].hash_key == "pk" && aws_dynamodb_table.tokens[0].billing_mode == "PAY_PER_REQUEST"
    error_message = "One on-demand token table <name>-tokens keyed by the job id."
  }
  assert {
    condition     = aws_dynamodb_table.tokens[0].ttl[0].attribute_name == "expires_at" && aws_dynamodb_table.tokens[0].ttl[0].enabled
    error_message = "Tokens and recorded job ends expire by TTL on expires_at."
  }
  assert {
    condition     = aws_dynamodb_table.tokens[0].server_side_encryption[0].enabled
    error_message = "The token table is encrypted at rest."
  }
  assert {
    condition     = aws_cloudwatch_event_rule.completion[0].name == "stmts-completion" && jsondecode(aws_cloudwatch_event_rule.completion[0].event_pattern) == jsondecode(var.event_pattern)
    error_message = "The rule <name>-completion matches exactly the caller's event pattern."
  }
  assert {
    condition     = aws_cloudwatch_event_target.completion[0].rule == "stmts-completion" && aws_cloudwatch_event_target.completion[0].retry_policy[0].maximum_retry_attempts == 20
    error_message = "The rule targets the function and retries deliveries."
  }
  assert {
    condition     = aws_lambda_permission.completion[0].principal == data.aws_service_principal.events.name && aws_lambda_permission.completion[0].action == "lambda:InvokeFunction"
    error_message = "EventBridge may invoke the function: the principal is data.aws_service_principal.events's (a random value under this mock, so a literal fails)."
  }
  assert {
    condition     = output.rule_name == "stmts-completion" && output.table_name == "stmts-tokens"
    error_message = "Names are known at plan time."
  }
}

run "the_function_may_update_tokens_and_resume_tasks_only" {
  command = plan

  assert {
    condition     = module.function.function_name == "stmts-completion"
    error_message = "The function is <name>-completion."
  }
  assert {
    condition     = local.function_policy_statements[0].resources == ["arn:aws:dynamodb:eu-west-1:123456789012:table/stmts-tokens"] && local.function_policy_statements[1].resources == ["*"]
    error_message = "The function may update its own table, and resume tasks on * (AWS cannot scope states:SendTaskSuccess to a state machine)."
  }
  assert {
    condition     = [for s in local.function_policy_statements : s.actions] == [["dynamodb:UpdateItem"], ["states:SendTaskSuccess"]]
    error_message = "Without a KMS key: update tokens and resume tasks, nothing else."
  }
}

run "static_arns_and_policy_statements_for_callers" {
  command = plan

  assert {
    condition     = output.table_arn == "arn:aws:dynamodb:eu-west-1:123456789012:table/stmts-tokens"
    error_message = "The token table's ARN is known at plan time."
  }
  assert {
    condition     = output.function_arn == "arn:aws:lambda:eu-west-1:123456789012:function:stmts-completion"
    error_message = "The function's ARN is known at plan time (a park task's FunctionName)."
  }
  assert {
    condition     = jsonencode(output.park_policy_statements) == jsonencode([{ sid = "ParkOnCompletionEvents", actions = ["lambda:InvokeFunction"], resources = [output.function_arn, "${output.function_arn}:*"] }])
    error_message = "A waiting state machine may invoke the function and its versions, nothing else."
  }
  assert {
    condition     = jsonencode(output.token_writer_policy_statements) == jsonencode([{ sid = "ParkTokens", actions = ["dynamodb:UpdateItem"], resources = [output.table_arn] }])
    error_message = "A function that parks its own tokens may update the token table only."
  }
}

run "a_kms_key_encrypts_the_table_and_may_be_used_by_the_function" {
  command = plan

  variables {
    kms_key_arn = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
  }

  assert {
    condition     = aws_dynamodb_table.tokens[0].server_side_encryption[0].kms_key_arn == var.kms_key_arn
    error_message = "The table uses the caller's key."
  }
  assert {
    condition     = jsonencode(local.function_policy_statements[2]) == jsonencode({ sid = "UseTheKmsKey", actions = ["kms:Decrypt"], resources = [var.kms_key_arn] })
    error_message = "The function may use the key, and only that key."
  }
  assert {
    condition     = jsonencode(output.token_writer_policy_statements[1]) == jsonencode({ sid = "UseTheTokenTableKey", actions = ["kms:Decrypt"], resources = [var.kms_key_arn] })
    error_message = "A function that parks tokens itself gets kms:Decrypt on the token table's key (DynamoDB asks the caller for it on every write)."
  }
}

run "create_false_creates_nothing" {
  command = plan

  variables {
    create = false
  }

  assert {
    condition     = length(aws_dynamodb_table.tokens) == 0 && length(aws_cloudwatch_event_rule.completion) == 0 && length(aws_cloudwatch_event_target.completion) == 0 && length(aws_lambda_permission.completion) == 0
    error_message = "create = false creates no table, rule, target or permission."
  }
  assert {
    condition     = module.function.function_name == null && output.table_arn == null && output.function_arn == null
    error_message = "create = false creates no function, and the ARN outputs are null."
  }
  assert {
    condition     = length(output.park_policy_statements) == 0 && length(output.token_writer_policy_statements) == 0
    error_message = "Nothing to grant when nothing is created."
  }
}

# <name>-completion names the function, its role and the rule: at most 64 characters.
run "accepts_a_name_of_53_characters" {
  command = plan
  variables {
    name = "an-event-completion-name-of-fifty-three-characters-xy"
  }
  assert {
    condition     = module.function.function_name == "an-event-completion-name-of-fifty-three-characters-xy-completion" && length(module.function.function_name) == 64
    error_message = "53 characters leave <name>-completion at Lambda's 64."
  }
}

run "rejects_a_name_too_long_to_prefix_its_resources" {
  command = plan
  variables {
    name = "an-event-completion-name-of-fifty-three-characters-xyz"
  }
  expect_failures = [var.name]
}

run "rejects_an_event_pattern_that_is_not_a_json_object" {
  command = plan
  variables {
    event_pattern = "[\"aws.redshift-data\"]"
  }
  expect_failures = [var.event_pattern]
}

run "rejects_a_job_id_path_that_is_not_a_dotted_path" {
  command = plan
  variables {
    job_id_path = "detail.statementId"
  }
  expect_failures = [var.job_id_path]
}

run "rejects_a_status_path_with_brackets" {
  command = plan
  variables {
    status_path = "$.detail['state']"
  }
  expect_failures = [var.status_path]
}

run "rejects_no_terminal_status" {
  command = plan
  variables {
    terminal_statuses = []
  }
  expect_failures = [var.terminal_statuses]
}

# waiting_state_machine_arns is deprecated and ignored: every other run leaves it out,
# and a caller that still passes it (any list: it is not validated) plans the same grant.
run "accepts_and_ignores_the_deprecated_waiting_state_machine_arns" {
  command = plan
  variables {
    waiting_state_machine_arns = ["arn:aws:states:eu-west-1:123456789012:stateMachine:waiter", "not-an-arn"]
  }

  assert {
    condition     = [for s in local.function_policy_statements : s.resources] == [["arn:aws:dynamodb:eu-west-1:123456789012:table/stmts-tokens"], ["*"]]
    error_message = "waiting_state_machine_arns changes nothing: the function updates its table and resumes tasks on *."
  }
}

run "rejects_a_token_ttl_under_an_hour" {
  command = plan
  variables {
    token_ttl_seconds = 600
  }
  expect_failures = [var.token_ttl_seconds]
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

run "rejects_a_retention_cloudwatch_logs_does_not_offer" {
  command = plan
  variables {
    cloudwatch_logs_retention_in_days = 45
  }
  expect_failures = [var.cloudwatch_logs_retention_in_days]
}

run "rejects_a_runtime_that_is_not_a_supported_python" {
  command = plan
  variables {
    lambda_runtime = "nodejs22.x"
  }
  expect_failures = [var.lambda_runtime]
}

run "rejects_memory_outside_lambdas_range" {
  command = plan
  variables {
    lambda_memory_size = 64
  }
  expect_failures = [var.lambda_memory_size]
}
