output "function_name" {
  description = "Name of the Lambda function."
  value       = one(aws_lambda_function.this[*].function_name)
}

output "function_arn" {
  description = "ARN of the Lambda function."
  value       = one(aws_lambda_function.this[*].arn)
}

output "function_arn_static" {
  description = "ARN of the Lambda function, known at plan time (use it to avoid dependency cycles)."
  value       = var.create ? local.function_arn : null
}

output "role_name" {
  description = "Name of the function's IAM role."
  value       = one(aws_iam_role.this[*].name)
}

output "role_arn" {
  description = "ARN of the function's IAM role."
  value       = one(aws_iam_role.this[*].arn)
}

output "log_group_name" {
  description = "Name of the function's CloudWatch log group."
  value       = one(aws_cloudwatch_log_group.this[*].name)
}

output "package_sha256" {
  description = "Base64 SHA-256 of the deployed zip; it changes only when the packaged sources change."
  value       = try(local.package.base64sha256, null)
}
