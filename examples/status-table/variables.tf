variable "region" {
  description = "AWS region to deploy into."
  type        = string
  default     = "us-east-1"
}

variable "name_prefix" {
  description = "Prefix of every resource name, so several copies can share an account."
  type        = string
  default     = "sfnp-status"

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{0,30}$", var.name_prefix))
    error_message = "name_prefix must start with a letter and hold at most 31 lower-case letters, digits and hyphens."
  }
}

variable "tags" {
  description = "Tags for every resource."
  type        = map(string)
  default     = { Project = "sfn-patterns", Example = "status-table" }
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

variable "kms_key_arn" {
  description = "Customer managed KMS key ARN the table is encrypted with (the policy outputs then grant kms:Decrypt on it); null for the AWS managed key."
  type        = string
  default     = null
}
