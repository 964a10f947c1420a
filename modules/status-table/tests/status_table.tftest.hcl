# terraform test (mock provider): validations, the create switch, the optional
# table features (stream, TTL, PITR, provisioned capacity), the GSI's key_schema and
# the outputs. Run: make test (tests/terraform/test_native.py).

mock_provider "aws" {
  mock_resource "aws_dynamodb_table" {
    defaults = {
      arn        = "arn:aws-us-gov:dynamodb:us-gov-west-1:123456789012:table/orders-tasks"
      stream_arn = "arn:aws-us-gov:dynamodb:us-gov-west-1:123456789012:table/orders-tasks/stream/2026-01-01T00:00:00.000"
    }
  }
  mock_data "aws_partition" {
    defaults = { partition = "aws-us-gov" }
  }
  mock_data "aws_region" {
    defaults = { region = "us-gov-west-1" }
  }
  mock_data "aws_caller_identity" {
    defaults = { account_id = "123456789012" }
  }
}

variables {
  name = "orders-tasks"
}

run "defaults_are_on_demand_with_pitr_ttl_and_no_stream" {
  command = plan

  assert {
    condition     = length(aws_dynamodb_table.this) == 1 && aws_dynamodb_table.this[0].name == "orders-tasks"
    error_message = "create = true (the default) makes one table named after var.name."
  }
  assert {
    condition     = aws_dynamodb_table.this[0].billing_mode == "PAY_PER_REQUEST"
    error_message = "On-demand by default."
  }
  assert {
    condition     = aws_dynamodb_table.this[0].point_in_time_recovery[0].enabled && aws_dynamodb_table.this[0].ttl[0].enabled && aws_dynamodb_table.this[0].ttl[0].attribute_name == "expire_at"
    error_message = "PITR and TTL on expire_at are on by default."
  }
  assert {
    condition     = !aws_dynamodb_table.this[0].stream_enabled
    error_message = "Streams are off by default."
  }
  assert {
    condition     = !aws_dynamodb_table.this[0].deletion_protection_enabled
    error_message = "Deletion protection is off by default."
  }
  assert {
    condition     = aws_dynamodb_table.this[0].server_side_encryption[0].enabled
    error_message = "Encryption at rest is always on (the AWS owned key unless kms_key_arn is set)."
  }
}

run "index_uses_key_schema_not_the_deprecated_keys" {
  command = plan

  assert {
    condition = [for k in one(aws_dynamodb_table.this[0].global_secondary_index).key_schema : { attribute_name = k.attribute_name, key_type = k.key_type }] == [
      { attribute_name = "status_key", key_type = "HASH" },
      { attribute_name = "update_time", key_type = "RANGE" },
    ]
    error_message = "The status index is keyed status_key (HASH), update_time (RANGE) through key_schema (the schema of sfn_patterns.status_table.schema)."
  }
  assert {
    condition     = one(aws_dynamodb_table.this[0].global_secondary_index).name == "status-update_time-index" && one(aws_dynamodb_table.this[0].global_secondary_index).projection_type == "ALL"
    error_message = "The index the tracker queries projects every attribute."
  }
}

run "every_option_switched" {
  command = plan

  variables {
    billing_mode                   = "PROVISIONED"
    provisioned_capacity           = { read_capacity = 7, index_write_capacity = 3 }
    point_in_time_recovery_enabled = false
    deletion_protection_enabled    = true
    ttl_enabled                    = false
    stream_enabled                 = true
    stream_view_type               = "KEYS_ONLY"
    kms_key_arn                    = "arn:aws-us-gov:kms:us-gov-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
  }

  assert {
    condition     = aws_dynamodb_table.this[0].read_capacity == 7 && aws_dynamodb_table.this[0].write_capacity == 5
    error_message = "PROVISIONED uses provisioned_capacity, with 5 for a unit left out."
  }
  assert {
    condition     = one(aws_dynamodb_table.this[0].global_secondary_index).read_capacity == 5 && one(aws_dynamodb_table.this[0].global_secondary_index).write_capacity == 3
    error_message = "The index gets its own capacity."
  }
  assert {
    condition     = !aws_dynamodb_table.this[0].point_in_time_recovery[0].enabled && !aws_dynamodb_table.this[0].ttl[0].enabled && aws_dynamodb_table.this[0].deletion_protection_enabled
    error_message = "point_in_time_recovery_enabled, ttl_enabled and deletion_protection_enabled reach the table."
  }
  assert {
    condition     = aws_dynamodb_table.this[0].stream_enabled && aws_dynamodb_table.this[0].stream_view_type == "KEYS_ONLY"
    error_message = "stream_enabled turns the stream on with stream_view_type."
  }
  assert {
    condition     = aws_dynamodb_table.this[0].server_side_encryption[0].kms_key_arn == "arn:aws-us-gov:kms:us-gov-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    error_message = "kms_key_arn encrypts the table."
  }
}

run "the_policies_are_known_at_plan_time" {
  command = plan

  assert {
    condition     = output.table_arn == "arn:aws-us-gov:dynamodb:us-gov-west-1:123456789012:table/orders-tasks" && jsondecode(output.iam_policy_read_write_json).Statement[0].Resource == output.table_arn
    error_message = "table_arn and the policy outputs are known at plan time (built from the table's name), so a caller can attach them in the plan that creates the table."
  }
}

