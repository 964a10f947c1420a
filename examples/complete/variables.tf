variable "region" {
  description = "AWS region to deploy into."
  type        = string
  default     = "us-east-1"
}

variable "name_prefix" {
  description = "Prefix of every resource name, so several copies can share an account."
  type        = string
  default     = "sfnp-complete"

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{0,23}$", var.name_prefix))
    error_message = "name_prefix must start with a letter and hold at most 24 lower-case letters, digits and hyphens."
  }
}

variable "tags" {
  description = "Tags for every resource."
  type        = map(string)
  default     = { Project = "sfn-patterns", Example = "complete" }
}

variable "create_kms_key" {
  description = "Whether to create the customer managed KMS key every pattern encrypts with (its tables, queues, bucket, log groups and Lambda environments), with a key policy that hands access to IAM as an account's default key policy does; false keeps AWS's keys."
  type        = bool
  default     = true
}

variable "kms_deletion_window_in_days" {
  description = "Days KMS waits before deleting the key after destroy."
  type        = number
  default     = 7

  validation {
    condition     = var.kms_deletion_window_in_days >= 7 && var.kms_deletion_window_in_days <= 30
    error_message = "kms_deletion_window_in_days must be between 7 and 30."
  }
}

variable "cloudwatch_logs_retention_in_days" {
  description = "Retention of every log group, in days."
  type        = number
  default     = 7
}

variable "python_executable" {
  description = "Python with the planner's dependencies (networkx, sqlglot, jinja2, click) that builds the zips and plans the DAG at plan time."
  type        = string
  default     = "python3"
}

variable "job_poller_wait_seconds" {
  description = "Initial wait and poll interval of the job poller, in seconds (short for LocalStack, longer on AWS)."
  type        = number
  default     = 2
}

variable "job_poller_timeout_seconds" {
  description = "Per-loop timeout of the job poller, in seconds."
  type        = number
  default     = 120
}

variable "throttle_max_concurrency" {
  description = "At most this many throttled-work executions run at once (sqs-throttle's MAX)."
  type        = number
  default     = 3
}

variable "throttle_schedule_enabled" {
  description = "Whether the sqs-throttle starter runs every minute (invoke it directly to admit at once)."
  type        = bool
  default     = true
}

variable "throttle_max_seconds_per_run" {
  description = "Most seconds one sqs-throttle starter run keeps admitting."
  type        = number
  default     = 50
}

variable "semaphore_max_concurrency" {
  description = "At most this many wrapper executions run critical-work at once."
  type        = number
  default     = 2
}

variable "dag_strategy" {
  description = "Execution order of the example DAG (see modules/dag-aggregate)."
  type        = string
  default     = "parent-level"
}

variable "dag_poll_seconds" {
  description = "Initial wait and poll interval of every DAG task, in seconds."
  type        = number
  default     = 1
}

variable "redshift_workgroup_name" {
  description = "Redshift Serverless workgroup the DAG's SQL runs on."
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
