variable "name_prefix" {
  description = "Prefix of every resource name."
  type        = string
}

variable "state_machine_arns" {
  description = "The state machines the test creates (their tasks park here)."
  type        = list(string)
}
