output "lambda_state_machine_arn" {
  description = "ARN of the Lambda-variant poller (sample job, start-time timeout, S3 store)."
  value       = module.lambda.state_machine_arn
}

output "lambda_state_machine_arn_static" {
  description = "ARN of the Lambda-variant poller, known at plan time."
  value       = module.lambda.state_machine_arn_static
}

output "sdk_state_machine_arn" {
  description = "ARN of the aws-sdk-variant poller (StartExecution/DescribeExecution, wait-count timeout)."
  value       = module.sdk.state_machine_arn
}

output "child_state_machine_arn" {
  description = "ARN of the child state machine the aws-sdk variant starts and polls."
  value       = module.child.state_machine_arn
}

output "metadata_bucket_name" {
  description = "S3 bucket holding the Lambda variant's start times and sample job statuses."
  value       = module.lambda.metadata_bucket_name
}

output "lambda_function_names" {
  description = "Names of the Lambda variant's functions."
  value = [
    module.lambda.run_job_function_name,
    module.lambda.get_job_status_function_name,
    module.lambda.sample_job_function_name,
  ]
}

output "lambda_max_wait_count" {
  description = "Poll waits after which the Lambda variant's counter backstop times out."
  value       = module.lambda.max_wait_count
}

output "events_state_machine_arn" {
  description = "ARN of the event-completed poller (sample job, completion = event)."
  value       = module.events.state_machine_arn
}

output "events_token_table_name" {
  description = "Token table of the event-completed poller (parked task tokens by job id)."
  value       = module.events.token_table_name
}

output "events_completion_function_name" {
  description = "Function that resumes the event-completed poller's executions on the sample job's events."
  value       = module.events.completion_function_name
}

output "events_completion_rule_name" {
  description = "EventBridge rule on the sample job's completion events."
  value       = module.events.completion_rule_name
}

output "events_metadata_table_name" {
  description = "DynamoDB table where the event-completed poller's sample job records its status and end time."
  value       = module.events.metadata_table_name
}

output "cost_models" {
  description = "Each poller's cost model: transitions and history events fixed and per poll (or fallback check), and the worst-case history."
  value = {
    lambda = module.lambda.cost_model
    sdk    = module.sdk.cost_model
    events = module.events.cost_model
  }
}

output "sdk_max_wait_count" {
  description = "Poll waits after which the aws-sdk variant times out."
  value       = module.sdk.max_wait_count
}

output "poll_loop_fragment_json" {
  description = "The Lambda variant's poll loop as a mergeable ASL fragment."
  value       = module.lambda.poll_loop_fragment_json
}

output "poll_loop_embedder_policy_json" {
  description = "The policy for the role of a state machine that embeds the Lambda variant's poll loop."
  value       = module.lambda.poll_loop_embedder_policy_json
}

output "alarms" {
  description = "Each signal of each poller (lambda, events, sdk) mapped to its alarm's name and ARN."
  value       = { lambda = module.lambda.alarms, events = module.events.alarms, sdk = module.sdk.alarms }
}

output "dashboard_names" {
  description = "Name of each poller's dashboard; null unless create_dashboard."
  value       = { lambda = module.lambda.dashboard_name, events = module.events.dashboard_name, sdk = module.sdk.dashboard_name }
}
