locals {
  # Built from the table's name, not read from the table: known at plan time, so callers
  # can attach the policy outputs in the same plan that creates the table (as
  # event-completion does with its token table). The plan test checks it equals the
  # ARN the provider returns.
  table_arn = var.create ? "arn:${one(data.aws_partition.current[*].partition)}:dynamodb:${one(data.aws_region.current[*].region)}:${one(data.aws_caller_identity.current[*].account_id)}:table/${var.name}" : null
  index_arn = local.table_arn == null ? null : "${local.table_arn}/index/${local.index_name}"
  # What sfn_patterns.status_table.Tracker calls, each action on the ARN AWS decides it
  # on: item reads and DescribeTable (table_exists) on the table, Query on the status
  # index only (the tracker never queries the table itself), and the conditional writes
  # on the table (a TransactWriteItems is decided as its items' UpdateItem/PutItem).
  item_reads  = ["dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:DescribeTable"]
  item_writes = ["dynamodb:PutItem", "dynamodb:UpdateItem"]
  read_statements = local.table_arn == null ? [] : concat([
    { Sid = "ReadStatusTable", Effect = "Allow", Action = local.item_reads, Resource = local.table_arn },
    { Sid = "QueryStatusIndex", Effect = "Allow", Action = ["dynamodb:Query"], Resource = local.index_arn },
    ],
    # A table encrypted with the caller's key: DynamoDB asks for kms:Decrypt as the
    # caller on every read and write (the table key), so readers and writers need it.
    var.kms_key_arn == null ? [] : [
      { Sid = "UseTheTableKey", Effect = "Allow", Action = ["kms:Decrypt"], Resource = var.kms_key_arn },
  ])
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
  description = "IAM policy document for a reader of the tasks (get, the status queries): item reads on this table, Query on its status index and, with kms_key_arn, kms:Decrypt on that key; nothing else."
  value = local.table_arn == null ? null : jsonencode({
    Version   = "2012-10-17"
    Statement = local.read_statements
  })
}

output "iam_policy_read_write_json" {
  description = "IAM policy document for a worker running the tracker (create, claim, heartbeat, finish, chain, query): the read-only statements plus PutItem and UpdateItem on this table."
  value = local.table_arn == null ? null : jsonencode({
    Version = "2012-10-17"
    Statement = concat(local.read_statements, [
      { Sid = "WriteStatusTable", Effect = "Allow", Action = local.item_writes, Resource = local.table_arn },
    ])
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
