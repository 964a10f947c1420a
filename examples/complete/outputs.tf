output "name_prefix" {
  description = "The prefix every resource name starts with."
  value       = var.name_prefix
}

output "alarm_topic_arn" {
  description = "ARN of the SNS topic every pattern's alarms notify (subscribe your on-call to it)."
  value       = aws_sns_topic.alarms.arn
}

output "kms_key_arn" {
  description = "ARN of the shared customer managed key (null when create_kms_key is false)."
  value       = local.kms_key_arn
}

output "job_poller" {
  description = "Every output of the job-poller pattern (state_machine_arn, metadata_bucket_name, run_job_function_name, ...)."
  value       = module.sfn_patterns.job_poller
}

output "sqs_throttle" {
  description = "Every output of the sqs-throttle pattern (queue_url, dlq_url, starter_function_name, ledger_table_name, ...)."
  value       = module.sfn_patterns.sqs_throttle
}

output "semaphore" {
  description = "Every output of the semaphore pattern (table_name, lock_key, wrapper_state_machine_arn, reconciler_function_name, ...)."
  value       = module.sfn_patterns.semaphore
}

output "dag_aggregate" {
  description = "Every output of the dag-aggregate pattern (state_machine_arn, tasks, edges, stages, ...)."
  value       = module.sfn_patterns.dag_aggregate
}

output "status_table" {
  description = "Every output of the status-table pattern (table_name, table_arn, table_index_name, ...)."
  value       = module.sfn_patterns.status_table
}

output "state_machine_arns" {
  description = "ARN of each pattern state machine, by pattern (job_poller, dag_aggregate, semaphore_wrapper)."
  value       = module.sfn_patterns.state_machine_arns
}

output "throttled_work_state_machine_arn" {
  description = "ARN of the stand-in workflow sqs-throttle admits (enqueue requests for it on sqs_throttle.queue_url)."
  value       = module.throttled_work.state_machine_arn
}

output "critical_work_state_machine_arn" {
  description = "ARN of the stand-in workflow the semaphore wrapper runs while it holds a slot."
  value       = module.critical_work.state_machine_arn
}

output "dag_warehouse" {
  description = "Where and from what the DAG runs: database, workgroup_name, sql_dir, setup_sql (run it and the DDL before the first execution) and schema."
  value = {
    database       = var.redshift_database
    workgroup_name = var.redshift_workgroup_name
    sql_dir        = abspath("${path.module}/../dag-aggregate/sql")
    setup_sql      = abspath("${path.module}/../dag-aggregate/setup.sql")
    schema         = "agg"
  }
}
