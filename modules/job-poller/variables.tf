variable "create" {
  description = "Whether to create any resources in this module."
  type        = bool
  default     = true
}

variable "name" {
  description = "Prefix of every resource name (state machine, role, Lambdas, bucket or table)."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{0,39}$", var.name))
    error_message = "name must start with a letter and hold at most 40 lower-case letters, digits and hyphens."
  }

  validation {
    condition     = var.metadata_store != "s3" || length(var.name) <= 39
    error_message = "With metadata_store = \"s3\", name must be at most 39 characters: the metadata bucket <name>-job-poller-<account id> may have at most 63."
  }
}

variable "poller_name" {
  description = "Name of this poll loop: prefixes its state names and namespaces its state path, counter and metadata keys."
  type        = string
  default     = "job"

  validation {
    condition     = can(regex("^[a-z][a-z0-9_]{0,39}$", var.poller_name))
    error_message = "poller_name must start with a lower-case letter and hold at most 40 lower-case letters, digits and underscores."
  }
}

variable "initial_wait_seconds" {
  description = "Seconds of the single Wait after Run Job when polling: the job's expected minimum duration (W0); unused with completion = event."
  type        = number
  default     = 60

  validation {
    condition     = var.initial_wait_seconds >= 0 && var.initial_wait_seconds <= 31536000 && floor(var.initial_wait_seconds) == var.initial_wait_seconds
    error_message = "initial_wait_seconds must be a whole number of seconds between 0 and 31536000 (one year, the Standard workflow limit)."
  }
}

variable "poll_interval_seconds" {
  description = "Seconds of the Wait between two status checks (P)."
  type        = number
  default     = 30

  validation {
    condition     = var.poll_interval_seconds >= 1 && var.poll_interval_seconds <= 31536000 && floor(var.poll_interval_seconds) == var.poll_interval_seconds
    error_message = "poll_interval_seconds must be a whole number of seconds between 1 and 31536000."
  }
}

variable "timeout_seconds" {
  description = "Per-loop timeout: how long the job may run before the loop fails with JobPoller.Timeout (independent of the machine's own timeout)."
  type        = number
  default     = 3600

  validation {
    condition     = var.timeout_seconds >= 1 && floor(var.timeout_seconds) == var.timeout_seconds && (var.timeout_seconds >= var.initial_wait_seconds || var.completion == "event")
    error_message = "timeout_seconds must be a whole number of seconds, at least 1 and (when polling) at least initial_wait_seconds."
  }
}

variable "polling" {
  description = "How the loop waits while the job runs: retry (Get Status raises JobStillRunning and its own Retry polls, 1 transition per poll; Lambda variant), loop-assign (Wait, Get Status counting in a workflow variable, Check: 3 per poll), or loop (a 4-state loop: Wait, Get Status, Count, Check: 4 per poll); null = retry for the Lambda variant, loop-assign for the aws-sdk one."
  type        = string
  default     = null

  validation {
    condition     = var.polling == null || contains(["retry", "loop-assign", "loop"], coalesce(var.polling, "retry"))
    error_message = "polling must be retry, loop-assign or loop (or null for the variant's default)."
  }

  validation {
    condition     = var.polling != "retry" || var.aws_sdk_job == null
    error_message = "polling = \"retry\" needs the Lambda variant: an aws-sdk call cannot raise a \"still running\" error for the Retry to catch. Use loop-assign (the aws-sdk default) or loop."
  }
}

variable "poll_backoff_rate" {
  description = "polling = retry: each poll interval is the previous one times this (1 = fixed interval), for jobs of unknown duration."
  type        = number
  default     = 1

  validation {
    condition     = var.poll_backoff_rate >= 1 && var.poll_backoff_rate <= 10
    error_message = "poll_backoff_rate must be between 1 (fixed interval) and 10."
  }
}

