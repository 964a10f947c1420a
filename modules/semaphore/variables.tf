variable "create" {
  description = "Whether to create any resources in this module."
  type        = bool
  default     = true
}

variable "name" {
  description = "Name of the semaphore; prefixes the table, functions, rules, roles and wrapper state machine."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z][A-Za-z0-9-]{0,39}$", var.name))
    error_message = "name must start with a letter and hold at most 40 letters, digits and hyphens (it prefixes Lambda and state machine names)."
  }
}

variable "strategy" {
  description = "How executions are admitted: \"callback\" (the default: blocked executions park on a task token and a release hands the slot over), \"dynamodb\" (atomic counter, waiters poll) or \"oldest-first\" (a ListExecutions gate: the oldest running executions hold the slots; see the semaphore guide for its limits)."
  type        = string
  default     = "callback"

  validation {
    condition     = contains(["callback", "dynamodb", "oldest-first"], var.strategy)
    error_message = "strategy must be \"callback\", \"dynamodb\" or \"oldest-first\"."
  }
}

variable "fallback_seconds" {
  description = "How long a blocked execution stays parked before it re-checks once and parks again; a lost wake-up costs at most this long. Applies to strategy \"callback\" only; null means 300."
  type        = number
  default     = null

  validation {
    condition     = coalesce(var.fallback_seconds, 300) >= 1 && coalesce(var.fallback_seconds, 300) <= 86400 && floor(coalesce(var.fallback_seconds, 300)) == coalesce(var.fallback_seconds, 300)
    error_message = "fallback_seconds must be a whole number between 1 and 86400."
  }

  validation {
    condition     = var.fallback_seconds == null || var.strategy == "callback"
    error_message = "fallback_seconds applies only to strategy \"callback\"; strategy is \"${var.strategy}\", where it would do nothing: remove it."
  }
}

variable "history_reserved_events" {
  description = "History events kept for the rest of a holder's state machine: the plan fails when the semaphore's worst-case wait loop could use more than 25,000 minus this."
  type        = number
  default     = 1000

  validation {
    condition     = var.history_reserved_events >= 0 && var.history_reserved_events < 25000 && floor(var.history_reserved_events) == var.history_reserved_events
    error_message = "history_reserved_events must be a whole number between 0 and 24999."
  }
}

variable "target_role_arn" {
  description = "Role the wrapper assumes to start, follow and stop the target (ASL Credentials on the Task), for a target in another account; null runs it with the wrapper's own role."
  type        = string
  default     = null

  validation {
    condition     = var.target_role_arn == null || can(regex("^arn:[a-z-]+:iam::[0-9]{12}:role/.+$", var.target_role_arn))
    error_message = "target_role_arn must be an IAM role ARN (arn:<partition>:iam::<account>:role/<name>)."
  }
}

variable "fairness" {
  description = "Admission order of blocked executions with strategy \"dynamodb\": \"none\" (waiters race on each retry) or \"fifo\" (ticket order: first to block, first admitted); null means \"none\". Applies to strategy \"dynamodb\" only: callback always admits in arrival order, oldest-first by start date."
  type        = string
  default     = null

  validation {
    condition     = contains(["none", "fifo"], coalesce(var.fairness, "none"))
    error_message = "fairness must be \"none\" or \"fifo\"."
  }

  # A waiter stopped while queued keeps its ticket registered, and the waiters
  # behind it may step over unregistered tickets only: without the sweep, one lost
  # cleanup event blocks the queue for good (README "Why no wake-up is lost").
  validation {
    condition     = coalesce(var.fairness, "none") == "none" || coalesce(var.reconciler_enabled, true)
    error_message = "fairness \"fifo\" needs reconciler_enabled = true: the ticket of a waiter stopped while queued blocks every execution behind it until the reconciler (or the event cleanup, when its event arrives) removes it. Keep the reconciler, or use strategy \"callback\", whose releases skip dead waiters."
  }

  validation {
    condition     = var.fairness == null || var.strategy == "dynamodb"
    error_message = "fairness applies only to strategy \"dynamodb\"; strategy is \"${var.strategy}\", which admits in its own order (callback: arrival, oldest-first: start date): remove it."
  }
}

