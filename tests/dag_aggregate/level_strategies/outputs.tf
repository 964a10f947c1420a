output "deployments" {
  description = "Strategy -> its state machine's ARN and its tasks (as the example's outputs state_machine_arn and tasks), and what the fault plan names: the machine's role, the completion rule and function."
  value = {
    for strategy, dag in module.dag : strategy => {
      state_machine_arn    = dag.state_machine_arn
      tasks                = dag.tasks
      role_arn             = dag.role_arn
      completion_rule_name = dag.completion_rule_name
      completion_function  = dag.completion_function_name
    }
  }
}
