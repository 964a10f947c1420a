# terraform test (plan, mock providers): the create switch, the optional parts
# (reconciler, event cleanup, wrapper, oldest-first gate, callback queue), PITR and
# deletion protection, outputs with partition-aware static ARNs, and validations.
# The rendered ASL is checked in asl.tftest.hcl. Run: make test
# (tests/terraform/test_native.py).

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
  name = "demo"
  # The machine that embeds the fragments (required without the wrapper).
  holder_state_machine_arns = ["arn:aws:states:eu-west-1:123456789012:stateMachine:worker"]
}

run "callback_default_creates_lock_queue_callback_and_reconciler" {
  command = plan

  assert {
    condition     = aws_dynamodb_table.this[0].name == "demo-semaphore" && aws_dynamodb_table.queue[0].name == "demo-semaphore-queue" && length(aws_dynamodb_table_item.lock) == 1
    error_message = "strategy = callback (the default) keeps the lock item and a waiter queue table."
  }
  assert {
    condition     = output.callback_function_name == "demo-semaphore" && output.strategy == "callback" && output.fairness == "fifo"
    error_message = "The callback Lambda hands slots over in arrival order."
  }
  assert {
    condition     = output.reconciler_function_name == "demo-reconciler" && length(aws_cloudwatch_event_rule.reconcile) == 1 && aws_cloudwatch_event_rule.reconcile[0].schedule_expression == "rate(5 minutes)"
    error_message = "The reconciler is on by default, every 5 minutes."
  }
  assert {
    condition     = length(aws_cloudwatch_event_rule.ended) == 1 && output.cleanup_function_name == "demo-cleanup"
    error_message = "The event cleanup watches the holder machines' ends."
  }
  assert {
    condition     = output.wrapper_state_machine_arn_static == null && output.wrapper_definition == null && output.gate_function_name == null
    error_message = "No wrapper and no oldest-first gate unless asked for."
  }
  assert {
    condition     = aws_dynamodb_table.this[0].point_in_time_recovery[0].enabled && aws_dynamodb_table.queue[0].point_in_time_recovery[0].enabled
    error_message = "point_in_time_recovery_enabled is on by default for both tables."
  }
  assert {
    condition     = !aws_dynamodb_table.this[0].deletion_protection_enabled && !aws_dynamodb_table.queue[0].deletion_protection_enabled
    error_message = "deletion_protection_enabled is off by default."
  }
  assert {
    condition     = aws_lambda_permission.reconcile[0].principal == data.aws_service_principal.events.name
    error_message = "The reconciler's schedule invokes it as data.aws_service_principal.events (a random value under this mock, so a literal principal fails)."
  }
}

run "pitr_and_deletion_protection_switch" {
  command = plan

  variables {
    point_in_time_recovery_enabled = false
    deletion_protection_enabled    = true
  }

  assert {
    condition     = !aws_dynamodb_table.this[0].point_in_time_recovery[0].enabled && !aws_dynamodb_table.queue[0].point_in_time_recovery[0].enabled
    error_message = "point_in_time_recovery_enabled reaches both tables."
  }
  assert {
    condition     = aws_dynamodb_table.this[0].deletion_protection_enabled && aws_dynamodb_table.queue[0].deletion_protection_enabled
    error_message = "deletion_protection_enabled reaches both tables."
  }
}

run "reconciler_off" {
  command = plan

  variables {
    reconciler_enabled = false
  }

  assert {
    condition     = length(aws_cloudwatch_event_rule.reconcile) == 0 && length(aws_cloudwatch_event_target.reconcile) == 0 && length(aws_lambda_permission.reconcile) == 0 && output.reconciler_function_name == null
    error_message = "reconciler_enabled = false creates no reconciler."
  }
  assert {
    condition     = local.semaphore_environment.SEMAPHORE_RECONCILER == "off"
    error_message = "Without a reconciler the cleanup is told so (its event is retried while a stopped holder's task may still run)."
  }
}

