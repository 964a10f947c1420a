variable "create" {
  description = "Whether to create any resources in this module."
  type        = bool
  default     = true
}

variable "function_name" {
  description = "Name of the Lambda function (also names its role and log group)."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9_-]{1,64}$", var.function_name))
    error_message = "function_name must be 1-64 characters of letters, digits, hyphens and underscores (AWS Lambda naming rules)."
  }
}

variable "source_path" {
  description = "Code to package deterministically at plan time, as terraform-aws-lambda's source_path: directories or files, each with glob patterns (** spans directories, ! excludes) and an optional prefix in the zip."
  type = list(object({
    path          = string
    patterns      = optional(list(string), ["**"])
    prefix_in_zip = optional(string, "")
  }))
  default = []
}

variable "pip_requirements" {
  description = "Pinned distributions (name==version) vendored into the zip built from source_path; boto3 comes with the runtime."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for r in var.pip_requirements : can(regex("^[A-Za-z0-9][A-Za-z0-9._-]*==[A-Za-z0-9.+!-]+$", r))])
    error_message = "pip_requirements must be pinned as name==version, so the zip is the same on every build."
  }
}

variable "local_existing_package" {
  description = "Path of a prebuilt deployment zip to deploy instead of building source_path."
  type        = string
  default     = null
}

variable "s3_existing_package" {
  description = "S3 object of a prebuilt deployment zip to deploy instead of building source_path; change version_id to redeploy."
  type = object({
    bucket     = string
    key        = string
    version_id = optional(string)
  })
  default = null

  validation {
    condition = (
      (length(var.source_path) > 0 ? 1 : 0) + (var.local_existing_package != null ? 1 : 0) + (var.s3_existing_package != null ? 1 : 0)
    ) == 1
    error_message = "Set exactly one of source_path, local_existing_package and s3_existing_package: the function's code."
  }
}

variable "handler" {
  description = "Handler of the function, as module.path.function inside the package."
  type        = string
}

variable "runtime" {
  description = "Lambda runtime identifier; the sfn-patterns runtime library supports Python 3.9 and later."
  type        = string
  default     = "python3.12"

  validation {
    condition     = contains(["python3.10", "python3.11", "python3.12", "python3.13"], var.runtime)
    error_message = "runtime must be one of python3.10, python3.11, python3.12 or python3.13."
  }
}

variable "timeout" {
  description = "Seconds the function may run per invocation (1-900)."
  type        = number
  default     = 30

  validation {
    condition     = var.timeout >= 1 && var.timeout <= 900 && floor(var.timeout) == var.timeout
    error_message = "timeout must be a whole number of seconds between 1 and 900 (the Lambda maximum)."
  }
}

variable "memory_size" {
  description = "Memory in MB for the function (128-10240)."
  type        = number
  default     = 256

  validation {
    condition     = var.memory_size >= 128 && var.memory_size <= 10240
    error_message = "memory_size must be between 128 and 10240 MB."
  }
}

variable "environment_variables" {
  description = "Environment variables of the function."
  type        = map(string)
  default     = {}
}

variable "policy_statements" {
  description = "Extra IAM statements for the function's inline role policy, each scoped to specific resources."
  type = list(object({
    sid       = optional(string)
    effect    = optional(string, "Allow")
    actions   = list(string)
    resources = list(string)
    conditions = optional(list(object({
      test     = string
      variable = string
      values   = list(string)
    })), [])
  }))
  default = []

  validation {
    condition     = alltrue([for s in var.policy_statements : alltrue([for a in s.actions : !strcontains(a, "*")])])
    error_message = "policy_statements must not use wildcard actions: name each action (least privilege)."
  }
}

variable "reserved_concurrent_executions" {
  description = "Reserved concurrency of the function; -1 leaves it unreserved."
  type        = number
  default     = -1
}

variable "cloudwatch_logs_retention_in_days" {
  description = "Retention of the function's log group in days."
  type        = number
  default     = 30

  validation {
    condition     = contains([1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653], var.cloudwatch_logs_retention_in_days)
    error_message = "cloudwatch_logs_retention_in_days must be a retention CloudWatch Logs accepts (1, 3, 5, 7, 14, 30, 60, 90, ...)."
  }
}

variable "kms_key_arn" {
  description = "Customer managed KMS key for the log group and environment variables; null uses AWS managed keys."
  type        = string
  default     = null

  validation {
    condition     = var.kms_key_arn == null || can(regex("^arn:aws(-[a-z]+)*:kms:[a-z]+(-[a-z]+)+-[0-9]+:[0-9]{12}:key/(mrk-[0-9a-f]{32}|[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12})$", var.kms_key_arn))
    error_message = "kms_key_arn must be the ARN of a KMS key, arn:PARTITION:kms:REGION:ACCOUNT:key/KEY_ID (any partition: aws, aws-cn, aws-us-gov, ...; KEY_ID a UUID or mrk-...), or null for AWS managed keys; got ${jsonencode(var.kms_key_arn)}. A key ID, alias name or alias ARN is refused: the log group and the function environment take only the key ARN. Look the ARN up with: aws kms describe-key --key-id alias/NAME --query KeyMetadata.Arn."
  }
}

variable "build_dir" {
  description = "Directory the deterministic zip is written to at plan time; null uses .build/lambda under the root module."
  type        = string
  default     = null
}

variable "python_executable" {
  description = "Python 3.9+ interpreter that builds the zip from source_path at plan time, and again at apply when the function is created or its code changes (standard library only; pip for pip_requirements)."
  type        = string
  default     = "python3"
}

variable "tags" {
  description = "Tags for every resource this module creates."
  type        = map(string)
  default     = {}
}

variable "role_path" {
  description = "Path of the function's IAM role (\"/\": none); one your account's policies require, for example \"/service-roles/\"."
  type        = string
  default     = "/"

  validation {
    condition     = can(regex("^/([!-~]{1,510}/)?$", var.role_path)) && !strcontains(var.role_path, "//")
    error_message = "role_path must start and end with / (for example /service-roles/), at most 512 printable characters; got ${jsonencode(var.role_path)}."
  }
}

variable "role_permissions_boundary" {
  description = "ARN of the managed policy set as the permissions boundary of the function's IAM role (null: none), for accounts whose policies require one on every role they create."
  type        = string
  default     = null

  validation {
    condition     = var.role_permissions_boundary == null || can(regex("^arn:aws(-[a-z]+)*:iam::([0-9]{12}|aws):policy/[!-~]+$", var.role_permissions_boundary))
    error_message = "role_permissions_boundary must be the ARN of an IAM managed policy, arn:PARTITION:iam::ACCOUNT:policy/NAME, or null; got ${jsonencode(var.role_permissions_boundary)}."
  }
}
