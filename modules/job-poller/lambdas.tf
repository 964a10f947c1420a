# The generic Lambdas (Lambda variant only) and the optional sample job.

module "run_job" {
  source = "../lambda-function"

  create                            = var.create && local.use_lambda
  function_name                     = local.run_job_function_name
  source_path                       = local.lambda_code.source_path
  pip_requirements                  = local.lambda_code.pip_requirements
  local_existing_package            = local.lambda_code.local_existing_package
  s3_existing_package               = local.lambda_code.s3_existing_package
  handler                           = "sfn_patterns.job_poller.run_job.handler"
  runtime                           = var.lambda_runtime
  memory_size                       = var.lambda_memory_size
  timeout                           = var.lambda_timeout
  environment_variables             = local.adapter_env
  policy_statements                 = local.policy_statements.run_job
  kms_key_arn                       = var.kms_key_arn
  cloudwatch_logs_retention_in_days = var.cloudwatch_logs_retention_in_days
  python_executable                 = var.python_executable
  tags                              = var.tags

  role_path                 = var.role_path
  role_permissions_boundary = var.role_permissions_boundary
}

module "get_job_status" {
  source = "../lambda-function"

  create                            = var.create && local.use_lambda
  function_name                     = local.get_status_function_name
  source_path                       = local.lambda_code.source_path
  pip_requirements                  = local.lambda_code.pip_requirements
  local_existing_package            = local.lambda_code.local_existing_package
  s3_existing_package               = local.lambda_code.s3_existing_package
  handler                           = "sfn_patterns.job_poller.get_job_status.handler"
  runtime                           = var.lambda_runtime
  memory_size                       = var.lambda_memory_size
  timeout                           = var.lambda_timeout
  environment_variables             = local.adapter_env
  policy_statements                 = local.policy_statements.get_job_status
  kms_key_arn                       = var.kms_key_arn
  cloudwatch_logs_retention_in_days = var.cloudwatch_logs_retention_in_days
  python_executable                 = var.python_executable
  tags                              = var.tags

  role_path                 = var.role_path
  role_permissions_boundary = var.role_permissions_boundary
}

module "sample_job" {
  source = "../lambda-function"

  create        = var.create && local.sample_job
  function_name = local.sample_job_function_name
  source_path = [
    { path = local.lambda_src, patterns = ["sfn_patterns/__init__.py", "sfn_patterns/clients.py", "sfn_patterns/metrics.py", "sfn_patterns/job_poller/**", "sfn_patterns_samples/__init__.py", "sfn_patterns_samples/job_poller/**"] },
  ]
  handler                           = "sfn_patterns_samples.job_poller.sample_job.runner_handler"
  runtime                           = var.lambda_runtime
  memory_size                       = 128
  timeout                           = 660
  environment_variables             = merge(local.store_env, local.event ? { SAMPLE_JOB_EVENTS = "1" } : {})
  policy_statements                 = local.policy_statements.sample_job
  kms_key_arn                       = var.kms_key_arn
  cloudwatch_logs_retention_in_days = var.cloudwatch_logs_retention_in_days
  python_executable                 = var.python_executable
  tags                              = var.tags

  role_path                 = var.role_path
  role_permissions_boundary = var.role_permissions_boundary
}

locals {
  # Every IAM statement this module writes, by role (tests/partition.tftest.hcl checks
  # that each ARN in them carries the partition).
  policy_statements = {
    state_machine = concat(
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
    run_job        = concat(local.store_read_write, local.kms_statements, local.invoke_adapter, local.invoke_sample)
    get_job_status = concat(local.store_read_write, local.kms_statements, local.invoke_adapter, local.park_statements)
    sample_job     = concat(local.store_read_write, local.kms_statements, local.sample_event_statements)
  }
}

# What a state machine that embeds poll_loop_fragment_json needs on its own role: the
# statements the module's own machine gets (the loop's Tasks call the same things).
data "aws_iam_policy_document" "embedder" {
  count = var.create ? 1 : 0

  dynamic "statement" {
    for_each = local.policy_statements.state_machine
    content {
      sid       = try(statement.value.sid, null)
      effect    = try(statement.value.effect, "Allow")
      actions   = statement.value.actions
      resources = statement.value.resources

      dynamic "condition" {
        for_each = try(statement.value.conditions, [])
        content {
          test     = condition.value.test
          variable = condition.value.variable
          values   = condition.value.values
        }
      }
    }
  }
}
