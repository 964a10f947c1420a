variable "name_prefix" {
  description = "Prefix of every resource name."
  type        = string
}

variable "timeout_seconds" {
  description = "Per-loop timeout of both pollers."
  type        = number
  default     = 8
}

variable "fallback_seconds" {
  description = "Fallback check interval of the event-completed poller."
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
