variable "name_prefix" {
  description = "Prefix of every resource name."
  type        = string
}

variable "python_executable" {
  description = "The team's own Python 3 for the modules' plan-time code (zip builds, the DAG planner)."
  type        = string
  default     = "python3"
}

variable "redshift_workgroup_name" {
  description = "Redshift Serverless workgroup the aggregates run on."
  type        = string
}

variable "redshift_workgroup_id" {
  description = "ID of that workgroup: its ARN ends in workgroup/ID, not in its name."
  type        = string
}
