# completion = "event": the token table, the rule on the job's completion events and
# the function that resumes parked executions (modules/event-completion).

module "completion" {
  source = "../event-completion"

  create        = var.create && local.event
  name          = local.completion_name
  event_pattern = try(local.completion_event.event_pattern, "{}")
  job_id_path   = try(local.completion_event.job_id_path, "$.detail.job_id")
  status_path   = try(local.completion_event.status_path, "$.detail.state")
  # A module that is not created still validates its inputs: give it one status.
  terminal_statuses                 = local.event ? concat(local.event_succeeded, local.event_failed) : ["UNUSED"]
  waiting_state_machine_arns        = [local.state_machine_arn]
  python_executable                 = var.python_executable
  kms_key_arn                       = var.kms_key_arn
  cloudwatch_logs_retention_in_days = var.cloudwatch_logs_retention_in_days
  tags                              = var.tags

  role_path                 = var.role_path
  role_permissions_boundary = var.role_permissions_boundary
}
