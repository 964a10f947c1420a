output "events_state_machine_arn" {
  description = "The aws-sdk poller completed by the child's status-change events."
  value       = module.events.state_machine_arn
}

output "events_rule_name" {
  description = "The rule on the child's status-change events (disabled by the test to drop events)."
  value       = module.events.completion_rule_name
}

output "events_cost_model" {
  description = "The event-completed aws-sdk poller's cost model."
  value       = module.events.cost_model
}

output "cross_account_state_machine_arn" {
  description = "The aws-sdk poller whose tasks act in the other account."
  value       = module.cross_account.state_machine_arn
}

output "cross_account_role_arn" {
  description = "The cross-account poller's state machine role: the principal the other account's role trusts."
  value       = module.cross_account.role_arn
}
