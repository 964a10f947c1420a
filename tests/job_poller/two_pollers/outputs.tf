output "state_machine_arn" {
  description = "The module's own machine."
  value       = module.poller.state_machine_arn
}

output "two_pollers_arn" {
  description = "The machine with two poll loops."
  value       = aws_sfn_state_machine.two.arn
}

output "metadata_table_name" {
  description = "The module's DynamoDB metadata table."
  value       = module.poller.metadata_table_name
}

output "history_events_worst_case" {
  description = "The module's worst-case history events."
  value       = module.poller.history_events_worst_case
}

output "max_wait_count" {
  description = "The module's max wait count."
  value       = module.poller.max_wait_count
}

output "via_lambda_arn" {
  description = "The module instance whose adapter is a Lambda ARN."
  value       = module.via_lambda.state_machine_arn
}

output "via_lambda_store" {
  description = "Metadata stores of the Lambda-adapter instance (none needed: wait-count, no sample job)."
  value       = [module.via_lambda.metadata_bucket_name, module.via_lambda.metadata_table_name]
}

output "definition" {
  description = "The module's rendered definition."
  value       = module.poller.definition
}

output "cost_model" {
  description = "The module's cost model (loop), checked against the execution histories."
  value       = module.poller.cost_model
}

output "fragment" {
  description = "The module's poll loop fragment and what renders it, compared with Python's rendering of the same template."
  value = {
    json     = module.poller.poll_loop_fragment_json
    template = module.poller.poll_loop_template
    vars     = module.poller.poll_loop_template_vars
    exits    = module.poller.poll_loop_exit_states
  }
}

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
