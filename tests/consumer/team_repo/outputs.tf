output "export_poller_arn" {
  description = "The job poller running our export job."
  value       = module.export_poller.state_machine_arn
}

output "warehouse_wrapper_arn" {
  description = "The semaphore wrapper around our load workflow."
  value       = module.warehouse_slot.wrapper_state_machine_arn
}

output "load_state_machine_arn" {
  description = "Our load workflow (the semaphore's target)."
  value       = aws_sfn_state_machine.load.arn
}

output "reports_queue_url" {
  description = "The queue our producers enqueue report requests on."
  value       = module.report_throttle.queue_url
}

output "reports_starter_function_name" {
  description = "The starter of the report throttle."
  value       = module.report_throttle.starter_function_name
}

output "report_state_machine_arn" {
  description = "The report workflow in the analytics account."
  value       = aws_sfn_state_machine.report.arn
}

output "aggregates_state_machine_arn" {
  description = "The state machine running our aggregates."
  value       = module.aggregates.state_machine_arn
}

output "order_tasks_table_name" {
  description = "The status table of our order tasks."
  value       = module.order_tasks.table_name
}
