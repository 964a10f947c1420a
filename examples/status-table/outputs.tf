output "table_name" {
  description = "Name of the task table."
  value       = module.status_table.table_name
}

output "table_arn" {
  description = "ARN of the task table."
  value       = module.status_table.table_arn
}

output "worker_role_arn" {
  description = "ARN of a role allowed to run the tracker against this table only."
  value       = aws_iam_role.worker.arn
}

output "iam_policy_read_only_json" {
  description = "Read-only policy document for dashboards and the `sfn-patterns status list` command."
  value       = module.status_table.iam_policy_read_only_json
}

output "iam_policy_read_write_json" {
  description = "Read-write policy document for workers that run the tracker (the worker role's only policy)."
  value       = module.status_table.iam_policy_read_write_json
}

output "table_index_arn" {
  description = "ARN of the status and update-time index the tracker queries."
  value       = module.status_table.table_index_arn
}

output "alarms" {
  description = "Each signal the status table watches mapped to its alarm's name and ARN."
  value       = module.status_table.alarms
}

output "dashboard_name" {
  description = "Name of the pattern module's dashboard; null unless create_dashboard."
  value       = module.status_table.dashboard_name
}

output "metrics_environment" {
  description = "Environment for the worker functions that run the Tracker (its pattern metrics, under the module's name)."
  value       = module.status_table.metrics_environment
}
