# The aws-sdk variant (sharing this configuration's one apply with the two-poller
# machine): completion = "event" on Step Functions' own "Execution Status Change"
# events of a child machine (the job), and the aws-sdk variant acting in another
# account through Credentials (tests/job_poller/test_two_pollers.py).

data "aws_region" "current" {}
data "aws_caller_identity" "current" {}

locals {
  arn_prefix = "arn:${data.aws_partition.current.partition}:states:${data.aws_region.current.region}:${data.aws_caller_identity.current.account_id}"
  child_name = "${var.name_prefix}-child"
  child_arn  = "${local.arn_prefix}:stateMachine:${local.child_name}"
  sdk_job = {
    start_action           = "sfn:startExecution"
    start_parameters_json  = jsonencode({ StateMachineArn = local.child_arn, "Input.$" = "States.JsonToString($.job)" })
    status_action          = "sfn:describeExecution"
    status_parameters_json = jsonencode({ "ExecutionArn.$" = "$.job_poller.child.run.handle.ExecutionArn" })
    status_path            = "$.Status"
    succeeded_statuses     = ["SUCCEEDED"]
    failed_statuses        = ["FAILED", "TIMED_OUT", "ABORTED"]
    running_statuses       = ["RUNNING"]
    retry_errors           = ["Sfn.SfnException"]
    policy_statements = [
      { sid = "StartChild", actions = ["states:StartExecution"], resources = [local.child_arn] },
      { sid = "DescribeChild", actions = ["states:DescribeExecution"], resources = ["${local.arn_prefix}:execution:${local.child_name}:*"] },
    ]
  }
}

module "child" {
  source = "../../../modules/state-machine"

  name = local.child_name
  definition = jsonencode({
    StartAt = "Run"
    States = {
      Run     = { Type = "Wait", SecondsPath = "$.duration_seconds", Next = "Outcome" }
      Outcome = { Type = "Choice", Choices = [{ Variable = "$.outcome", StringEquals = "fail", Next = "Fail" }], Default = "Done" }
      Fail    = { Type = "Fail", Error = "ChildJob.Failed" }
      Done    = { Type = "Succeed" }
    }
  })
  logging_level = "ERROR"
}

# --8<-- [start:completion-event]
module "events" {
  source = "../../../modules/job-poller"

  # No alarms: this configuration's tests read none (examples/job-poller's test proves
  # them), and each module instance's alarms were most of what it applied.
  alarms = { create = false }

  name             = "${var.name_prefix}-events"
  poller_name      = "child"
  completion       = "event"
  fallback_seconds = var.sdk_fallback_seconds
  timeout_seconds  = var.sdk_timeout_seconds
  task_retry       = { interval_seconds = 1, max_attempts = 2, backoff_rate = 2 }
  aws_sdk_job      = local.sdk_job
  completion_event = {
    # Step Functions announces every execution's end on the default bus.
    event_pattern = jsonencode({
      source        = ["aws.states"]
      "detail-type" = ["Step Functions Execution Status Change"]
      detail        = { stateMachineArn = [local.child_arn] }
    })
    job_id_path        = "$.detail.executionArn"
    status_path        = "$.detail.status"
    succeeded_statuses = ["SUCCEEDED"]
    failed_statuses    = ["FAILED", "TIMED_OUT", "ABORTED"]
    job_id_state_path  = "$.job_poller.child.run.handle.ExecutionArn"
  }
}
# --8<-- [end:completion-event]

module "cross_account" {
  source = "../../../modules/job-poller"

  # No alarms: this configuration's tests read none (examples/job-poller's test proves
  # them), and each module instance's alarms were most of what it applied.
  alarms = { create = false }

  name                  = "${var.name_prefix}-cross"
  poller_name           = "child"
  initial_wait_seconds  = 1
  poll_interval_seconds = 1
  timeout_seconds       = var.sdk_timeout_seconds
  task_retry            = { interval_seconds = 1, max_attempts = 2, backoff_rate = 2 }
  aws_sdk_job = merge(local.sdk_job, {
    start_parameters_json = jsonencode({ StateMachineArn = var.other_account_child_arn, "Input.$" = "States.JsonToString($.job)" })
    role_arn              = var.other_account_role_arn
    # The calls run as the other account's role: its own policy grants them there.
    policy_statements = []
  })
}
