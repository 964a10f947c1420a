# Inputs of the root module.
#
# Shared inputs (name_prefix, tags, kms_key_arn, cloudwatch_logs_retention_in_days,
# python_executable) reach every pattern module, so one prefix, one tag set, one KMS
# key and one log retention govern everything.
#
# Each pattern has one object variable: `create` switches it on (the modules' own
# switch; every pattern is off by default), `name` overrides its derived resource
# name, and every other field is the pattern module's variable of the same name with
# the same default (see modules/<pattern>/README.md). The modules validate their own
# values; the validations here catch what only the root can see (fields a pattern
# needs once it is created).

# --- Fields renamed or removed in 1.0.0 -------------------------------------------------

# Each pattern object's old field -> what replaces it (UPGRADING.md, "Renamed inputs"). The
# objects declare the old fields, typed any, only for their validations: Terraform drops
# a field an object type does not declare without a word, so a 0.x configuration's
# `enabled = true` would otherwise become create = false and plan to destroy the pattern.
locals {
  renamed_fields = {
    job_poller = {
      enabled       = "create"
      lambda_bundle = "job_adapter (or lambda_package for a prebuilt zip): the bundle registry is gone"
    }
    sqs_throttle = {
      enabled                               = "create"
      max_concurrent_executions             = "max_concurrency"
      sqs_kms_data_key_reuse_period_seconds = "kms_data_key_reuse_period_seconds"
    }
    semaphore = {
      enabled                = "create"
      semaphore_limit        = "max_concurrency"
      enable_reconciler      = "reconciler_enabled"
      enable_event_cleanup   = "event_cleanup_enabled"
      point_in_time_recovery = "point_in_time_recovery_enabled"
      deletion_protection    = "deletion_protection_enabled"
    }
    dag_aggregate = {
      enabled                                   = "create"
      task_logging_level                        = "logging_level (it now sets every state machine of the pattern)"
      runs_table_point_in_time_recovery_enabled = "point_in_time_recovery_enabled"
    }
    status_table = {
      enabled                              = "create"
      table_name                           = "name"
      table_billing_mode                   = "billing_mode"
      table_provisioned_capacity           = "provisioned_capacity"
      table_point_in_time_recovery_enabled = "point_in_time_recovery_enabled"
      table_deletion_protection_enabled    = "deletion_protection_enabled"
      table_ttl_enabled                    = "ttl_enabled"
      table_stream_enabled                 = "stream_enabled"
      table_stream_view_type               = "stream_view_type"
    }
  }
}

# --- Shared inputs --------------------------------------------------------------------

variable "name_prefix" {
  description = "Prefix of every resource name, so several deployments can share an account."
  type        = string
  default     = "sfnp"

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{0,23}$", var.name_prefix))
    error_message = "name_prefix must start with a lower-case letter and hold at most 24 lower-case letters, digits and hyphens."
  }
}

variable "tags" {
  description = "Tags added to every resource."
  type        = map(string)
  default     = {}
}

variable "kms_key_arn" {
  description = "Customer managed KMS key for encryption at rest (tables, queues, buckets, log groups, Lambda environments, state machines); null uses AWS managed keys."
  type        = string
  default     = null

  validation {
    condition     = var.kms_key_arn == null || can(regex("^arn:aws(-[a-z]+)*:kms:[a-z]+(-[a-z]+)+-[0-9]+:[0-9]{12}:key/(mrk-[0-9a-f]{32}|[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12})$", var.kms_key_arn))
    error_message = "kms_key_arn must be the ARN of a KMS key, arn:PARTITION:kms:REGION:ACCOUNT:key/KEY_ID (any partition: aws, aws-cn, aws-us-gov, ...; KEY_ID a UUID or mrk-...), or null for AWS managed keys; got ${jsonencode(var.kms_key_arn)}. A key ID, alias name or alias ARN is refused: every pattern puts it in log groups, Lambda environments and IAM policies, and DynamoDB reads the key ARN back (an alias would show a change on every plan). Look the ARN up with: aws kms describe-key --key-id alias/NAME --query KeyMetadata.Arn."
  }
}

variable "cloudwatch_logs_retention_in_days" {
  description = "Retention of every log group the modules create, in days."
  type        = number
  default     = 30

  validation {
    condition     = contains([1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653], var.cloudwatch_logs_retention_in_days)
    error_message = "cloudwatch_logs_retention_in_days must be a retention CloudWatch Logs accepts (1, 3, 5, 7, 14, 30, 60, 90, ...)."
  }
}