variable "max_concurrency" {
  description = "Maximum number of executions inside the critical section at once."
  type        = number
  default     = 1

  validation {
    condition     = var.max_concurrency >= 1 && floor(var.max_concurrency) == var.max_concurrency
    error_message = "max_concurrency must be a whole number >= 1."
  }
}

variable "lock_key" {
  description = "Partition key value of the lock item in the table. Applies to the strategies with a lock item, \"callback\" and \"dynamodb\" (oldest-first keeps none) only; null means \"semaphore\"."
  type        = string
  default     = null

  validation {
    condition     = can(regex("^[A-Za-z0-9_.:-]{1,128}$", coalesce(var.lock_key, "semaphore")))
    error_message = "lock_key must be 1-128 letters, digits, '_', '.', ':' or '-'."
  }

  validation {
    condition     = var.lock_key == null || var.strategy != "oldest-first"
    error_message = "lock_key applies only to the strategies with a lock item, \"callback\" and \"dynamodb\" (oldest-first keeps none); strategy is \"${var.strategy}\", where it would do nothing: remove it."
  }
}

variable "lease_seconds" {
  description = "Lease stored with each holder: a holder whose execution can no longer be described is released once acquired_at + lease_seconds has passed, and an ended holder's task without a known end keeps its slot until then; null means 86400. With strategy \"oldest-first\" (no lease is stored): how long after its stop an ended holder is still counted while a task of its may run (its history is read at each gate call), and how long a task without a known end, or an unreadable history, counts; null means 900 (Lambda's largest function timeout)."
  type        = number
  default     = null

  validation {
    condition     = coalesce(var.lease_seconds, 86400) >= 60 && floor(coalesce(var.lease_seconds, 86400)) == coalesce(var.lease_seconds, 86400)
    error_message = "lease_seconds must be a whole number of seconds >= 60."
  }
}

variable "wait_min_seconds" {
  description = "Shortest jittered wait between two acquire attempts of a blocked execution. Applies to the polling strategies, \"dynamodb\" and \"oldest-first\" (callback parks on a task token; see fallback_seconds) only; null means 5."
  type        = number
  default     = null

  validation {
    condition     = coalesce(var.wait_min_seconds, 5) >= 1 && floor(coalesce(var.wait_min_seconds, 5)) == coalesce(var.wait_min_seconds, 5)
    error_message = "wait_min_seconds must be a whole number >= 1."
  }

  validation {
    condition     = var.wait_min_seconds == null || var.strategy != "callback"
    error_message = "wait_min_seconds applies only to the polling strategies, \"dynamodb\" and \"oldest-first\" (callback parks on a task token; see fallback_seconds); strategy is \"${var.strategy}\", where it would do nothing: remove it."
  }
}

variable "wait_max_seconds" {
  description = "Longest jittered wait between two acquire attempts; each wait is drawn uniformly in [wait_min_seconds, wait_max_seconds]. Applies to the polling strategies, \"dynamodb\" and \"oldest-first\" (callback parks on a task token; see fallback_seconds) only; null means 15."
  type        = number
  default     = null

  validation {
    condition     = coalesce(var.wait_max_seconds, 15) >= coalesce(var.wait_min_seconds, 5) && coalesce(var.wait_max_seconds, 15) <= 3600 && floor(coalesce(var.wait_max_seconds, 15)) == coalesce(var.wait_max_seconds, 15)
    error_message = "wait_max_seconds must be a whole number between wait_min_seconds and 3600."
  }

  validation {
    condition     = var.wait_max_seconds == null || var.strategy != "callback"
    error_message = "wait_max_seconds applies only to the polling strategies, \"dynamodb\" and \"oldest-first\" (callback parks on a task token; see fallback_seconds); strategy is \"${var.strategy}\", where it would do nothing: remove it."
  }
}

variable "acquire_timeout_seconds" {
  description = "Total seconds an execution may spend waiting for a slot before it fails with Semaphore.AcquireTimeout."
  type        = number
  default     = 3600

  validation {
    condition     = var.acquire_timeout_seconds >= 1 && var.acquire_timeout_seconds <= 31536000 && floor(var.acquire_timeout_seconds) == var.acquire_timeout_seconds
    error_message = "acquire_timeout_seconds must be a whole number between 1 and 31536000 (a standard execution's year)."
  }
}

