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