variable "role_path" {
  description = "Path of every IAM role the patterns create (\"/\": none); one your account's policies require, for example \"/service-roles/\"."
  type        = string
  default     = "/"

  validation {
    condition     = can(regex("^/([!-~]{1,510}/)?$", var.role_path)) && !strcontains(var.role_path, "//")
    error_message = "role_path must start and end with / (for example /service-roles/), at most 512 printable characters; got ${jsonencode(var.role_path)}."
  }
}

variable "role_permissions_boundary" {
  description = "ARN of the managed policy set as the permissions boundary of every IAM role the patterns create (null: none), for accounts whose policies require one on every role they create."
  type        = string
  default     = null

  validation {
    condition     = var.role_permissions_boundary == null || can(regex("^arn:aws(-[a-z]+)*:iam::([0-9]{12}|aws):policy/[!-~]+$", var.role_permissions_boundary))
    error_message = "role_permissions_boundary must be the ARN of an IAM managed policy, arn:PARTITION:iam::ACCOUNT:policy/NAME, or null; got ${jsonencode(var.role_permissions_boundary)}."
  }
}

variable "python_executable" {
  description = "Python 3 interpreter that builds the Lambda zips and plans the DAG at plan time (dag-aggregate needs networkx, sqlglot, jinja2 and click in it)."
  type        = string
  default     = "python3"

  validation {
    condition     = length(trimspace(var.python_executable)) > 0
    error_message = "python_executable must name a Python 3 interpreter, for example python3."
  }
}

# --- job-poller -----------------------------------------------------------------------

variable "job_poller" {
  description = "The job-poller pattern (modules/job-poller): create switches it on, name defaults to name_prefix, other fields are the module's variables."
  type = object({
    create = optional(bool, false)
    # The module's alarms variable (create, alarm_actions, ok_actions, period_seconds,
    # thresholds, ...), passed as is; {} keeps its defaults (alarms once alarm_actions is set).
    alarms                    = optional(any, {})
    create_dashboard          = optional(bool, false)
    name                      = optional(string)
    poller_name               = optional(string, "job")
    initial_wait_seconds      = optional(number, 60)
    poll_interval_seconds     = optional(number, 30)
    timeout_seconds           = optional(number, 3600)
    timeout_strategy          = optional(string, "wait-count")
    polling                   = optional(string)
    poll_backoff_rate         = optional(number, 1)
    poll_max_interval_seconds = optional(number)
    completion                = optional(string, "poll")
    fallback_seconds          = optional(number, 600)
    completion_event = optional(object({
      event_pattern      = string
      job_id_path        = string
      status_path        = string
      succeeded_statuses = list(string)
      failed_statuses    = list(string)
      job_id_state_path  = optional(string)
    }))
    metadata_store = optional(string, "s3")
    job_adapter = optional(object({
      start            = string
      status           = string
      source_path      = optional(string)
      patterns         = optional(list(string), ["**"])
      pip_requirements = optional(list(string), [])
    }))
    lambda_package = optional(object({
      local_existing_package = optional(string)
      s3_existing_package = optional(object({
        bucket     = string
        key        = string
        version_id = optional(string)
      }))
    }))
    create_sample_job = optional(bool, true)
    aws_sdk_job = optional(object({
      start_action           = string
      start_parameters_json  = string
      status_action          = string
      status_parameters_json = string
      status_path            = string
      succeeded_statuses     = list(string)
      failed_statuses        = list(string)
      running_statuses       = list(string)
      retry_errors           = optional(list(string), ["States.TaskFailed"])
      role_arn               = optional(string)
      policy_statements = list(object({
        sid       = optional(string)
        actions   = list(string)
        resources = list(string)
      }))
    }))
    task_retry = optional(object({
      interval_seconds = optional(number, 2)
      max_attempts     = optional(number, 3)
      backoff_rate     = optional(number, 2)
    }), {})
    lambda_runtime                 = optional(string, "python3.12")
    lambda_memory_size             = optional(number, 256)
    lambda_timeout                 = optional(number, 30)
    s3_force_destroy               = optional(bool, false)
    s3_expiration_days             = optional(number, 7)
    logging_level                  = optional(string, "ERROR")
    logging_include_execution_data = optional(bool, false)
    tracing_enabled                = optional(bool, false)
    fragment_next_states = optional(object({
      succeeded = optional(string)
      failed    = optional(string)
      timeout   = optional(string)
      unknown   = optional(string)
      error     = optional(string)
    }), {})
    # Renamed or removed in 1.0.0 (local.renamed_fields): declared only so that setting
    # one fails the plan; Terraform drops an undeclared field of an object silently.
    enabled       = optional(any)
    lambda_bundle = optional(any)
  })
  default  = {}
  nullable = false

  validation {
    condition     = var.job_poller.name == null || can(regex("^[a-z][a-z0-9-]{0,39}$", var.job_poller.name))
    error_message = "job_poller.name must start with a lower-case letter and hold at most 40 lower-case letters, digits and hyphens."
  }

  validation {
    condition     = alltrue([for old in keys(local.renamed_fields.job_poller) : var.job_poller[old] == null])
    error_message = "Set in job_poller, renamed or removed in 1.0.0 (UPGRADING.md, \"Renamed inputs\"): ${join("; ", [for old, now in local.renamed_fields.job_poller : "job_poller.${old} is now job_poller.${now}" if var.job_poller[old] != null])}."
  }
}

