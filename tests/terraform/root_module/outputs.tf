output "patterns" {
  description = "The root module's per-pattern outputs (null when disabled)."
  value = {
    job_poller    = module.sfn_patterns.job_poller
    sqs_throttle  = module.sfn_patterns.sqs_throttle
    semaphore     = module.sfn_patterns.semaphore
    dag_aggregate = module.sfn_patterns.dag_aggregate
    status_table  = module.sfn_patterns.status_table
  }
}

output "state_machine_arns" {
  description = "The root module's state machine ARNs by pattern."
  value       = module.sfn_patterns.state_machine_arns
}
