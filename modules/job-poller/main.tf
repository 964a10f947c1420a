# Job poller (seeds 000/001): Run Job, then wait for the job to end and route its
# outcome, with a per-loop timeout. How it waits (templates/job-poller/poll-*.tftpl):
#   polling = "retry"        Wait (initial) -> Get Status whose Retry polls (1 transition per poll)
#   polling = "loop-assign"  Wait -> Get Status (+ counter variable) -> Check -> Wait (3 per poll)
#   polling = "loop"         a 4-state loop (Wait, Get Status, a Count Pass, Check: 4 per poll)
#   completion = "event"     park on a task token; the job's completion event resumes it,
#                            a fallback check every fallback_seconds guarantees the end
# Lambda variant (generic Run Job / Get Job Status Lambdas calling a pluggable
# adapter) or aws-sdk variant (no Lambdas: a start API and a describe API called by
# Step Functions).

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
  state_machine_arn  = "arn:${local.partition}:states:${local.region}:${local.account_id}:stateMachine:${local.state_machine_name}"

  # The loop keeps all its data under one path, so several pollers never collide.
  state_path = "$.job_poller.${var.poller_name}"

  # --- How the loop waits -------------------------------------------------------------
  event   = var.completion == "event"
  polling = coalesce(var.polling, local.use_lambda ? "retry" : "loop-assign")
  # event: the Lambda variant parks in its own status check (one transition per
  # fallback); event-sdk: a park through the event-completion function, then the
  # describe call on each fallback.
  shape = local.event ? (local.use_lambda ? "event" : "event-sdk") : local.polling
  shape_templates = {
    "loop"        = "poll-loop.asl.json.tftpl"
    "loop-assign" = "poll-loop-assign.asl.json.tftpl"
    "retry"       = "poll-retry.asl.json.tftpl"
    "event"       = "poll-event.asl.json.tftpl"
    "event-sdk"   = "poll-event-sdk.asl.json.tftpl"
  }
  entry_states = {
    "loop"        = "${var.poller_name} Start"
    "loop-assign" = "${var.poller_name} Wait Initial"
    "retry"       = "${var.poller_name} Wait Initial"
    "event"       = "${var.poller_name} Await"
    "event-sdk"   = "${var.poller_name} Await"
  }
  entry_state = local.entry_states[local.shape]

  # --- How many polls the timeout allows ----------------------------------------------
  # Polls = status checks after the first one. Wait-count timeout: after W0 + n * P
  # seconds the loop gives up (n = max_polls); with retry backoff the intervals grow
  # P, P*b, P*b^2, ... up to the cap; with events, one fallback check every F seconds.
  # With start-time the Lambda's clock decides; the counter is a backstop one poll later.
  poll_span     = max(var.timeout_seconds - var.initial_wait_seconds, 0)
  backoff       = var.poll_backoff_rate
  log_base      = local.backoff == 1 ? 2 : local.backoff
  poll_cap      = coalesce(var.poll_max_interval_seconds, local.backoff == 1 ? var.poll_interval_seconds : 31622400)
  capped_after  = local.backoff == 1 ? 0 : max(0, ceil(log(local.poll_cap / var.poll_interval_seconds, local.log_base)))
  uncapped_span = local.backoff == 1 ? 0 : var.poll_interval_seconds * (pow(local.backoff, local.capped_after) - 1) / (local.backoff - 1)
  backoff_polls = local.uncapped_span >= local.poll_span ? ceil(log(1 + local.poll_span * (local.log_base - 1) / var.poll_interval_seconds, local.log_base)) : local.capped_after + ceil((local.poll_span - local.uncapped_span) / local.poll_cap)
  interval_polls = (
    local.poll_span == 0 ? 0 : local.backoff == 1 || local.shape != "retry" ? ceil(local.poll_span / var.poll_interval_seconds) : local.backoff_polls
  )
  fallback_polls = ceil(var.timeout_seconds / var.fallback_seconds)
  max_polls      = (local.event ? local.fallback_polls : local.interval_polls) + (local.start_time ? 1 : 0)
  max_polls_formula = local.event ? (
    "ceil(timeout_seconds ${var.timeout_seconds} / fallback_seconds ${var.fallback_seconds})"
    ) : (
    "ceil((timeout_seconds ${var.timeout_seconds} - initial_wait_seconds ${var.initial_wait_seconds}) / poll_interval_seconds ${var.poll_interval_seconds}${local.shape == "retry" && local.backoff != 1 ? " growing x${local.backoff} up to ${local.poll_cap} s" : ""})"
  )

  # --- Cost per job, by shape (README "Cost" and "History budget") -----------------------
  # Counted from execution histories (tests/job_poller/test_example.py
  # and test_two_pollers.py check each against LocalStack histories):
  # fixed part of a job that succeeds, then per poll (or fallback check);
  # every retry of a task on a service error adds 3 history events (TaskFailed,
  # TaskScheduled, TaskStarted). R counts per state visit: Run Job, and Get Status (or
  # the park) once per poll where each poll re-enters the state.
  costs = {
    "loop"        = { transitions_fixed = 6, transitions_per_poll = 4, events_fixed = 20, events_per_poll = 11, retried_states_fixed = 2, retried_states_per_poll = 1, invocations_fixed = 2, invocations_per_poll = 1 }
    "loop-assign" = { transitions_fixed = 5, transitions_per_poll = 3, events_fixed = 18, events_per_poll = 9, retried_states_fixed = 2, retried_states_per_poll = 1, invocations_fixed = 2, invocations_per_poll = 1 }
    "retry"       = { transitions_fixed = 5, transitions_per_poll = 1, events_fixed = 18, events_per_poll = 3, retried_states_fixed = 2, retried_states_per_poll = 0, invocations_fixed = 2, invocations_per_poll = 1 }
    "event"       = { transitions_fixed = 4, transitions_per_poll = 1, events_fixed = 17, events_per_poll = 6, retried_states_fixed = 2, retried_states_per_poll = 1, invocations_fixed = 3, invocations_per_poll = 1 }
    "event-sdk"   = { transitions_fixed = 4, transitions_per_poll = 3, events_fixed = 17, events_per_poll = 13, retried_states_fixed = 2, retried_states_per_poll = 2, invocations_fixed = 2, invocations_per_poll = 1 }
  }
  cost = local.costs[local.shape]
  # Retries per task visit, worst case: the aws-sdk variant's tasks have two retriers
  # (its service's throttling, then aws_sdk_job.retry_errors), each with its own count.
  retry = var.task_retry.max_attempts * (local.use_lambda ? 1 : 2)
  history_events_worst_case = (
    local.cost.events_fixed + 3 * local.retry * local.cost.retried_states_fixed
    + local.max_polls * (local.cost.events_per_poll + 3 * local.retry * local.cost.retried_states_per_poll)
  )
  history_formula = join("", [
    "${local.cost.events_fixed} + 3 x ${local.retry} retries x ${local.cost.retried_states_fixed} tasks",
    " + ${local.max_polls} ${local.event ? "fallback checks" : "polls"} (${local.max_polls_formula}${local.start_time ? " + 1 backstop" : ""})",
    " x (${local.cost.events_per_poll} + 3 x ${local.retry} retries x ${local.cost.retried_states_per_poll} tasks)",
  ])
  history_advice = local.event ? "Raise fallback_seconds, or lower timeout_seconds or task_retry.max_attempts." : (
    local.shape == "retry"
    ? "Raise poll_interval_seconds, poll_backoff_rate or initial_wait_seconds, lower timeout_seconds, or use completion = \"event\"."
    : "Raise poll_interval_seconds or initial_wait_seconds, lower timeout_seconds or task_retry.max_attempts, or use ${local.use_lambda ? "polling = \"retry\" or " : ""}completion = \"event\"."
  )
  cost_model = {
    shape                         = local.shape
    polling                       = local.event ? null : local.polling
    completion                    = var.completion
    initial_wait_seconds          = local.event ? 0 : var.initial_wait_seconds
    poll_interval_seconds         = local.event ? var.fallback_seconds : var.poll_interval_seconds
    poll_backoff_rate             = local.shape == "retry" ? local.backoff : 1
    poll_max_interval_seconds     = local.shape == "retry" ? local.poll_cap : (local.event ? var.fallback_seconds : var.poll_interval_seconds)
    max_polls                     = local.max_polls
    transitions_fixed             = local.cost.transitions_fixed
    transitions_per_poll          = local.cost.transitions_per_poll
    history_events_fixed          = local.cost.events_fixed
    history_events_per_poll       = local.cost.events_per_poll
    history_events_per_task_retry = 3
    lambda_invocations_fixed      = local.use_lambda || local.event ? local.cost.invocations_fixed : 0
    lambda_invocations_per_poll   = local.use_lambda || local.event ? local.cost.invocations_per_poll : 0
    history_events_worst_case     = local.history_events_worst_case
  }

  sample_adapter = {
    start  = "sfn_patterns_samples.job_poller.sample_job:start"
    status = "sfn_patterns_samples.job_poller.sample_job:status"
  }
  adapter = var.job_adapter != null ? { start = var.job_adapter.start, status = var.job_adapter.status } : local.sample_adapter

  # The generic Lambdas' code: the runtime's job_poller, plus the sample job when it
  # is deployed, plus the caller's adapter code (source_path) when given.
  lambda_src = "${path.module}/../../lambda_src"
  lambda_sources = concat(
    [{ path = local.lambda_src, patterns = ["sfn_patterns/__init__.py", "sfn_patterns/clients.py", "sfn_patterns/metrics.py", "sfn_patterns/job_poller/**", "sfn_patterns/event_completion/**"], prefix_in_zip = "" }],
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

  # Retry of every Task on the errors AWS recommends retrying (templates/retry/policy.json,
  # the list every pattern reads), with task_retry's budget and full jitter: Lambda's
  # transient errors (and the adapter's RetryableJobError) on every invoke, and on each
  # aws-sdk call first its service's throttling errors, then aws_sdk_job.retry_errors.
  # Retries used up fail the execution with the error (Poll Error). A Task's Retry
  # costs no transition when nothing fails.
  retry_policy = jsondecode(file("${path.module}/../../templates/retry/policy.json"))
  task_budget = {
    IntervalSeconds = var.task_retry.interval_seconds
    MaxAttempts     = var.task_retry.max_attempts
    BackoffRate     = var.task_retry.backoff_rate
    JitterStrategy  = "FULL"
  }
  lambda_retriers = jsonencode(merge(local.task_budget, { ErrorEquals = concat(local.retry_policy.lambda, ["RetryableJobError"]) }))
  # The park (completion = "event") also retries its process dying or timing out: it
  # registers the token and reads a recorded end, both safe to repeat.
  await_retriers = jsonencode(merge(local.task_budget, { ErrorEquals = concat(local.retry_policy.lambda, ["Runtime.ExitError", "Sandbox.Timedout"]) }))
  sdk_services   = { for k, action in { start = try(var.aws_sdk_job.start_action, "none:none"), status = try(var.aws_sdk_job.status_action, "none:none") } : k => split(":", action)[0] }
  sdk_throttling = {
    for k, service in local.sdk_services : k => lookup(local.retry_policy.throttling, "aws-sdk:${service}", [
      for name in local.retry_policy.aws_sdk_default : replace(name, "{Service}", "${upper(substr(service, 0, 1))}${substr(service, 1, -1)}")
    ])
  }
  # The status check only reads, so it retries its service's server errors (5xx) too;
  # the start does not (a first attempt that failed late may have started the job).
  sdk_transient = {
    start = local.sdk_throttling.start
    status = concat(local.sdk_throttling.status, [
      for name in local.retry_policy.aws_sdk_server_errors : replace(name, "{Service}", split(".", local.sdk_throttling.status[0])[0])
    ])
  }
  # retry_errors minus the transient names (a retrier after them would never see those).
  sdk_own_errors = { for k, errors in local.sdk_transient : k => [for e in try(var.aws_sdk_job.retry_errors, []) : e if !contains(errors, e)] }
  sdk_retriers = {
    for k, errors in local.sdk_transient : k => join(",", concat(
      [jsonencode(merge(local.task_budget, { ErrorEquals = errors }))],
      length(local.sdk_own_errors[k]) > 0 ? [jsonencode(merge(local.task_budget, { ErrorEquals = local.sdk_own_errors[k] }))] : [],
    ))
  }

  # The job's completion events (completion = "event"): the caller's, or the sample
  # job's own when it is deployed.
  sample_completion_event = {
    event_pattern = jsonencode({
      source        = ["sfn-patterns.sample-job"]
      "detail-type" = ["Sample Job State Change"]
      resources     = ["${local.function_arn_prefix}${local.sample_job_function_name}"]
    })
    job_id_path        = "$.detail.job_id"
    status_path        = "$.detail.state"
    succeeded_statuses = ["SUCCEEDED"]
    failed_statuses    = ["FAILED"]
    job_id_state_path  = null
  }
  completion_event = !local.event ? null : (var.completion_event != null ? var.completion_event : (local.sample_job ? local.sample_completion_event : null))
  event_succeeded  = try(local.completion_event.succeeded_statuses, [])
  event_failed     = try(local.completion_event.failed_statuses, [])
  completion_name  = "${var.name}-job-poller"
  role_arn         = try(var.aws_sdk_job.role_arn, null)

  # What differs between the two variants; the templates are the same.
  lambda_status_payload = merge(
    {
      "context.$"      = "$$"
      "job.$"          = "${local.state_path}.run.handle"
      poller           = var.poller_name
      timeout_strategy = var.timeout_strategy
    },
    local.shape == "loop" ? { "wait_count.$" = "${local.state_path}.loop.wait_count" } : {},
    local.shape == "retry" ? { polling = "retry" } : {},
  )
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
      Payload      = local.lambda_status_payload
    })
    get_status_result_selector = jsonencode({ "status.$" = "$.Payload.status", "result.$" = "$.Payload" })
    run_job_retriers           = local.lambda_retriers
    get_status_retriers        = local.lambda_retriers
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
    run_job_retriers           = local.sdk_retriers.start
    get_status_retriers        = local.sdk_retriers.status
    succeeded                  = var.aws_sdk_job.succeeded_statuses
    failed                     = var.aws_sdk_job.failed_statuses
    running                    = var.aws_sdk_job.running_statuses
  }

  # The park of the event shapes: the Lambda variant's own status check (it registers
  # the token, then checks), or the event-completion function (aws-sdk variant).
  await_parameters = local.use_lambda ? jsonencode({
    FunctionName = "${local.function_arn_prefix}${local.get_status_function_name}"
    Payload = merge(local.lambda_status_payload, {
      completion = "event"
      "token.$"  = "$$.Task.Token"
      max_checks = local.max_polls
    })
    }) : jsonencode({
    FunctionName = "${local.function_arn_prefix}${local.completion_name}-completion"
    Payload = {
      action        = "park"
      "job_id.$"    = try(local.completion_event.job_id_state_path, null)
      "token.$"     = "$$.Task.Token"
      "execution.$" = "$$.Execution.Id"
      max_checks    = local.max_polls
    }
  })

  status_variable = "${local.state_path}.status.status"
  status_rules = {
    succeeded = distinct(concat(local.variant.succeeded, local.event_succeeded))
    failed    = distinct(concat(local.variant.failed, local.event_failed))
    running   = local.variant.running
  }
  own_exits = {
    succeeded = "${var.poller_name} Succeeded"
    failed    = "${var.poller_name} Job Failed"
    timeout   = "${var.poller_name} Timed Out"
    unknown   = "${var.poller_name} Unknown Status"
    error     = "${var.poller_name} Poll Error"
  }

  # Every templatefile variable of the chosen wait (poll_loop_template) except its
  # exits: callers (and other patterns) render more loops with these. Each template
  # uses the variables it needs and ignores the rest.
  fragment_vars = {
    name       = var.poller_name
    state_path = local.state_path
    # poll-loop (polling = "loop"): JSON members of the loop's start state, fixed
    # numbers here; a Map that polls items with different limits passes paths
    # instead (dag-aggregate does).
    loop_limits                = "\"max_wait_count\": ${local.max_polls}, \"initial_wait_seconds\": ${var.initial_wait_seconds}"
    initial_wait_seconds       = var.initial_wait_seconds
    poll_interval_seconds      = var.poll_interval_seconds
    max_polls                  = local.max_polls
    poll_backoff_rate          = local.backoff
    poll_max_interval_seconds  = local.poll_cap
    counter                    = "jp_${var.poller_name}_polls"
    counter_ref                = "$jp_${var.poller_name}_polls"
    fallback_seconds           = var.fallback_seconds
    await_resource             = "arn:${local.partition}:states:::lambda:invoke.waitForTaskToken"
    await_parameters           = local.await_parameters
    await_retriers             = local.await_retriers
    get_status_resource        = local.variant.get_status_resource
    get_status_parameters      = local.variant.get_status_parameters
    get_status_result_selector = local.variant.get_status_result_selector
    get_status_retriers        = local.variant.get_status_retriers
    run_job_retriers           = local.variant.run_job_retriers
    succeeded_rules            = jsonencode([for s in local.status_rules.succeeded : { Variable = local.status_variable, StringEquals = s }])
    failed_rules               = jsonencode([for s in local.status_rules.failed : { Variable = local.status_variable, StringEquals = s }])
    running_rules              = jsonencode([for s in local.status_rules.running : { Variable = local.status_variable, StringEquals = s }])
  }

  templates_dir     = "${path.module}/../../templates/job-poller"
  fragment_template = "${local.templates_dir}/${local.shape_templates[local.shape]}"
  machine_template  = "${local.templates_dir}/definition.asl.json.tftpl"

  # Tasks that act through var.aws_sdk_job.role_arn (Credentials: another account).
  credential_states = ["${var.poller_name} Run Job", "${var.poller_name} Get Status"]
  credentials       = local.role_arn == null ? {} : { Credentials = { RoleArn = local.role_arn } }

  own_fragment = {
    for name, state in jsondecode(templatefile(local.fragment_template, merge(local.fragment_vars, {
      succeeded_next = local.own_exits.succeeded
      failed_next    = local.own_exits.failed
      timeout_next   = local.own_exits.timeout
      unknown_next   = local.own_exits.unknown
      error_next     = local.own_exits.error
    }))) : name => merge(state, { for k, v in local.credentials : k => v if contains(local.credential_states, name) })
  }

  output_exits = { for k, v in local.own_exits : k => coalesce(lookup(var.fragment_next_states, k, null), v) }
  output_fragment = jsonencode({
    for name, state in jsondecode(templatefile(local.fragment_template, merge(local.fragment_vars, {
      succeeded_next = local.output_exits.succeeded
      failed_next    = local.output_exits.failed
      timeout_next   = local.output_exits.timeout
      unknown_next   = local.output_exits.unknown
      error_next     = local.output_exits.error
    }))) : name => merge(state, { for k, v in local.credentials : k => v if contains(local.credential_states, name) })
  })

  waits = local.event ? "wait for the completion event, checking every ${var.fallback_seconds} s" : "wait ${var.initial_wait_seconds} s, poll every ${var.poll_interval_seconds} s (${local.polling})"
  machine = jsondecode(templatefile(local.machine_template, {
    comment             = "Job poller ${var.poller_name}: run, ${local.waits}, time out after ${var.timeout_seconds} s (${var.timeout_strategy})."
    name                = var.poller_name
    state_path          = local.state_path
    entry_state         = local.entry_state
    run_job_resource    = local.variant.run_job_resource
    run_job_parameters  = local.variant.run_job_parameters
    run_job_handle_path = local.variant.run_job_handle_path
    run_job_retriers    = local.variant.run_job_retriers
    timeout_seconds     = var.timeout_seconds
    timeout_strategy    = var.timeout_strategy
  }))
  machine_states = {
    for name, state in local.machine.States :
    name => merge(state, { for k, v in local.credentials : k => v if contains(local.credential_states, name) })
  }

  definition = jsonencode(merge(local.machine, { States = merge(local.machine_states, local.own_fragment) }))

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
  # S3 asks the caller for a data key on PutObject and for kms:Decrypt on GetObject;
  # DynamoDB only for kms:Decrypt, on reads and writes alike.
  kms_statements = var.kms_key_arn == null || !local.need_store ? [] : [{
    sid       = "MetadataKey"
    effect    = "Allow"
    actions   = local.create_s3 ? ["kms:Decrypt", "kms:GenerateDataKey"] : ["kms:Decrypt"]
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
    }, local.sample_job ? { SAMPLE_JOB_FUNCTION = local.sample_job_function_name } : {},
    local.event ? { TOKEN_TABLE = "${local.completion_name}-tokens" } : {},
    local.metrics_environment,
  )
  # Event completion, Lambda variant: Get Job Status parks the token itself and
  # answers a job it finds finished.
  park_statements = [for statement in concat(module.completion.token_writer_policy_statements, [{
    sid     = "AnswerOwnTasks"
    actions = ["states:SendTaskSuccess"]
    # No resource ARN exists for a task token: AWS accepts only "*" here.
    resources = ["*"]
  }]) : statement if local.event && local.use_lambda]
  sample_event_statements = local.sample_job && local.event ? [{
    sid       = "AnnounceJobEnd"
    effect    = "Allow"
    actions   = ["events:PutEvents"]
    resources = ["arn:${local.partition}:events:${local.region}:${local.account_id}:event-bus/default"]
  }] : []
}
