variable "create" {
  description = "Whether to create any resources in this module."
  type        = bool
  default     = true
}

variable "name" {
  description = "Name of the state machine (also names its role and log group)."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9_-]{1,64}$", var.name))
    error_message = "name must be 1-64 characters of letters, digits, hyphens and underscores."
  }

  validation {
    condition     = var.strategy != "dependency" || length(var.name) <= 56
    error_message = "With strategy \"dependency\", name must be at most 56 characters (it prefixes <name>-runtime, <name>-task and <name>-runs)."
  }

  validation {
    condition     = try(var.poll.completion, "event") != "event" || length(var.name) <= 53
    error_message = "With poll.completion = \"event\", name must be at most 53 characters (it prefixes <name>-completion, the function and rule that resume tasks on statement events)."
  }
}

variable "sql_dir" {
  description = "Directory of <table>.sql files, one aggregate task per file, planned into a DAG at plan time."
  type        = string

  validation {
    condition     = length(fileset(var.sql_dir, "*.sql")) > 0
    error_message = "sql_dir must be an existing directory holding at least one <table>.sql file (one aggregate task per file)."
  }
}

variable "sql_schema" {
  description = "Schema of the tables the tasks produce: <table>.sql writes <sql_schema>.<table>."
  type        = string
  default     = "agg"

  validation {
    condition     = can(regex("^[a-z_][a-z0-9_]*$", var.sql_schema))
    error_message = "sql_schema must be a lower-case SQL identifier such as \"agg\"."
  }
}

variable "external_tables" {
  description = "Tables the SQL may read that no task produces, as patterns (schema.table or db.schema.table, wildcards * ? []), e.g. [\"raw.*\", \"public.dim_*\"]; any other read of a non-task table fails the plan."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for p in var.external_tables : can(regex("^[A-Za-z0-9_$*?\\[\\]-]+(\\.[A-Za-z0-9_$*?\\[\\]-]+){1,2}$", p))])
    error_message = "Each external_tables entry must be a pattern schema.table or db.schema.table (wildcards * ? []), such as \"raw.*\"."
  }
}

variable "search_path" {
  description = "Schemas that unqualified table names resolve through, in order (Redshift's search_path); \"$user\" is redshift.db_user when set and is skipped otherwise."
  type        = list(string)
  default     = ["$user", "public"]

  validation {
    condition     = alltrue([for s in var.search_path : can(regex("^([a-z_][a-z0-9_$]*|\\$user)$", s))])
    error_message = "search_path entries must be lower-case schema names or \"$user\"."
  }
}

variable "parse_cache_dir" {
  description = "Directory of the planner's parse cache (an unchanged SQL file is never parsed twice); null uses $SFN_PATTERNS_DAG_CACHE or ~/.cache/sfn-patterns/dag-parse of the user running terraform."
  type        = string
  default     = null
}

variable "strategy" {
  description = "Execution order: simple-level (one Map per DAG level), parent-level (one Map per earliest-child level) or dependency (each task starts when its parents succeed; resumable)."
  type        = string
  default     = "parent-level"

  validation {
    condition     = contains(["simple-level", "parent-level", "dependency"], var.strategy)
    error_message = "strategy must be \"simple-level\", \"parent-level\" or \"dependency\"."
  }
}

variable "max_concurrency" {
  description = "Most tasks running at once: per stage for the level strategies, per run for dependency (keep it under the warehouse's connection limit)."
  type        = number
  default     = 10

  validation {
    condition     = var.max_concurrency >= 1 && floor(var.max_concurrency) == var.max_concurrency && var.max_concurrency <= (var.strategy == "dependency" ? 500 : 40)
    error_message = "max_concurrency must be a whole number from 1 to 40 for the level strategies (an inline Map runs at most 40 iterations at once), or 1 to 500 for dependency."
  }
}

variable "redshift" {
  description = "Where the SQL runs: a provisioned cluster (cluster_identifier with db_user or secret_arn) or a serverless workgroup (workgroup_name and workgroup_arn); secret_kms_key_arn: the customer managed key that secret_arn's secret is encrypted with (null: Secrets Manager's aws/secretsmanager key)."
  type = object({
    database           = string
    cluster_identifier = optional(string)
    db_user            = optional(string)
    workgroup_name     = optional(string)
    workgroup_arn      = optional(string)
    secret_arn         = optional(string)
    secret_kms_key_arn = optional(string)
  })

  validation {
    condition     = (var.redshift.cluster_identifier == null) != (var.redshift.workgroup_name == null)
    error_message = "redshift must name exactly one target: cluster_identifier or workgroup_name."
  }

  validation {
    condition     = var.redshift.cluster_identifier == null || (var.redshift.db_user != null) != (var.redshift.secret_arn != null)
    error_message = "A cluster target needs exactly one of db_user (temporary credentials) or secret_arn."
  }

  validation {
    condition     = var.redshift.secret_kms_key_arn == null || (var.redshift.secret_arn != null && can(regex("^arn:aws(-[a-z]+)*:kms:[a-z]+(-[a-z]+)+-[0-9]+:[0-9]{12}:key/(mrk-[0-9a-f]{32}|[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12})$", coalesce(var.redshift.secret_kms_key_arn, "-"))))
    error_message = "redshift.secret_kms_key_arn needs redshift.secret_arn and must be a key ARN (arn:aws:kms:REGION:ACCOUNT:key/ID), not an alias or key ID."
  }

  validation {
    condition     = var.redshift.workgroup_name == null || can(regex("^arn:aws[a-z-]*:redshift-serverless:[^:]+:[0-9]{12}:workgroup/", var.redshift.workgroup_arn))
    error_message = "A workgroup target needs workgroup_arn (arn:aws:redshift-serverless:REGION:ACCOUNT:workgroup/ID) to scope the IAM policy."
  }
}