# --- sqs-throttle ---------------------------------------------------------------------

variable "sqs_throttle" {
  description = "The sqs-throttle pattern (modules/sqs-throttle): create switches it on, name defaults to <name_prefix>-throttle, target_state_machine_arn is required once created."
  type = object({
    create = optional(bool, false)
    # The module's alarms variable (create, alarm_actions, ok_actions, period_seconds,
    # thresholds, ...), passed as is; {} keeps its defaults (alarms once alarm_actions is set).
    alarms                        = optional(any, {})
    create_dashboard              = optional(bool, false)
    name                          = optional(string)
    target_state_machine_arn      = optional(string)
    target_role_arn               = optional(string)
    max_concurrency               = optional(number, 10)
    schedule_expression           = optional(string, "rate(1 minute)")
    schedule_enabled              = optional(bool, true)
    max_messages_per_run          = optional(number, 100)
    max_seconds_per_run           = optional(number, 50)
    recheck_seconds               = optional(number, 5)
    max_receive_count             = optional(number, 5)
    visibility_timeout_seconds    = optional(number, 120)
    message_retention_seconds     = optional(number, 1209600)
    dlq_message_retention_seconds = optional(number, 1209600)
    content_based_deduplication   = optional(bool, false)
    ledger_ttl_seconds            = optional(number, 86400)
    lambda_runtime                = optional(string, "python3.12")
    lambda_memory_size            = optional(number, 256)
    # With kms_key_arn set: seconds SQS reuses a data key (longer means fewer KMS calls).
    kms_data_key_reuse_period_seconds = optional(number, 300)
    # Renamed or removed in 1.0.0 (local.renamed_fields): declared only so that setting
    # one fails the plan; Terraform drops an undeclared field of an object silently.
    enabled                               = optional(any)
    max_concurrent_executions             = optional(any)
    sqs_kms_data_key_reuse_period_seconds = optional(any)
  })
  default  = {}
  nullable = false

  validation {
    condition     = !var.sqs_throttle.create || var.sqs_throttle.target_state_machine_arn != null
    error_message = "sqs_throttle.target_state_machine_arn is required when sqs_throttle.create is true: it names the state machine whose executions are throttled."
  }

  validation {
    condition     = var.sqs_throttle.name == null || can(regex("^[a-z][a-z0-9-]{0,39}$", var.sqs_throttle.name))
    error_message = "sqs_throttle.name must start with a lower-case letter and hold at most 40 lower-case letters, digits and hyphens."
  }

  validation {
    condition     = alltrue([for old in keys(local.renamed_fields.sqs_throttle) : var.sqs_throttle[old] == null])
    error_message = "Set in sqs_throttle, renamed or removed in 1.0.0 (UPGRADING.md, \"Renamed inputs\"): ${join("; ", [for old, now in local.renamed_fields.sqs_throttle : "sqs_throttle.${old} is now sqs_throttle.${now}" if var.sqs_throttle[old] != null])}."
  }
}

# --- semaphore ------------------------------------------------------------------------

