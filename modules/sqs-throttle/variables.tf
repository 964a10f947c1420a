variable "create" {
  description = "Whether to create any resources in this module."
  type        = bool
  default     = true
}

variable "name" {
  description = "Prefix of every resource name: queue <name>.fifo, DLQ <name>-dlq.fifo, starter Lambda and rule <name>-starter, ledger table <name>-ledger."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{0,39}$", var.name))
    error_message = "name must start with a letter and hold at most 40 lower-case letters, digits and hyphens."
  }
}

variable "target_state_machine_arn" {
  description = "ARN of the STANDARD state machine whose executions are throttled; a target encrypted with its own customer managed key needs no grant on that key, since the starter only starts executions and reads their status (metadata only)."
  type        = string

  validation {
    condition     = can(regex("^arn:aws[a-z-]*:states:[a-z0-9-]+:[0-9]{12}:stateMachine:[A-Za-z0-9_-]{1,80}$", var.target_state_machine_arn))
    error_message = "target_state_machine_arn must be a state machine ARN (arn:aws:states:REGION:ACCOUNT:stateMachine:NAME)."
  }
}

variable "target_role_arn" {
  description = "IAM role in the target's account that the starter assumes for every Step Functions call (the target in another account); null when the target is in this account."
  type        = string
  default     = null

  validation {
    condition     = var.target_role_arn == null || can(regex("^arn:aws[a-z-]*:iam::[0-9]{12}:role/[A-Za-z0-9+=,.@_/-]+$", var.target_role_arn))
    error_message = "target_role_arn must be an IAM role ARN (arn:aws:iam::ACCOUNT:role/NAME), or null."
  }
}

variable "max_concurrency" {
  description = "MAX: the starter never starts an execution while it counts MAX or more running executions of the target."
  type        = number
  default     = 10

  validation {
    condition     = var.max_concurrency >= 1 && floor(var.max_concurrency) == var.max_concurrency
    error_message = "max_concurrency must be a whole number, at least 1."
  }
}

variable "schedule_expression" {
  description = "EventBridge rate expression that runs the starter (1 minute is EventBridge's smallest rate)."
  type        = string
  default     = "rate(1 minute)"

  validation {
    condition     = can(regex("^rate\\((1 (minute|hour|day)|([2-9]|[1-9][0-9]+) (minutes|hours|days))\\)$", var.schedule_expression))
    error_message = "schedule_expression must be a rate expression such as rate(1 minute) or rate(5 minutes) (singular unit for 1, plural otherwise)."
  }
}

variable "schedule_enabled" {
  description = "Whether the schedule rule is enabled (disable it to pause admissions; queued requests wait)."
  type        = bool
  default     = true
}

variable "max_messages_per_run" {
  description = "Most messages one starter run receives (bounded work per invocation)."
  type        = number
  default     = 100

  validation {
    condition     = var.max_messages_per_run >= 1 && var.max_messages_per_run <= 10000 && floor(var.max_messages_per_run) == var.max_messages_per_run
    error_message = "max_messages_per_run must be a whole number between 1 and 10000."
  }
}

variable "max_seconds_per_run" {
  description = "Most seconds one starter run keeps admitting and, while every slot is taken and requests wait, re-counting every recheck_seconds. The Lambda timeout is this plus 30 s."
  type        = number
  default     = 50

  validation {
    condition     = var.max_seconds_per_run >= 1 && var.max_seconds_per_run <= 840 && floor(var.max_seconds_per_run) == var.max_seconds_per_run
    error_message = "max_seconds_per_run must be a whole number between 1 and 840 (the Lambda limit of 900 s minus a 30 s margin and 30 s for the visibility timeout)."
  }
}

variable "recheck_seconds" {
  description = "Seconds a run sleeps between two counts while every slot is taken and requests wait (each count is one ListExecutions call or more)."
  type        = number
  default     = 5

  validation {
    condition     = var.recheck_seconds >= 1 && var.recheck_seconds <= 60
    error_message = "recheck_seconds must be between 1 and 60."
  }
}