variable "poll" {
  description = "How a task waits for its statement: completion event (WithEvent; the status-change event resumes it, with a describeStatement every fallback_seconds) or poll (describeStatement every poll_interval_seconds after initial_wait_seconds, which tasks may override with wait=); timeout_seconds (tasks may override with timeout=) cancels a statement that runs too long."
  type = object({
    completion            = optional(string, "event")
    fallback_seconds      = optional(number, 300)
    initial_wait_seconds  = optional(number, 5)
    poll_interval_seconds = optional(number, 10)
    timeout_seconds       = optional(number, 3600)
  })
  default = {}

  validation {
    condition     = var.poll.initial_wait_seconds >= 0 && var.poll.poll_interval_seconds >= 1 && var.poll.timeout_seconds >= var.poll.poll_interval_seconds
    error_message = "poll needs initial_wait_seconds >= 0, poll_interval_seconds >= 1 and timeout_seconds >= poll_interval_seconds."
  }

  validation {
    condition     = contains(["event", "poll"], var.poll.completion) && var.poll.fallback_seconds >= 1 && floor(var.poll.fallback_seconds) == var.poll.fallback_seconds
    error_message = "poll.completion must be \"event\" or \"poll\", and poll.fallback_seconds a whole number of seconds >= 1."
  }
}

variable "run_timeout_seconds" {
  description = "strategy = dependency: seconds a run (coordinator execution) may take before it times out."
  type        = number
  default     = 86400

  validation {
    condition     = var.run_timeout_seconds >= 60 && var.run_timeout_seconds <= 31536000 && floor(var.run_timeout_seconds) == var.run_timeout_seconds
    error_message = "run_timeout_seconds must be a whole number of seconds from 60 to 31536000 (one year, the Standard workflow limit)."
  }
}

variable "task_execution_timeout_seconds" {
  description = "strategy = dependency: TimeoutSeconds of each task execution (a stuck one ends TIMED_OUT and fails its task); null: the longest task's wait and polls plus 600 s."
  type        = number
  default     = null

  validation {
    condition     = var.task_execution_timeout_seconds == null || (try(var.task_execution_timeout_seconds >= 1 && floor(var.task_execution_timeout_seconds) == var.task_execution_timeout_seconds, false))
    error_message = "task_execution_timeout_seconds must be a whole number of seconds >= 1, or null."
  }
}

variable "logging_level" {
  description = "Execution events of the module's state machines written to CloudWatch Logs: ALL, ERROR (failed executions only, the default: the dependency strategy runs one execution per task, and each run's document in S3 holds every task's outcome) or FATAL."
  type        = string
  default     = "ERROR"

  validation {
    condition     = contains(["ALL", "ERROR", "FATAL"], var.logging_level)
    error_message = "logging_level must be ALL, ERROR or FATAL (logging stays on)."
  }
}

variable "logging_include_execution_data" {
  description = "Whether execution logs include state input and output (off by default: task results may hold data that does not belong in logs)."
  type        = bool
  default     = false
}

variable "run_results_expiration_days" {
  description = "strategy = dependency: days a run document (dag-aggregate/runs/<run id>/run_results.json in the plan bucket) is kept."
  type        = number
  default     = 90

  validation {
    condition     = var.run_results_expiration_days >= 1 && floor(var.run_results_expiration_days) == var.run_results_expiration_days
    error_message = "run_results_expiration_days must be a whole number of days >= 1."
  }
}

variable "point_in_time_recovery_enabled" {
  description = "strategy = dependency: whether the runs table (task statuses per run id) has point-in-time recovery."
  type        = bool
  default     = true
}

variable "python_executable" {
  description = "Python 3.9+ with networkx, sqlglot, jinja2 and click, which plans the DAG and renders the ASL at plan time."
  type        = string
  default     = "python3"
}

variable "cloudwatch_logs_retention_in_days" {
  description = "Retention of the state machine's log group in days."
  type        = number
  default     = 30

  validation {
    condition     = contains([1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653], var.cloudwatch_logs_retention_in_days)
    error_message = "cloudwatch_logs_retention_in_days must be a retention CloudWatch Logs accepts (1, 3, 5, 7, 14, 30, 60, 90, ...); got ${var.cloudwatch_logs_retention_in_days}."
  }
}

