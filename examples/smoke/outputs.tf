output "state_machine_arn" {
  description = "ARN of the smoke state machine."
  value       = aws_sfn_state_machine.this.arn
}

output "state_machine_arn_static" {
  description = "ARN of the smoke state machine, known at plan time."
  value       = local.state_machine_arn
}

output "function_name" {
  description = "Name of the echo Lambda function."
  value       = module.echo.function_name
}

output "function_log_group_name" {
  description = "CloudWatch log group of the echo Lambda function."
  value       = module.echo.log_group_name
}
