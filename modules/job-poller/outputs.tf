output "state_machine_arn" {
  description = "ARN of the job poller state machine."
  value       = module.state_machine.state_machine_arn
}

output "state_machine_arn_static" {
  description = "ARN of the state machine, known at plan time (use it to avoid dependency cycles)."
  value       = module.state_machine.state_machine_arn_static
}

output "state_machine_name" {
  description = "Name of the job poller state machine."
  value       = module.state_machine.state_machine_name
}

output "role_arn" {
  description = "ARN of the state machine's IAM role."
  value       = module.state_machine.role_arn
}

output "log_group_name" {
  description = "CloudWatch log group of the state machine's execution logs."
  value       = module.state_machine.log_group_name
}

output "run_job_function_name" {
  description = "Name of the generic Run Job Lambda (null in the aws-sdk variant)."
  value       = module.run_job.function_name
}

output "get_job_status_function_name" {
  description = "Name of the generic Get Job Status Lambda (null in the aws-sdk variant)."
  value       = module.get_job_status.function_name
}

output "sample_job_function_name" {
  description = "Name of the sample job runner Lambda (null unless the sample job is deployed)."
  value       = module.sample_job.function_name
}

output "lambda_function_arns" {
  description = "ARNs of the Lambdas this module created, by role (run_job, get_job_status, sample_job)."
  value = {
    run_job        = module.run_job.function_arn
    get_job_status = module.get_job_status.function_arn
    sample_job     = module.sample_job.function_arn
  }
}

output "metadata_bucket_name" {
  description = "S3 bucket of start times and sample job statuses (null unless metadata_store is s3 and a store is needed)."
  value       = one(aws_s3_bucket.metadata[*].bucket)
}

output "metadata_table_name" {
  description = "DynamoDB table of start times and sample job statuses (null unless metadata_store is dynamodb and a store is needed)."
  value       = one(aws_dynamodb_table.metadata[*].name)
}

output "metadata_table_arn" {
  description = "ARN of the metadata table, known at plan time, for your own policies (null unless the table is created)."
  value       = one([for table in aws_dynamodb_table.metadata : local.table_arn])
}

output "metadata_bucket_arn" {
  description = "ARN of the metadata bucket, known at plan time, for your own policies (null unless the bucket is created)."
  value       = one([for bucket in aws_s3_bucket.metadata : local.bucket_arn])
}

output "state_path" {
  description = "JSONPath under which the loop keeps its data (run.handle, status, error; loop.wait_count with polling = loop)."
  value       = local.state_path
}

output "max_wait_count" {
  description = "Polls (or, with completion = event, fallback checks) after which the loop times out, +1 backstop with start-time."
  value       = local.max_polls
}

output "history_events_worst_case" {
  description = "Worst-case execution history events of one execution, every poll and retry used (plan fails above 25,000)."
  value       = local.history_events_worst_case

  precondition {
    condition     = !var.create || local.history_events_worst_case <= 25000
    error_message = "Worst-case execution history of the ${var.poller_name} poller (${local.shape}) exceeds the 25,000-event limit of Step Functions: ${local.history_formula} = ${local.history_events_worst_case} events. ${local.history_advice}"
  }
}

output "cost_model" {
  description = "Per-job cost of the chosen wait: state transitions and history events fixed and per poll (or fallback check), Lambda invocations, the most polls the timeout allows, and the worst-case history."
  value       = local.cost_model
}

output "poll_loop_template" {
  description = "File name in templates/job-poller of the wait this module renders (poll-retry, poll-loop-assign, poll-loop, poll-event or poll-event-sdk)."
  value       = local.shape_templates[local.shape]
}

output "token_table_name" {
  description = "completion = event: DynamoDB table of parked task tokens by job id (null otherwise)."
  value       = module.completion.table_name
}

output "completion_function_name" {
  description = "completion = event: the function that resumes parked executions on completion events (null otherwise)."
  value       = module.completion.function_name
}

output "completion_rule_name" {
  description = "completion = event: the EventBridge rule on the job's completion events (null otherwise)."
  value       = module.completion.rule_name
}

output "definition" {
  description = "The rendered ASL definition of the state machine."
  value       = local.definition
}

output "poll_loop_fragment_json" {
  description = "The poll loop as an ASL fragment: a JSON object of states to merge into another machine's States."
  value       = local.output_fragment
}

output "poll_loop_embedder_policy_json" {
  description = "IAM policy document for the role of a state machine that embeds poll_loop_fragment_json: what the loop's states call (the job Lambdas, or the AWS SDK job's and the completion's grants), the same statements as this module's own machine; null when create is false."
  value       = one(data.aws_iam_policy_document.embedder[*].json)
}

output "poll_loop_entry_state" {
  description = "Name of the fragment's entry state (point the state that starts the job here)."
  value       = local.entry_state
}

output "poll_loop_exit_states" {
  description = "State names the fragment exits to: succeeded, failed, timeout, unknown and error."
  value       = local.output_exits
}

output "poll_loop_template_vars" {
  description = "templatefile variables of the poll_loop_template (in templates/job-poller) except the *_next exits, to render more loops."
  value       = local.fragment_vars
}

output "alarms" {
  description = "Each watched signal (state-machine-executions-failed, run-job-errors, completion-rule-failed-invocations, ...) mapped to its alarm's name and ARN; empty when none is created (alarms.create false, or null with no alarm_actions)."
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
  description = "ARN of every IAM role the module created, by component (state_machine, run_job, get_job_status, sample_job, completion; absent ones left out): the principals for a key policy or trust policy that names roles."
  value = var.create ? merge(
    { state_machine = module.state_machine.role_arn },
    local.use_lambda ? { run_job = module.run_job.role_arn, get_job_status = module.get_job_status.role_arn } : {},
    local.sample_job ? { sample_job = module.sample_job.role_arn } : {},
    local.event ? { completion = module.completion.role_arn } : {},
  ) : {}
}
