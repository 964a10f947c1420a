# The root module: the five pattern modules, each behind its own switch
# (var.<pattern>.create, off by default), with one set of shared inputs: name
# prefix, tags, KMS key, log retention and the Python that runs at plan time.
#
# A disabled pattern is a module with count = 0: Terraform evaluates none of its
# inputs, so a pattern's required settings (a target ARN, a SQL directory) are
# needed only once it is created.

locals {
  names = {
    job_poller    = coalesce(var.job_poller.name, var.name_prefix)
    sqs_throttle  = coalesce(var.sqs_throttle.name, "${var.name_prefix}-throttle")
    semaphore     = coalesce(var.semaphore.name, "${var.name_prefix}-semaphore")
    dag_aggregate = coalesce(var.dag_aggregate.name, "${var.name_prefix}-dag")
    status_table  = coalesce(var.status_table.name, "${var.name_prefix}-tasks")
  }
}

module "job_poller" {
  source = "./modules/job-poller"
  count  = var.job_poller.create ? 1 : 0

  alarms           = var.job_poller.alarms
  create_dashboard = var.job_poller.create_dashboard

  name                           = local.names.job_poller
  poller_name                    = var.job_poller.poller_name
  initial_wait_seconds           = var.job_poller.initial_wait_seconds
  poll_interval_seconds          = var.job_poller.poll_interval_seconds
  timeout_seconds                = var.job_poller.timeout_seconds
  timeout_strategy               = var.job_poller.timeout_strategy
  polling                        = var.job_poller.polling
  poll_backoff_rate              = var.job_poller.poll_backoff_rate
  poll_max_interval_seconds      = var.job_poller.poll_max_interval_seconds
  completion                     = var.job_poller.completion
  fallback_seconds               = var.job_poller.fallback_seconds
  completion_event               = var.job_poller.completion_event
  metadata_store                 = var.job_poller.metadata_store
  job_adapter                    = var.job_poller.job_adapter
  create_sample_job              = var.job_poller.create_sample_job
  aws_sdk_job                    = var.job_poller.aws_sdk_job
  task_retry                     = var.job_poller.task_retry
  lambda_runtime                 = var.job_poller.lambda_runtime
  lambda_memory_size             = var.job_poller.lambda_memory_size
  lambda_timeout                 = var.job_poller.lambda_timeout
  s3_force_destroy               = var.job_poller.s3_force_destroy
  s3_expiration_days             = var.job_poller.s3_expiration_days
  logging_level                  = var.job_poller.logging_level
  logging_include_execution_data = var.job_poller.logging_include_execution_data
  tracing_enabled                = var.job_poller.tracing_enabled
  lambda_package                 = var.job_poller.lambda_package
  fragment_next_states           = var.job_poller.fragment_next_states

  kms_key_arn                       = var.kms_key_arn
  cloudwatch_logs_retention_in_days = var.cloudwatch_logs_retention_in_days
  python_executable                 = var.python_executable
  tags                              = var.tags

  role_path                 = var.role_path
  role_permissions_boundary = var.role_permissions_boundary
}

module "sqs_throttle" {
  source = "./modules/sqs-throttle"
  count  = var.sqs_throttle.create ? 1 : 0

  alarms           = var.sqs_throttle.alarms
  create_dashboard = var.sqs_throttle.create_dashboard

  name                          = local.names.sqs_throttle
  target_state_machine_arn      = var.sqs_throttle.target_state_machine_arn
  target_role_arn               = var.sqs_throttle.target_role_arn
  max_concurrency               = var.sqs_throttle.max_concurrency
  schedule_expression           = var.sqs_throttle.schedule_expression
  schedule_enabled              = var.sqs_throttle.schedule_enabled
  max_messages_per_run          = var.sqs_throttle.max_messages_per_run
  max_seconds_per_run           = var.sqs_throttle.max_seconds_per_run
  recheck_seconds               = var.sqs_throttle.recheck_seconds
  max_receive_count             = var.sqs_throttle.max_receive_count
  visibility_timeout_seconds    = var.sqs_throttle.visibility_timeout_seconds
  message_retention_seconds     = var.sqs_throttle.message_retention_seconds
  dlq_message_retention_seconds = var.sqs_throttle.dlq_message_retention_seconds
  content_based_deduplication   = var.sqs_throttle.content_based_deduplication
  ledger_ttl_seconds            = var.sqs_throttle.ledger_ttl_seconds
  lambda_runtime                = var.sqs_throttle.lambda_runtime
  lambda_memory_size            = var.sqs_throttle.lambda_memory_size

  kms_data_key_reuse_period_seconds = var.sqs_throttle.kms_data_key_reuse_period_seconds

  # One key for everything: the queues use it too (null keeps SQS-managed SSE).
  kms_key_arn                       = var.kms_key_arn
  cloudwatch_logs_retention_in_days = var.cloudwatch_logs_retention_in_days
  python_executable                 = var.python_executable
  tags                              = var.tags

