# terraform test (plan, mock providers): validations, the create switch, queue
# encryption with and without kms_key_arn, the schedule switch, target_role_arn
# (across accounts) and partition-aware ARNs in aws, aws-cn and aws-us-gov.
# Run: make test (tests/terraform/test_native.py).

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
}

mock_provider "local" {
  mock_data "local_command" {
    defaults = { stdout = "{\"filename\": \"x.zip\", \"base64sha256\": \"c2hh\", \"sha256\": \"73\", \"size\": \"1\"}" }
  }
}

variables {
  name                     = "etl-throttle"
  target_state_machine_arn = "arn:aws:states:eu-west-1:123456789012:stateMachine:etl"
}

run "creates_fifo_queues_ledger_and_schedule" {
  command = plan

  assert {
    condition     = aws_sqs_queue.this[0].name == "etl-throttle.fifo" && aws_sqs_queue.this[0].fifo_queue && aws_sqs_queue.dlq[0].name == "etl-throttle-dlq.fifo"
    error_message = "A FIFO request queue and its FIFO dead-letter queue, named after var.name."
  }
  assert {
    condition     = aws_dynamodb_table.ledger[0].name == "etl-throttle-ledger" && aws_dynamodb_table.ledger[0].server_side_encryption[0].enabled
    error_message = "The ledger table is encrypted at rest."
  }
  assert {
    condition     = aws_cloudwatch_event_rule.starter[0].state == "ENABLED" && aws_cloudwatch_event_rule.starter[0].schedule_expression == "rate(1 minute)"
    error_message = "The starter runs every minute by default."
  }
  assert {
    condition     = output.max_concurrency == 10
    error_message = "The limit is an output."
  }
}

run "no_key_keeps_sqs_managed_encryption" {
  command = plan

  assert {
    condition     = aws_sqs_queue.this[0].sqs_managed_sse_enabled && aws_sqs_queue.dlq[0].sqs_managed_sse_enabled
    error_message = "Without kms_key_arn both queues use SSE-SQS."
  }
  assert {
    condition     = aws_sqs_queue.this[0].kms_master_key_id == null && aws_sqs_queue.dlq[0].kms_master_key_id == null
    error_message = "Without kms_key_arn no KMS key is set on the queues."
  }
  assert {
    condition     = length(data.aws_iam_policy_document.producer.statement) == 1
    error_message = "Producers need no KMS permission without a key."
  }
}

run "kms_key_arn_encrypts_the_queues" {
  command = plan

  variables {
    kms_key_arn                       = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    kms_data_key_reuse_period_seconds = 900
  }

  assert {
    condition     = aws_sqs_queue.this[0].kms_master_key_id == "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab" && aws_sqs_queue.dlq[0].kms_master_key_id == "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    error_message = "kms_key_arn encrypts both queues."
  }
  assert {
    condition     = aws_sqs_queue.this[0].kms_data_key_reuse_period_seconds == 900 && aws_sqs_queue.dlq[0].kms_data_key_reuse_period_seconds == 900
    error_message = "With a key, the data key reuse period applies to both queues."
  }
  assert {
    condition     = aws_dynamodb_table.ledger[0].server_side_encryption[0].kms_key_arn == "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    error_message = "The same key encrypts the ledger."
  }
  assert {
    condition     = data.aws_iam_policy_document.producer.statement[1].sid == "EncryptRequests" && data.aws_iam_policy_document.producer.statement[1].resources == toset(["arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"])
    error_message = "Producers may use the queue's key, and only it."
  }
}

run "schedule_can_be_paused" {
  command = plan

  variables {
    schedule_enabled = false
  }

  assert {
    condition     = aws_cloudwatch_event_rule.starter[0].state == "DISABLED"
    error_message = "schedule_enabled = false disables the rule (requests keep queuing)."
  }
}

run "same_account_target_policy" {
  command = plan

  assert {
    condition     = [for s in data.aws_iam_policy_document.target_role.statement : s.resources] == [toset(["arn:aws:states:eu-west-1:123456789012:stateMachine:etl"]), toset(["arn:aws:states:eu-west-1:123456789012:execution:etl:*"])]
    error_message = "The starter may start and list the target, and describe its executions."
  }
}

run "target_role_in_another_account" {
  command = plan

  variables {
    target_state_machine_arn = "arn:aws:states:us-east-1:210987654321:stateMachine:etl"
    target_role_arn          = "arn:aws:iam::210987654321:role/throttle-target"
  }

  assert {
    condition     = [for s in data.aws_iam_policy_document.target_role.statement : s.resources] == [toset(["arn:aws:states:us-east-1:210987654321:stateMachine:etl"]), toset(["arn:aws:states:us-east-1:210987654321:execution:etl:*"])]
    error_message = "What the role in the target's account must allow: the target's region and account, from its ARN."
  }
  assert {
    condition     = one(one(data.aws_iam_policy_document.target_role_trust.statement).principals).identifiers == toset(["arn:aws:iam::123456789012:role/etl-throttle-starter"])
    error_message = "The role in the other account trusts the starter's role in this account."
  }
}

