output "embedded_state_machine_arn" {
  description = "ARN of the state machine that embeds the acquire/release fragments."
  value       = module.embedded.state_machine_arn
}

output "embedded_state_machine_arn_static" {
  description = "ARN of the embedded state machine as computed at plan time."
  value       = local.embedded_arn
}

output "target_state_machine_arn" {
  description = "ARN of the state machine the wrapper runs."
  value       = coalesce(var.external_target_state_machine_arn, module.target.state_machine_arn)
}

output "wrapper_state_machine_arn" {
  description = "ARN of the module's wrapper state machine."
  value       = module.semaphore.wrapper_state_machine_arn
}

output "lock_table_name" {
  description = "Name of the semaphore's lock table."
  value       = module.semaphore.table_name
}

output "lock_key" {
  description = "Partition key value of the lock item."
  value       = module.semaphore.lock_key
}

output "record_table_name" {
  description = "Table where the critical section records enter/leave times."
  value       = aws_dynamodb_table.records.name
}

output "reconciler_function_name" {
  description = "Name of the reconciler Lambda."
  value       = module.semaphore.reconciler_function_name
}

output "reconciler_rule_name" {
  description = "Name of the reconciler's schedule rule."
  value       = module.semaphore.reconciler_rule_name
}

output "cleanup_function_name" {
  description = "Name of the event cleanup Lambda."
  value       = module.semaphore.cleanup_function_name
}

output "cleanup_rule_name" {
  description = "Name of the EventBridge rule on execution status changes."
  value       = module.semaphore.cleanup_rule_name
}

output "strategy" {
  description = "Admission scheme of the semaphore (callback, dynamodb or oldest-first)."
  value       = module.semaphore.strategy
}

output "fairness" {
  description = "Admission order in effect (fifo or none)."
  value       = module.semaphore.fairness
}

output "gate_function_name" {
  description = "Name of the oldest-first gate Lambda (null unless strategy is oldest-first)."
  value       = module.semaphore.gate_function_name
}

output "queue_table_name" {
  description = "Name of the waiter queue table (strategy callback)."
  value       = module.semaphore.queue_table_name
}

output "callback_function_name" {
  description = "Name of the Lambda that acquires and hands slots over (strategy callback)."
  value       = module.semaphore.callback_function_name
}

output "wait_history_events" {
  description = "The wait loop's history budget the module computed at plan time."
  value       = module.semaphore.wait_history_events
}

output "wrapper_role_arn" {
  description = "ARN of the wrapper's role (what a cross-account target role must trust)."
  value       = module.semaphore.wrapper_role_arn
}

output "wrapper_definition" {
  description = "The wrapper's rendered ASL definition."
  value       = module.semaphore.wrapper_definition
}

output "caller_policy_json" {
  description = "The module's policy for a state machine that embeds the fragments (the embedded machine's grant for them)."
  value       = module.semaphore.caller_policy_json
}

output "alarms" {
  description = "Each signal the semaphore watches mapped to its alarm's name and ARN."
  value       = module.semaphore.alarms
}

output "dashboard_name" {
  description = "Name of the pattern module's dashboard; null unless create_dashboard."
  value       = module.semaphore.dashboard_name
}
