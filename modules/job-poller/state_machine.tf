module "state_machine" {
  source = "../state-machine"

  create     = var.create
  name       = local.state_machine_name
  definition = local.definition

  policy_statements = local.policy_statements.state_machine

  logging_level                     = var.logging_level
  logging_include_execution_data    = var.logging_include_execution_data
  tracing_enabled                   = var.tracing_enabled
  cloudwatch_logs_retention_in_days = var.cloudwatch_logs_retention_in_days
  kms_key_arn                       = var.kms_key_arn
  tags                              = var.tags

  role_path                 = var.role_path
  role_permissions_boundary = var.role_permissions_boundary
}
