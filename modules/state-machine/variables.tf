variable "create" {
  description = "Whether to create any resources in this module."
  type        = bool
  default     = true
}

variable "name" {
  description = "Name of the state machine (also names its role and log group)."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9_-]{1,80}$", var.name))
    error_message = "name must be 1-80 characters of letters, digits, hyphens and underscores."
  }
}

variable "definition" {
  description = "Amazon States Language definition (JSON)."
  type        = string
}

variable "type" {
  description = "STANDARD (long waits, billed per state transition) or EXPRESS (at most 5 minutes)."
  type        = string
  default     = "STANDARD"

  validation {
    condition     = contains(["STANDARD", "EXPRESS"], var.type)
    error_message = "type must be STANDARD or EXPRESS."
  }
}

variable "policy_statements" {
  description = "IAM statements for the state machine's inline role policy, each scoped to specific resources."
  type = list(object({
    sid       = optional(string)
    effect    = optional(string, "Allow")
    actions   = list(string)
    resources = list(string)
    conditions = optional(list(object({
      test     = string
      variable = string
      values   = list(string)
    })), [])
  }))
  default = []

  validation {
    condition     = alltrue([for s in var.policy_statements : alltrue([for a in s.actions : !strcontains(a, "*")])])
    error_message = "policy_statements must not use wildcard actions: name each action (least privilege)."
  }
}

variable "policy_documents" {
  description = "Extra IAM policy documents (JSON) merged into the role's inline policy, such as another module's caller policy output."
  type        = list(string)
  default     = []
}

variable "logging_level" {
  description = "Execution events written to CloudWatch Logs: ALL, ERROR (failed executions only, the default: ALL costs a log event per state) or FATAL."
  type        = string
  default     = "ERROR"

  validation {
    condition     = contains(["ALL", "ERROR", "FATAL"], var.logging_level)
    error_message = "logging_level must be ALL, ERROR or FATAL (logging stays on)."
  }
}

variable "logging_include_execution_data" {
  description = "Whether execution logs include state input and output (off by default: payloads may hold data that does not belong in logs)."
  type        = bool
  default     = false
}

variable "tracing_enabled" {
  description = "Whether AWS X-Ray tracing is on for executions (it adds X-Ray charges per trace)."
  type        = bool
  default     = false
}

variable "cloudwatch_logs_retention_in_days" {
  description = "Retention of the execution log group in days."
  type        = number
  default     = 30

  validation {
    condition     = contains([1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653], var.cloudwatch_logs_retention_in_days)
    error_message = "cloudwatch_logs_retention_in_days must be a retention CloudWatch Logs accepts (1, 3, 5, 7, 14, 30, 60, 90, ...)."
  }
}

variable "kms_key_arn" {
  description = "Customer managed KMS key for the state machine (its definition, executions and history) and its log group; null uses AWS owned and managed keys."
  type        = string
  default     = null

  validation {
    condition     = var.kms_key_arn == null || can(regex("^arn:aws(-[a-z]+)*:kms:[a-z]+(-[a-z]+)+-[0-9]+:[0-9]{12}:key/(mrk-[0-9a-f]{32}|[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12})$", var.kms_key_arn))
    error_message = "kms_key_arn must be the ARN of a KMS key, arn:PARTITION:kms:REGION:ACCOUNT:key/KEY_ID (any partition: aws, aws-cn, aws-us-gov, ...; KEY_ID a UUID or mrk-...), or null for AWS managed keys; got ${jsonencode(var.kms_key_arn)}. A key ID, alias name or alias ARN is refused: the log group takes only the key ARN, and the role's grant names it. Look the ARN up with: aws kms describe-key --key-id alias/NAME --query KeyMetadata.Arn."
  }
}

variable "tags" {
  description = "Tags for every resource this module creates."
  type        = map(string)
  default     = {}
}

variable "role_path" {
  description = "Path of the state machine's IAM role (\"/\": none); one your account's policies require, for example \"/service-roles/\"."
  type        = string
  default     = "/"

  validation {
    condition     = can(regex("^/([!-~]{1,510}/)?$", var.role_path)) && !strcontains(var.role_path, "//")
    error_message = "role_path must start and end with / (for example /service-roles/), at most 512 printable characters; got ${jsonencode(var.role_path)}."
  }
}

variable "role_permissions_boundary" {
  description = "ARN of the managed policy set as the permissions boundary of the state machine's IAM role (null: none), for accounts whose policies require one on every role they create."
  type        = string
  default     = null

  validation {
    condition     = var.role_permissions_boundary == null || can(regex("^arn:aws(-[a-z]+)*:iam::([0-9]{12}|aws):policy/[!-~]+$", var.role_permissions_boundary))
    error_message = "role_permissions_boundary must be the ARN of an IAM managed policy, arn:PARTITION:iam::ACCOUNT:policy/NAME, or null; got ${jsonencode(var.role_permissions_boundary)}."
  }
}
