output "alarms" {
  description = "Each signal key mapped to its alarm's name and ARN (ARNs known at plan time)."
  value = {
    for key, _ in local.signals : key => {
      name = "${var.name}-${key}"
      arn  = "${local.arn_prefix}${var.name}-${key}"
    }
  }
}

output "alarm_arns" {
  description = "ARNs of every alarm (for a dashboard's alarm-status widget or a composite alarm)."
  value       = [for key, _ in local.signals : "${local.arn_prefix}${var.name}-${key}"]
}
