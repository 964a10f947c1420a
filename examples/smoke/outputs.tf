output "state_machine_arn" {
  description = "ARN of the smoke state machine."
  value       = module.state_machine.state_machine_arn
}

output "state_machine_arn_static" {
  description = "ARN of the smoke state machine, known at plan time."
  value       = module.state_machine.state_machine_arn_static
}

output "function_name" {
  description = "Name of the echo Lambda function."
  value       = module.echo.function_name
}

output "function_log_group_name" {
  description = "CloudWatch log group of the echo Lambda function."
  value       = module.echo.log_group_name
}
