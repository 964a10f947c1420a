# Job poller example: the same pattern three times.
#
# * "lambda": generic Run Job / Get Job Status Lambdas driving the sample job
#   (a sample asynchronous job runner), start-time timeout with the start time in S3,
#   retry polling (the Lambda variant's default: one transition per poll).
# * "sdk": no Lambdas at all. Step Functions' own StartExecution/DescribeExecution
#   (aws-sdk integrations) start and poll a child state machine that stands in for
#   any service with a describe API; wait-count timeout, no store, loop-assign
#   polling (the aws-sdk default: a workflow variable counts the polls).
# * "events": the sample job again, but completion = "event": the execution parks
#   on a task token until the job's completion event resumes it, with a fallback
#   check every fallback_seconds in case the event is lost.

provider "aws" {
  region = var.region
}

data "aws_partition" "current" {}
data "aws_region" "current" {}
data "aws_caller_identity" "current" {}

locals {
  child_name = "${var.name_prefix}-child-job"
  child_arn  = "arn:${data.aws_partition.current.partition}:states:${data.aws_region.current.region}:${data.aws_caller_identity.current.account_id}:stateMachine:${local.child_name}"
  # Executions of the child: what DescribeExecution reads.
  child_executions = "arn:${data.aws_partition.current.partition}:states:${data.aws_region.current.region}:${data.aws_caller_identity.current.account_id}:execution:${local.child_name}:*"
}

# --8<-- [start:usage-lambda]
module "lambda" {
  source = "../../modules/job-poller"

  alarms           = var.alarms
  create_dashboard = var.create_dashboard

  name                  = "${var.name_prefix}-lambda"
  poller_name           = "job"
  initial_wait_seconds  = var.initial_wait_seconds
  poll_interval_seconds = var.poll_interval_seconds
  timeout_seconds       = var.timeout_seconds
  timeout_strategy      = "start-time"
  metadata_store        = "s3"
  s3_force_destroy      = var.force_destroy
  task_retry            = var.task_retry
  tags                  = var.tags
}
# --8<-- [end:usage-lambda]

# --8<-- [start:usage-events]
module "events" {
  source = "../../modules/job-poller"

  alarms           = var.alarms
  create_dashboard = var.create_dashboard

  name             = "${var.name_prefix}-events"
  poller_name      = "job"
  completion       = "event"
  fallback_seconds = var.fallback_seconds
  timeout_seconds  = var.timeout_seconds
  metadata_store   = "dynamodb"
  task_retry       = var.task_retry
  tags             = var.tags
}
# --8<-- [end:usage-events]

# --8<-- [start:usage-sdk]
module "sdk" {
  source = "../../modules/job-poller"

  alarms           = var.alarms
  create_dashboard = var.create_dashboard

  name                  = "${var.name_prefix}-sdk"
  poller_name           = "child"
  initial_wait_seconds  = var.initial_wait_seconds
  poll_interval_seconds = var.poll_interval_seconds
  timeout_seconds       = var.timeout_seconds
  timeout_strategy      = "wait-count"
  task_retry            = var.task_retry

  aws_sdk_job = {
    start_action = "sfn:startExecution"
    start_parameters_json = jsonencode({
      StateMachineArn = local.child_arn
      "Input.$"       = "States.JsonToString($.job)"
    })
    status_action = "sfn:describeExecution"
    # DescribeExecution's input is rebuilt from StartExecution's output, kept at
    # <state_path>.run.handle (the describe step rebuilds its own input).
    status_parameters_json = jsonencode({ "ExecutionArn.$" = "$.job_poller.child.run.handle.ExecutionArn" })
    status_path            = "$.Status"
    succeeded_statuses     = ["SUCCEEDED"]
    failed_statuses        = ["FAILED", "TIMED_OUT", "ABORTED"]
    running_statuses       = ["RUNNING"]
    retry_errors           = ["Sfn.SfnException", "Sfn.ThrottlingException"]
    policy_statements = [
      { sid = "StartChild", actions = ["states:StartExecution"], resources = [local.child_arn] },
      { sid = "DescribeChild", actions = ["states:DescribeExecution"], resources = [local.child_executions] },
    ]
  }

  tags = var.tags
}
# --8<-- [end:usage-sdk]

# The child "job": waits duration_seconds, then succeeds or fails as told.
module "child" {
  source = "../../modules/state-machine"

  name = local.child_name
  definition = jsonencode({
    Comment = "A stand-in asynchronous job: runs duration_seconds, then succeeds or fails."
    StartAt = "Run"
    States = {
      Run = { Type = "Wait", SecondsPath = "$.duration_seconds", Next = "Outcome" }
      Outcome = {
        Type    = "Choice"
        Choices = [{ Variable = "$.outcome", StringEquals = "fail", Next = "Fail" }]
        Default = "Done"
      }
      Fail = { Type = "Fail", Error = "ChildJob.Failed", Cause = "the child job was asked to fail" }
      Done = { Type = "Succeed" }
    }
  })

  # A stand-in workflow: its input is not worth logging.
  logging_level                  = "ERROR"
  logging_include_execution_data = false
  tags                           = var.tags
}