variable "kms_key_arn" {
  description = "Customer managed KMS key for everything the module stores: the log groups, the runs and token tables, the plan bucket, the Lambda environments and the state machines; null uses AWS owned or managed keys."
  type        = string
  default     = null

  validation {
    condition     = var.kms_key_arn == null || can(regex("^arn:aws(-[a-z]+)*:kms:[a-z]+(-[a-z]+)+-[0-9]+:[0-9]{12}:key/(mrk-[0-9a-f]{32}|[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12})$", var.kms_key_arn))
    error_message = "kms_key_arn must be the ARN of a KMS key, arn:PARTITION:kms:REGION:ACCOUNT:key/KEY_ID (any partition: aws, aws-cn, aws-us-gov, ...; KEY_ID a UUID or mrk-...), or null for AWS managed keys; got ${jsonencode(var.kms_key_arn)}. A key ID, alias name or alias ARN is refused: log groups, Lambda environments and IAM policies take only the key ARN. Look the ARN up with: aws kms describe-key --key-id alias/NAME --query KeyMetadata.Arn."
  }
}

variable "tags" {
  description = "Tags for every resource this module creates."
  type        = map(string)
  default     = {}
}

variable "alarms" {
  description = "CloudWatch alarms on the DAG's state machines, the dependency runtime, its runs table and rule and, with poll.completion = \"event\", the completion function, token table and rule: whom they notify (they are created once alarm_actions names a target, or with create = true), their period, and thresholds (defaults from AWS's recommended alarms)."
  type = object({
    # null: created when alarm_actions names a target (an alarm nobody hears pages
    # nobody); true: created anyway (console and dashboard only); false: none.
    create         = optional(bool)
    alarm_actions  = optional(list(string), [])
    ok_actions     = optional(list(string), [])
    period_seconds = optional(number, 60)
    thresholds = optional(object({
      failed_executions       = optional(number, 0)
      lambda_errors           = optional(number, 0)
      lambda_throttles        = optional(number, 0)
      lambda_duration_percent = optional(number, 90)
      table_throttles         = optional(number, 0)
      table_system_errors     = optional(number, 0)
      rule_failed_invocations = optional(number, 0)
    }), {})
  })
  default  = {}
  nullable = false

  validation {
    condition     = contains([10, 30], var.alarms.period_seconds) || (var.alarms.period_seconds >= 60 && var.alarms.period_seconds % 60 == 0)
    error_message = "alarms.period_seconds must be 10, 30 or a multiple of 60 (CloudWatch alarm periods)."
  }

  validation {
    condition     = var.alarms.thresholds.lambda_duration_percent > 0 && var.alarms.thresholds.lambda_duration_percent <= 100
    error_message = "alarms.thresholds.lambda_duration_percent must be above 0 and at most 100 (percent of a function's timeout)."
  }

  validation {
    condition     = alltrue([for k, v in var.alarms.thresholds : v >= 0])
    error_message = "alarms.thresholds values must be 0 or more."
  }
}

variable "create_dashboard" {
  description = "Whether to create a CloudWatch dashboard of this module, named after it (3 USD a month beyond the account's first three dashboards)."
  type        = bool
  default     = false
}

# --- Renamed in 1.0.0 ---------------------------------------------------------------

# Read only by its validation: a stub that fails the plan naming the new input.
# tflint-ignore: terraform_unused_declarations
variable "task_logging_level" {
  description = "Renamed logging_level in 1.0.0, which sets every state machine of the module (UPGRADING.md); setting it fails the plan with what to write instead."
  type        = string
  default     = null

  validation {
    condition     = var.task_logging_level == null
    error_message = "task_logging_level was renamed logging_level in 1.0.0 (it now sets every state machine of the module): write logging_level = \"${coalesce(var.task_logging_level, "ERROR")}\" (UPGRADING.md)."
  }
}

variable "role_path" {
  description = "Path of every IAM role the module creates (\"/\": none); one your account's policies require, for example \"/service-roles/\"."
  type        = string
  default     = "/"

  validation {
    condition     = can(regex("^/([!-~]{1,510}/)?$", var.role_path)) && !strcontains(var.role_path, "//")
    error_message = "role_path must start and end with / (for example /service-roles/), at most 512 printable characters; got ${jsonencode(var.role_path)}."
  }
}

variable "role_permissions_boundary" {
  description = "ARN of the managed policy set as the permissions boundary of every IAM role the module creates (null: none), for accounts whose policies require one on every role they create."
  type        = string
  default     = null

  validation {
    condition     = var.role_permissions_boundary == null || can(regex("^arn:aws(-[a-z]+)*:iam::([0-9]{12}|aws):policy/[!-~]+$", var.role_permissions_boundary))
    error_message = "role_permissions_boundary must be the ARN of an IAM managed policy, arn:PARTITION:iam::ACCOUNT:policy/NAME, or null; got ${jsonencode(var.role_permissions_boundary)}."
  }
}
