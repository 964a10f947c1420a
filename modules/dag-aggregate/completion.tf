# poll.completion = "event": every task runs its statement WithEvent and parks on a
# task token until the statement's "Redshift Data Statement Status Change" event
# resumes it (modules/event-completion), with a describeStatement every
# fallback_seconds in case the event is lost. Per-task transitions and history then
# no longer grow with the statement's duration (one fallback check per
# fallback_seconds, none while it runs shorter).

module "completion" {
  source = "../event-completion"

  create = var.create && local.event_completion
  # A module that is not created still validates its inputs: when polling, name may
  # be longer (up to 64) than event completion's resources allow.
  name = local.event_completion ? var.name : substr(var.name, 0, 53)
  # Every strategy names its statements "sfn-dag <task>"; another deployment's
  # statements only cost a small, expiring record of their end in this table.
  event_pattern = jsonencode({
    source        = ["aws.redshift-data"]
    "detail-type" = ["Redshift Data Statement Status Change"]
    detail        = { statementName = [{ prefix = "sfn-dag " }] }
  })
  job_id_path                       = "$.detail.statementId"
  status_path                       = "$.detail.state"
  terminal_statuses                 = ["FINISHED", "FAILED", "ABORTED"]
  waiting_state_machine_arns        = [local.dependency ? local.task_machine_arn : "arn:${local.partition}:states:${local.region}:${local.account_id}:stateMachine:${var.name}"]
  python_executable                 = var.python_executable
  kms_key_arn                       = var.kms_key_arn
  cloudwatch_logs_retention_in_days = var.cloudwatch_logs_retention_in_days
  tags                              = var.tags

  role_path                 = var.role_path
  role_permissions_boundary = var.role_permissions_boundary
}