variable "holder_state_machine_arns" {
  description = "ARNs of your state machines that embed the acquire/release fragments (required unless create_wrapper): the module grants its functions access to their executions only, for the oldest-first gate, the reconciler and the event cleanup (the wrapper is always covered)."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for arn in var.holder_state_machine_arns : can(regex("^arn:[a-z-]+:states:[a-z0-9-]+:[0-9]{12}:stateMachine:[A-Za-z0-9_-]{1,80}$", arn))])
    error_message = "holder_state_machine_arns must be state machine ARNs (arn:<partition>:states:<region>:<account>:stateMachine:<name>)."
  }

  # Cross-variable: the module's roles are granted only on the machines it knows.
  validation {
    condition     = !var.create || var.create_wrapper || length(var.holder_state_machine_arns) > 0
    error_message = "holder_state_machine_arns is empty and create_wrapper is false: name every state machine that embeds the acquire/release fragments. The module grants its functions access to those machines' executions only: the oldest-first gate lists them (an unlisted machine's acquire is denied), and the reconciler and the event cleanup read them to give a stopped holder's slot back (callback, dynamodb)."
  }
}

variable "holder_kms_key_arns" {
  description = "Customer managed KMS keys of the machines in holder_state_machine_arns (their encryptionConfiguration), granted as kms:Decrypt through Step Functions to the functions that read holder histories (reconciler, event cleanup, oldest-first gate); empty when those machines use AWS owned keys."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for arn in var.holder_kms_key_arns : can(regex("^arn:aws(-[a-z]+)*:kms:[a-z]+(-[a-z]+)+-[0-9]+:[0-9]{12}:key/(mrk-[0-9a-f]{32}|[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12})$", arn))])
    error_message = "holder_kms_key_arns must hold ARNs of the KMS keys in the holder state machines' encryptionConfiguration, arn:PARTITION:kms:REGION:ACCOUNT:key/KEY_ID (KEY_ID a UUID or mrk-...); got ${jsonencode(var.holder_kms_key_arns)}. A key ID, alias name or alias ARN is refused: IAM matches the key ARN only. Look each up with: aws stepfunctions describe-state-machine --state-machine-arn HOLDER --query encryptionConfiguration.kmsKeyId."
  }

  validation {
    condition     = length(var.holder_kms_key_arns) == 0 || length(var.holder_state_machine_arns) > 0
    error_message = "holder_kms_key_arns is set but holder_state_machine_arns is empty: the keys are for the histories of the machines listed there. Name those machines in holder_state_machine_arns, or remove holder_kms_key_arns."
  }
}

variable "reconciler_enabled" {
  description = "Whether to deploy the scheduled reconciler that releases holders whose execution is no longer RUNNING. Applies to the strategies with a lock item, \"callback\" and \"dynamodb\" (oldest-first keeps none) only; null means true."
  type        = bool
  default     = null

  validation {
    condition     = var.reconciler_enabled == null || var.strategy != "oldest-first"
    error_message = "reconciler_enabled applies only to the strategies with a lock item, \"callback\" and \"dynamodb\" (oldest-first keeps none); strategy is \"${var.strategy}\", where it would do nothing: remove it."
  }
}

variable "reconciler_schedule_expression" {
  description = "EventBridge schedule of the reconciler, for example rate(5 minutes). Applies to the strategies with a lock item, \"callback\" and \"dynamodb\" (oldest-first keeps none) only; null means \"rate(5 minutes)\"."
  type        = string
  default     = null

  validation {
    condition     = can(regex("^(rate\\([1-9][0-9]* (minute|minutes|hour|hours|day|days)\\)|cron\\(.+\\))$", coalesce(var.reconciler_schedule_expression, "rate(5 minutes)")))
    error_message = "reconciler_schedule_expression must be an EventBridge rate(...) or cron(...) expression."
  }

  validation {
    condition     = var.reconciler_schedule_expression == null || var.strategy != "oldest-first"
    error_message = "reconciler_schedule_expression applies only to the strategies with a lock item, \"callback\" and \"dynamodb\" (oldest-first keeps none); strategy is \"${var.strategy}\", where it would do nothing: remove it."
  }
}

variable "event_cleanup_enabled" {
  description = "Whether to release a holder's slot as soon as its execution ends FAILED, TIMED_OUT or ABORTED (EventBridge status-change rule)."
  type        = bool
  default     = true
}

variable "create_wrapper" {
  description = "Whether to create the wrapper state machine that runs target_state_machine_arn inside the semaphore."
  type        = bool
  default     = false
}

