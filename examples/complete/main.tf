# Complete example: the root module (source = "../..") with all five patterns
# enabled and one shared KMS key, name prefix, tag set and log retention, plus the
# stand-ins the patterns need to have something to run:
#
# * job-poller drives the sample asynchronous job (start-time timeout, S3 store);
# * sqs-throttle admits executions of "throttled-work", a stand-in workflow that
#   waits $.seconds (default 2);
# * semaphore's wrapper runs "critical-work" (the same stand-in) while it holds a
#   slot;
# * dag-aggregate plans the 12 SQL files of examples/dag-aggregate/sql and runs
#   them on a Redshift Serverless workgroup (served by DuckDB on LocalStack; run
#   examples/dag-aggregate/setup.sql and the DDL first, see the README);
# * status-table is the task table.
#
# It applies to LocalStack (tests and `make demo`) and to a real AWS account.

provider "aws" {
  region = var.region
}

data "aws_partition" "current" {}
data "aws_region" "current" {}
data "aws_caller_identity" "current" {}

# CloudWatch Logs' regional principal for the key policy: logs.REGION.SUFFIX, where the
# suffix is the partition's (amazonaws.com.cn in aws-cn, from the provider's rules).
data "aws_service_principal" "logs" {
  service_name = "logs"
}

data "aws_service_principal" "cloudwatch" {
  service_name = "cloudwatch"
}

locals {
  partition  = data.aws_partition.current.partition
  region     = data.aws_region.current.region
  account_id = data.aws_caller_identity.current.account_id

  sm_prefix           = "arn:${local.partition}:states:${local.region}:${local.account_id}:stateMachine:"
  throttled_work_name = "${var.name_prefix}-throttled-work"
  critical_work_name  = "${var.name_prefix}-critical-work"
  kms_key_arn         = var.create_kms_key ? aws_kms_key.this[0].arn : null
  # Every pattern's alarms notify this topic (subscribe your on-call to it): without a
  # target the modules create no alarms, since an alarm nobody hears pages nobody. Its
  # ARN is built, not read from the topic: a value known only after apply inside the
  # root module's pattern objects would leave what they create unknown at plan time
  # (CloudWatch accepts an action whose topic is created in the same apply).
  alarm_topic_arn = "arn:${local.partition}:sns:${local.region}:${local.account_id}:${var.name_prefix}-alarms"
  alarms          = { alarm_actions = [local.alarm_topic_arn], ok_actions = [local.alarm_topic_arn] }

  # The stand-in workflow of sqs-throttle and semaphore: waits $.seconds (default
  # 2), then succeeds with its input, so a run's concurrency can be read from the
  # executions' own start and stop times.
  work_definition = jsonencode({
    Comment = "Stand-in workflow: waits $.seconds (default 2), then succeeds."
    StartAt = "Defaults"
    States = {
      Defaults = {
        Type       = "Pass"
        Parameters = { seconds = 2 }
        ResultPath = "$.defaults"
        Next       = "HasSeconds"
      }
      HasSeconds = {
        Type    = "Choice"
        Choices = [{ Variable = "$.seconds", IsPresent = true, Next = "Work" }]
        Default = "WorkDefault"
      }
      Work        = { Type = "Wait", SecondsPath = "$.seconds", Next = "Done" }
      WorkDefault = { Type = "Wait", SecondsPath = "$.defaults.seconds", Next = "Done" }
      Done        = { Type = "Succeed" }
    }
  })
}

# --8<-- [start:root-module]
module "sfn_patterns" {
  source = "../.."

  name_prefix                       = var.name_prefix
  tags                              = var.tags
  kms_key_arn                       = local.kms_key_arn
  cloudwatch_logs_retention_in_days = var.cloudwatch_logs_retention_in_days
  python_executable                 = var.python_executable

  job_poller = {
    alarms                = local.alarms
    create                = true
    initial_wait_seconds  = var.job_poller_wait_seconds
    poll_interval_seconds = var.job_poller_wait_seconds
    timeout_seconds       = var.job_poller_timeout_seconds
    timeout_strategy      = "start-time"
    metadata_store        = "s3"
    task_retry            = { interval_seconds = 1, max_attempts = 3, backoff_rate = 2 }
    # Runs leave sample-job statuses in the bucket; destroy removes them too.
    s3_force_destroy = true
  }

  sqs_throttle = {
    alarms                   = local.alarms
    create                   = true
    target_state_machine_arn = "${local.sm_prefix}${local.throttled_work_name}"
    max_concurrency          = var.throttle_max_concurrency
    schedule_enabled         = var.throttle_schedule_enabled
    max_seconds_per_run      = var.throttle_max_seconds_per_run
    recheck_seconds          = 1
  }

  semaphore = {
    alarms                   = local.alarms
    create                   = true
    max_concurrency          = var.semaphore_max_concurrency
    acquire_timeout_seconds  = 600
    create_wrapper           = true
    target_state_machine_arn = "${local.sm_prefix}${local.critical_work_name}"
    # The stand-in target is encrypted with the same key: the wrapper reads its output.
    target_kms_key_arn = local.kms_key_arn
  }

