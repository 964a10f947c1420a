output "patterns" {
  description = "Each case's per-pattern outputs of the root module (null when disabled)."
  value = {
    for case, root in module.sfn_patterns : case => {
      job_poller    = root.job_poller
      sqs_throttle  = root.sqs_throttle
      semaphore     = root.semaphore
      dag_aggregate = root.dag_aggregate
      status_table  = root.status_table
    }
  }
}

output "state_machine_arns" {
  description = "Each case's state machine ARNs by pattern."
  value       = { for case, root in module.sfn_patterns : case => root.state_machine_arns }
}
