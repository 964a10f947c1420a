variable "name_prefix" {
  description = "Prefix of every resource name."
  type        = string
  default     = "sfnp-root-test"
}

variable "tags" {
  description = "Tags the root module adds to every resource."
  type        = map(string)
  default     = {}
}

variable "kms_key_arn" {
  description = "Customer managed key the root module passes to every pattern."
  type        = string
  default     = null
}

variable "cloudwatch_logs_retention_in_days" {
  description = "Retention of every log group."
  type        = number
  default     = 30
}

variable "python_executable" {
  description = "Python that builds the zips and plans the DAG at plan time."
  type        = string
  default     = "python3"
}

variable "job_poller" {
  description = "Passed to the root module's job_poller as is."
  type        = any
  default     = {}
}

variable "sqs_throttle" {
  description = "Passed to the root module's sqs_throttle as is."
  type        = any
  default     = {}
}

variable "semaphore" {
  description = "Passed to the root module's semaphore as is."
  type        = any
  default     = {}
}

variable "dag_aggregate" {
  description = "Passed to the root module's dag_aggregate as is."
  type        = any
  default     = {}
}

variable "status_table" {
  description = "Passed to the root module's status_table as is."
  type        = any
  default     = {}
}
