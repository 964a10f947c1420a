variable "name_prefix" {
  description = "Prefix of every resource name."
  type        = string
}

variable "initial_wait_seconds" {
  description = "Initial wait of the module's own poller."
  type        = number
  default     = 1
}

variable "poll_interval_seconds" {
  description = "Poll interval of the module's own poller."
  type        = number
  default     = 1
}

variable "timeout_seconds" {
  description = "Timeout of the module's own poller."
  type        = number
  default     = 4
}

variable "fast_timeout_seconds" {
  description = "Timeout of the first loop of the two-poller machine."
  type        = number
  default     = 3
}

variable "slow_timeout_seconds" {
  description = "Timeout of the second loop of the two-poller machine."
  type        = number
  default     = 8
}

variable "sdk_timeout_seconds" {
  description = "Per-loop timeout of both aws-sdk pollers (sdk_events.tf)."
  type        = number
  default     = 8
}

variable "sdk_fallback_seconds" {
  description = "Fallback check interval of the event-completed aws-sdk poller."
  type        = number
  default     = 3
}

variable "other_account_child_arn" {
  description = "ARN of a child state machine in another account (created by the test), started through the role below."
  type        = string
}

variable "other_account_role_arn" {
  description = "Role in the other account that trusts the cross-account poller's state machine role."
  type        = string
}
