variable "name_prefix" {
  description = "Prefix of every queue name."
  type        = string
}

variable "queues" {
  description = "Queue name suffixes to create."
  type        = set(string)
}
