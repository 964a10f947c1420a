output "queue_url" {
  description = "URL of the FIFO queue producers send start requests to (sfn_patterns.sqs_throttle.producer.enqueue)."
  value       = one(aws_sqs_queue.this[*].url)
}

output "queue_arn" {
  description = "ARN of the FIFO request queue."
  value       = one(aws_sqs_queue.this[*].arn)
}

output "queue_name" {
  description = "Name of the FIFO request queue."
  value       = one(aws_sqs_queue.this[*].name)
}

output "dlq_url" {
  description = "URL of the dead-letter queue: requests that failed to start max_receive_count times."
  value       = one(aws_sqs_queue.dlq[*].url)
}

output "dlq_arn" {
  description = "ARN of the dead-letter queue (alarm on its ApproximateNumberOfMessagesVisible)."
  value       = one(aws_sqs_queue.dlq[*].arn)
}

output "starter_function_name" {
  description = "Name of the starter Lambda (invoke it directly to admit now instead of at the next tick)."
  value       = module.starter.function_name
}

output "starter_function_arn" {
  description = "ARN of the starter Lambda."
  value       = module.starter.function_arn
}

output "starter_role_arn" {
  description = "ARN of the starter Lambda's IAM role."
  value       = module.starter.role_arn
}

output "starter_log_group_name" {
  description = "CloudWatch log group of the starter (one JSON run report per run)."
  value       = module.starter.log_group_name
}

output "schedule_rule_name" {
  description = "Name of the EventBridge rule that runs the starter."
  value       = one(aws_cloudwatch_event_rule.starter[*].name)
}

output "schedule_rule_arn" {
  description = "ARN of the EventBridge rule that runs the starter."
  value       = one(aws_cloudwatch_event_rule.starter[*].arn)
}

output "ledger_table_name" {
  description = "DynamoDB table of executions the starter started and has not yet seen finish."
  value       = one(aws_dynamodb_table.ledger[*].name)
}

output "ledger_table_arn" {
  description = "ARN of the ledger table."
  value       = one(aws_dynamodb_table.ledger[*].arn)
}

output "max_concurrency" {
  description = "MAX: the concurrency bound the starter enforces."
  value       = var.max_concurrency
}

output "producer_policy_json" {
  description = "IAM policy document (JSON) that lets a producer enqueue requests; attach it inline to producer roles."
  value       = var.create ? data.aws_iam_policy_document.producer.json : null
}

output "target_role_policy_json" {
  description = "Permissions policy for target_role_arn in the target's account (start, list and describe the target's executions)."
  value       = data.aws_iam_policy_document.target_role.json
}

output "target_role_trust_policy_json" {
  description = "Trust policy for target_role_arn in the target's account: only this starter's role may assume it."
  value       = data.aws_iam_policy_document.target_role_trust.json
}

output "alarms" {
  description = "Each watched signal (starter-errors, starter-not-running, dlq-messages, queue-oldest-message, ...) mapped to its alarm's name and ARN; empty when none is created (alarms.create false, or null with no alarm_actions)."
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

output "role_arns" {
  description = "ARN of every IAM role the module created, by component (starter; empty when create is false): the principals for a key policy or trust policy that names roles."
  value       = var.create ? { starter = module.starter.role_arn } : {}
}
