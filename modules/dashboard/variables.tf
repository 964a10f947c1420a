variable "create" {
  description = "Whether to create the dashboard."
  type        = bool
  default     = true
}

variable "name" {
  description = "Name of the dashboard (letters, digits, hyphens and underscores)."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9_-]{1,255}$", var.name))
    error_message = "name must be 1-255 letters, digits, hyphens and underscores (CloudWatch dashboard names)."
  }
}

variable "period_seconds" {
  description = "Period of every graph: 10 or 30 (high resolution) or a multiple of 60."
  type        = number
  default     = 60

  validation {
    condition     = contains([10, 30], var.period_seconds) || (var.period_seconds >= 60 && var.period_seconds % 60 == 0)
    error_message = "period_seconds must be 10, 30 or a multiple of 60."
  }
}

variable "state_machines" {
  description = "State machines to graph, key => ARN: executions started, succeeded and failed, and execution time."
  type        = map(string)
  default     = {}
}

variable "functions" {
  description = "Names of the Lambda functions to graph: errors and maximum duration."
  type        = list(string)
  default     = []
}

variable "queues" {
  description = "Names of the SQS queues to graph: visible messages and the age of the oldest."
  type        = list(string)
  default     = []
}

variable "tables" {
  description = "Names of the DynamoDB tables to graph: capacity consumed and throttle events."
  type        = list(string)
  default     = []
}

variable "pattern_metrics" {
  description = "The pattern's own metrics (the runtime's EMF lines): namespace, dimensions, and each metric's name, statistic and y axis (left or right)."
  type = object({
    title      = optional(string, "Pattern metrics")
    namespace  = optional(string, "sfn-patterns")
    dimensions = optional(map(string), {})
    metrics = optional(list(object({
      name = string
      stat = optional(string, "Sum")
      axis = optional(string, "left")
    })), [])
  })
  default  = {}
  nullable = false

  validation {
    condition     = alltrue([for m in var.pattern_metrics.metrics : contains(["left", "right"], m.axis)])
    error_message = "pattern_metrics.metrics[*].axis must be left or right."
  }
}

variable "alarm_arns" {
  description = "ARNs of the module's alarms, shown in an alarm-status widget (the first 100)."
  type        = list(string)
  default     = []
}
