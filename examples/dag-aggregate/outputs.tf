output "state_machine_arn" {
  description = "ARN of the state machine to start (the coordinator with strategy = dependency)."
  value       = module.dag.state_machine_arn
}

output "stages" {
  description = "Task lists in execution order."
  value       = module.dag.stages
}

output "tasks" {
  description = "Every task of the example DAG."
  value       = module.dag.tasks
}

output "edges" {
  description = "Reduced dependencies as [parent, child] pairs."
  value       = module.dag.edges
}

output "task_state_machine_arn" {
  description = "strategy = dependency: the task state machine (one execution per task)."
  value       = module.dag.task_state_machine_arn
}

output "runs_table_name" {
  description = "strategy = dependency: DynamoDB table of run and task statuses."
  value       = module.dag.runs_table_name
}

output "priorities" {
  description = "strategy = dependency: longest remaining path of each task."
  value       = module.dag.priorities
}

output "completion_rule_name" {
  description = "completion = event: the rule on the tasks' statement status-change events."
  value       = module.dag.completion_rule_name
}

output "run_results_uri" {
  description = "strategy = dependency: where each run's run_results.json is written."
  value       = module.dag.run_results_uri
}

output "runtime_function_name" {
  description = "strategy = dependency: the runtime Lambda (its log has one line per call, with its DynamoDB requests)."
  value       = module.dag.runtime_function_name
}

output "alarms" {
  description = "Each signal the DAG watches mapped to its alarm's name and ARN."
  value       = module.dag.alarms
}

output "dashboard_name" {
  description = "Name of the pattern module's dashboard; null unless create_dashboard."
  value       = module.dag.dashboard_name
}

output "operator_policy_json" {
  description = "strategy = dependency: the policy to attach to whoever runs `sfn-patterns dag run | retry | status` on this DAG."
  value       = module.dag.operator_policy_json
}