run "event_cleanup_watches_the_holder_machines" {
  command = plan

  variables {
    strategy                  = "dynamodb"
    holder_state_machine_arns = ["arn:aws:states:eu-west-1:123456789012:stateMachine:worker"]
  }

  assert {
    condition     = output.cleanup_function_name == "demo-cleanup" && length(aws_cloudwatch_event_rule.ended) == 1
    error_message = "With holder machines, the event cleanup is on by default."
  }
  assert {
    condition     = jsondecode(aws_cloudwatch_event_rule.ended[0].event_pattern).detail.stateMachineArn == ["arn:aws:states:eu-west-1:123456789012:stateMachine:worker"] && jsondecode(aws_cloudwatch_event_rule.ended[0].event_pattern).detail.status == ["FAILED", "TIMED_OUT", "ABORTED"]
    error_message = "The rule matches the holder machines' executions that ended FAILED, TIMED_OUT or ABORTED."
  }
  assert {
    condition     = length(aws_dynamodb_table.queue) == 0 && output.callback_function_name == null
    error_message = "strategy = dynamodb needs no queue table and no callback Lambda."
  }
  assert {
    condition     = local.holder_history_statements[0].actions == ["states:GetExecutionHistory"] && local.holder_history_statements[0].resources == ["arn:aws:states:eu-west-1:123456789012:execution:worker:*"]
    error_message = "The cleanup and the reconciler may read the histories of the holder machines' executions (and no others)."
  }
}

run "event_cleanup_off" {
  command = plan

  variables {
    strategy                  = "dynamodb"
    holder_state_machine_arns = ["arn:aws:states:eu-west-1:123456789012:stateMachine:worker"]
    event_cleanup_enabled     = false
  }

  assert {
    condition     = length(aws_cloudwatch_event_rule.ended) == 0 && length(aws_cloudwatch_event_target.ended) == 0 && output.cleanup_function_name == null
    error_message = "event_cleanup_enabled = false creates no cleanup."
  }
}

run "wrapper_on" {
  command = plan

  variables {
    create_wrapper           = true
    target_state_machine_arn = "arn:aws:states:eu-west-1:123456789012:stateMachine:target"
  }

  assert {
    condition     = output.wrapper_state_machine_arn_static == "arn:aws:states:eu-west-1:123456789012:stateMachine:demo-wrapper"
    error_message = "The wrapper's static ARN is built from partition, region and account."
  }
  assert {
    condition     = jsondecode(output.wrapper_definition).States["Run target"].Parameters.StateMachineArn == "arn:aws:states:eu-west-1:123456789012:stateMachine:target"
    error_message = "The wrapper runs target_state_machine_arn."
  }
  assert {
    condition     = length(aws_cloudwatch_event_rule.ended) == 1 && contains(jsondecode(aws_cloudwatch_event_rule.ended[0].event_pattern).detail.stateMachineArn, output.wrapper_state_machine_arn_static)
    error_message = "The wrapper is a holder: the event cleanup watches it."
  }
}

run "wrapper_target_in_another_account" {
  command = plan

  variables {
    create_wrapper           = true
    target_state_machine_arn = "arn:aws:states:us-east-1:210987654321:stateMachine:target"
    target_role_arn          = "arn:aws:iam::210987654321:role/semaphore-target"
  }

  assert {
    condition     = jsondecode(output.wrapper_definition).States["Run target"].Credentials == { RoleArn = "arn:aws:iam::210987654321:role/semaphore-target" }
    error_message = "The wrapper's Run target Task assumes target_role_arn (ASL Credentials)."
  }
  assert {
    condition     = output.target_role_arn == "arn:aws:iam::210987654321:role/semaphore-target"
    error_message = "target_role_arn is an output (the other account's trust policy names the wrapper's role)."
  }
}

run "oldest_first_has_a_gate_and_no_lock" {
  command = plan

  variables {
    strategy = "oldest-first"
  }

  assert {
    condition     = output.gate_function_name == "demo-oldest-first-gate" && length(aws_dynamodb_table.this) == 0 && length(aws_dynamodb_table.queue) == 0
    error_message = "oldest-first is a ListExecutions gate in a Lambda, without tables."
  }
  assert {
    condition     = length(aws_cloudwatch_event_rule.reconcile) == 0 && output.table_arn == null
    error_message = "Without a lock item there is nothing to reconcile."
  }
  assert {
    condition     = local.gate_environment.SEMAPHORE_LEASE_SECONDS == "900" && local.gate_environment.SEMAPHORE_GATE_STATE == "Semaphore: Acquire"
    error_message = "The gate looks at holders ended within 900 s by default, and leaves out its own state's tasks."
  }
}

