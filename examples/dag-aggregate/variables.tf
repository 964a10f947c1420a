variable "region" {
  description = "AWS region to deploy into."
  type        = string
  default     = "us-east-1"
}

variable "name_prefix" {
  description = "Prefix of every resource name, so several copies can share an account."
  type        = string
  default     = "sfnp-dag"

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{0,30}$", var.name_prefix))
    error_message = "name_prefix must start with a letter and hold at most 31 lower-case letters, digits and hyphens."
  }
}

variable "strategy" {
  description = "Execution order of the example DAG: simple-level, parent-level or dependency."
  type        = string
  default     = "parent-level"

  validation {
    condition     = contains(["simple-level", "parent-level", "dependency"], var.strategy)
    error_message = "strategy must be \"simple-level\", \"parent-level\" or \"dependency\"."
  }
}

variable "max_concurrency" {
  description = "Most tasks running at once (per stage for the level strategies, per run for dependency)."
  type        = number
  default     = 4
}

variable "sql_dir" {
  description = "Directory of <table>.sql task files; null uses this example's ./sql."
  type        = string
  default     = null
}

variable "external_tables" {
  description = "Table patterns the SQL may read besides the tasks (the example's files declare raw.events themselves)."
  type        = list(string)
  default     = []
}

variable "task_execution_timeout_seconds" {
  description = "strategy = dependency: TimeoutSeconds of each task execution; null derives it from the poll settings."
  type        = number
  default     = null
}

variable "redshift_workgroup_name" {
  description = "Redshift Serverless workgroup the SQL runs on."
  type        = string
  default     = "sfnp-local"
}

variable "redshift_workgroup_id" {
  description = "ID of that workgroup (its ARN ends in workgroup/ID)."
  type        = string
  default     = "00000000-0000-0000-0000-000000000000"
}

variable "redshift_database" {
  description = "Database of the workgroup holding the raw and agg schemas."
  type        = string
  default     = "dev"
}

variable "completion" {
  description = "How tasks wait for their statements: event (the statement's status-change event) or poll."
  type        = string
  default     = "event"
}

variable "fallback_seconds" {
  description = "completion = event: seconds a task waits for its statement's event before describing it."
  type        = number
  default     = 300
}

variable "task_timeout_seconds" {
  description = "Seconds a task's statement may run before it is cancelled (with 1-s polls, keep it short: the level strategies' history budget counts every poll)."
  type        = number
  default     = 600
}

variable "poll_seconds" {
  description = "Initial wait and poll interval of every task, in seconds (short for LocalStack, longer on AWS)."
  type        = number
  default     = 1
}

variable "python_executable" {
  description = "Python with the planner's dependencies (networkx, sqlglot, jinja2, click)."
  type        = string
  default     = "python3"
}

variable "kms_key_arn" {
  description = "Customer managed KMS key ARN for everything the module stores (log groups, tables, the plan bucket, Lambda environments, state machines); null for AWS owned or managed keys."
  type        = string
  default     = null
}

variable "tags" {
  description = "Tags for every resource."
  type        = map(string)
  default     = { Project = "sfn-patterns", Example = "dag-aggregate" }
}

variable "create_dashboard" {
  description = "Whether the pattern module creates its CloudWatch dashboard."
  type        = bool
  default     = false
}

variable "alarms" {
  description = "The pattern module's alarms variable (create, alarm_actions, ok_actions, period_seconds, thresholds, ...), passed through; {} keeps the module's defaults."
  type        = any
  default     = {}
}
