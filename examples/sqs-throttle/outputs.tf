output "queue_url" {
  description = "URL of the request queue (enqueue with sfn_patterns.sqs_throttle.producer.enqueue)."
  value       = module.throttle.queue_url
}

output "dlq_url" {
  description = "URL of the dead-letter queue."
  value       = module.throttle.dlq_url
}

output "starter_function_name" {
  description = "Name of the starter Lambda."
  value       = module.throttle.starter_function_name
}

output "schedule_rule_name" {
  description = "Name of the EventBridge rule that runs the starter."
  value       = module.throttle.schedule_rule_name
}

output "ledger_table_name" {
  description = "Name of the starter's ledger table."
  value       = module.throttle.ledger_table_name
}

output "target_state_machine_arn" {
  description = "ARN of the throttled target state machine."
  value       = module.target.state_machine_arn
}

output "target_state_machine_arn_static" {
  description = "ARN of the target, known at plan time (what the module was given)."
  value       = local.target_arn
}

output "max_concurrency" {
  description = "The concurrency bound."
  value       = module.throttle.max_concurrency
}

output "starter_role_arn" {
  description = "ARN of the starter's role (what a target account's role trusts)."
  value       = module.throttle.starter_role_arn
}

output "producer_policy_json" {
  description = "The module's policy for producers: attach it to a role that enqueues start requests."
  value       = module.throttle.producer_policy_json
}

output "alarms" {
  description = "Each signal the throttle watches mapped to its alarm's name and ARN."
  value       = module.throttle.alarms
}

output "dashboard_name" {
  description = "Name of the pattern module's dashboard; null unless create_dashboard."
  value       = module.throttle.dashboard_name
}
