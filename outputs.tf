# One output per pattern: every output of that pattern module as an object (see
# the "Outputs" table of modules/<pattern>/README.md), or null when the pattern
# is disabled. For example module.<name>.sqs_throttle.queue_url.
#
# Each object goes through jsondecode(jsonencode(...)) so its type follows from its
# value alone: a module output that is null can carry the type "dynamic" into the
# state at apply time and "string" at plan time, and Terraform then reports a change
# to the object on every plan (exit code 2 with -detailed-exitcode) although no value
# changed.

output "job_poller" {
  description = "Every output of modules/job-poller (state_machine_arn, run_job_function_name, metadata_bucket_name, poll_loop_fragment_json, ...), or null when job_poller is disabled."
  value       = jsondecode(jsonencode(one(module.job_poller)))
}

output "sqs_throttle" {
  description = "Every output of modules/sqs-throttle (queue_url, dlq_url, starter_function_name, ledger_table_name, producer_policy_json, ...), or null when sqs_throttle is disabled."
  value       = jsondecode(jsonencode(one(module.sqs_throttle)))
}

output "semaphore" {
  description = "Every output of modules/semaphore (table_name, acquire_states, release_states, caller_policy_json, wrapper_state_machine_arn, ...), or null when semaphore is disabled."
  value       = jsondecode(jsonencode(one(module.semaphore)))
}

output "dag_aggregate" {
  description = "Every output of modules/dag-aggregate (state_machine_arn, tasks, edges, stages, external_sources, definition, ...), or null when dag_aggregate is disabled."
  value       = jsondecode(jsonencode(one(module.dag_aggregate)))
}

output "status_table" {
  description = "Every output of modules/status-table (table_name, table_arn, table_index_name, iam_policy_read_write_json, ...), or null when status_table is disabled."
  value       = jsondecode(jsonencode(one(module.status_table)))
}

output "state_machine_arns" {
  description = "ARN of each state machine the enabled patterns created, by pattern (job_poller, dag_aggregate, semaphore_wrapper); disabled or absent ones are left out."
  value = {
    for key, arn in {
      job_poller        = try(module.job_poller[0].state_machine_arn, null)
      dag_aggregate     = try(module.dag_aggregate[0].state_machine_arn, null)
      semaphore_wrapper = try(module.semaphore[0].wrapper_state_machine_arn, null)
    } : key => arn if arn != null
  }
}