variable "poll_max_interval_seconds" {
  description = "polling = retry with poll_backoff_rate > 1: the longest interval between two polls (MaxDelaySeconds); null = no cap."
  type        = number
  default     = null

  validation {
    condition     = var.poll_max_interval_seconds == null || try(var.poll_max_interval_seconds >= var.poll_interval_seconds && var.poll_max_interval_seconds <= 31622400 && floor(var.poll_max_interval_seconds) == var.poll_max_interval_seconds, false)
    error_message = "poll_max_interval_seconds must be a whole number of seconds from poll_interval_seconds to 31622400."
  }
}

variable "completion" {
  description = "How the end of the job is noticed: poll (status checks while it runs) or event (the execution parks on a task token and the job's completion event resumes it; a fallback check every fallback_seconds guarantees completion if an event is lost)."
  type        = string
  default     = "poll"

  validation {
    condition     = contains(["poll", "event"], var.completion)
    error_message = "completion must be poll or event."
  }
}

variable "fallback_seconds" {
  description = "completion = event: seconds a parked execution waits for the completion event before checking the job itself and parking again (the longest delay a lost event can cause)."
  type        = number
  default     = 600

  validation {
    condition     = var.fallback_seconds >= 1 && var.fallback_seconds <= 31536000 && floor(var.fallback_seconds) == var.fallback_seconds
    error_message = "fallback_seconds must be a whole number of seconds between 1 and 31536000."
  }
}

variable "completion_event" {
  description = "completion = event: the job's completion events (an EventBridge pattern), where they hold the job id and status, which statuses end the job, and (aws-sdk variant) where the state holds the job id; null with the sample job uses its own events."
  type = object({
    event_pattern      = string
    job_id_path        = string
    status_path        = string
    succeeded_statuses = list(string)
    failed_statuses    = list(string)
    job_id_state_path  = optional(string)
  })
  default = null

  validation {
    condition     = var.completion != "event" || var.completion_event != null || (var.aws_sdk_job == null && var.job_adapter == null && var.create_sample_job)
    error_message = "completion = \"event\" needs completion_event (the job's event pattern, job_id_path, status_path and statuses); only the sample job brings its own."
  }

  validation {
    condition     = var.completion != "event" || var.aws_sdk_job == null || try(var.completion_event.job_id_state_path != null, false)
    error_message = "completion = \"event\" with aws_sdk_job needs completion_event.job_id_state_path: where the state holds the job id the events carry, for example \"$.job_poller.job.run.handle.ExecutionArn\"."
  }

  validation {
    condition     = var.completion_event == null || try(length(var.completion_event.succeeded_statuses) > 0 && length(var.completion_event.failed_statuses) > 0, false)
    error_message = "completion_event needs at least one succeeded and one failed status."
  }
}

variable "timeout_strategy" {
  description = "How the loop times out: wait-count (a counter in the state, no store) or start-time (Run Job records the start time in the metadata store, Get Job Status raises JobTimeoutError)."
  type        = string
  default     = "wait-count"

  validation {
    condition     = contains(["wait-count", "start-time"], var.timeout_strategy)
    error_message = "timeout_strategy must be wait-count or start-time."
  }

  validation {
    condition     = var.timeout_strategy == "wait-count" || var.aws_sdk_job == null
    error_message = "timeout_strategy start-time needs the Lambda variant (aws_sdk_job = null): only a Lambda can compare the stored start time."
  }
}

variable "metadata_store" {
  description = "Where Run Job records start times and the sample job writes its status: s3 or dynamodb (created only when needed)."
  type        = string
  default     = "s3"

  validation {
    condition     = contains(["s3", "dynamodb"], var.metadata_store)
    error_message = "metadata_store must be s3 or dynamodb."
  }
}