run "oldest_first_gate_reads_ended_holders_histories" {
  command = plan

  variables {
    strategy                  = "oldest-first"
    holder_state_machine_arns = ["arn:aws:states:eu-west-1:123456789012:stateMachine:worker"]
    create_wrapper            = true
    target_state_machine_arn  = "arn:aws:states:eu-west-1:123456789012:stateMachine:work"
    lease_seconds             = 1800
  }

  assert {
    condition = jsonencode(local.gate_statements[1]) == jsonencode({
      sid       = "ReadHolderHistories"
      actions   = ["states:GetExecutionHistory"]
      resources = ["arn:aws:states:eu-west-1:123456789012:execution:worker:*", "arn:aws:states:eu-west-1:123456789012:execution:demo-wrapper:*"]
    })
    error_message = "The gate may read the histories of the holder machines' executions (and no others): an ended holder counts while a task of its may run."
  }
  assert {
    condition     = local.gate_environment.SEMAPHORE_LEASE_SECONDS == "1800" && local.gate_environment.WRAPPER_STATE_MACHINE_ARN == "arn:aws:states:eu-west-1:123456789012:stateMachine:demo-wrapper" && local.gate_environment.TARGET_STATE_MACHINE_ARN == "arn:aws:states:eu-west-1:123456789012:stateMachine:work"
    error_message = "lease_seconds bounds how long after its stop the gate counts an ended holder; a stopped wrapper is followed through its target."
  }
}

# --- Keys of machines the module does not own ----------------------------------------

run "foreign_machine_keys_are_granted_for_step_functions_only" {
  command = plan

  variables {
    strategy                  = "oldest-first"
    holder_state_machine_arns = ["arn:aws:states:eu-west-1:123456789012:stateMachine:worker", "arn:aws:states:eu-west-1:123456789012:stateMachine:other"]
    holder_kms_key_arns       = ["arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab", "arn:aws:kms:eu-west-1:123456789012:key/mrk-1234abcd12ab34cd56ef1234567890ab"]
    create_wrapper            = true
    target_state_machine_arn  = "arn:aws:states:eu-west-1:123456789012:stateMachine:work"
    target_kms_key_arn        = "arn:aws:kms:eu-west-1:123456789012:key/0000abcd-12ab-34cd-56ef-1234567890ab"
  }

  assert {
    condition = jsonencode(local.target_key_statements) == jsonencode([{
      sid        = "DecryptTargetOutput"
      actions    = ["kms:Decrypt"]
      resources  = ["arn:aws:kms:eu-west-1:123456789012:key/0000abcd-12ab-34cd-56ef-1234567890ab"]
      conditions = [{ test = "StringEquals", variable = "kms:ViaService", values = ["states.eu-west-1.amazonaws.com"] }]
    }])
    error_message = "The wrapper's role may decrypt with the target's key, through Step Functions only (startExecution.sync:2 returns the target's output)."
  }
  assert {
    condition = jsonencode(local.holder_history_statements[1]) == jsonencode({
      sid        = "DecryptHolderHistories"
      actions    = ["kms:Decrypt"]
      resources  = ["arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab", "arn:aws:kms:eu-west-1:123456789012:key/mrk-1234abcd12ab34cd56ef1234567890ab"]
      conditions = [{ test = "StringEquals", variable = "kms:ViaService", values = ["states.eu-west-1.amazonaws.com"] }]
    })
    error_message = "The functions that read holder histories may decrypt with the holders' keys, through Step Functions only."
  }
  assert {
    condition     = jsonencode(local.gate_statements[2]) == jsonencode(local.holder_history_statements[1])
    error_message = "The oldest-first gate reads holder histories: it gets the holders' keys."
  }
}

run "no_foreign_key_grants_by_default" {
  command = plan

  variables {
    create_wrapper           = true
    target_state_machine_arn = "arn:aws:states:eu-west-1:123456789012:stateMachine:work"
  }

  assert {
    condition     = length(local.target_key_statements) == 0 && jsonencode([for s in local.holder_history_statements : s.sid]) == jsonencode(["ReadHolderHistories"])
    error_message = "Without target_kms_key_arn and holder_kms_key_arns no role gets a key of a machine the module does not own."
  }
}

