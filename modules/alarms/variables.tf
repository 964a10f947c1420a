variable "create" {
  description = "Whether to create the alarms."
  type        = bool
  default     = true
}

variable "name" {
  description = "Prefix of every alarm name: <name>-<signal key>."
  type        = string

  validation {
    condition     = length(var.name) >= 1 && length(var.name) <= 160
    error_message = "name must be 1-160 characters (alarm names are at most 255, and the signal key follows it)."
  }
}

variable "state_machines" {
  description = "State machines to watch, key => ARN: ExecutionsFailed, ExecutionsTimedOut, ExecutionsAborted and ExecutionThrottled alarms each."
  type        = map(string)
  default     = {}
}

variable "functions" {
  description = "Lambda functions to watch, key => name and timeout: Errors, Throttles and Duration (Maximum against the timeout) alarms each."
  type        = map(object({ name = string, timeout_seconds = number }))
  default     = {}
}

variable "scheduled_functions" {
  description = "Functions a schedule runs, key => name, schedule period and an optional first run (the function's apply-time ARN and input): a dead man's switch each (Invocations < 1 over two periods, missing data breaching), created after that first run so that a deploy does not page."
  type = map(object({
    name           = string
    period_seconds = number
    first_run = optional(object({
      function_arn = string
      input        = optional(string, "{}")
    }))
  }))
  default = {}
}

variable "dead_letter_queues" {
  description = "Dead-letter queues to watch, key => queue name: an alarm each on visible messages."
  type        = map(string)
  default     = {}
}

variable "tables" {
  description = "DynamoDB tables to watch, key => name and the operations the module calls: read and write throttle events, and SystemErrors summed over those operations."
  type        = map(object({ name = string, operations = list(string) }))
  default     = {}
}

variable "rules" {
  description = "EventBridge rules to watch, key => rule name: a FailedInvocations alarm each."
  type        = map(string)
  default     = {}
}

variable "thresholds" {
  description = "Thresholds of the baseline alarms (defaults from AWS's recommended alarms: any failure, throttle or DLQ message; a run above 90 % of its timeout)."
  type = object({
    failed_executions       = optional(number, 0)
    lambda_errors           = optional(number, 0)
    lambda_throttles        = optional(number, 0)
    lambda_duration_percent = optional(number, 90)
    dlq_messages            = optional(number, 0)
    table_throttles         = optional(number, 0)
    table_system_errors     = optional(number, 0)
    rule_failed_invocations = optional(number, 0)
  })
  default  = {}
  nullable = false
}

variable "signals" {
  description = "Further alarms of the module's own, by signal key: one metric (namespace, metric_name, dimensions) or the sum of several (sum_of), compared with threshold."
  type = map(object({
    description         = string
    namespace           = optional(string)
    metric_name         = string
    dimensions          = optional(map(string), {})
    sum_of              = optional(list(object({ namespace = string, metric_name = string, dimensions = map(string) })), [])
    statistic           = optional(string, "Sum")
    comparison_operator = optional(string, "GreaterThanThreshold")
    threshold           = number
    evaluation_periods  = optional(number, 1)
    period              = optional(number)
    treat_missing_data  = optional(string, "notBreaching")
  }))
  default = {}

  validation {
    condition     = alltrue([for k, s in var.signals : can(regex("^[a-z0-9][a-z0-9-]{0,80}$", k)) && (length(s.sum_of) > 0 || s.namespace != null)])
    error_message = "signals keys must be lower-case letters, digits and hyphens (at most 81), and each signal needs a namespace or sum_of."
  }

  validation {
    condition     = alltrue([for s in var.signals : contains(["SampleCount", "Average", "Sum", "Minimum", "Maximum"], s.statistic)])
    error_message = "signals[*].statistic must be one of SampleCount, Average, Sum, Minimum, Maximum."
  }

  validation {
    condition     = alltrue([for s in var.signals : contains(["GreaterThanThreshold", "GreaterThanOrEqualToThreshold", "LessThanThreshold", "LessThanOrEqualToThreshold"], s.comparison_operator)])
    error_message = "signals[*].comparison_operator must be GreaterThanThreshold, GreaterThanOrEqualToThreshold, LessThanThreshold or LessThanOrEqualToThreshold."
  }

  validation {
    condition     = alltrue([for s in var.signals : contains(["missing", "ignore", "breaching", "notBreaching"], s.treat_missing_data)])
    error_message = "signals[*].treat_missing_data must be missing, ignore, breaching or notBreaching."
  }
}

variable "period_seconds" {
  description = "Period of every alarm whose signal sets none: 10 or 30 (high resolution) or a multiple of 60."
  type        = number
  default     = 60

  validation {
    condition     = contains([10, 30], var.period_seconds) || (var.period_seconds >= 60 && var.period_seconds % 60 == 0)
    error_message = "period_seconds must be 10, 30 or a multiple of 60."
  }
}

variable "alarm_actions" {
  description = "ARNs notified when an alarm enters ALARM (SNS topics, Lambda functions)."
  type        = list(string)
  default     = []
}

variable "ok_actions" {
  description = "ARNs notified when an alarm returns to OK."
  type        = list(string)
  default     = []
}

variable "tags" {
  description = "Tags for every alarm."
  type        = map(string)
  default     = {}
}
