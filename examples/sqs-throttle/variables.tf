variable "region" {
  description = "AWS region to deploy into."
  type        = string
  default     = "us-east-1"
}

variable "name_prefix" {
  description = "Prefix of every resource name, so several copies can share an account."
  type        = string
  default     = "sfnp-throttle"

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{0,30}$", var.name_prefix))
    error_message = "name_prefix must start with a letter and hold at most 31 lower-case letters, digits and hyphens."
  }
}

variable "max_concurrency" {
  description = "At most this many target executions run at once."
  type        = number
  default     = 4
}

variable "schedule_expression" {
  description = "How often the starter runs."
  type        = string
  default     = "rate(1 minute)"
}

variable "schedule_enabled" {
  description = "Whether the starter's schedule is enabled."
  type        = bool
  default     = true
}

variable "max_messages_per_run" {
  description = "Most messages one starter run receives."
  type        = number
  default     = 100
}

variable "max_seconds_per_run" {
  description = "Most seconds one starter run lasts."
  type        = number
  default     = 50
}

variable "recheck_seconds" {
  description = "Seconds between two counts while every slot is taken."
  type        = number
  default     = 5
}

variable "max_receive_count" {
  description = "Receives after which a request that never starts moves to the DLQ."
  type        = number
  default     = 5
}

variable "visibility_timeout_seconds" {
  description = "How long a message whose start failed stays hidden before a run retries it."
  type        = number
  default     = 120
}

variable "python_executable" {
  description = "Python 3 interpreter that builds the Lambda zip at plan time."
  type        = string
  default     = "python3"
}

variable "tags" {
  description = "Tags for every resource."
  type        = map(string)
  default     = { Project = "sfn-patterns", Example = "sqs-throttle" }
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
