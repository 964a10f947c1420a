output "dashboard_name" {
  description = "Name of the dashboard; null when create is false."
  value       = one(aws_cloudwatch_dashboard.this[*].dashboard_name)
}

output "dashboard_arn" {
  description = "ARN of the dashboard; null when create is false."
  value       = one(aws_cloudwatch_dashboard.this[*].dashboard_arn)
}

output "dashboard_body" {
  description = "The dashboard body (JSON), as sent to CloudWatch."
  value       = local.body
}
