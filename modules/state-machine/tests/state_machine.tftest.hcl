# terraform test (plan only, mock providers): validations, the create switch, outputs
# and the partition in every ARN. Run: make test (tests/terraform/test_native.py).

mock_provider "aws" {
  mock_data "aws_partition" {
    defaults = { partition = "aws" }
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

variables {
  name       = "orders"
  definition = "{\"StartAt\":\"P\",\"States\":{\"P\":{\"Type\":\"Pass\",\"End\":true}}}"
}

run "creates_machine_role_and_log_group_with_logging_on" {
  command = plan

  assert {
    condition     = length(aws_sfn_state_machine.this) == 1 && length(aws_iam_role.this) == 1
    error_message = "create = true makes the state machine and its role."
  }
  assert {
    condition     = aws_sfn_state_machine.this[0].logging_configuration[0].level == "ERROR" && !aws_sfn_state_machine.this[0].logging_configuration[0].include_execution_data
    error_message = "Execution logging is on by default, at ERROR (failed executions) without payloads."
  }
  assert {
    condition     = output.state_machine_arn_static == "arn:aws:states:eu-west-1:123456789012:stateMachine:orders"
    error_message = "The static ARN is known at plan time and built from partition, region and account."
  }
  assert {
    condition     = one(one(data.aws_iam_policy_document.assume.statement).principals).identifiers == toset([data.aws_service_principal.states.name])
    error_message = "The role trusts data.aws_service_principal.states (a random value under this mock, so a literal principal fails)."
  }
}

run "a_key_encrypts_the_machine_and_only_its_executions_may_use_it" {
  command = plan

  variables {
    kms_key_arn = "arn:aws:kms:eu-west-1:123456789012:key/0f1e2d3c-4b5a-4978-8a9b-0c1d2e3f4a5b"
  }

  assert {
    condition     = one(aws_sfn_state_machine.this[0].encryption_configuration).type == "CUSTOMER_MANAGED_KMS_KEY" && one(aws_sfn_state_machine.this[0].encryption_configuration).kms_key_id == var.kms_key_arn && one(aws_sfn_state_machine.this[0].encryption_configuration).kms_data_key_reuse_period_seconds == 300
    error_message = "kms_key_arn encrypts the state machine with the caller's key, data keys reused 300 s."
  }
  assert {
    condition = length([
      for s in data.aws_iam_policy_document.this.statement : s
      if s.sid == "UseOwnKey" && toset(s.actions) == toset(["kms:GenerateDataKey", "kms:Decrypt"]) && toset(s.resources) == toset([var.kms_key_arn])
      && one(s.condition).variable == "kms:EncryptionContext:aws:states:stateMachineArn" && toset(one(s.condition).values) == toset(["arn:aws:states:eu-west-1:123456789012:stateMachine:orders"])
    ]) == 1
    error_message = "The role may generate and decrypt data keys of the key for this machine's encryption context only."
  }
}

run "no_key_keeps_step_functions_own_encryption" {
  command = plan

  assert {
    condition     = length(aws_sfn_state_machine.this[0].encryption_configuration) == 0 && length([for s in data.aws_iam_policy_document.this.statement : s if s.sid == "UseOwnKey"]) == 0
    error_message = "Without kms_key_arn the machine keeps the AWS owned key and its role no KMS grant."
  }
}

run "create_false_makes_nothing" {
  command = plan
  variables {
    create = false
  }
  assert {
    condition     = length(aws_sfn_state_machine.this) == 0 && length(aws_iam_role.this) == 0 && length(aws_cloudwatch_log_group.this) == 0
    error_message = "create = false must create no resource."
  }
}

run "static_arn_follows_the_partition" {
  command = plan
  override_data {
    target = data.aws_partition.current
    values = { partition = "aws-cn" }
  }
  # As terraform-provider-aws computes it in aws-cn (service_principal_data_source.go).
  override_data {
    target = data.aws_service_principal.states
    values = { name = "states.amazonaws.com", suffix = "amazonaws.com" }
  }
  assert {
    condition     = startswith(output.state_machine_arn_static, "arn:aws-cn:states:")
    error_message = "ARNs take the partition from data.aws_partition."
  }
  assert {
    condition     = one(one(data.aws_iam_policy_document.assume.statement).principals).identifiers == toset(["states.amazonaws.com"])
    error_message = "In aws-cn the role trusts states.amazonaws.com."
  }
}

run "rejects_a_bad_name" {
  command = plan
  variables {
    name = "has spaces"
  }
  expect_failures = [var.name]
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

run "the_role_has_no_path_or_boundary_by_default" {
  command = plan

  assert {
    condition     = aws_iam_role.this[0].path == "/" && aws_iam_role.this[0].permissions_boundary == null
    error_message = "Without role_path and role_permissions_boundary the role is at / with no boundary."
  }
}

run "the_role_takes_a_path_and_a_permissions_boundary" {
  command = plan
  variables {
    role_path                 = "/platform/workloads/"
    role_permissions_boundary = "arn:aws:iam::123456789012:policy/workload-boundary"
  }

  assert {
    condition     = aws_iam_role.this[0].path == "/platform/workloads/" && aws_iam_role.this[0].permissions_boundary == "arn:aws:iam::123456789012:policy/workload-boundary"
    error_message = "The role is created under role_path with role_permissions_boundary."
  }
}

run "rejects_a_path_without_its_slashes" {
  command = plan
  variables {
    role_path = "platform"
  }
  expect_failures = [var.role_path]
}

run "rejects_a_boundary_that_is_not_a_managed_policy" {
  command = plan
  variables {
    role_permissions_boundary = "arn:aws:iam::123456789012:role/boundary"
  }
  expect_failures = [var.role_permissions_boundary]
}