run "arns_follow_the_partition_aws_cn" {
  command = plan

  # As terraform-provider-aws computes it in this partition (service_principal_data_source.go).
  override_data {
    target = data.aws_service_principal.events
    values = { name = "events.amazonaws.com", suffix = "amazonaws.com" }
  }

  override_data {
    target = data.aws_partition.current
    values = { partition = "aws-cn", dns_suffix = "amazonaws.com.cn" }
  }
  override_data {
    target = data.aws_region.current
    values = { region = "cn-north-1" }
  }

  variables {
    target_state_machine_arn = "arn:aws-cn:states:cn-north-1:123456789012:stateMachine:etl"
  }

  assert {
    condition     = one(data.aws_iam_policy_document.producer.statement).resources == toset(["arn:aws-cn:sqs:cn-north-1:123456789012:etl-throttle.fifo"])
    error_message = "The producer policy's queue ARN takes the partition from aws_partition."
  }
  assert {
    condition     = jsondecode(aws_sqs_queue.dlq[0].redrive_allow_policy).sourceQueueArns == ["arn:aws-cn:sqs:cn-north-1:123456789012:etl-throttle.fifo"]
    error_message = "Only the request queue (static aws-cn ARN) may use the DLQ."
  }
  assert {
    condition     = one(one(data.aws_iam_policy_document.target_role_trust.statement).principals).identifiers == toset(["arn:aws-cn:iam::123456789012:role/etl-throttle-starter"])
    error_message = "The trust policy's role ARN takes the partition."
  }
  assert {
    condition     = [for s in data.aws_iam_policy_document.target_role.statement : s.resources][1] == toset(["arn:aws-cn:states:cn-north-1:123456789012:execution:etl:*"])
    error_message = "The execution ARNs take the partition."
  }
  assert {
    condition     = aws_lambda_permission.schedule[0].principal == "events.amazonaws.com"
    error_message = "EventBridge's principal comes from data.aws_service_principal (events.amazonaws.com here too)."
  }
}

run "arns_follow_the_partition_aws_us_gov" {
  command = plan

  # As terraform-provider-aws computes it in this partition (service_principal_data_source.go).
  override_data {
    target = data.aws_service_principal.events
    values = { name = "events.amazonaws.com", suffix = "amazonaws.com" }
  }

  override_data {
    target = data.aws_partition.current
    values = { partition = "aws-us-gov", dns_suffix = "amazonaws.com" }
  }
  override_data {
    target = data.aws_region.current
    values = { region = "us-gov-west-1" }
  }

  variables {
    target_state_machine_arn = "arn:aws-us-gov:states:us-gov-west-1:123456789012:stateMachine:etl"
  }

  assert {
    condition     = one(data.aws_iam_policy_document.producer.statement).resources == toset(["arn:aws-us-gov:sqs:us-gov-west-1:123456789012:etl-throttle.fifo"])
    error_message = "The producer policy's queue ARN takes the partition from aws_partition."
  }
  assert {
    condition     = one(one(data.aws_iam_policy_document.target_role_trust.statement).principals).identifiers == toset(["arn:aws-us-gov:iam::123456789012:role/etl-throttle-starter"])
    error_message = "The trust policy's role ARN takes the partition."
  }
  assert {
    condition     = aws_lambda_permission.schedule[0].principal == "events.amazonaws.com"
    error_message = "EventBridge's principal comes from data.aws_service_principal (events.amazonaws.com here too)."
  }
}

run "create_false_makes_nothing" {
  command = plan

  variables {
    create = false
  }

  assert {
    condition     = length(aws_sqs_queue.this) + length(aws_sqs_queue.dlq) + length(aws_dynamodb_table.ledger) + length(aws_cloudwatch_event_rule.starter) + length(aws_cloudwatch_event_target.starter) + length(aws_lambda_permission.schedule) + length(aws_lambda_function_event_invoke_config.starter) == 0
    error_message = "create = false must create no resource."
  }
  assert {
    condition     = output.producer_policy_json == null && output.queue_url == null && output.starter_function_name == null
    error_message = "Outputs are null when nothing is created."
  }
}

run "rejects_a_target_that_is_not_a_state_machine_arn" {
  command = plan
  variables {
    target_state_machine_arn = "arn:aws:lambda:eu-west-1:123456789012:function:etl"
  }
  expect_failures = [var.target_state_machine_arn]
}

run "rejects_a_target_role_that_is_not_a_role_arn" {
  command = plan
  variables {
    target_role_arn = "arn:aws:iam::123456789012:user/someone"
  }
  expect_failures = [var.target_role_arn]
}

run "rejects_a_zero_limit" {
  command = plan
  variables {
    max_concurrency = 0
  }
  expect_failures = [var.max_concurrency]
}

run "rejects_a_cron_schedule" {
  command = plan
  variables {
    schedule_expression = "cron(0 * * * ? *)"
  }
  expect_failures = [var.schedule_expression]
}

run "rejects_a_key_id_instead_of_an_arn" {
  command = plan
  variables {
    kms_key_arn = "alias/queues"
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

run "rejects_a_too_short_data_key_reuse_period" {
  command = plan
  variables {
    kms_data_key_reuse_period_seconds = 30
  }
  expect_failures = [var.kms_data_key_reuse_period_seconds]
}

run "rejects_a_bad_name" {
  command = plan
  variables {
    name = "Throttle"
  }
  expect_failures = [var.name]
}

run "rejects_the_old_name_of_max_concurrency" {
  command = plan
  variables {
    max_concurrent_executions = 3
  }
  expect_failures = [var.max_concurrent_executions]
}

run "rejects_a_retention_cloudwatch_logs_does_not_offer" {
  command = plan
  variables {
    cloudwatch_logs_retention_in_days = 45
  }
  expect_failures = [var.cloudwatch_logs_retention_in_days]
}

# The alarm count docs/patterns/sqs-throttle.md gives under "Cost" (alarms created with
# create = true).
run "alarm_count" {
  command = plan
  variables {
    alarms = { create = true }
  }
  assert {
    condition     = length(output.alarms) == 10
    error_message = "The throttle has the 10 alarms the pattern guide prices."
  }
}