variable "target_state_machine_arn" {
  description = "State machine the wrapper runs with startExecution.sync:2 while holding a slot (required when create_wrapper is true)."
  type        = string
  default     = null

  validation {
    condition     = var.target_state_machine_arn == null || can(regex("^arn:[a-z-]+:states:[a-z0-9-]+:[0-9]{12}:stateMachine:[A-Za-z0-9_-]{1,80}$", var.target_state_machine_arn))
    error_message = "target_state_machine_arn must be a state machine ARN."
  }

  validation {
    condition     = !var.create_wrapper || var.target_state_machine_arn != null
    error_message = "target_state_machine_arn is required when create_wrapper is true."
  }
}

variable "target_kms_key_arn" {
  description = "Customer managed KMS key of the target state machine (its encryptionConfiguration), granted to the wrapper's role as kms:Decrypt through Step Functions so startExecution.sync:2 can read the target's output; null when the target uses an AWS owned key."
  type        = string
  default     = null

  validation {
    condition     = var.target_kms_key_arn == null || can(regex("^arn:aws(-[a-z]+)*:kms:[a-z]+(-[a-z]+)+-[0-9]+:[0-9]{12}:key/(mrk-[0-9a-f]{32}|[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12})$", var.target_kms_key_arn))
    error_message = "target_kms_key_arn must be the ARN of the KMS key in the target state machine's encryptionConfiguration, arn:PARTITION:kms:REGION:ACCOUNT:key/KEY_ID (KEY_ID a UUID or mrk-...), or null; got ${jsonencode(var.target_kms_key_arn)}. A key ID, alias name or alias ARN is refused: IAM matches the key ARN only. Look it up with: aws stepfunctions describe-state-machine --state-machine-arn TARGET --query encryptionConfiguration.kmsKeyId (an alias there: aws kms describe-key --key-id ALIAS --query KeyMetadata.Arn)."
  }

  # Cross-variable: the grant goes to the wrapper's role, which follows the target only
  # when the wrapper runs it itself.
  validation {
    condition     = var.target_kms_key_arn == null || (var.create_wrapper && var.target_role_arn == null)
    error_message = "target_kms_key_arn is granted to the wrapper's own role, which reads the target's output only when create_wrapper is true and target_role_arn is null. ${var.create_wrapper ? "With target_role_arn the target role follows the target: allow it kms:Decrypt on the target's key in its own account" : "There is no wrapper (create_wrapper is false)"}, and remove target_kms_key_arn."
  }
}

variable "fragment_state_prefix" {
  description = "Prefix of every state name in the acquire/release fragments, so they cannot collide with your states."
  type        = string
  default     = "Semaphore: "

  validation {
    condition     = length(var.fragment_state_prefix) <= 40 && !strcontains(var.fragment_state_prefix, "\"") && !strcontains(var.fragment_state_prefix, "$")
    error_message = "fragment_state_prefix must be at most 40 characters without quotes or '$'."
  }
}

variable "fragment_acquired_next" {
  description = "State your machine goes to once the acquire fragment holds a slot (the first state of your critical section)."
  type        = string
  default     = "Critical section"
}

variable "fragment_release_next" {
  description = "State your machine goes to after the release fragment; null makes the release the last state (End)."
  type        = string
  default     = null
}

variable "point_in_time_recovery_enabled" {
  description = "Whether to enable point-in-time recovery on the lock table. Applies to the strategies with a lock item, \"callback\" and \"dynamodb\" (oldest-first keeps none) only; null means true."
  type        = bool
  default     = null

  validation {
    condition     = var.point_in_time_recovery_enabled == null || var.strategy != "oldest-first"
    error_message = "point_in_time_recovery_enabled applies only to the strategies with a lock item, \"callback\" and \"dynamodb\" (oldest-first keeps none); strategy is \"${var.strategy}\", where it would do nothing: remove it."
  }
}

variable "deletion_protection_enabled" {
  description = "Whether to enable deletion protection on the lock table. Applies to the strategies with a lock item, \"callback\" and \"dynamodb\" (oldest-first keeps none) only; null means false."
  type        = bool
  default     = null

  validation {
    condition     = var.deletion_protection_enabled == null || var.strategy != "oldest-first"
    error_message = "deletion_protection_enabled applies only to the strategies with a lock item, \"callback\" and \"dynamodb\" (oldest-first keeps none); strategy is \"${var.strategy}\", where it would do nothing: remove it."
  }
}

