output "state_machine_arn" {
  description = "ARN of the DAG state machine."
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