  dag_aggregate = {
    alarms          = local.alarms
    create          = true
    sql_dir         = "${path.module}/../dag-aggregate/sql"
    strategy        = var.dag_strategy
    max_concurrency = 4
    redshift = {
      database       = var.redshift_database
      workgroup_name = var.redshift_workgroup_name
      workgroup_arn  = "arn:${local.partition}:redshift-serverless:${local.region}:${local.account_id}:workgroup/${var.redshift_workgroup_id}"
    }
    poll = {
      initial_wait_seconds  = var.dag_poll_seconds
      poll_interval_seconds = var.dag_poll_seconds
      timeout_seconds       = 600
    }
  }

  status_table = {
    alarms = local.alarms
    create = true
  }
}
# --8<-- [end:root-module]

# --- stand-ins ------------------------------------------------------------------------

module "throttled_work" {
  source = "../../modules/state-machine"

  name       = local.throttled_work_name
  definition = local.work_definition

  # A stand-in workflow: its input is not worth logging.
  logging_level                     = "ERROR"
  logging_include_execution_data    = false
  cloudwatch_logs_retention_in_days = var.cloudwatch_logs_retention_in_days
  kms_key_arn                       = local.kms_key_arn
  tags                              = var.tags
}

module "critical_work" {
  source = "../../modules/state-machine"

  name       = local.critical_work_name
  definition = local.work_definition

  logging_level                     = "ERROR"
  logging_include_execution_data    = false
  cloudwatch_logs_retention_in_days = var.cloudwatch_logs_retention_in_days
  kms_key_arn                       = local.kms_key_arn
  tags                              = var.tags
}

# --- where the alarms go ---------------------------------------------------------------

resource "aws_sns_topic" "alarms" {
  name = "${var.name_prefix}-alarms"
  # CloudWatch publishes alarm notices; with the customer key, its key policy lets it
  # (statement CloudWatchAlarmsPublishToTheEncryptedTopic below).
  kms_master_key_id = coalesce(local.kms_key_arn, "alias/aws/sns")
  tags              = var.tags
}

# --- the shared customer managed key ----------------------------------------------------

# One key for the tables, queues, bucket, log groups and Lambda environments. The
# account's IAM policies govern its use (the modules grant their roles what they
# need); CloudWatch Logs gets its own statement because it encrypts as a service.
resource "aws_kms_key" "this" {
  count = var.create_kms_key ? 1 : 0

  description             = "sfn-patterns ${var.name_prefix}: encryption at rest of every pattern's data and logs"
  deletion_window_in_days = var.kms_deletion_window_in_days
  enable_key_rotation     = true
  policy                  = data.aws_iam_policy_document.kms[0].json
  tags                    = var.tags
}

resource "aws_kms_alias" "this" {
  count = var.create_kms_key ? 1 : 0

  name          = "alias/${var.name_prefix}"
  target_key_id = aws_kms_key.this[0].key_id
}

# --8<-- [start:key-policy]
data "aws_iam_policy_document" "kms" {
  #checkov:skip=CKV_AWS_109:A key policy: "*" is this key, and the account root statement is the standard delegation to IAM.
  #checkov:skip=CKV_AWS_111:A key policy: "*" is this key, and the account root statement is the standard delegation to IAM.
  #checkov:skip=CKV_AWS_356:A key policy: "*" is this key (key policies cannot name another resource).
  count = var.create_kms_key ? 1 : 0

  # In a key policy "*" is the key itself.
  statement {
    sid       = "AccountIamPoliciesGovernTheKey"
    actions   = ["kms:*"]
    resources = ["*"]
    principals {
      type        = "AWS"
      identifiers = ["arn:${local.partition}:iam::${local.account_id}:root"]
    }
  }

  statement {
    sid       = "CloudWatchLogsEncryptsThisAccountsLogGroups"
    actions   = ["kms:Encrypt", "kms:Decrypt", "kms:ReEncryptFrom", "kms:ReEncryptTo", "kms:GenerateDataKey", "kms:GenerateDataKeyWithoutPlaintext", "kms:DescribeKey"]
    resources = ["*"]
    principals {
      type        = "Service"
      identifiers = ["logs.${local.region}.${data.aws_service_principal.logs.suffix}"]
    }
    condition {
      test     = "ArnLike"
      variable = "kms:EncryptionContext:aws:logs:arn"
      values   = ["arn:${local.partition}:logs:${local.region}:${local.account_id}:log-group:*"]
    }
  }

  # CloudWatch alarms publish to the encrypted alarm topic as the service.
  statement {
    sid       = "CloudWatchAlarmsPublishToTheEncryptedTopic"
    actions   = ["kms:Decrypt", "kms:GenerateDataKey*"]
    resources = ["*"]
    principals {
      type        = "Service"
      identifiers = [data.aws_service_principal.cloudwatch.name]
    }
    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [local.account_id]
    }
  }
}
# --8<-- [end:key-policy]