run "outputs_name_the_table_and_scope_the_policies_to_it" {
  # apply with the mock provider: the table's ARN comes from mock_resource.
  command = apply

  variables {
    stream_enabled = true
  }

  assert {
    condition     = output.table_name == "orders-tasks" && output.table_arn == "arn:aws-us-gov:dynamodb:us-gov-west-1:123456789012:table/orders-tasks"
    error_message = "table_name and table_arn name the table."
  }
  assert {
    condition     = output.table_arn == aws_dynamodb_table.this[0].arn
    error_message = "The table_arn built from the partition, region, account and name is the ARN the provider returns."
  }
  assert {
    condition     = output.table_index_arn == "${output.table_arn}/index/status-update_time-index" && output.table_index_name == "status-update_time-index"
    error_message = "The index ARN is the table ARN plus /index/<name>."
  }
  assert {
    condition     = output.table_stream_arn == aws_dynamodb_table.this[0].stream_arn
    error_message = "With stream_enabled the stream ARN is an output."
  }
  assert {
    condition = [for s in jsondecode(output.iam_policy_read_only_json).Statement : { sid = s.Sid, resource = s.Resource, action = s.Action }] == [
      { sid = "ReadStatusTable", resource = output.table_arn, action = ["dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:DescribeTable"] },
      { sid = "QueryStatusIndex", resource = output.table_index_arn, action = ["dynamodb:Query"] },
    ]
    error_message = "The read-only policy: item reads on the table, Query on the index (an item action on an index ARN, or Query on the table ARN, could never match)."
  }
  assert {
    condition = [for s in jsondecode(output.iam_policy_read_write_json).Statement : { sid = s.Sid, resource = s.Resource }] == [
      { sid = "ReadStatusTable", resource = output.table_arn },
      { sid = "QueryStatusIndex", resource = output.table_index_arn },
      { sid = "WriteStatusTable", resource = output.table_arn },
    ]
    error_message = "The read-write policy adds writes on the table only."
  }
  assert {
    condition     = jsondecode(output.iam_policy_read_write_json).Statement[2].Action == ["dynamodb:PutItem", "dynamodb:UpdateItem"]
    error_message = "The tracker writes with PutItem and UpdateItem only (no DeleteItem, BatchWriteItem or ConditionCheckItem)."
  }
  assert {
    condition     = !contains(flatten([for s in jsondecode(output.iam_policy_read_write_json).Statement : s.Action]), "dynamodb:*")
    error_message = "No wildcard action."
  }
}

run "stream_arn_is_null_without_a_stream" {
  command = apply

  assert {
    condition     = output.table_stream_arn == null
    error_message = "Without stream_enabled there is no stream ARN."
  }
}

run "create_false_makes_nothing_and_outputs_null" {
  command = apply

  variables {
    create = false
  }

  assert {
    condition     = length(aws_dynamodb_table.this) == 0
    error_message = "create = false must create no resource."
  }
  assert {
    condition     = output.table_arn == null && output.table_index_arn == null && output.iam_policy_read_only_json == null && output.iam_policy_read_write_json == null
    error_message = "Outputs are null when nothing is created."
  }
}

run "rejects_a_bad_name" {
  command = plan
  variables {
    name = "a b"
  }
  expect_failures = [var.name]
}

run "rejects_an_unknown_billing_mode" {
  command = plan
  variables {
    billing_mode = "ON_DEMAND"
  }
  expect_failures = [var.billing_mode]
}

run "rejects_fractional_capacity" {
  command = plan
  variables {
    provisioned_capacity = { read_capacity = 0.5 }
  }
  expect_failures = [var.provisioned_capacity]
}

run "rejects_a_key_that_is_not_an_arn" {
  command = plan
  variables {
    kms_key_arn = "alias/tasks"
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

run "rejects_an_unknown_stream_view_type" {
  command = plan
  variables {
    stream_view_type = "ALL"
  }
  expect_failures = [var.stream_view_type]
}

# --- Alarms: created once they have somebody to notify (or when asked for) -------------

run "no_alarms_without_a_target" {
  command = plan
  assert {
    condition     = length(output.alarms) == 0
    error_message = "alarms = {} creates no alarm: one with no alarm_actions would page nobody."
  }
}

run "alarms_with_a_target" {
  command = plan
  variables {
    alarms = { alarm_actions = ["arn:aws-us-gov:sns:us-gov-west-1:123456789012:ops"] }
  }
  assert {
    condition     = toset(keys(output.alarms)) == toset(["table-read-throttles", "table-write-throttles", "table-system-errors"])
    error_message = "alarm_actions creates every alarm of the table."
  }
}

run "alarms_asked_for_without_a_target" {
  command = plan
  variables {
    alarms = { create = true }
  }
  assert {
    condition     = length(output.alarms) == 3
    error_message = "create = true creates the alarms even without a target (console and dashboard)."
  }
}

run "alarms_switched_off_despite_a_target" {
  command = plan
  variables {
    alarms = { create = false, alarm_actions = ["arn:aws-us-gov:sns:us-gov-west-1:123456789012:ops"] }
  }
  assert {
    condition     = length(output.alarms) == 0
    error_message = "create = false wins over alarm_actions."
  }
}
