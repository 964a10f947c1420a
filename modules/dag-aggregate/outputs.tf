output "state_machine_arn" {
  description = "ARN of the state machine to start for a run (the coordinator with strategy = dependency; its input may name a run_id)."
  value       = local.dependency ? module.coordinator.state_machine_arn : module.state_machine.state_machine_arn
}

output "state_machine_arn_static" {
  description = "ARN of that state machine, known at plan time (use it to avoid dependency cycles)."
  value       = local.dependency ? module.coordinator.state_machine_arn_static : module.state_machine.state_machine_arn_static
}

output "role_arn" {
  description = "ARN of that state machine's IAM role."
  value       = local.dependency ? module.coordinator.role_arn : module.state_machine.role_arn
}

output "log_group_name" {
  description = "CloudWatch log group of that state machine's executions."
  value       = local.dependency ? module.coordinator.log_group_name : module.state_machine.log_group_name
}

output "tasks" {
  description = "Every task (table name) the planner found in sql_dir."
  value       = try(local.plan.tasks, null)
}

output "edges" {
  description = "Dependencies after transitive reduction, as [parent, child] pairs."
  value       = try(local.plan.edges, null)
}

output "stages" {
  description = "Task lists in execution order, for a level strategy (null for dependency, which has no stages)."
  value       = try(local.plan.stages[var.strategy], null)
}

output "external_sources" {
  description = "External tables the SQL actually reads (each matched a declared pattern; they must exist before a run)."
  value       = try(keys(local.plan.external_sources), null)
}

output "definition" {
  description = "The rendered Amazon States Language definition (the coordinator's with strategy = dependency)."
  value       = local.dependency ? (var.create ? local.coordinator_definition : null) : local.definition
}

output "task_state_machine_arn" {
  description = "strategy = dependency: ARN of the task state machine (one execution per task and attempt)."
  value       = module.task_machine.state_machine_arn
}

output "task_definition" {
  description = "strategy = dependency: the task state machine's ASL definition."
  value       = local.task_definition
}

output "runtime_function_name" {
  description = "strategy = dependency: name of the runtime Lambda (start, task_done, ended task executions)."
  value       = module.runtime.function_name
}

output "runtime_function_arn" {
  description = "strategy = dependency: ARN of the runtime Lambda."
  value       = module.runtime.function_arn
}

output "runs_table_name" {
  description = "strategy = dependency: DynamoDB table of run and task statuses (pk = run id, sk = run | task#<name>)."
  value       = one(aws_dynamodb_table.runs[*].name)
}

output "runs_table_arn" {
  description = "strategy = dependency: ARN of the runs table."
  value       = one(aws_dynamodb_table.runs[*].arn)
}

output "plan_bucket" {
  description = "strategy = dependency: S3 bucket holding the plan document."
  value       = one(aws_s3_bucket.plan[*].id)
}

output "run_results_uri" {
  description = "strategy = dependency: S3 location of the run documents (<uri><run id>/run_results.json; schema in the README), also the coordinator's sfn-patterns:run-results tag."
  value       = local.run_results_uri
}

output "plan_key" {
  description = "strategy = dependency: S3 key of the plan document (it names the document's SHA-256)."
  value       = local.plan_key
}

output "priorities" {
  description = "strategy = dependency: each task's priority, its longest remaining path by estimated duration."
  value       = local.create_dependency ? { for name, task in jsondecode(local.dependency_document.document).tasks : name => task.priority } : null
}

output "token_table_name" {
  description = "poll.completion = event: DynamoDB table of the tasks' parked task tokens by statement id (null otherwise)."
  value       = module.completion.table_name
}

output "completion_function_name" {
  description = "poll.completion = event: the function that resumes tasks on their statements' status-change events (null otherwise)."
  value       = module.completion.function_name
}

output "completion_rule_name" {
  description = "poll.completion = event: the EventBridge rule on the tasks' statement status-change events (null otherwise)."
  value       = module.completion.rule_name
}

output "alarms" {
  description = "Each watched signal (dag-executions-failed, runtime-errors, runs-write-throttles, ...) mapped to its alarm's name and ARN; empty when none is created (alarms.create false, or null with no alarm_actions)."
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
  description = "ARN of every IAM role the module created, by component (state_machine for strategy level; coordinator, task_machine and runtime for dependency; completion with poll.completion event; absent ones left out): the principals for a key policy or trust policy that names roles."
  value = var.create ? merge(
    local.dependency ? {
      coordinator  = module.coordinator.role_arn
      task_machine = module.task_machine.role_arn
      runtime      = module.runtime.role_arn
    } : { state_machine = module.state_machine.role_arn },
    local.event_completion ? { completion = module.completion.role_arn } : {},
  ) : {}
}

locals {
  # What `sfn-patterns dag run | retry | status` call (cli/sfn_patterns_cli/dag_aggregate/
  # runs.py): the coordinator's definition, tags and executions, and the run documents.
  operator_statements = local.create_dependency ? concat([
    {
      Sid      = "StartRuns"
      Effect   = "Allow"
      Action   = ["states:DescribeStateMachine", "states:ListTagsForResource", "states:StartExecution"]
      Resource = module.coordinator.state_machine_arn_static
    },
    {
      Sid      = "FollowRuns"
      Effect   = "Allow"
      Action   = ["states:DescribeExecution"]
      Resource = "arn:${local.partition}:states:${local.region}:${local.account_id}:execution:${var.name}:*"
    },
    {
      Sid      = "ReadRunResults"
      Effect   = "Allow"
      Action   = ["s3:GetObject"]
      Resource = "${aws_s3_bucket.plan[0].arn}/${local.run_results_prefix}*"
    },
    ],
    # The bucket and the state machines encrypt with the caller's key: S3 decrypts a run
    # document, and Step Functions the coordinator's definition and executions, as the reader.
    var.kms_key_arn == null ? [] : [
      { Sid = "DecryptRunResults", Effect = "Allow", Action = ["kms:Decrypt"], Resource = var.kms_key_arn },
  ]) : []
}

output "operator_policy_json" {
  description = "strategy = dependency: IAM policy document for whoever runs `sfn-patterns dag run | retry | status` on this DAG (describe, tag-read and start the coordinator, follow its executions, read the run documents and, with kms_key_arn, kms:Decrypt on that key); null otherwise."
  value = length(local.operator_statements) == 0 ? null : jsonencode({
    Version   = "2012-10-17"
    Statement = local.operator_statements
  })
}
