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
  description = "strategy callback only: seconds a blocked execution stays parked before it re-checks once (null: the module's 300)."
  type        = number
  default     = null
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

variable "target_kms_key_arn" {
  description = "Customer managed KMS key of external_target_state_machine_arn when that machine is encrypted with one (the wrapper's role may then decrypt its output); null otherwise."
  type        = string
  default     = null
}

variable "fairness" {
  description = "strategy dynamodb only: order of blocked executions, none or fifo (null: the module's none)."
  type        = string
  default     = null

  validation {
    condition     = var.fairness == null || contains(["none", "fifo"], coalesce(var.fairness, "none"))
    error_message = "fairness must be \"none\" or \"fifo\"."
  }
}

variable "max_concurrency" {
  description = "Maximum number of executions inside the critical section at once."
  type        = number
  default     = 3
}

variable "wait_min_seconds" {
  description = "strategies dynamodb and oldest-first only: shortest jittered wait of a blocked execution (null: the module's 5)."
  type        = number
  default     = null
}

variable "wait_max_seconds" {
  description = "strategies dynamodb and oldest-first only: longest jittered wait of a blocked execution (null: the module's 15)."
  type        = number
  default     = null
}

variable "acquire_timeout_seconds" {
  description = "Seconds of waiting after which a blocked execution fails with Semaphore.AcquireTimeout."
  type        = number
  default     = 600
}

variable "reconciler_schedule_expression" {
  description = "strategies callback and dynamodb only: EventBridge schedule of the reconciler (null: the module's rate(5 minutes))."
  type        = string
  default     = null
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

variable "critical_section_timeout_seconds" {
  description = "TimeoutSeconds of the critical section's Lambda task, and that Lambda's own timeout (null: no TimeoutSeconds, a 120 s function). A holder stopped in its critical section keeps its slot until this has passed since the task was scheduled (900 s without it): its Lambda runs on after the stop."
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
