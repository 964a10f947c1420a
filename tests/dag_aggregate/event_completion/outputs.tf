output "function_arn" {
  description = "The completion function (parks and resumes tokens)."
  value       = module.completion.function_arn
}

output "rule_name" {
  description = "The rule on the statements' status-change events."
  value       = module.completion.rule_name
}