variable "semaphore" {
  description = "The semaphore pattern (modules/semaphore): create switches it on, name defaults to <name_prefix>-semaphore, other fields are the module's variables."
  type = object({
    create = optional(bool, false)
    # The module's alarms variable (create, alarm_actions, ok_actions, period_seconds,
    # thresholds, ...), passed as is; {} keeps its defaults (alarms once alarm_actions is set).
    alarms                         = optional(any, {})
    create_dashboard               = optional(bool, false)
    name                           = optional(string)
    strategy                       = optional(string, "callback")
    fairness                       = optional(string)
    fallback_seconds               = optional(number)
    target_role_arn                = optional(string)
    history_reserved_events        = optional(number, 1000)
    max_concurrency                = optional(number, 1)
    lock_key                       = optional(string)
    lease_seconds                  = optional(number)
    wait_min_seconds               = optional(number)
    wait_max_seconds               = optional(number)
    acquire_timeout_seconds        = optional(number, 3600)
    holder_state_machine_arns      = optional(list(string), [])
    reconciler_enabled             = optional(bool)
    reconciler_schedule_expression = optional(string)
    event_cleanup_enabled          = optional(bool, true)
    create_wrapper                 = optional(bool, false)
    target_state_machine_arn       = optional(string)
    target_kms_key_arn             = optional(string)
    holder_kms_key_arns            = optional(list(string), [])
    fragment_state_prefix          = optional(string, "Semaphore: ")
    fragment_acquired_next         = optional(string, "Critical section")
    fragment_release_next          = optional(string)
    point_in_time_recovery_enabled = optional(bool)
    deletion_protection_enabled    = optional(bool)
    logging_level                  = optional(string, "ERROR")
    logging_include_execution_data = optional(bool, false)
    # Renamed or removed in 1.0.0 (local.renamed_fields): declared only so that setting
    # one fails the plan; Terraform drops an undeclared field of an object silently.
    enabled                = optional(any)
    semaphore_limit        = optional(any)
    enable_reconciler      = optional(any)
    enable_event_cleanup   = optional(any)
    point_in_time_recovery = optional(any)
    deletion_protection    = optional(any)
  })
  default  = {}
  nullable = false

  validation {
    condition     = !var.semaphore.create_wrapper || var.semaphore.target_state_machine_arn != null
    error_message = "semaphore.target_state_machine_arn is required when semaphore.create_wrapper is true: the wrapper runs that state machine while it holds a slot."
  }

  validation {
    condition     = var.semaphore.name == null || can(regex("^[A-Za-z][A-Za-z0-9-]{0,39}$", var.semaphore.name))
    error_message = "semaphore.name must start with a letter and hold at most 40 letters, digits and hyphens."
  }

  validation {
    condition     = alltrue([for old in keys(local.renamed_fields.semaphore) : var.semaphore[old] == null])
    error_message = "Set in semaphore, renamed or removed in 1.0.0 (UPGRADING.md, \"Renamed inputs\"): ${join("; ", [for old, now in local.renamed_fields.semaphore : "semaphore.${old} is now semaphore.${now}" if var.semaphore[old] != null])}."
  }
}

# --- dag-aggregate --------------------------------------------------------------------

