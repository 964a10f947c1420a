output "deployments" {
  description = "Strategy -> its state machine's ARN and its tasks (as the example's outputs state_machine_arn and tasks)."
  value = {
    for strategy, dag in module.dag : strategy => {
      state_machine_arn = dag.state_machine_arn
      tasks             = dag.tasks
    }
  }
}
