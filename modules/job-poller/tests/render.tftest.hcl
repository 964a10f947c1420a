# The rendered definitions of every wait (polling and completion mode), planned by
# Terraform itself with mock providers: no AWS, no LocalStack, no Python copy of the
# module's logic. Run by tests/terraform/test_native.py (terraform test).

mock_provider "aws" {
  mock_data "aws_caller_identity" {
    defaults = { account_id = "123456789012" }
  }
  mock_data "aws_partition" {
    defaults = { partition = "aws-cn" }
  }
  mock_data "aws_region" {
    defaults = { region = "cn-north-1" }
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
  name                  = "demo"
  initial_wait_seconds  = 60
  poll_interval_seconds = 30
  timeout_seconds       = 600
}

run "retry_polling_is_the_lambda_default" {
  command = plan

  assert {
    condition     = output.poll_loop_template == "poll-retry.asl.json.tftpl" && output.poll_loop_entry_state == "job Wait Initial"
    error_message = "The Lambda variant should poll with retries by default."
  }
  assert {
    condition     = jsondecode(output.definition).States["job Run Job"].Next == "job Wait Initial"
    error_message = "Run Job should lead to the retry-polled wait."
  }
  assert {
    condition     = jsondecode(output.definition).States["job Get Status"].Retry[0] == { ErrorEquals = ["JobStillRunning"], IntervalSeconds = 30, MaxAttempts = 18, BackoffRate = 1, MaxDelaySeconds = 30, JitterStrategy = "NONE" }
    error_message = "The still-running retrier should poll every 30 s, ceil((600 - 60) / 30) = 18 times."
  }
  assert {
    condition     = [for c in jsondecode(output.definition).States["job Get Status"].Catch : c.Next] == ["job Timed Out", "job Poll Error"]
    error_message = "Retries used up (JobStillRunning) and JobTimeoutError go to the timeout exit, anything else to Poll Error."
  }
  assert {
    condition     = jsondecode(output.definition).States["job Check"].Default == "job Unknown Status" && length(jsondecode(output.definition).States["job Check"].Choices) == 2
    error_message = "After a retry-polled Get Status, only SUCCEEDED and FAILED route on; anything else is unknown."
  }
  assert {
    condition     = jsondecode(output.definition).States["job Get Status"].Parameters.Payload.polling == "retry"
    error_message = "Get Job Status must know to raise JobStillRunning."
  }
  assert {
    condition     = !strcontains(output.definition, "arn:aws:") && strcontains(output.definition, "arn:aws-cn:states:::lambda:invoke")
    error_message = "Every ARN in the definition takes the partition from aws_partition."
  }
  assert {
    condition     = output.cost_model.transitions_per_poll == 1 && output.cost_model.history_events_per_poll == 3 && output.max_wait_count == 18
    error_message = "Retry polling costs one transition and three history events per poll."
  }
  assert {
    condition     = length(setsubtract(keys(jsondecode(output.poll_loop_fragment_json)), ["job Wait Initial", "job Get Status", "job Check"])) == 0
    error_message = "The fragment holds the wait only, never Run Job."
  }
}

run "backoff_polls_until_the_timeout_is_covered" {
  command = plan

  variables {
    initial_wait_seconds      = 0
    poll_interval_seconds     = 10
    timeout_seconds           = 1000
    poll_backoff_rate         = 2
    poll_max_interval_seconds = 160
  }

  # Intervals 10, 20, 40, 80, 160, 160, ...: 150 s after 4 polls, then 160 s each:
  # 4 + ceil((1000 - 150) / 160) = 4 + 6 = 10 polls.
  assert {
    condition     = output.max_wait_count == 10
    error_message = "Backoff polls: 4 growing intervals then capped ones until 1000 s are covered."
  }
  assert {
    condition     = jsondecode(output.definition).States["job Get Status"].Retry[0].BackoffRate == 2 && jsondecode(output.definition).States["job Get Status"].Retry[0].MaxDelaySeconds == 160
    error_message = "The retrier carries the backoff and its cap."
  }
}

run "start_time_keeps_a_backstop" {
  command = plan

  variables {
    timeout_strategy = "start-time"
  }

  assert {
    condition     = output.max_wait_count == 19 && jsondecode(output.definition).States["job Get Status"].Retry[0].MaxAttempts == 19
    error_message = "With start-time the Lambda's clock decides; the retries stop one poll later."
  }
}

run "loop_is_still_selectable" {
  command = plan

  variables {
    polling = "loop"
  }

  assert {
    condition     = output.poll_loop_template == "poll-loop.asl.json.tftpl" && output.poll_loop_entry_state == "job Start"
    error_message = "polling = loop renders the 4-state loop."
  }
  assert {
    condition     = [for c in jsondecode(output.definition).States["job Check"].Choices : c.Next] == ["job Succeeded", "job Job Failed", "job Timed Out", "job Count"]
    error_message = "The loop's Check: succeeded, failed, out of waits, count and wait again."
  }
  assert {
    condition     = jsondecode(output.definition).States["job Start"].Parameters.max_wait_count == 18 && jsondecode(output.definition).States["job Get Status"].Parameters.Payload["wait_count.$"] == "$.job_poller.job.loop.wait_count"
    error_message = "The loop counts with a Pass state into loop.wait_count."
  }
  assert {
    condition     = output.cost_model.transitions_per_poll == 4 && output.cost_model.history_events_per_poll == 11
    error_message = "The loop costs four transitions and eleven history events per poll."
  }
}

run "history_over_the_limit_fails_the_plan_with_the_numbers" {
  command = plan

  variables {
    polling               = "loop"
    initial_wait_seconds  = 0
    poll_interval_seconds = 1
    timeout_seconds       = 100000
    task_retry            = { max_attempts = 2 }
  }

  expect_failures = [output.history_events_worst_case]
}

run "retry_polling_fits_where_the_loop_does_not" {
  command = plan

  # 4,000 one-second polls: 20 + 4000 x 11 events as a loop, 18 + 4000 x 3 retried.
  variables {
    initial_wait_seconds  = 0
    poll_interval_seconds = 1
    timeout_seconds       = 4000
    task_retry            = { max_attempts = 0 }
  }

  assert {
    condition     = output.history_events_worst_case == 18 + 4000 * 3
    error_message = "Retry polling: 18 fixed events and 3 per poll."
  }
}
