# SQS throttle example: requests queue on a FIFO queue and a scheduled starter
# keeps at most max_concurrency executions of a small target running.
#
# The target stands in for any STANDARD workflow: it waits the number of seconds
# its input asks for ("seconds", default 2) and echoes its input, so tests can
# measure concurrency from the executions' own start and stop times.

provider "aws" {
  region = var.region
}

data "aws_partition" "current" {}
data "aws_region" "current" {}
data "aws_caller_identity" "current" {}

locals {
  target_name = "${var.name_prefix}-target"
  target_arn  = "arn:${data.aws_partition.current.partition}:states:${data.aws_region.current.region}:${data.aws_caller_identity.current.account_id}:stateMachine:${local.target_name}"
}

# --8<-- [start:usage]
module "throttle" {
  source = "../../modules/sqs-throttle"

  name                       = var.name_prefix
  target_state_machine_arn   = local.target_arn
  max_concurrency            = var.max_concurrency
  schedule_expression        = var.schedule_expression
  schedule_enabled           = var.schedule_enabled
  max_messages_per_run       = var.max_messages_per_run
  max_seconds_per_run        = var.max_seconds_per_run
  recheck_seconds            = var.recheck_seconds
  max_receive_count          = var.max_receive_count
  visibility_timeout_seconds = var.visibility_timeout_seconds
  python_executable          = var.python_executable
  alarms                     = var.alarms
  create_dashboard           = var.create_dashboard
  tags                       = var.tags
}
# --8<-- [end:usage]

# --- the throttled target ---------------------------------------------------------------

module "target" {
  source = "../../modules/state-machine"

  name = local.target_name
  definition = jsonencode({
    Comment = "Throttled stand-in workflow: waits $.seconds (default 2), then succeeds."
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

  # A stand-in workflow: its input is not worth logging.
  logging_level                  = "ERROR"
  logging_include_execution_data = false
  tags                           = var.tags
}