variable "job_adapter" {
  description = "The job's adapter for the generic Lambdas: start and status are each 'package.module:function' from source_path (your code, packed next to the runtime) or a Lambda ARN; null uses the sample job."
  type = object({
    start            = string
    status           = string
    source_path      = optional(string)
    patterns         = optional(list(string), ["**"])
    pip_requirements = optional(list(string), [])
  })
  default = null

  validation {
    condition = var.job_adapter == null || alltrue([
      for spec in try([var.job_adapter.start, var.job_adapter.status], []) :
      can(regex("^(arn:aws[a-z-]*:lambda:[a-z0-9-]+:[0-9]{12}:function:[A-Za-z0-9_-]+(:[A-Za-z0-9_$-]+)?|[A-Za-z_][A-Za-z0-9_.]*:[A-Za-z_][A-Za-z0-9_]*)$", spec))
    ])
    error_message = "job_adapter.start and job_adapter.status must each be 'package.module:function' or a Lambda function ARN."
  }
}

variable "lambda_package" {
  description = "A prebuilt zip of the generic Lambdas (the sfn_patterns runtime plus your adapter) to deploy instead of building one: a local path or an S3 object."
  type = object({
    local_existing_package = optional(string)
    s3_existing_package = optional(object({
      bucket     = string
      key        = string
      version_id = optional(string)
    }))
  })
  default = null

  validation {
    condition     = var.lambda_package == null || (try(var.lambda_package.local_existing_package, null) == null) != (try(var.lambda_package.s3_existing_package, null) == null)
    error_message = "lambda_package must set exactly one of local_existing_package and s3_existing_package."
  }
}

variable "create_sample_job" {
  description = "Whether to deploy the sample asynchronous job (an asynchronous job runner writing its status to S3) and its adapter; used when job_adapter is null."
  type        = bool
  default     = true
}

variable "aws_sdk_job" {
  description = "aws-sdk variant with no Lambdas: the start and describe API calls of a service with a describe API, how to read its status, and role_arn to make both calls in another account (Credentials); null uses the Lambda variant."
  type = object({
    start_action           = string
    start_parameters_json  = string
    status_action          = string
    status_parameters_json = string
    status_path            = string
    succeeded_statuses     = list(string)
    failed_statuses        = list(string)
    running_statuses       = list(string)
    retry_errors           = optional(list(string), ["States.TaskFailed"])
    role_arn               = optional(string)
    policy_statements = list(object({
      sid       = optional(string)
      actions   = list(string)
      resources = list(string)
    }))
  })
  default = null

  validation {
    condition = var.aws_sdk_job == null || alltrue([
      for action in try([var.aws_sdk_job.start_action, var.aws_sdk_job.status_action], []) :
      can(regex("^[a-z0-9-]+:[a-zA-Z0-9]+$", action))
    ])
    error_message = "aws_sdk_job.start_action and status_action must be service:apiAction, for example sfn:startExecution."
  }

  validation {
    condition     = try(var.aws_sdk_job.role_arn, null) == null || can(regex("^arn:aws[a-z-]*:iam::[0-9]{12}:role/.+$", var.aws_sdk_job.role_arn))
    error_message = "aws_sdk_job.role_arn must be an IAM role ARN (arn:aws:iam::ACCOUNT:role/NAME) that trusts this module's state machine role."
  }

  validation {
    condition     = var.aws_sdk_job == null || alltrue([for s in try(var.aws_sdk_job.policy_statements, []) : alltrue([for a in s.actions : !strcontains(a, "*")])])
    error_message = "aws_sdk_job.policy_statements must not use wildcard actions: name each action (least privilege)."
  }

  validation {
    condition     = var.aws_sdk_job == null || (can(jsondecode(var.aws_sdk_job.start_parameters_json)) && can(jsondecode(var.aws_sdk_job.status_parameters_json)))
    error_message = "aws_sdk_job.start_parameters_json and status_parameters_json must be JSON objects (use jsonencode)."
  }

  validation {
    condition     = var.aws_sdk_job == null || try(length(var.aws_sdk_job.succeeded_statuses) > 0 && length(var.aws_sdk_job.failed_statuses) > 0 && length(var.aws_sdk_job.running_statuses) > 0, false)
    error_message = "aws_sdk_job needs at least one succeeded, one failed and one running status."
  }
}