variable "max_receive_count" {
  description = "Receives after which a message that never starts moves to the DLQ (the redrive policy's maxReceiveCount)."
  type        = number
  default     = 5

  validation {
    condition     = var.max_receive_count >= 1 && var.max_receive_count <= 1000 && floor(var.max_receive_count) == var.max_receive_count
    error_message = "max_receive_count must be a whole number between 1 and 1000."
  }
}

variable "message_retention_seconds" {
  description = "How long a queued request may wait for a slot before SQS drops it."
  type        = number
  default     = 1209600

  validation {
    condition     = var.message_retention_seconds >= 60 && var.message_retention_seconds <= 1209600
    error_message = "message_retention_seconds must be between 60 and 1209600 (14 days)."
  }
}

variable "dlq_message_retention_seconds" {
  description = "How long the DLQ keeps messages that never started."
  type        = number
  default     = 1209600

  validation {
    condition     = var.dlq_message_retention_seconds >= 60 && var.dlq_message_retention_seconds <= 1209600
    error_message = "dlq_message_retention_seconds must be between 60 and 1209600 (14 days)."
  }
}

variable "content_based_deduplication" {
  description = "Whether SQS derives the deduplication id from the body when a producer sends none (the producer helper always sends one)."
  type        = bool
  default     = false
}

variable "kms_data_key_reuse_period_seconds" {
  description = "Seconds SQS reuses a KMS data key when kms_key_arn is set; longer means fewer KMS calls."
  type        = number
  default     = 300

  validation {
    condition     = var.kms_data_key_reuse_period_seconds >= 60 && var.kms_data_key_reuse_period_seconds <= 86400
    error_message = "kms_data_key_reuse_period_seconds must be between 60 and 86400."
  }
}

variable "ledger_ttl_seconds" {
  description = "TTL of a ledger entry (an execution the starter started and has not seen finish): after it, counting relies on ListExecutions alone for that execution. Keep it well above ListExecutions' propagation delay."
  type        = number
  default     = 86400

  validation {
    condition     = var.ledger_ttl_seconds >= 600 && floor(var.ledger_ttl_seconds) == var.ledger_ttl_seconds
    error_message = "ledger_ttl_seconds must be a whole number of seconds, at least 600."
  }
}

variable "lambda_runtime" {
  description = "Runtime of the starter Lambda."
  type        = string
  default     = "python3.12"

  validation {
    condition     = contains(["python3.11", "python3.12", "python3.13"], var.lambda_runtime)
    error_message = "lambda_runtime must be one of python3.11, python3.12 or python3.13."
  }
}

variable "lambda_memory_size" {
  description = "Memory in MB of the starter Lambda."
  type        = number
  default     = 256

  validation {
    condition     = var.lambda_memory_size >= 128 && var.lambda_memory_size <= 10240
    error_message = "lambda_memory_size must be between 128 and 10240 MB."
  }
}

variable "cloudwatch_logs_retention_in_days" {
  description = "Retention of the starter's log group in days."
  type        = number
  default     = 30

  validation {
    condition     = contains([1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653], var.cloudwatch_logs_retention_in_days)
    error_message = "cloudwatch_logs_retention_in_days must be a retention CloudWatch Logs accepts (1, 3, 5, 7, 14, 30, 60, 90, ...); got ${var.cloudwatch_logs_retention_in_days}."
  }
}

