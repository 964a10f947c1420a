output "state_machine_arn" {
  description = "ARN of the DAG state machine."
  value       = try(aws_sfn_state_machine.this[0].arn, null)
}

output "state_machine_arn_static" {
  description = "ARN of the DAG state machine, known at plan time (use it to avoid dependency cycles)."
  value       = var.create ? local.state_machine_arn : null
}

output "role_arn" {
  description = "ARN of the state machine's IAM role."
  value       = try(aws_iam_role.this[0].arn, null)
}

output "log_group_name" {
  description = "CloudWatch log group of the state machine's executions."
  value       = try(aws_cloudwatch_log_group.this[0].name, null)
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
