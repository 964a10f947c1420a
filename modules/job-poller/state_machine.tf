module "state_machine" {
  source = "../state-machine"

  create     = var.create
  name       = local.state_machine_name
  definition = local.definition

  policy_statements = concat(
    local.use_lambda ? [{
      sid     = "InvokeJobLambdas"
      actions = ["lambda:InvokeFunction"]
      resources = flatten([
        for name in [local.run_job_function_name, local.get_status_function_name] :
        ["${local.function_arn_prefix}${name}", "${local.function_arn_prefix}${name}:*"]
      ])
    }] : [],
    local.use_lambda ? [] : try(var.aws_sdk_job.policy_statements, []),
    local.shape == "event-sdk" ? module.completion.park_policy_statements : [],
    local.role_arn == null ? [] : [{
      sid       = "ActInTheJobsAccount"
      actions   = ["sts:AssumeRole"]
      resources = [local.role_arn]
    }],
  )

  logging_level                     = var.logging_level
  logging_include_execution_data    = var.logging_include_execution_data
  tracing_enabled                   = var.tracing_enabled
  cloudwatch_logs_retention_in_days = var.cloudwatch_logs_retention_in_days
  kms_key_arn                       = var.kms_key_arn
  tags                              = var.tags
}
