variable "region" {
  description = "AWS region to deploy into."
  type        = string
  default     = "us-east-1"
}

variable "name_prefix" {
  description = "Prefix of every resource name, so several copies can share an account."
  type        = string
  default     = "sfnp-poller"

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{0,24}$", var.name_prefix))
    error_message = "name_prefix must start with a letter and hold at most 25 lower-case letters, digits and hyphens."
  }
}

variable "initial_wait_seconds" {
  description = "Initial wait of the polling pollers (the job's expected minimum duration)."
  type        = number
  default     = 60
}

variable "poll_interval_seconds" {
  description = "Wait between two status checks of the polling pollers."
  type        = number
  default     = 30
}

variable "fallback_seconds" {
  description = "Seconds the event-completed poller waits for the completion event before checking the job itself."
  type        = number
  default     = 600
}

variable "timeout_seconds" {
  description = "Per-loop timeout of every poller."
  type        = number
  default     = 3600
}

variable "force_destroy" {
  description = "Whether destroy also deletes a metadata bucket that still holds objects."
  type        = bool
  default     = false
}

variable "tags" {
  description = "Tags for every resource."
  type        = map(string)
  default     = { Project = "sfn-patterns", Example = "job-poller" }
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

variable "task_retry" {
  description = "Every poller's retry budget on transient errors: the wait before the first retry, how many retries, and the back-off rate (full jitter)."
  type = object({
    interval_seconds = optional(number, 1)
    max_attempts     = optional(number, 3)
    backoff_rate     = optional(number, 2)
  })
  default = {}
}
