variable "name_prefix" {
  description = "Prefix of every resource name, so several copies can share an account."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{0,30}$", var.name_prefix))
    error_message = "name_prefix must start with a letter and hold at most 31 lower-case letters, digits and hyphens."
  }
}

variable "strategies" {
  description = "Level strategy (simple-level or parent-level) -> the Redshift Serverless workgroup its module call runs on (name and id)."
  type = map(object({
    workgroup_name = string
    workgroup_id   = string
  }))

  validation {
    condition     = alltrue([for s in keys(var.strategies) : contains(["simple-level", "parent-level"], s)])
    error_message = "strategies keys must be \"simple-level\" or \"parent-level\"."
  }
}

variable "max_concurrency" {
  description = "Most tasks running at once per stage."
  type        = number
  default     = 3
}

variable "python_executable" {
  description = "Python (3.9+, with the planner's dependencies) that runs the dag-aggregate planner at plan time."
  type        = string
  default     = "python3"
}
