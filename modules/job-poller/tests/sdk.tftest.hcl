# The aws-sdk variant: loop-assign by default (no Lambda can raise "still running"),
# event completion through the event-completion function, and tasks acting in
# another account through Credentials.

mock_provider "aws" {
  mock_data "aws_caller_identity" {
    defaults = { account_id = "123456789012" }
  }
  mock_data "aws_partition" {
    defaults = { partition = "aws" }
  }
  mock_data "aws_region" {
    defaults = { region = "us-east-1" }
  }
  mock_data "aws_iam_policy_document" {
    defaults = { json = "{\"Version\":\"2012-10-17\",\"Statement\":[]}" }
  }
}

mock_provider "local" {
  mock_data "local_command" {
    defaults = { stdout = "{\"base64sha256\": \"bW9jaw==\"}" }
  }
}

variables {
  name                  = "sdk"
  poller_name           = "child"
  initial_wait_seconds  = 10
  poll_interval_seconds = 5
  timeout_seconds       = 60
  aws_sdk_job = {
    start_action           = "sfn:startExecution"
    start_parameters_json  = "{\"StateMachineArn\":\"arn:aws:states:us-east-1:111111111111:stateMachine:child\"}"
    status_action          = "sfn:describeExecution"
    status_parameters_json = "{\"ExecutionArn.$\":\"$.job_poller.child.run.handle.ExecutionArn\"}"
    status_path            = "$.Status"
    succeeded_statuses     = ["SUCCEEDED"]
    failed_statuses        = ["FAILED", "TIMED_OUT", "ABORTED"]
    running_statuses       = ["RUNNING"]
    policy_statements      = []
  }
}

run "loop_assign_is_the_sdk_default" {
  command = plan

  assert {
    condition     = output.poll_loop_template == "poll-loop-assign.asl.json.tftpl" && output.poll_loop_entry_state == "child Wait Initial"
    error_message = "The aws-sdk variant shortens the loop with a workflow variable by default."
  }
  assert {
    condition     = jsondecode(output.definition).States["child Wait Initial"].Assign == { jp_child_polls = 0 } && jsondecode(output.definition).States["child Get Status"].Assign == { "jp_child_polls.$" = "States.MathAdd($jp_child_polls, 1)" }
    error_message = "The counter starts in the initial Wait and counts in Get Status: no Pass state."
  }
  assert {
    condition     = jsondecode(output.definition).States["child Check"].Choices[2].And[1] == { Variable = "$jp_child_polls", NumericGreaterThan = 10 }
    error_message = "Out of polls after ceil((60 - 10) / 5) = 10 polls."
  }
  assert {
    condition     = jsondecode(output.definition).States["child Check"].Default == "child Unknown Status"
    error_message = "An unknown status ends in the unknown exit."
  }
  assert {
    condition     = !contains(keys(jsondecode(output.definition).States), "child Count") && output.cost_model.transitions_per_poll == 3
    error_message = "Three transitions per poll, no Count Pass."
  }
}

run "retry_polling_is_refused_for_the_sdk_variant" {
  command = plan

  variables {
    polling = "retry"
  }

  expect_failures = [var.polling]
}

run "event_completion_parks_through_the_completion_function" {
  command = plan

  variables {
    completion       = "event"
    fallback_seconds = 20
    completion_event = {
      event_pattern      = "{\"source\":[\"aws.states\"]}"
      job_id_path        = "$.detail.executionArn"
      status_path        = "$.detail.status"
      succeeded_statuses = ["SUCCEEDED"]
      failed_statuses    = ["FAILED", "TIMED_OUT", "ABORTED"]
      job_id_state_path  = "$.job_poller.child.run.handle.ExecutionArn"
    }
  }

  assert {
    condition     = output.poll_loop_template == "poll-event-sdk.asl.json.tftpl" && jsondecode(output.definition).States["child Run Job"].Next == "child Await"
    error_message = "Run Job leads straight to the park."
  }
  assert {
    condition     = jsondecode(output.definition).States["child Await"].Parameters.Payload == { action = "park", "job_id.$" = "$.job_poller.child.run.handle.ExecutionArn", "token.$" = "$$.Task.Token", "execution.$" = "$$.Execution.Id", max_checks = 3 }
    error_message = "The park registers the token under the job id, with ceil(60 / 20) = 3 fallback checks."
  }
  assert {
    condition     = jsondecode(output.definition).States["child Await"].TimeoutSeconds == 20 && jsondecode(output.definition).States["child Await"].Catch[0] == { ErrorEquals = ["States.Timeout"], ResultPath = "$.job_poller.child.fallback", Next = "child Get Status" }
    error_message = "A park that times out checks the job itself."
  }
  assert {
    condition     = jsondecode(output.definition).States["child Await"].Parameters.FunctionName == "arn:aws:lambda:us-east-1:123456789012:function:sdk-job-poller-completion"
    error_message = "The park is the event-completion function."
  }
}

run "event_completion_needs_the_job_id_in_the_state" {
  command = plan

  variables {
    completion = "event"
    completion_event = {
      event_pattern      = "{\"source\":[\"aws.states\"]}"
      job_id_path        = "$.detail.executionArn"
      status_path        = "$.detail.status"
      succeeded_statuses = ["SUCCEEDED"]
      failed_statuses    = ["FAILED"]
    }
  }

  expect_failures = [var.completion_event]
}

run "tasks_act_in_another_account_through_credentials" {
  command = plan

  variables {
    aws_sdk_job = {
      start_action           = "sfn:startExecution"
      start_parameters_json  = "{\"StateMachineArn\":\"arn:aws:states:us-east-1:111111111111:stateMachine:child\"}"
      status_action          = "sfn:describeExecution"
      status_parameters_json = "{\"ExecutionArn.$\":\"$.job_poller.child.run.handle.ExecutionArn\"}"
      status_path            = "$.Status"
      succeeded_statuses     = ["SUCCEEDED"]
      failed_statuses        = ["FAILED"]
      running_statuses       = ["RUNNING"]
      role_arn               = "arn:aws:iam::111111111111:role/jobs"
      policy_statements      = []
    }
  }

  assert {
    condition     = jsondecode(output.definition).States["child Run Job"].Credentials == { RoleArn = "arn:aws:iam::111111111111:role/jobs" } && jsondecode(output.definition).States["child Get Status"].Credentials == { RoleArn = "arn:aws:iam::111111111111:role/jobs" }
    error_message = "Run Job and Get Status act through the role."
  }
  assert {
    condition     = !contains(keys(jsondecode(output.definition).States["child Check"]), "Credentials")
    error_message = "Only tasks carry Credentials."
  }
}