variable "kms_key_arn" {
  description = "Customer managed KMS key for the module's tables, log groups, Lambda environments and state machines; null uses AWS owned or managed keys."
  type        = string
  default     = null

  validation {
    condition     = var.kms_key_arn == null || can(regex("^arn:aws(-[a-z]+)*:kms:[a-z]+(-[a-z]+)+-[0-9]+:[0-9]{12}:key/(mrk-[0-9a-f]{32}|[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12})$", var.kms_key_arn))
    error_message = "kms_key_arn must be the ARN of a KMS key, arn:PARTITION:kms:REGION:ACCOUNT:key/KEY_ID (any partition: aws, aws-cn, aws-us-gov, ...; KEY_ID a UUID or mrk-...), or null for AWS managed keys; got ${jsonencode(var.kms_key_arn)}. A key ID, alias name or alias ARN is refused: log groups, Lambda environments and IAM policies take only the key ARN, and DynamoDB reads the key ARN back (an alias would show a change on every plan). Look the ARN up with: aws kms describe-key --key-id alias/NAME --query KeyMetadata.Arn."
  }
}

variable "cloudwatch_logs_retention_in_days" {
  description = "Retention of every log group this module creates."
  type        = number
  default     = 30

  validation {
    condition     = contains([1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653], var.cloudwatch_logs_retention_in_days)
    error_message = "cloudwatch_logs_retention_in_days must be a retention CloudWatch Logs accepts (1, 3, 5, 7, 14, 30, 60, 90, ...)."
  }
}

variable "logging_level" {
  description = "Execution events of the wrapper state machine written to CloudWatch Logs: ALL, ERROR (failed executions only, the default) or FATAL."
  type        = string
  default     = "ERROR"

  validation {
    condition     = contains(["ALL", "ERROR", "FATAL"], var.logging_level)
    error_message = "logging_level must be ALL, ERROR or FATAL (logging stays on)."
  }
}

variable "logging_include_execution_data" {
  description = "Whether the wrapper's execution logs include state input and output (off by default: payloads may hold data that does not belong in logs)."
  type        = bool
  default     = false
}

variable "build_dir" {
  description = "Directory the Lambda zip is written to at plan time; null uses .build/lambda under the root module."
  type        = string
  default     = null
}

variable "python_executable" {
  description = "Python 3 interpreter that builds the Lambda zip at plan time."
  type        = string
  default     = "python3"
}

variable "tags" {
  description = "Tags for every resource this module creates."
  type        = map(string)
  default     = {}
}

variable "alarms" {
  description = "CloudWatch alarms on the wrapper, the semaphore's functions, the reconciler's schedule, the tables and the rules: whom they notify (they are created once alarm_actions names a target, or with create = true), their period, and thresholds (defaults from AWS's recommended alarms)."
  type = object({
    # null: created when alarm_actions names a target (an alarm nobody hears pages
    # nobody); true: created anyway (console and dashboard only); false: none.
    create         = optional(bool)
    alarm_actions  = optional(list(string), [])
    ok_actions     = optional(list(string), [])
    period_seconds = optional(number, 60)
    # The reconciler's dead man's switch period: its rate(...) interval unless set (needed
    # for a cron(...) schedule; tests shorten it).
    dead_man_period_seconds = optional(number)
    thresholds = optional(object({
      failed_executions       = optional(number, 0)
      lambda_errors           = optional(number, 0)
      lambda_throttles        = optional(number, 0)
      lambda_duration_percent = optional(number, 90)
      table_throttles         = optional(number, 0)
      table_system_errors     = optional(number, 0)
      rule_failed_invocations = optional(number, 0)
      slots_reclaimed         = optional(number, 0)
      oldest_waiter_seconds   = optional(number, 900)
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
variable "semaphore_limit" {
  description = "Renamed max_concurrency in 1.0.0 (UPGRADING.md); setting it fails the plan with what to write instead."
  type        = number
  default     = null

  validation {
    condition     = var.semaphore_limit == null
    error_message = "semaphore_limit was renamed max_concurrency in 1.0.0: write max_concurrency = <the same number> (UPGRADING.md)."
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
