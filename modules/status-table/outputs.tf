locals {
  table_arn   = one(aws_dynamodb_table.this[*].arn)
  index_arn   = local.table_arn == null ? null : "${local.table_arn}/index/${local.index_name}"
  read_only   = ["dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:DescribeTable", "dynamodb:ConditionCheckItem"]
  write_extra = ["dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem"]
}

output "table_name" {
  description = "Name of the task table (pass it to Tracker(table_name=...))."
  value       = one(aws_dynamodb_table.this[*].name)
}

output "table_arn" {
  description = "ARN of the task table."
  value       = local.table_arn
}

output "table_index_name" {
  description = "Name of the status and update-time index the tracker queries."
  value       = local.index_name
}

output "table_index_arn" {
  description = "ARN of the status and update-time index."
  value       = local.index_arn
}

output "table_stream_arn" {
  description = "ARN of the table's stream, or null when streams are disabled."
  value       = var.stream_enabled ? one(aws_dynamodb_table.this[*].stream_arn) : tostring(null)
}

output "iam_policy_read_only_json" {
  description = "IAM policy document allowing reads and queries of this table and its index only."
  value = local.table_arn == null ? null : jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid      = "ReadStatusTable"
      Effect   = "Allow"
      Action   = local.read_only
      Resource = [local.table_arn, local.index_arn]
    }]
  })
}

output "iam_policy_read_write_json" {
  description = "IAM policy document allowing everything the tracker does (reads, conditional writes, transactions) on this table and its index only."
  value = local.table_arn == null ? null : jsonencode({
    Version = "2012-10-17"
    Statement = [
      {
        Sid      = "ReadStatusTable"
        Effect   = "Allow"
        Action   = local.read_only
        Resource = [local.table_arn, local.index_arn]
      },
      {
        Sid      = "WriteStatusTable"
        Effect   = "Allow"
        Action   = local.write_extra
        Resource = [local.table_arn]
      },
    ]
  })
}

output "alarms" {
  description = "Each watched signal (table-read-throttles, table-write-throttles, table-system-errors) mapped to its alarm's name and ARN; empty when none is created (alarms.create false, or null with no alarm_actions)."
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

output "metrics_environment" {
  description = "Environment variables for the functions that run the Tracker on this table: with them it prints the pattern's metrics (LeaseExpiries, RetriesExhausted, OldestPendingAge) as EMF lines under this module's name."
  value       = local.metrics_environment
}
