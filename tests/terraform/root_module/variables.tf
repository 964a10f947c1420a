variable "cases" {
  description = "Case name -> the root module's settings for it (name_prefix, tags, kms_key_arn, cloudwatch_logs_retention_in_days and the five pattern objects, each optional)."
  type        = any
  default     = {}
}

variable "python_executable" {
  description = "Python that builds the zips and plans the DAG at plan time."
  type        = string
  default     = "python3"
}

variable "same_apply" {
  description = "Also plan the root module with every pattern on and its ARNs and key taken from resources this same plan creates (module.same_apply)."
  type        = bool
  default     = false
}
