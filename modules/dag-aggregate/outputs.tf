output "state_machine_arn" {
  description = "ARN of the DAG state machine."
  value       = module.state_machine.state_machine_arn
}

output "state_machine_arn_static" {
  description = "ARN of the DAG state machine, known at plan time (use it to avoid dependency cycles)."
  value       = module.state_machine.state_machine_arn_static
}

output "role_arn" {
  description = "ARN of the state machine's IAM role."
  value       = module.state_machine.role_arn
}

output "log_group_name" {
  description = "CloudWatch log group of the state machine's executions."
  value       = module.state_machine.log_group_name
}

output "tasks" {
  description = "Every task (table name) the planner found in sql_dir."
  value       = try(local.plan.tasks, null)
}

output "edges" {
  description = "Dependencies after transitive reduction, as [parent, child] pairs."
  value       = try(local.plan.edges, null)
}

output "stages" {
  description = "Task lists in execution order, for the chosen strategy."
  value       = try(local.plan.stages[var.strategy], null)
}

output "external_sources" {
  description = "Tables the SQL reads that no task produces (they must exist before a run)."
  value       = try(keys(local.plan.external_sources), null)
}

output "definition" {
  description = "The rendered Amazon States Language definition."
  value       = local.definition
}
