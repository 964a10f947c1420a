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
    condition     = try(var.poll.completion, "event") != "event" || length(var.name) <= 50
    error_message = "With poll.completion = \"event\", name must be at most 50 characters (it prefixes <name>-completion, the function and rule that resume tasks on statement events)."
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
  description = "Where the SQL runs: a provisioned cluster (cluster_identifier with db_user or secret_arn) or a serverless workgroup (workgroup_name and workgroup_arn)."
  type = object({
    database           = string
    cluster_identifier = optional(string)
    db_user            = optional(string)
    workgroup_name     = optional(string)
    workgroup_arn      = optional(string)
    secret_arn         = optional(string)
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

variable "runs_table_point_in_time_recovery_enabled" {
  description = "strategy = dependency: whether the runs table (task statuses per run id) has point-in-time recovery."
  type        = bool
  default     = true
}

variable "python_executable" {
  description = "Python 3.11+ with networkx, sqlglot, jinja2 and click, which plans the DAG and renders the ASL at plan time."
  type        = string
  default     = "python3"
}

variable "cloudwatch_logs_retention_in_days" {
  description = "Retention of the state machine's log group in days."
  type        = number
  default     = 30
}

variable "kms_key_arn" {
  description = "Customer managed KMS key for the log group; null uses the AWS managed key."
  type        = string
  default     = null
}

variable "tags" {
  description = "Tags for every resource this module creates."
  type        = map(string)
  default     = {}
}
