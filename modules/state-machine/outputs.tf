output "state_machine_arn" {
  description = "ARN of the state machine."
  value       = one(aws_sfn_state_machine.this[*].arn)
}

output "state_machine_arn_static" {
  description = "ARN of the state machine, known at plan time (use it to avoid dependency cycles)."
  value       = var.create ? local.arn_static : null
}

output "state_machine_name" {
  description = "Name of the state machine."
  value       = one(aws_sfn_state_machine.this[*].name)
}

output "role_name" {
  description = "Name of the state machine's IAM role (add policies to it inline)."
  value       = one(aws_iam_role.this[*].name)
}

output "role_arn" {
  description = "ARN of the state machine's IAM role."
  value       = one(aws_iam_role.this[*].arn)
}

output "log_group_name" {
  description = "CloudWatch log group of the executions."
  value       = one(aws_cloudwatch_log_group.this[*].name)
}