run "rejects_a_target_key_alias" {
  command = plan
  variables {
    create_wrapper           = true
    target_state_machine_arn = "arn:aws:states:eu-west-1:123456789012:stateMachine:work"
    target_kms_key_arn       = "arn:aws:kms:eu-west-1:123456789012:alias/target"
  }
  expect_failures = [var.target_kms_key_arn]
}

run "rejects_a_target_key_for_a_target_run_through_target_role_arn" {
  command = plan
  variables {
    create_wrapper           = true
    target_state_machine_arn = "arn:aws:states:us-east-1:210987654321:stateMachine:target"
    target_role_arn          = "arn:aws:iam::210987654321:role/semaphore-target"
    target_kms_key_arn       = "arn:aws:kms:us-east-1:210987654321:key/1234abcd-12ab-34cd-56ef-1234567890ab"
  }
  expect_failures = [var.target_kms_key_arn]
}

run "rejects_a_target_key_without_a_wrapper" {
  command = plan
  variables {
    target_kms_key_arn = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
  }
  expect_failures = [var.target_kms_key_arn]
}

run "rejects_a_holder_key_id" {
  command = plan
  variables {
    holder_kms_key_arns = ["1234abcd-12ab-34cd-56ef-1234567890ab"]
  }
  expect_failures = [var.holder_kms_key_arns]
}

run "rejects_holder_keys_without_holder_machines" {
  command = plan
  variables {
    holder_state_machine_arns = []
    create_wrapper            = true
    target_state_machine_arn  = "arn:aws:states:eu-west-1:123456789012:stateMachine:work"
    holder_kms_key_arns       = ["arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"]
  }
  expect_failures = [var.holder_kms_key_arns]
}

run "caller_policy_names_this_table" {
  command = plan

  variables {
    strategy = "dynamodb"
  }

  assert {
    condition     = one(data.aws_iam_policy_document.caller[0].statement).resources == toset(["arn:aws:dynamodb:eu-west-1:123456789012:table/demo-semaphore"])
    error_message = "Callers embedding the fragments may update this lock table only."
  }
}

run "static_arns_follow_the_partition" {
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
    create_wrapper           = true
    target_state_machine_arn = "arn:aws-us-gov:states:us-gov-west-1:123456789012:stateMachine:target"
  }

  assert {
    condition     = output.wrapper_state_machine_arn_static == "arn:aws-us-gov:states:us-gov-west-1:123456789012:stateMachine:demo-wrapper"
    error_message = "The wrapper's static ARN takes the partition from aws_partition."
  }
  assert {
    condition     = toset([for s in data.aws_iam_policy_document.caller[0].statement : s.sid]) == toset(["SemaphoreInvokeCallback"]) && one(data.aws_iam_policy_document.caller[0].statement).resources == toset(["arn:aws-us-gov:lambda:us-gov-west-1:123456789012:function:demo-semaphore", "arn:aws-us-gov:lambda:us-gov-west-1:123456789012:function:demo-semaphore:*"])
    error_message = "The callers' policy names the callback Lambda in the partition."
  }
  assert {
    condition     = length(concat(aws_lambda_permission.reconcile, aws_lambda_permission.ended)) == 2 && alltrue([for p in concat(aws_lambda_permission.reconcile, aws_lambda_permission.ended) : p.principal == "events.amazonaws.com"])
    error_message = "EventBridge's principal (reconciler schedule, cleanup rule) comes from data.aws_service_principal: events.amazonaws.com in aws-us-gov too."
  }
}

