output "alarms" {
  description = "Each signal key mapped to its alarm's name and ARN."
  value       = module.alarms.alarms
}
