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
