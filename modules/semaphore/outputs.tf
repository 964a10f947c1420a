output "table_name" {
  description = "Name of the lock table (null for strategy oldest-first)."
  value       = one(aws_dynamodb_table.this[*].name)
}

output "table_arn" {
  description = "ARN of the lock table (null for strategy oldest-first)."
  value       = one(aws_dynamodb_table.this[*].arn)
}

output "lock_key" {
  description = "Partition key value of the lock item."
  value       = local.lock_key
}

output "fairness" {
  description = "Admission order in effect: \"fifo\" (arrival order: strategy callback, or dynamodb with fairness fifo) or \"none\" (waiters race; always none for oldest-first)."
  value       = local.fifo || local.callback ? "fifo" : "none"
}

output "strategy" {
  description = "Admission strategy in effect (callback, dynamodb or oldest-first)."
  value       = var.strategy
}

output "queue_table_name" {
  description = "Name of the waiter queue table (strategy callback; null otherwise)."
  value       = one(aws_dynamodb_table.queue[*].name)
}

output "callback_function_name" {
  description = "Name of the Lambda that acquires and hands slots over (strategy callback; null otherwise)."
  value       = module.callback.function_name
}

output "wait_history_events" {
  description = "The wait loop's history budget computed at plan time: events per wait (per fallback period for callback), most waits within acquire_timeout_seconds, fixed events, and the worst case."
  value       = local.history

  # History budget at plan time (25,000 events per execution): the wait loop's worst
  # case must leave history_reserved_events for the rest of the machine. On this output,
  # not on a data source: a data source whose precondition reads an input that depends
  # on a resource still to be created is read only at apply, and every ARN built from it
  # (and every count over them) would be unknown at plan.
  precondition {
    condition     = local.history.worst_case <= 25000 - var.history_reserved_events
    error_message = "semaphore ${var.name}: the ${var.strategy} wait loop can write up to ${local.history.worst_case} history events (${local.history.per_wait} per ${local.history.wait_unit} x ${local.history.max_waits} in acquire_timeout_seconds = ${var.acquire_timeout_seconds}, + ${local.history.fixed}), more than 25,000 - history_reserved_events (${var.history_reserved_events}) = ${25000 - var.history_reserved_events}. Lower acquire_timeout_seconds, or raise ${local.callback ? "fallback_seconds" : "wait_min_seconds"}."
  }
}

output "max_concurrency" {
  description = "Maximum number of concurrent holders."
  value       = var.max_concurrency
}

output "acquire_states" {
  description = "ASL states (a map) that acquire a slot, starting at acquire_start_state and going to fragment_acquired_next once held; merge them into your States."
  value       = var.create ? local.acquire_states : null
}

output "acquire_start_state" {
  description = "Name of the first state of the acquire fragment: point your StartAt or a Next at it."
  value       = local.acquire_start_state
}

output "release_states" {
  description = "ASL states (a map) that release the slot: release_state on success, and release_after_failure_state which re-raises the caught error."
  value       = var.create ? local.release_states : null
}

output "release_state" {
  description = "Name of the state your critical section goes to when it succeeds."
  value       = "${var.fragment_state_prefix}Release"
}

output "release_after_failure_state" {
  description = "Name of the state your critical section's Catch goes to; it releases, then fails with the caught Error and Cause."
  value       = "${var.fragment_state_prefix}Release after failure"
}

output "critical_section_catch" {
  description = "Catch list to put on every state of your critical section (stores the error at $.semaphore_error and releases at once)."
  value       = local.critical_section_catch
}

output "caller_policy_json" {
  description = "IAM policy (JSON) your state machine role needs to run the fragments; attach it as an inline policy."
  value       = one(data.aws_iam_policy_document.caller[*].json)
}

output "wrapper_state_machine_arn" {
  description = "ARN of the wrapper state machine that runs target_state_machine_arn inside the semaphore (null unless create_wrapper)."
  value       = module.wrapper.state_machine_arn
}

