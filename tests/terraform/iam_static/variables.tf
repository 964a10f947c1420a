variable "name_prefix" {
  description = "Prefix of every resource name."
  type        = string
  default     = "sfnp-iam"
}

variable "python_executable" {
  description = "Python that builds the zips and plans the DAG at plan time."
  type        = string
  default     = "python3"
}
