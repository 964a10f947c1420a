variable "region" {
  description = "AWS region to deploy into."
  type        = string
  default     = "us-east-1"
}

variable "name_prefix" {
  description = "Prefix of every resource name, so several copies can share an account."
  type        = string
  default     = "sfnp-semaphore"

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{0,23}$", var.name_prefix))
    error_message = "name_prefix must start with a letter and hold at most 24 lower-case letters, digits and hyphens."
  }
}

variable "strategy" {
  description = "Admission scheme of the semaphore: callback, dynamodb or oldest-first."
  type        = string
  default     = "callback"

  validation {
    condition     = contains(["callback", "dynamodb", "oldest-first"], var.strategy)
    error_message = "strategy must be \"callback\", \"dynamodb\" or \"oldest-first\"."
  }
}

variable "fallback_seconds" {
  description = "strategy callback: seconds a blocked execution stays parked before it re-checks once."
  type        = number
  default     = 300
}

variable "target_role_arn" {
  description = "Role the wrapper assumes to run its target (a target in another account); null uses the wrapper's own role."
  type        = string
  default     = null
}

variable "external_target_state_machine_arn" {
  description = "Run this state machine (for example in another account, with target_role_arn) from the wrapper instead of the example's own target."
  type        = string
  default     = null
}

variable "fairness" {
  description = "Order of blocked executions with strategy dynamodb: none or fifo."
  type        = string
  default     = "none"

  validation {
    condition     = contains(["none", "fifo"], var.fairness)
    error_message = "fairness must be \"none\" or \"fifo\"."
  }
}

variable "semaphore_limit" {
  description = "Maximum number of executions inside the critical section at once."
  type        = number
  default     = 3
}

variable "wait_min_seconds" {
  description = "Shortest jittered wait of a blocked execution."
  type        = number
  default     = 1
}

variable "wait_max_seconds" {
  description = "Longest jittered wait of a blocked execution."
  type        = number
  default     = 3
}

variable "acquire_timeout_seconds" {
  description = "Seconds of waiting after which a blocked execution fails with Semaphore.AcquireTimeout."
  type        = number
  default     = 600
}

variable "reconciler_schedule_expression" {
  description = "EventBridge schedule of the reconciler."
  type        = string
  default     = "rate(5 minutes)"
}

variable "tags" {
  description = "Tags for every resource."
  type        = map(string)
  default     = { Project = "sfn-patterns", Example = "semaphore" }
}

variable "execution_timeout_seconds" {
  description = "TimeoutSeconds of the embedded and target state machines (null: none), so tests can make holders and targets end TIMED_OUT."
  type        = number
  default     = null
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
