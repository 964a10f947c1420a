# Job poller (seeds 000/001): Run Job -> Wait (initial) -> Get Job Status -> Choice,
# looping through Count -> Wait (poll) with a per-loop timeout. Lambda variant
# (generic Run Job / Get Job Status Lambdas calling a pluggable adapter) or aws-sdk
# variant (no Lambdas: a start API and a describe API called by Step Functions).

data "aws_partition" "current" {}
data "aws_region" "current" {}
data "aws_caller_identity" "current" {}

locals {
  partition  = data.aws_partition.current.partition
  region     = data.aws_region.current.region
  account_id = data.aws_caller_identity.current.account_id

  use_lambda  = var.aws_sdk_job == null
  sample_job  = local.use_lambda && var.job_adapter == null && var.create_sample_job
  start_time  = var.timeout_strategy == "start-time"
  need_store  = var.create && local.use_lambda && (local.start_time || local.sample_job)
  create_s3   = local.need_store && var.metadata_store == "s3"
  create_ddb  = local.need_store && var.metadata_store == "dynamodb"
  bucket_name = "${var.name}-job-poller-${local.account_id}"
  table_name  = "${var.name}-job-poller"
  bucket_arn  = "arn:${local.partition}:s3:::${local.bucket_name}"
  table_arn   = "arn:${local.partition}:dynamodb:${local.region}:${local.account_id}:table/${local.table_name}"

  state_machine_name = "${var.name}-job-poller"

  # The loop keeps all its data under one path, so several pollers never collide.
  state_path = "$.job_poller.${var.poller_name}"

  # Wait-count timeout: after W0 + n * P seconds the loop gives up (n = max_wait_count).
  # With start-time the Lambda's clock decides; the counter is a backstop one wait later.
  loop_waits     = ceil(max(var.timeout_seconds - var.initial_wait_seconds, 0) / var.poll_interval_seconds)
  max_wait_count = local.loop_waits + (local.start_time ? 1 : 0)
  history_events_worst_case = (
    20 + 6 * var.task_retry.max_attempts + local.max_wait_count * (11 + 3 * var.task_retry.max_attempts)
  )

  sample_adapter = {
    start  = "sfn_patterns_samples.job_poller.sample_job:start"
    status = "sfn_patterns_samples.job_poller.sample_job:status"
  }
  adapter = var.job_adapter != null ? { start = var.job_adapter.start, status = var.job_adapter.status } : local.sample_adapter

  # The generic Lambdas' code: the runtime's job_poller, plus the sample job when it
  # is deployed, plus the caller's adapter code (source_path) when given.
  lambda_src = "${path.module}/../../lambda_src"
  lambda_sources = concat(
    [{ path = local.lambda_src, patterns = ["sfn_patterns/__init__.py", "sfn_patterns/job_poller/**"], prefix_in_zip = "" }],
    local.sample_job ? [{ path = local.lambda_src, patterns = ["sfn_patterns_samples/__init__.py", "sfn_patterns_samples/job_poller/**"], prefix_in_zip = "" }] : [],
    try(var.job_adapter.source_path, null) != null ? [{ path = var.job_adapter.source_path, patterns = var.job_adapter.patterns, prefix_in_zip = "" }] : [],
  )
  lambda_code = {
    source_path            = var.lambda_package == null ? local.lambda_sources : []
    pip_requirements       = try(var.job_adapter.pip_requirements, [])
    local_existing_package = try(var.lambda_package.local_existing_package, null)
    s3_existing_package    = try(var.lambda_package.s3_existing_package, null)
  }
  adapter_lambda_arn = [for spec in [local.adapter.start, local.adapter.status] : spec if startswith(spec, "arn:")]

  run_job_function_name    = "${var.name}-run-job"
  get_status_function_name = "${var.name}-get-job-status"
  sample_job_function_name = "${var.name}-sample-job"
  function_arn_prefix      = "arn:${local.partition}:lambda:${local.region}:${local.account_id}:function:"

  lambda_retry_errors = [
    "Lambda.ServiceException", "Lambda.AWSLambdaException", "Lambda.SdkClientException",
    "Lambda.TooManyRequestsException", "RetryableJobError",
  ]

  # What differs between the two variants; the templates are the same.
  variant = local.use_lambda ? {
    run_job_resource = "arn:${local.partition}:states:::lambda:invoke"
    run_job_parameters = jsonencode({
      FunctionName = "${local.function_arn_prefix}${local.run_job_function_name}"
      Payload = {
        "context.$"      = "$$"
        "input.$"        = "$"
        poller           = var.poller_name
        timeout_strategy = var.timeout_strategy
        timeout_seconds  = var.timeout_seconds
      }
    })
    run_job_handle_path = "$.Payload"
    get_status_resource = "arn:${local.partition}:states:::lambda:invoke"
    get_status_parameters = jsonencode({
      FunctionName = "${local.function_arn_prefix}${local.get_status_function_name}"
      Payload = {
        "context.$"      = "$$"
        "job.$"          = "${local.state_path}.run.handle"
        "wait_count.$"   = "${local.state_path}.loop.wait_count"
        poller           = var.poller_name
        timeout_strategy = var.timeout_strategy
      }
    })
    get_status_result_selector = jsonencode({ "status.$" = "$.Payload.status", "result.$" = "$.Payload" })
    retry_errors               = tolist(local.lambda_retry_errors)
    succeeded                  = tolist(["SUCCEEDED"])
    failed                     = tolist(["FAILED"])
    running                    = tolist(["RUNNING"])
    } : {
    run_job_resource           = "arn:${local.partition}:states:::aws-sdk:${var.aws_sdk_job.start_action}"
    run_job_parameters         = var.aws_sdk_job.start_parameters_json
    run_job_handle_path        = "$"
    get_status_resource        = "arn:${local.partition}:states:::aws-sdk:${var.aws_sdk_job.status_action}"
    get_status_parameters      = var.aws_sdk_job.status_parameters_json
    get_status_result_selector = jsonencode({ "status.$" = var.aws_sdk_job.status_path, "result.$" = "$" })
    retry_errors               = var.aws_sdk_job.retry_errors
    succeeded                  = var.aws_sdk_job.succeeded_statuses
    failed                     = var.aws_sdk_job.failed_statuses
    running                    = var.aws_sdk_job.running_statuses
  }

  status_variable = "${local.state_path}.status.status"
  own_exits = {
    succeeded = "${var.poller_name} Succeeded"
    failed    = "${var.poller_name} Job Failed"
    timeout   = "${var.poller_name} Timed Out"
    unknown   = "${var.poller_name} Unknown Status"
    error     = "${var.poller_name} Poll Error"
  }

  # Every templatefile variable of the poll loop except its exits: callers (and
  # other patterns) render templates/job-poller/poll-loop.asl.json.tftpl with these.
  fragment_vars = {
    name       = var.poller_name
    state_path = local.state_path
    # JSON members of the loop's start state: fixed numbers here; a Map that polls
    # items with different limits passes paths instead (dag-aggregate does).
    loop_limits                = "\"max_wait_count\": ${local.max_wait_count}, \"initial_wait_seconds\": ${var.initial_wait_seconds}"
    poll_interval_seconds      = var.poll_interval_seconds
    get_status_resource        = local.variant.get_status_resource
    get_status_parameters      = local.variant.get_status_parameters
    get_status_result_selector = local.variant.get_status_result_selector
    retry_errors               = jsonencode(local.variant.retry_errors)
    retry_interval_seconds     = var.task_retry.interval_seconds
    retry_max_attempts         = var.task_retry.max_attempts
    retry_backoff_rate         = var.task_retry.backoff_rate
    succeeded_rules            = jsonencode([for s in local.variant.succeeded : { Variable = local.status_variable, StringEquals = s }])
    failed_rules               = jsonencode([for s in local.variant.failed : { Variable = local.status_variable, StringEquals = s }])
    running_rules              = jsonencode([for s in local.variant.running : { Variable = local.status_variable, StringEquals = s }])
  }

  fragment_template = "${path.module}/../../templates/job-poller/poll-loop.asl.json.tftpl"
  machine_template  = "${path.module}/../../templates/job-poller/definition.asl.json.tftpl"

  own_fragment = jsondecode(templatefile(local.fragment_template, merge(local.fragment_vars, {
    succeeded_next = local.own_exits.succeeded
    failed_next    = local.own_exits.failed
    timeout_next   = local.own_exits.timeout
    unknown_next   = local.own_exits.unknown
    error_next     = local.own_exits.error
  })))

  output_exits = { for k, v in local.own_exits : k => coalesce(lookup(var.fragment_next_states, k, null), v) }
  output_fragment = templatefile(local.fragment_template, merge(local.fragment_vars, {
    succeeded_next = local.output_exits.succeeded
    failed_next    = local.output_exits.failed
    timeout_next   = local.output_exits.timeout
    unknown_next   = local.output_exits.unknown
    error_next     = local.output_exits.error
  }))

  machine = jsondecode(templatefile(local.machine_template, {
    comment                = "Job poller ${var.poller_name}: run, wait ${var.initial_wait_seconds} s, poll every ${var.poll_interval_seconds} s, time out after ${var.timeout_seconds} s (${var.timeout_strategy})."
    name                   = var.poller_name
    state_path             = local.state_path
    run_job_resource       = local.variant.run_job_resource
    run_job_parameters     = local.variant.run_job_parameters
    run_job_handle_path    = local.variant.run_job_handle_path
    retry_errors           = jsonencode(local.variant.retry_errors)
    retry_interval_seconds = var.task_retry.interval_seconds
    retry_max_attempts     = var.task_retry.max_attempts
    retry_backoff_rate     = var.task_retry.backoff_rate
    timeout_seconds        = var.timeout_seconds
    timeout_strategy       = var.timeout_strategy
  }))

  definition = jsonencode(merge(local.machine, { States = merge(local.machine.States, local.own_fragment) }))

  store_env = local.create_s3 ? { METADATA_STORE = "s3", METADATA_BUCKET = local.bucket_name } : (
    local.create_ddb ? { METADATA_STORE = "dynamodb", METADATA_TABLE = local.table_name } : { METADATA_STORE = "none" }
  )
  store_read_write = local.create_s3 ? [{
    sid       = "MetadataObjects"
    effect    = "Allow"
    actions   = ["s3:GetObject", "s3:PutObject"]
    resources = ["${local.bucket_arn}/job-poller/*"]
    }, {
    # GetObject on a missing key answers 404 (not 403) only with ListBucket.
    sid       = "MetadataList"
    effect    = "Allow"
    actions   = ["s3:ListBucket"]
    resources = [local.bucket_arn]
    }] : local.create_ddb ? [{
    sid       = "MetadataItems"
    effect    = "Allow"
    actions   = ["dynamodb:GetItem", "dynamodb:PutItem"]
    resources = [local.table_arn]
  }] : []
  kms_statements = var.kms_key_arn == null || !local.need_store ? [] : [{
    sid       = "MetadataKey"
    effect    = "Allow"
    actions   = ["kms:Decrypt", "kms:GenerateDataKey"]
    resources = [var.kms_key_arn]
  }]
  invoke_adapter = length(local.adapter_lambda_arn) == 0 ? [] : [{
    sid       = "InvokeAdapter"
    effect    = "Allow"
    actions   = ["lambda:InvokeFunction"]
    resources = local.adapter_lambda_arn
  }]
  invoke_sample = local.sample_job ? [{
    sid       = "StartSampleJob"
    effect    = "Allow"
    actions   = ["lambda:InvokeFunction"]
    resources = ["${local.function_arn_prefix}${local.sample_job_function_name}"]
  }] : []
  adapter_env = merge(local.store_env, {
    JOB_START_ADAPTER  = local.adapter.start
    JOB_STATUS_ADAPTER = local.adapter.status
    }, local.sample_job ? { SAMPLE_JOB_FUNCTION = local.sample_job_function_name } : {}
  )
}
