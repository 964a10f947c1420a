output "inputs" {
  description = "Each resource's input, by name."
  value       = { for name, item in terraform_data.this : name => item.output }
}

output "nothing" {
  description = "Always null: Terraform leaves null outputs out."
  value       = null
}

output "secret" {
  description = "A sensitive output (its value is still in the state and in output -json)."
  value       = join(",", var.names)
  sensitive   = true
}
