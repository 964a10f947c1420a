# Test-only configuration (with sdk_events.tf, one apply for test_two_pollers.py):
# the module's Lambda variant with the loop of earlier
# versions (polling = "loop"), a wait-count timeout and a DynamoDB store, plus a
# second machine that runs TWO poll loops in a row (fast, then slow), each with its
# own timeout, counter and metadata keys, built from the same templates and the
# module's Lambdas.

provider "aws" {
  region = "us-east-1"
}

module "poller" {
  source = "../../../modules/job-poller"

  # No alarms: this configuration's tests read none (examples/job-poller's test proves
  # them), and each module instance's alarms were most of what it applied.
  alarms = { create = false }

  name                  = var.name_prefix
  poller_name           = "job"
  initial_wait_seconds  = var.initial_wait_seconds
  poll_interval_seconds = var.poll_interval_seconds
  timeout_seconds       = var.timeout_seconds
  timeout_strategy      = "wait-count"
  polling               = "loop"
  metadata_store        = "dynamodb"
  task_retry            = { interval_seconds = 1, max_attempts = 2, backoff_rate = 2 }
  tags                  = { Project = "sfn-patterns", Test = "job-poller" }
}

locals {
  templates = "${path.module}/../../../templates/job-poller"
  # fast: start-time (Lambda clock), slow: wait-count; different timeouts.
  pollers = {
    fast = { initial = 1, interval = 1, timeout = var.fast_timeout_seconds, strategy = "start-time" }
    slow = { initial = 1, interval = 1, timeout = var.slow_timeout_seconds, strategy = "wait-count" }
  }
  vars = module.poller.poll_loop_template_vars
  shells = {
    for name, p in local.pollers : name => jsondecode(templatefile("${local.templates}/definition.asl.json.tftpl", {
      comment          = "two pollers"
      name             = name
      state_path       = "$.job_poller.${name}"
      run_job_resource = "arn:${data.aws_partition.current.partition}:states:::lambda:invoke"
      run_job_parameters = jsonencode({
        FunctionName = module.poller.lambda_function_arns.run_job
        Payload = {
          "context.$"      = "$$", "input.$" = "$", poller = name,
          timeout_strategy = p.strategy, timeout_seconds = p.timeout
        }
      })
      run_job_handle_path = "$.Payload"
      entry_state         = "${name} Start"
      run_job_retriers    = local.vars.run_job_retriers
      timeout_seconds     = p.timeout
      timeout_strategy    = p.strategy
    }))
  }
  loops = {
    for name, p in local.pollers : name => jsondecode(templatefile("${local.templates}/poll-loop.asl.json.tftpl", merge(local.vars, {
      name                  = name
      state_path            = "$.job_poller.${name}"
      loop_limits           = "\"initial_wait_seconds\": ${p.initial}, \"max_wait_count\": ${ceil(max(p.timeout - p.initial, 0) / p.interval) + (p.strategy == "start-time" ? 1 : 0)}"
      poll_interval_seconds = p.interval
      get_status_parameters = jsonencode({
        FunctionName = module.poller.lambda_function_arns.get_job_status
        Payload = {
          "context.$"    = "$$", "job.$" = "$.job_poller.${name}.run.handle",
          "wait_count.$" = "$.job_poller.${name}.loop.wait_count",
          poller         = name, timeout_strategy = p.strategy
        }
      })
      succeeded_rules = jsonencode([{ Variable = "$.job_poller.${name}.status.status", StringEquals = "SUCCEEDED" }])
      failed_rules    = jsonencode([{ Variable = "$.job_poller.${name}.status.status", StringEquals = "FAILED" }])
      running_rules   = jsonencode([{ Variable = "$.job_poller.${name}.status.status", StringEquals = "RUNNING" }])
      succeeded_next  = name == "fast" ? "slow Run Job" : "slow Succeeded"
      failed_next     = "${name} Job Failed"
      timeout_next    = "${name} Timed Out"
      unknown_next    = "${name} Unknown Status"
      error_next      = "${name} Poll Error"
    })))
  }
  two_states = merge(
    { for k, v in local.shells.fast.States : k => v if k != "fast Succeeded" },
    local.loops.fast,
    local.shells.slow.States,
    local.loops.slow,
  )
}

resource "aws_sfn_state_machine" "two" {
  #checkov:skip=CKV_AWS_284:Test fixture on LocalStack: tracing has nothing to report to.
  #checkov:skip=CKV_AWS_285:Test fixture on LocalStack: the test reads the execution history, not logs.
  name     = "${var.name_prefix}-two-pollers"
  role_arn = module.poller.role_arn
  type     = "STANDARD"
  definition = jsonencode({
    Comment = "Two job pollers in one machine, each with its own timeout."
    StartAt = "fast Run Job"
    States  = local.two_states
  })
}

# The Lambda-ARN adapter mode: a third module instance whose generic Lambdas call
# the sample job's adapter through a Lambda (sample_job.adapter_handler),
# synchronously, instead of importing it.
data "aws_partition" "current" {}

module "adapter" {
  source = "../../../modules/lambda-function"

  function_name = "${var.name_prefix}-adapter"
  source_path = [{
    path     = "${path.module}/../../../lambda_src"
    patterns = ["sfn_patterns/__init__.py", "sfn_patterns/clients.py", "sfn_patterns/job_poller/**", "sfn_patterns_samples/__init__.py", "sfn_patterns_samples/job_poller/**"]
  }]
  handler = "sfn_patterns_samples.job_poller.sample_job.adapter_handler"
  # Its cold start, the sample job's synchronous start and two DynamoDB calls: 10 s
  # timed out (Sandbox.Timedout) on a loaded 2-core machine in two full runs.
  timeout = 30
  environment_variables = {
    METADATA_STORE      = "dynamodb"
    METADATA_TABLE      = module.poller.metadata_table_name
    SAMPLE_JOB_FUNCTION = module.poller.sample_job_function_name
  }
  policy_statements = [
    {
      actions   = ["dynamodb:GetItem", "dynamodb:PutItem"]
      resources = [module.poller.metadata_table_arn]
    },
    {
      actions   = ["lambda:InvokeFunction"]
      resources = [module.poller.lambda_function_arns.sample_job]
    },
  ]
}

module "via_lambda" {
  source = "../../../modules/job-poller"

  # No alarms: this configuration's tests read none (examples/job-poller's test proves
  # them), and each module instance's alarms were most of what it applied.
  alarms = { create = false }

  name                  = "${var.name_prefix}-via"
  poller_name           = "job"
  initial_wait_seconds  = 1
  poll_interval_seconds = 1
  timeout_seconds       = var.timeout_seconds
  job_adapter = {
    start  = module.adapter.function_arn_static
    status = module.adapter.function_arn_static
  }
  task_retry = { interval_seconds = 1, max_attempts = 2, backoff_rate = 2 }
}