run "create_false_makes_nothing" {
  command = plan

  variables {
    create                    = false
    create_wrapper            = true
    target_state_machine_arn  = "arn:aws:states:eu-west-1:123456789012:stateMachine:target"
    holder_state_machine_arns = ["arn:aws:states:eu-west-1:123456789012:stateMachine:worker"]
  }

  assert {
    condition = (length(aws_dynamodb_table.this) + length(aws_dynamodb_table.queue) + length(aws_dynamodb_table_item.lock)
      + length(aws_cloudwatch_event_rule.reconcile) + length(aws_cloudwatch_event_rule.ended) + length(data.aws_iam_policy_document.caller)
    ) == 0
    error_message = "create = false must create no resource."
  }
  assert {
    condition     = output.callback_function_name == null && output.reconciler_function_name == null && output.cleanup_function_name == null && output.wrapper_state_machine_arn == null && output.wrapper_state_machine_arn_static == null
    error_message = "create = false creates no function and no wrapper."
  }
  assert {
    condition     = output.acquire_states == null && output.release_states == null && output.caller_policy_json == null
    error_message = "No fragments without the semaphore."
  }
}

run "rejects_an_unknown_strategy" {
  command = plan
  variables {
    strategy = "mutex"
  }
  expect_failures = [var.strategy]
}

run "rejects_fifo_outside_dynamodb" {
  command = plan
  variables {
    strategy = "callback"
    fairness = "fifo"
  }
  expect_failures = [var.fairness]
}

run "rejects_fifo_without_the_reconciler" {
  command = plan
  variables {
    strategy           = "dynamodb"
    fairness           = "fifo"
    reconciler_enabled = false
  }
  expect_failures = [var.fairness]
}

run "rejects_a_wrapper_without_a_target" {
  command = plan
  variables {
    create_wrapper = true
  }
  expect_failures = [var.target_state_machine_arn]
}

run "rejects_a_zero_limit" {
  command = plan
  variables {
    max_concurrency = 0
  }
  expect_failures = [var.max_concurrency]
}

run "rejects_a_max_wait_below_the_min" {
  command = plan
  variables {
    strategy         = "dynamodb"
    wait_min_seconds = 10
    wait_max_seconds = 5
  }
  expect_failures = [var.wait_max_seconds]
}

run "rejects_a_holder_that_is_not_a_state_machine" {
  command = plan
  variables {
    holder_state_machine_arns = ["arn:aws:lambda:eu-west-1:123456789012:function:worker"]
  }
  expect_failures = [var.holder_state_machine_arns]
}

run "rejects_a_target_role_that_is_not_a_role" {
  command = plan
  variables {
    target_role_arn = "arn:aws:iam::123456789012:user/x"
  }
  expect_failures = [var.target_role_arn]
}

run "rejects_a_prefix_that_breaks_the_json" {
  command = plan
  variables {
    fragment_state_prefix = "Sem\"aphore"
  }
  expect_failures = [var.fragment_state_prefix]
}