  role_path                 = var.role_path
  role_permissions_boundary = var.role_permissions_boundary
}

module "semaphore" {
  source = "./modules/semaphore"
  count  = var.semaphore.create ? 1 : 0

  alarms           = var.semaphore.alarms
  create_dashboard = var.semaphore.create_dashboard

  name                           = local.names.semaphore
  strategy                       = var.semaphore.strategy
  fairness                       = var.semaphore.fairness
  fallback_seconds               = var.semaphore.fallback_seconds
  target_role_arn                = var.semaphore.target_role_arn
  history_reserved_events        = var.semaphore.history_reserved_events
  max_concurrency                = var.semaphore.max_concurrency
  lock_key                       = var.semaphore.lock_key
  lease_seconds                  = var.semaphore.lease_seconds
  wait_min_seconds               = var.semaphore.wait_min_seconds
  wait_max_seconds               = var.semaphore.wait_max_seconds
  acquire_timeout_seconds        = var.semaphore.acquire_timeout_seconds
  holder_state_machine_arns      = var.semaphore.holder_state_machine_arns
  reconciler_enabled             = var.semaphore.reconciler_enabled
  reconciler_schedule_expression = var.semaphore.reconciler_schedule_expression
  event_cleanup_enabled          = var.semaphore.event_cleanup_enabled
  create_wrapper                 = var.semaphore.create_wrapper
  target_state_machine_arn       = var.semaphore.target_state_machine_arn
  target_kms_key_arn             = var.semaphore.target_kms_key_arn
  holder_kms_key_arns            = var.semaphore.holder_kms_key_arns
  fragment_state_prefix          = var.semaphore.fragment_state_prefix
  fragment_acquired_next         = var.semaphore.fragment_acquired_next
  fragment_release_next          = var.semaphore.fragment_release_next
  point_in_time_recovery_enabled = var.semaphore.point_in_time_recovery_enabled
  deletion_protection_enabled    = var.semaphore.deletion_protection_enabled
  logging_level                  = var.semaphore.logging_level
  logging_include_execution_data = var.semaphore.logging_include_execution_data

  kms_key_arn                       = var.kms_key_arn
  cloudwatch_logs_retention_in_days = var.cloudwatch_logs_retention_in_days
  python_executable                 = var.python_executable
  tags                              = var.tags

  role_path                 = var.role_path
  role_permissions_boundary = var.role_permissions_boundary
}

module "dag_aggregate" {
  source = "./modules/dag-aggregate"
  count  = var.dag_aggregate.create ? 1 : 0

  alarms           = var.dag_aggregate.alarms
  create_dashboard = var.dag_aggregate.create_dashboard

  name            = local.names.dag_aggregate
  sql_dir         = var.dag_aggregate.sql_dir
  sql_schema      = var.dag_aggregate.sql_schema
  strategy        = var.dag_aggregate.strategy
  max_concurrency = var.dag_aggregate.max_concurrency
  redshift        = var.dag_aggregate.redshift
  poll            = var.dag_aggregate.poll
  external_tables = var.dag_aggregate.external_tables
  search_path     = var.dag_aggregate.search_path
  parse_cache_dir = var.dag_aggregate.parse_cache_dir

  run_timeout_seconds            = var.dag_aggregate.run_timeout_seconds
  task_execution_timeout_seconds = var.dag_aggregate.task_execution_timeout_seconds
  logging_level                  = var.dag_aggregate.logging_level
  logging_include_execution_data = var.dag_aggregate.logging_include_execution_data
  run_results_expiration_days    = var.dag_aggregate.run_results_expiration_days
  point_in_time_recovery_enabled = var.dag_aggregate.point_in_time_recovery_enabled

  kms_key_arn                       = var.kms_key_arn
  cloudwatch_logs_retention_in_days = var.cloudwatch_logs_retention_in_days
  python_executable                 = var.python_executable
  tags                              = var.tags

  role_path                 = var.role_path
  role_permissions_boundary = var.role_permissions_boundary
}

module "status_table" {
  source = "./modules/status-table"
  count  = var.status_table.create ? 1 : 0

  alarms           = var.status_table.alarms
  create_dashboard = var.status_table.create_dashboard

  name                           = local.names.status_table
  billing_mode                   = var.status_table.billing_mode
  provisioned_capacity           = var.status_table.provisioned_capacity
  point_in_time_recovery_enabled = var.status_table.point_in_time_recovery_enabled
  deletion_protection_enabled    = var.status_table.deletion_protection_enabled
  ttl_enabled                    = var.status_table.ttl_enabled
  stream_enabled                 = var.status_table.stream_enabled
  stream_view_type               = var.status_table.stream_view_type

  # The table is the module's only resource: no log group to retain.
  kms_key_arn = var.kms_key_arn
  tags        = var.tags
}

# The first root module had one unconditional status table; it is now
# module.status_table[0]. See UPGRADING.md for the policy on moved blocks.
moved {
  from = module.status_table
  to   = module.status_table[0]
}
