output "status_table_name" {
  description = "Name of the status-table task table, or null when the pattern is disabled."
  value       = module.status_table.table_name
}

output "status_table_arn" {
  description = "ARN of the status-table task table, or null when the pattern is disabled."
  value       = module.status_table.table_arn
}

output "status_table_iam_policy_read_write_json" {
  description = "Policy document for roles that run the task tracker against the status table."
  value       = module.status_table.iam_policy_read_write_json
}

output "status_table_iam_policy_read_only_json" {
  description = "Policy document for roles that only query the status table."
  value       = module.status_table.iam_policy_read_only_json
}