run "history_over_the_budget_fails_the_plan" {
  command = plan
  variables {
    strategy                = "dynamodb"
    wait_min_seconds        = 1
    wait_max_seconds        = 2
    acquire_timeout_seconds = 86400
  }
  expect_failures = [output.wait_history_events]
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

# --- Strategy-specific inputs: set under a strategy they do nothing for, they fail the plan

run "rejects_fallback_seconds_without_callback" {
  command = plan
  variables {
    strategy         = "dynamodb"
    fallback_seconds = 60
  }
  expect_failures = [var.fallback_seconds]
}

run "rejects_polling_waits_with_callback" {
  command = plan
  variables {
    strategy         = "callback"
    wait_min_seconds = 2
  }
  expect_failures = [var.wait_min_seconds]
}

run "rejects_lock_item_settings_with_oldest_first" {
  command = plan
  variables {
    strategy                       = "oldest-first"
    create_wrapper                 = true
    target_state_machine_arn       = "arn:aws:states:eu-west-1:123456789012:stateMachine:work"
    lock_key                       = "other"
    reconciler_enabled             = false
    reconciler_schedule_expression = "rate(1 minute)"
    point_in_time_recovery_enabled = false
    deletion_protection_enabled    = true
  }
  expect_failures = [
    var.lock_key,
    var.reconciler_enabled,
    var.reconciler_schedule_expression,
    var.point_in_time_recovery_enabled,
    var.deletion_protection_enabled,
  ]
}

run "accepts_each_setting_under_its_strategy" {
  command = plan
  variables {
    strategy         = "dynamodb"
    fairness         = "fifo"
    wait_min_seconds = 6
    wait_max_seconds = 9
    lock_key         = "jobs"
    lease_seconds    = 600
  }
  assert {
    condition     = output.fairness == "fifo" && output.lock_key == "jobs"
    error_message = "fairness, the waits and the lock item settings apply under strategy dynamodb."
  }
}

run "defaults_apply_when_unset" {
  command = plan
  variables {
    strategy = "dynamodb"
  }
  assert {
    condition     = output.fairness == "none" && output.lock_key == "semaphore" && length(aws_cloudwatch_event_rule.reconcile) == 1
    error_message = "Unset, the strategy-specific inputs take their documented defaults (fairness none, lock key semaphore, reconciler on)."
  }
}

run "rejects_the_old_name_of_max_concurrency" {
  command = plan
  variables {
    semaphore_limit = 3
  }
  expect_failures = [var.semaphore_limit]
}

run "a_cross_account_target_names_every_role_to_trust" {
  command = plan
  variables {
    create_wrapper           = true
    target_state_machine_arn = "arn:aws:states:eu-west-1:111111111111:stateMachine:work"
    target_role_arn          = "arn:aws:iam::111111111111:role/run-work"
  }
  assert {
    condition = output.target_role_principal_arns == tolist([
      "arn:aws:iam::123456789012:role/demo-wrapper",
      "arn:aws:iam::123456789012:role/demo-reconciler",
      "arn:aws:iam::123456789012:role/demo-cleanup",
    ])
    error_message = "The wrapper, the reconciler and the event cleanup each assume target_role_arn: all three must be trusted."
  }
}

run "no_roles_to_trust_without_a_cross_account_target" {
  command = plan
  variables {
    create_wrapper           = true
    target_state_machine_arn = "arn:aws:states:eu-west-1:123456789012:stateMachine:work"
  }
  assert {
    condition     = length(output.target_role_principal_arns) == 0
    error_message = "A target in the same account needs no trust policy."
  }
}

run "rejects_fragments_without_a_holder_machine" {
  command = plan

  variables {
    holder_state_machine_arns = []
  }

  expect_failures = [var.holder_state_machine_arns]
}

# The alarm counts docs/patterns/semaphore.md gives under "Cost" (alarms created with
# create = true; the holders in holder_state_machine_arns, from the variables above).
run "alarm_count_callback" {
  command = plan
  variables {
    alarms = { create = true }
  }
  assert {
    condition     = length(output.alarms) == 20
    error_message = "The callback strategy with its holders has the 20 alarms the pattern guide prices."
  }
}

run "alarm_count_callback_with_the_wrapper" {
  command = plan
  variables {
    alarms                   = { create = true }
    create_wrapper           = true
    target_state_machine_arn = "arn:aws:states:eu-west-1:123456789012:stateMachine:target"
  }
  assert {
    condition     = length(output.alarms) == 24
    error_message = "The wrapper adds its 4 execution alarms: 24."
  }
}

run "alarm_count_dynamodb" {
  command = plan
  variables {
    alarms   = { create = true }
    strategy = "dynamodb"
  }
  assert {
    condition     = length(output.alarms) == 13
    error_message = "strategy = dynamodb has 13 alarms."
  }
}

run "alarm_count_dynamodb_with_the_wrapper" {
  command = plan
  variables {
    alarms                   = { create = true }
    strategy                 = "dynamodb"
    create_wrapper           = true
    target_state_machine_arn = "arn:aws:states:eu-west-1:123456789012:stateMachine:target"
  }
  assert {
    condition     = length(output.alarms) == 17
    error_message = "strategy = dynamodb with the wrapper has 17 alarms."
  }
}

run "alarm_count_oldest_first" {
  command = plan
  variables {
    alarms   = { create = true }
    strategy = "oldest-first"
  }
  assert {
    condition     = length(output.alarms) == 3
    error_message = "strategy = oldest-first has 3 alarms."
  }
}

run "alarm_count_oldest_first_with_the_wrapper" {
  command = plan
  variables {
    alarms                   = { create = true }
    strategy                 = "oldest-first"
    create_wrapper           = true
    target_state_machine_arn = "arn:aws:states:eu-west-1:123456789012:stateMachine:target"
  }
  assert {
    condition     = length(output.alarms) == 11
    error_message = "strategy = oldest-first with the wrapper (and its cleanup) has 11 alarms."
  }
}
