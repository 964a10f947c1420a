variable "create" {
  description = "Whether to create any resources in this module."
  type        = bool
  default     = true
}

variable "name" {
  description = "Prefix of the resource names: <name>-tokens (table), <name>-completion (function and rule)."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9_-]{1,53}$", var.name))
    error_message = "name must be 1-53 letters, digits, hyphens and underscores (it prefixes a table, and a function, its role and a rule named <name>-completion, which may have at most 64)."
  }
}

variable "event_pattern" {
  description = "EventBridge event pattern (JSON) of the jobs' completion events, for example the Redshift Data API's statement status changes."
  type        = string

  validation {
    condition     = can(keys(jsondecode(var.event_pattern)))
    error_message = "event_pattern must be a JSON object (use jsonencode), an EventBridge event pattern."
  }
}

variable "job_id_path" {
  description = "Dotted JSONPath of the job id in a completion event, for example $.detail.statementId."
  type        = string

  validation {
    condition     = can(regex("^\\$(\\.[A-Za-z0-9_-]+)+$", var.job_id_path))
    error_message = "job_id_path must be a dotted path from the event's root, such as $.detail.statementId."
  }
}

variable "status_path" {
  description = "Dotted JSONPath of the job's status in a completion event, for example $.detail.state."
  type        = string

  validation {
    condition     = can(regex("^\\$(\\.[A-Za-z0-9_-]+)+$", var.status_path))
    error_message = "status_path must be a dotted path from the event's root, such as $.detail.state."
  }
}

variable "terminal_statuses" {
  description = "Event statuses that mean the job ended (succeeded or failed); events with any other status are ignored."
  type        = list(string)

  validation {
    condition     = length(var.terminal_statuses) > 0
    error_message = "terminal_statuses needs at least one status, for example [\"FINISHED\", \"FAILED\", \"ABORTED\"]."
  }
}

# tflint-ignore: terraform_unused_declarations # deprecated, kept so callers' plans do not break
variable "waiting_state_machine_arns" {
  description = "Deprecated and ignored (removed in 2.0.0): AWS cannot scope states:SendTaskSuccess to a state machine, so the function's grant is on *."
  type        = list(string)
  default     = []
}

variable "token_ttl_seconds" {
  description = "Seconds a token or a recorded job end is kept before DynamoDB's TTL deletes it (longer than any job waits)."
  type        = number
  default     = 604800

  validation {
    condition     = var.token_ttl_seconds >= 3600 && floor(var.token_ttl_seconds) == var.token_ttl_seconds
    error_message = "token_ttl_seconds must be a whole number of seconds, at least 3600."
  }
}

variable "lambda_runtime" {
  description = "Python runtime of the completion function."
  type        = string
  default     = "python3.12"

  validation {
    condition     = contains(["python3.10", "python3.11", "python3.12", "python3.13"], var.lambda_runtime)
    error_message = "lambda_runtime must be one of python3.10, python3.11, python3.12 or python3.13 (the Python Lambda runtimes the code supports); got ${jsonencode(var.lambda_runtime)}."
  }
}

variable "lambda_memory_size" {
  description = "Memory in MB of the completion function."
  type        = number
  default     = 128

  validation {
    condition     = var.lambda_memory_size >= 128 && var.lambda_memory_size <= 10240
    error_message = "lambda_memory_size must be between 128 and 10240 MB."
  }
}

variable "python_executable" {
  description = "Python 3 interpreter that builds the function's zip at plan time."
  type        = string
  default     = "python3"
}

variable "kms_key_arn" {
  description = "Customer managed KMS key for the table, the log group and the function's environment; null uses AWS managed keys."
  type        = string
  default     = null

  validation {
    condition     = var.kms_key_arn == null || can(regex("^arn:aws(-[a-z]+)*:kms:[a-z]+(-[a-z]+)+-[0-9]+:[0-9]{12}:key/(mrk-[0-9a-f]{32}|[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12})$", var.kms_key_arn))
    error_message = "kms_key_arn must be the ARN of a KMS key, arn:PARTITION:kms:REGION:ACCOUNT:key/KEY_ID (any partition: aws, aws-cn, aws-us-gov, ...; KEY_ID a UUID or mrk-...), or null for AWS managed keys; got ${jsonencode(var.kms_key_arn)}. A key ID, alias name or alias ARN is refused: the log group, the function environment and IAM policies take only the key ARN, and DynamoDB reads the key ARN back (an alias would show a change on every plan). Look the ARN up with: aws kms describe-key --key-id alias/NAME --query KeyMetadata.Arn."
  }
}

variable "cloudwatch_logs_retention_in_days" {
  description = "Retention of the function's log group in days."
  type        = number
  default     = 30

  validation {
    condition     = contains([1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653], var.cloudwatch_logs_retention_in_days)
    error_message = "cloudwatch_logs_retention_in_days must be a retention CloudWatch Logs accepts (1, 3, 5, 7, 14, 30, 60, 90, ...); got ${var.cloudwatch_logs_retention_in_days}."
  }
}

variable "tags" {
  description = "Tags for every resource this module creates."
  type        = map(string)
  default     = {}
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
