# Shared inputs of the root module. Each pattern module it composes receives them,
# so one prefix, one tag set, one KMS key and one log retention govern everything.

variable "name_prefix" {
  description = "Prefix of every resource name, so several deployments can share an account."
  type        = string
  default     = "sfnp"

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{0,23}$", var.name_prefix))
    error_message = "name_prefix must start with a lower-case letter and hold at most 24 lower-case letters, digits and hyphens."
  }
}

variable "tags" {
  description = "Tags added to every resource."
  type        = map(string)
  default     = {}
}

variable "kms_key_arn" {
  description = "Customer managed KMS key for encryption at rest; null uses AWS managed keys."
  type        = string
  default     = null

  validation {
    condition     = var.kms_key_arn == null || can(regex("^arn:aws[a-z-]*:kms:", var.kms_key_arn))
    error_message = "kms_key_arn must be a KMS key ARN (arn:aws:kms:REGION:ACCOUNT:key/ID) or null."
  }
}

variable "cloudwatch_logs_retention_in_days" {
  description = "Retention of every log group the modules create, in days."
  type        = number
  default     = 30

  validation {
    condition     = contains([1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653], var.cloudwatch_logs_retention_in_days)
    error_message = "cloudwatch_logs_retention_in_days must be a retention CloudWatch Logs accepts (1, 3, 5, 7, 14, 30, 60, 90, ...)."
  }
}

variable "status_table_enabled" {
  description = "Whether to create the status-table pattern (the DynamoDB task tracker table)."
  type        = bool
  default     = true
}