output "wrapper_state_machine_arn_static" {
  description = "ARN of the wrapper state machine, known at plan time (null unless create_wrapper)."
  value       = local.create_wrapper ? local.wrapper_arn : null
}

output "wrapper_definition" {
  description = "The wrapper's rendered ASL definition (JSON)."
  value       = local.create_wrapper ? local.wrapper_definition : null
}

output "reconciler_function_name" {
  description = "Name of the reconciler Lambda (invoke it to sweep leaked slots now)."
  value       = module.reconciler.function_name
}

output "reconciler_function_arn" {
  description = "ARN of the reconciler Lambda."
  value       = module.reconciler.function_arn
}

output "reconciler_rule_name" {
  description = "Name of the EventBridge schedule rule of the reconciler."
  value       = one(aws_cloudwatch_event_rule.reconcile[*].name)
}

output "cleanup_function_name" {
  description = "Name of the Lambda that releases the slot of an execution that ended FAILED, TIMED_OUT or ABORTED."
  value       = module.cleanup.function_name
}

output "cleanup_rule_name" {
  description = "Name of the EventBridge rule on Step Functions status-change events."
  value       = one(aws_cloudwatch_event_rule.ended[*].name)
}

output "target_role_arn" {
  description = "Role the wrapper assumes for the target (null: its own role). The other account's trust policy must let the wrapper's role (wrapper_role_arn) assume it, and the reconciler's and the event cleanup's roles too (they stop and follow a stopped wrapper's target through it)."
  value       = var.target_role_arn
}

output "wrapper_role_arn" {
  description = "ARN of the wrapper's IAM role (one of the principals a cross-account target_role_arn must trust, with the reconciler's and the cleanup's; null unless create_wrapper)."
  value       = module.wrapper.role_arn
}

output "gate_function_name" {
  description = "Name of the oldest-first gate Lambda (null unless strategy is oldest-first)."
  value       = module.gate.function_name
}

output "alarms" {
  description = "Each watched signal (wrapper-executions-failed, callback-errors, reconciler-not-running, table-write-throttles, ...) mapped to its alarm's name and ARN; empty when none is created (alarms.create false, or null with no alarm_actions)."
  value       = module.alarms.alarms
}

output "dashboard_name" {
  description = "Name of the CloudWatch dashboard; null unless create_dashboard."
  value       = module.dashboard.dashboard_name
}

output "dashboard_body" {
  description = "Body (JSON) of the dashboard, built whether or not it is created (for review)."
  value       = module.dashboard.dashboard_body
}

output "target_role_principal_arns" {
  description = "Every role a cross-account target_role_arn must trust: the wrapper's (it starts and follows the target) and, when created, the reconciler's and the event cleanup's (they stop a stopped wrapper's target); empty unless create_wrapper and target_role_arn are set."
  # Static ARNs (each role is named after its function or state machine, under
  # role_path), known at plan time so the other account's trust policy can be written
  # in the same plan.
  value = local.create_wrapper && var.target_role_arn != null ? [
    for name in compact([
      local.wrapper_name,
      local.create_reconciler ? "${var.name}-reconciler" : "",
      local.create_cleanup ? "${var.name}-cleanup" : "",
    ]) : "arn:${local.partition}:iam::${local.account_id}:role${var.role_path}${name}"
  ] : []
}

output "role_arns" {
  description = "ARN of every IAM role the module created, by component (callback, reconciler, cleanup, gate, wrapper; absent ones left out): the principals for a key policy or trust policy that names roles."
  value = merge(
    local.create_queue_table ? { callback = module.callback.role_arn } : {},
    local.create_reconciler ? { reconciler = module.reconciler.role_arn } : {},
    local.create_cleanup ? { cleanup = module.cleanup.role_arn } : {},
    local.create_gate ? { gate = module.gate.role_arn } : {},
    local.create_wrapper ? { wrapper = module.wrapper.role_arn } : {},
  )
}