variable "task_retry" {
  description = "Retry of the Run Job and Get Status tasks on service errors: exponential backoff with full jitter."
  type = object({
    interval_seconds = optional(number, 2)
    max_attempts     = optional(number, 3)
    backoff_rate     = optional(number, 2)
  })
  default = {}

  validation {
    condition     = var.task_retry.interval_seconds >= 1 && var.task_retry.max_attempts >= 0 && var.task_retry.max_attempts <= 10 && var.task_retry.backoff_rate >= 1
    error_message = "task_retry needs interval_seconds >= 1, max_attempts between 0 and 10 and backoff_rate >= 1."
  }
}

variable "fragment_next_states" {
  description = "State names the poll_loop_fragment output exits to, for callers merging it into their own machine; null fields keep this module's terminal state names."
  type = object({
    succeeded = optional(string)
    failed    = optional(string)
    timeout   = optional(string)
    unknown   = optional(string)
    error     = optional(string)
  })
  default = {}
}

variable "lambda_runtime" {
  description = "Python runtime of the Lambdas."
  type        = string
  default     = "python3.12"

  validation {
    condition     = contains(["python3.10", "python3.11", "python3.12", "python3.13"], var.lambda_runtime)
    error_message = "lambda_runtime must be one of python3.10, python3.11, python3.12 or python3.13 (the Python Lambda runtimes the code supports); got ${jsonencode(var.lambda_runtime)}."
  }
}

variable "lambda_memory_size" {
  description = "Memory in MB of each Lambda."
  type        = number
  default     = 256

  validation {
    condition     = var.lambda_memory_size >= 128 && var.lambda_memory_size <= 10240
    error_message = "lambda_memory_size must be between 128 and 10240 MB."
  }
}

variable "lambda_timeout" {
  description = "Seconds Run Job and Get Job Status may run per invocation."
  type        = number
  default     = 30

  validation {
    condition     = var.lambda_timeout >= 1 && var.lambda_timeout <= 900 && floor(var.lambda_timeout) == var.lambda_timeout
    error_message = "lambda_timeout must be a whole number of seconds from 1 to 900 (Lambda's limit)."
  }
}

variable "python_executable" {
  description = "Python 3 interpreter that builds the Lambda zips at plan time."
  type        = string
  default     = "python3"
}

variable "s3_force_destroy" {
  description = "Whether destroying the module deletes a metadata bucket that still holds objects."
  type        = bool
  default     = false
}

variable "s3_expiration_days" {
  description = "Days after which metadata objects expire from the bucket."
  type        = number
  default     = 7

  validation {
    condition     = var.s3_expiration_days >= 1
    error_message = "s3_expiration_days must be at least 1."
  }
}

variable "kms_key_arn" {
  description = "Customer managed KMS key for the metadata bucket or table, event completion's token table, the log groups, the Lambda environments and the state machines; null uses AWS owned or managed keys (SSE-S3 for the bucket)."
  type        = string
  default     = null

  validation {
    condition     = var.kms_key_arn == null || can(regex("^arn:aws(-[a-z]+)*:kms:[a-z]+(-[a-z]+)+-[0-9]+:[0-9]{12}:key/(mrk-[0-9a-f]{32}|[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12})$", var.kms_key_arn))
    error_message = "kms_key_arn must be the ARN of a KMS key, arn:PARTITION:kms:REGION:ACCOUNT:key/KEY_ID (any partition: aws, aws-cn, aws-us-gov, ...; KEY_ID a UUID or mrk-...), or null for AWS managed keys; got ${jsonencode(var.kms_key_arn)}. A key ID, alias name or alias ARN is refused: log groups, Lambda environments and IAM policies take only the key ARN, and DynamoDB reads the key ARN back (an alias would show a change on every plan). Look the ARN up with: aws kms describe-key --key-id alias/NAME --query KeyMetadata.Arn."
  }
}

variable "cloudwatch_logs_retention_in_days" {
  description = "Retention of the state machine's and Lambdas' log groups in days."
  type        = number
  default     = 30

  validation {
    condition     = contains([1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653], var.cloudwatch_logs_retention_in_days)
    error_message = "cloudwatch_logs_retention_in_days must be a retention CloudWatch Logs accepts (1, 3, 5, 7, 14, 30, 60, 90, ...); got ${var.cloudwatch_logs_retention_in_days}."
  }
}