variable "kms_key_arn" {
  description = "Customer managed KMS key for the queues, the ledger table, the starter's log group and environment variables; null uses SQS-managed SSE and AWS managed keys."
  type        = string
  default     = null

  validation {
    condition     = var.kms_key_arn == null || can(regex("^arn:aws(-[a-z]+)*:kms:[a-z]+(-[a-z]+)+-[0-9]+:[0-9]{12}:key/(mrk-[0-9a-f]{32}|[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12})$", var.kms_key_arn))
    error_message = "kms_key_arn must be the ARN of a KMS key, arn:PARTITION:kms:REGION:ACCOUNT:key/KEY_ID (any partition: aws, aws-cn, aws-us-gov, ...; KEY_ID a UUID or mrk-...), or null for AWS managed keys; got ${jsonencode(var.kms_key_arn)}. A key ID, alias name or alias ARN is refused: the log group, the function environment and the starter and producer policies take only the key ARN, and DynamoDB reads the key ARN back (an alias would show a change on every plan). Look the ARN up with: aws kms describe-key --key-id alias/NAME --query KeyMetadata.Arn."
  }
}

variable "python_executable" {
  description = "Python 3 interpreter that builds the Lambda zip at plan time (standard library only)."
  type        = string
  default     = "python3"
}

variable "tags" {
  description = "Tags for every resource this module creates."
  type        = map(string)
  default     = {}
}

variable "visibility_timeout_seconds" {
  description = "Visibility timeout of the queue: how long a message whose start failed (throttling, outage) stays hidden before the next run retries it."
  type        = number
  default     = 120

  validation {
    condition     = var.visibility_timeout_seconds >= 30 && var.visibility_timeout_seconds <= 43200 && floor(var.visibility_timeout_seconds) == var.visibility_timeout_seconds
    error_message = "visibility_timeout_seconds must be a whole number between 30 and 43200."
  }
}

variable "alarms" {
  description = "CloudWatch alarms on the starter, its schedule, the queues and the ledger: whom they notify (they are created once alarm_actions names a target, or with create = true), their period, and thresholds (defaults from AWS's recommended alarms)."
  type = object({
    # null: created when alarm_actions names a target (an alarm nobody hears pages
    # nobody); true: created anyway (console and dashboard only); false: none.
    create         = optional(bool)
    alarm_actions  = optional(list(string), [])
    ok_actions     = optional(list(string), [])
    period_seconds = optional(number, 60)
    # The dead man's switch's period: the schedule's interval unless set (tests shorten it).
    dead_man_period_seconds = optional(number)
    thresholds = optional(object({
      lambda_errors           = optional(number, 0)
      lambda_throttles        = optional(number, 0)
      lambda_duration_percent = optional(number, 90)
      dlq_messages            = optional(number, 0)
      oldest_message_seconds  = optional(number, 3600)
      table_throttles         = optional(number, 0)
      table_system_errors     = optional(number, 0)
      rule_failed_invocations = optional(number, 0)
    }), {})
  })
  default  = {}
  nullable = false

  validation {
    condition     = contains([10, 30], var.alarms.period_seconds) || (var.alarms.period_seconds >= 60 && var.alarms.period_seconds % 60 == 0)
    error_message = "alarms.period_seconds must be 10, 30 or a multiple of 60 (CloudWatch alarm periods)."
  }

  validation {
    condition     = var.alarms.dead_man_period_seconds == null || try(contains([10, 30], var.alarms.dead_man_period_seconds) || (var.alarms.dead_man_period_seconds >= 60 && var.alarms.dead_man_period_seconds % 60 == 0), false)
    error_message = "alarms.dead_man_period_seconds must be null (the schedule's interval), 10, 30 or a multiple of 60."
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

# --- Renamed in 1.0.0 ---------------------------------------------------------------

# Read only by its validation: a stub that fails the plan naming the new input.
# tflint-ignore: terraform_unused_declarations
variable "max_concurrent_executions" {
  description = "Renamed max_concurrency in 1.0.0 (UPGRADING.md); setting it fails the plan with what to write instead."
  type        = number
  default     = null

  validation {
    condition     = var.max_concurrent_executions == null
    error_message = "max_concurrent_executions was renamed max_concurrency in 1.0.0: write max_concurrency = <the same number> (UPGRADING.md)."
  }
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