variable "dag_aggregate" {
  description = "The dag-aggregate pattern (modules/dag-aggregate): create switches it on, name defaults to <name_prefix>-dag, sql_dir and redshift are required once created."
  type = object({
    create = optional(bool, false)
    # The module's alarms variable (create, alarm_actions, ok_actions, period_seconds,
    # thresholds, ...), passed as is; {} keeps its defaults (alarms once alarm_actions is set).
    alarms           = optional(any, {})
    create_dashboard = optional(bool, false)
    name             = optional(string)
    sql_dir          = optional(string)
    sql_schema       = optional(string, "agg")
    strategy         = optional(string, "parent-level")
    max_concurrency  = optional(number, 10)
    redshift = optional(object({
      database           = string
      cluster_identifier = optional(string)
      db_user            = optional(string)
      workgroup_name     = optional(string)
      workgroup_arn      = optional(string)
      secret_arn         = optional(string)
      secret_kms_key_arn = optional(string)
    }))
    poll = optional(object({
      completion            = optional(string, "event")
      fallback_seconds      = optional(number, 300)
      initial_wait_seconds  = optional(number, 5)
      poll_interval_seconds = optional(number, 10)
      timeout_seconds       = optional(number, 3600)
    }), {})
    external_tables                = optional(list(string), [])
    search_path                    = optional(list(string), ["$user", "public"])
    parse_cache_dir                = optional(string)
    run_timeout_seconds            = optional(number, 86400)
    task_execution_timeout_seconds = optional(number)
    logging_level                  = optional(string, "ERROR")
    logging_include_execution_data = optional(bool, false)
    run_results_expiration_days    = optional(number, 90)
    point_in_time_recovery_enabled = optional(bool, true)
    # Renamed or removed in 1.0.0 (local.renamed_fields): declared only so that setting
    # one fails the plan; Terraform drops an undeclared field of an object silently.
    enabled                                   = optional(any)
    task_logging_level                        = optional(any)
    runs_table_point_in_time_recovery_enabled = optional(any)
  })
  default  = {}
  nullable = false

  validation {
    condition     = !var.dag_aggregate.create || (var.dag_aggregate.sql_dir != null && var.dag_aggregate.redshift != null)
    error_message = "dag_aggregate.sql_dir (the directory of <table>.sql files) and dag_aggregate.redshift (where the SQL runs) are required when dag_aggregate.create is true."
  }

  validation {
    condition     = var.dag_aggregate.name == null || can(regex("^[A-Za-z0-9_-]{1,64}$", var.dag_aggregate.name))
    error_message = "dag_aggregate.name must be 1-64 letters, digits, hyphens and underscores."
  }

  validation {
    condition     = alltrue([for old in keys(local.renamed_fields.dag_aggregate) : var.dag_aggregate[old] == null])
    error_message = "Set in dag_aggregate, renamed or removed in 1.0.0 (UPGRADING.md, \"Renamed inputs\"): ${join("; ", [for old, now in local.renamed_fields.dag_aggregate : "dag_aggregate.${old} is now dag_aggregate.${now}" if var.dag_aggregate[old] != null])}."
  }
}

# --- status-table ---------------------------------------------------------------------

variable "status_table" {
  description = "The status-table pattern (modules/status-table): create switches it on, name defaults to <name_prefix>-tasks, other fields are the module's variables."
  type = object({
    create = optional(bool, false)
    # The module's alarms variable (create, alarm_actions, ok_actions, period_seconds,
    # thresholds, ...), passed as is; {} keeps its defaults (alarms once alarm_actions is set).
    alarms           = optional(any, {})
    create_dashboard = optional(bool, false)
    name             = optional(string)
    billing_mode     = optional(string, "PAY_PER_REQUEST")
    provisioned_capacity = optional(object({
      read_capacity        = optional(number, 5)
      write_capacity       = optional(number, 5)
      index_read_capacity  = optional(number, 5)
      index_write_capacity = optional(number, 5)
    }), {})
    point_in_time_recovery_enabled = optional(bool, true)
    deletion_protection_enabled    = optional(bool, false)
    ttl_enabled                    = optional(bool, true)
    stream_enabled                 = optional(bool, false)
    stream_view_type               = optional(string, "NEW_AND_OLD_IMAGES")
    # Renamed or removed in 1.0.0 (local.renamed_fields): declared only so that setting
    # one fails the plan; Terraform drops an undeclared field of an object silently.
    enabled                              = optional(any)
    table_name                           = optional(any)
    table_billing_mode                   = optional(any)
    table_provisioned_capacity           = optional(any)
    table_point_in_time_recovery_enabled = optional(any)
    table_deletion_protection_enabled    = optional(any)
    table_ttl_enabled                    = optional(any)
    table_stream_enabled                 = optional(any)
    table_stream_view_type               = optional(any)
  })
  default  = {}
  nullable = false

  validation {
    condition     = var.status_table.name == null || can(regex("^[A-Za-z0-9_.-]{3,255}$", var.status_table.name))
    error_message = "status_table.name must be 3-255 characters of letters, digits, '_', '-' and '.'."
  }

  validation {
    condition     = alltrue([for old in keys(local.renamed_fields.status_table) : var.status_table[old] == null])
    error_message = "Set in status_table, renamed or removed in 1.0.0 (UPGRADING.md, \"Renamed inputs\"): ${join("; ", [for old, now in local.renamed_fields.status_table : "status_table.${old} is now status_table.${now}" if var.status_table[old] != null])}."
  }
}
