variable "name" {
  description = "Prefix of every alarm name."
  type        = string
}

variable "state_machine_arn" {
  description = "ARN of the state machine to watch."
  type        = string
}

variable "function_name" {
  description = "Name of the Lambda function to watch."
  type        = string
}

variable "throttled_function_name" {
  description = "Name of a second function to watch, the one the test throttles (so the first keeps running)."
  type        = string
}

variable "function_timeout_seconds" {
  description = "Timeout of both functions (its Duration alarm's threshold is 90 % of it)."
  type        = number
}

variable "table_name" {
  description = "Name of the DynamoDB table to watch."
  type        = string
}

variable "rule_name" {
  description = "Name of the EventBridge rule to watch."
  type        = string
}

variable "topic_arn" {
  description = "SNS topic notified of every state change."
  type        = string
}
