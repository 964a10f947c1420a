variable "create" {
  description = "Whether to create any resources in this module."
  type        = bool
  default     = true
}

variable "name" {
  description = "Name of the DynamoDB table that tracks the tasks of every use case."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9_.-]{3,255}$", var.name))
    error_message = "name must be 3-255 characters of letters, digits, '_', '-' and '.' (DynamoDB naming rules)."
  }
}

variable "billing_mode" {
  description = "PAY_PER_REQUEST (on-demand, the default) or PROVISIONED capacity."
  type        = string
  default     = "PAY_PER_REQUEST"

  validation {
    condition     = contains(["PAY_PER_REQUEST", "PROVISIONED"], var.billing_mode)
    error_message = "billing_mode must be PAY_PER_REQUEST or PROVISIONED."
  }
}

variable "provisioned_capacity" {
  description = "Read and write capacity units of the table and of its status index, used only when billing_mode is PROVISIONED."
  type = object({
    read_capacity        = optional(number, 5)
    write_capacity       = optional(number, 5)
    index_read_capacity  = optional(number, 5)
    index_write_capacity = optional(number, 5)
  })
  default = {}

  validation {
    condition = alltrue([
      for v in values(var.provisioned_capacity) : v >= 1 && floor(v) == v
    ])
    error_message = "Every provisioned_capacity value must be a whole number of at least 1."
  }
}

variable "point_in_time_recovery_enabled" {
  description = "Whether point-in-time recovery (continuous backups) is on; keep it on for business-critical task state."
  type        = bool
  default     = true
}

variable "deletion_protection_enabled" {
  description = "Whether DynamoDB refuses to delete the table until this is switched off."
  type        = bool
  default     = false
}

variable "kms_key_arn" {
  description = "Customer managed KMS key for server-side encryption; null encrypts with the AWS managed key aws/dynamodb (its KMS requests are charged), not the free AWS owned key."
  type        = string
  default     = null

  validation {
    condition     = var.kms_key_arn == null || can(regex("^arn:aws(-[a-z]+)*:kms:[a-z]+(-[a-z]+)+-[0-9]+:[0-9]{12}:key/(mrk-[0-9a-f]{32}|[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12})$", var.kms_key_arn))
    error_message = "kms_key_arn must be the ARN of a KMS key, arn:PARTITION:kms:REGION:ACCOUNT:key/KEY_ID (any partition: aws, aws-cn, aws-us-gov, ...; KEY_ID a UUID or mrk-...), or null for AWS managed keys; got ${jsonencode(var.kms_key_arn)}. A key ID, alias name or alias ARN is refused: DynamoDB reads the key ARN back, so an alias would show a change on every plan, and callers need the key ARN in their IAM policies. Look the ARN up with: aws kms describe-key --key-id alias/NAME --query KeyMetadata.Arn."
  }
}

variable "ttl_enabled" {
  description = "Whether DynamoDB expires tasks whose expire_at (epoch seconds) has passed; the tracker sets it only when asked to."
  type        = bool
  default     = true
}

variable "stream_enabled" {
  description = "Whether the table streams item changes (for example to start dependent work when a task succeeds)."
  type        = bool
  default     = false
}

variable "stream_view_type" {
  description = "What each stream record holds when streams are enabled."
  type        = string
  default     = "NEW_AND_OLD_IMAGES"

  validation {
    condition     = contains(["KEYS_ONLY", "NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES"], var.stream_view_type)
    error_message = "stream_view_type must be KEYS_ONLY, NEW_IMAGE, OLD_IMAGE or NEW_AND_OLD_IMAGES."
  }
}

variable "tags" {
  description = "Tags for the table."
  type        = map(string)
  default     = {}
}

variable "alarms" {
  description = "CloudWatch alarms on the status table: whom they notify (they are created once alarm_actions names a target, or with create = true), their period, and thresholds (defaults from AWS's recommended alarms)."
  type = object({
    # null: created when alarm_actions names a target (an alarm nobody hears pages
    # nobody); true: created anyway (console and dashboard only); false: none.
    create         = optional(bool)
    alarm_actions  = optional(list(string), [])
    ok_actions     = optional(list(string), [])
    period_seconds = optional(number, 60)
    thresholds = optional(object({
      failed_executions       = optional(number, 0)
      lambda_errors           = optional(number, 0)
      lambda_throttles        = optional(number, 0)
      lambda_duration_percent = optional(number, 90)
      table_throttles         = optional(number, 0)
      table_system_errors     = optional(number, 0)
      rule_failed_invocations = optional(number, 0)
    }), {})
  })
  default  = {}
  nullable = false

  validation {
    condition     = contains([10, 30], var.alarms.period_seconds) || (var.alarms.period_seconds >= 60 && var.alarms.period_seconds % 60 == 0)
    error_message = "alarms.period_seconds must be 10, 30 or a multiple of 60 (CloudWatch alarm periods)."
  }

  validation {
    condition     = var.alarms.thresholds.lambda_duration_percent > 0 && var.alarms.thresholds.lambda_duration_percent <= 100
    error_message = "alarms.thresholds.lambda_duration_percent must be above 0 and at most 100 (percent of a function's timeout)."
  }

  validation {
    condition     = alltrue([for k, v in var.alarms.thresholds : v >= 0])
    error_message = "alarms.thresholds values must be 0 or more."
  }
}

variable "create_dashboard" {
  description = "Whether to create a CloudWatch dashboard of this module, named after it (3 USD a month beyond the account's first three dashboards)."
  type        = bool
  default     = false
}
