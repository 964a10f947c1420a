variable "names" {
  description = "One terraform_data resource per name."
  type        = list(string)
}
