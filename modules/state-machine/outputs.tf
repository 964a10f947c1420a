output "state_machine_arn" {
  description = "ARN of the state machine."
  value       = try(aws_sfn_state_machine.this[0].arn, null)
}

output "state_machine_arn_static" {
  description = "ARN of the state machine, known at plan time (use it to avoid dependency cycles)."
  value       = var.create ? local.arn_static : null
}

output "state_machine_name" {
  description = "Name of the state machine."
  value       = try(aws_sfn_state_machine.this[0].name, null)
}

output "role_name" {
  description = "Name of the state machine's IAM role (add policies to it inline)."
  value       = try(aws_iam_role.this[0].name, null)
}

output "role_arn" {
  description = "ARN of the state machine's IAM role."
  value       = try(aws_iam_role.this[0].arn, null)
}

output "log_group_name" {
  description = "CloudWatch log group of the executions."
  value       = try(aws_cloudwatch_log_group.this[0].name, null)
}