variable "logging_level" {
  description = "Execution events written to CloudWatch Logs: ALL, ERROR (failed executions only, the default) or FATAL."
  type        = string
  default     = "ERROR"

  validation {
    condition     = contains(["ALL", "ERROR", "FATAL"], var.logging_level)
    error_message = "logging_level must be ALL, ERROR or FATAL (logging stays on)."
  }
}

variable "logging_include_execution_data" {
  description = "Whether execution logs include state input and output (may contain job data)."
  type        = bool
  default     = false
}

variable "tracing_enabled" {
  description = "Whether X-Ray tracing is enabled on the state machine."
  type        = bool
  default     = false
}

variable "tags" {
  description = "Tags for every resource this module creates."
  type        = map(string)
  default     = {}
}

variable "alarms" {
  description = "CloudWatch alarms on the state machine, its Lambdas, the metadata table and, with completion = \"event\", the completion function, token table and rule: whom they notify (they are created once alarm_actions names a target, or with create = true), their period, and thresholds (defaults from AWS's recommended alarms)."
  type = object({
    # null: created when alarm_actions names a target (an alarm nobody hears pages
    # nobody); true: created anyway (console and dashboard only); false: none.
    create         = optional(bool)
    alarm_actions  = optional(list(string), [])
    ok_actions     = optional(list(string), [])
    period_seconds = optional(number, 60)
    thresholds = optional(object({
      failed_executions       = optional(number, 0)
      lambda_errors           = optional(number, 0)
      lambda_throttles        = optional(number, 0)
      lambda_duration_percent = optional(number, 90)
      table_throttles         = optional(number, 0)
      table_system_errors     = optional(number, 0)
      rule_failed_invocations = optional(number, 0)
      lost_events             = optional(number, 0)
    }), {})
  })
  default  = {}
  nullable = false

  validation {
    condition     = contains([10, 30], var.alarms.period_seconds) || (var.alarms.period_seconds >= 60 && var.alarms.period_seconds % 60 == 0)
    error_message = "alarms.period_seconds must be 10, 30 or a multiple of 60 (CloudWatch alarm periods)."
  }

  validation {
    condition     = var.alarms.thresholds.lambda_duration_percent > 0 && var.alarms.thresholds.lambda_duration_percent <= 100
    error_message = "alarms.thresholds.lambda_duration_percent must be above 0 and at most 100 (percent of a function's timeout)."
  }

  validation {
    condition     = alltrue([for k, v in var.alarms.thresholds : v >= 0])
    error_message = "alarms.thresholds values must be 0 or more."
  }
}

variable "create_dashboard" {
  description = "Whether to create a CloudWatch dashboard of this module, named after it (3 USD a month beyond the account's first three dashboards)."
  type        = bool
  default     = false
}

variable "role_path" {
  description = "Path of every IAM role the module creates (\"/\": none); one your account's policies require, for example \"/service-roles/\"."
  type        = string
  default     = "/"

  validation {
    condition     = can(regex("^/([!-~]{1,510}/)?$", var.role_path)) && !strcontains(var.role_path, "//")
    error_message = "role_path must start and end with / (for example /service-roles/), at most 512 printable characters; got ${jsonencode(var.role_path)}."
  }
}

variable "role_permissions_boundary" {
  description = "ARN of the managed policy set as the permissions boundary of every IAM role the module creates (null: none), for accounts whose policies require one on every role they create."
  type        = string
  default     = null

  validation {
    condition     = var.role_permissions_boundary == null || can(regex("^arn:aws(-[a-z]+)*:iam::([0-9]{12}|aws):policy/[!-~]+$", var.role_permissions_boundary))
    error_message = "role_permissions_boundary must be the ARN of an IAM managed policy, arn:PARTITION:iam::ACCOUNT:policy/NAME, or null; got ${jsonencode(var.role_permissions_boundary)}."
  }
}
