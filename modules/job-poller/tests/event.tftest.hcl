# Event completion in the Lambda variant: Get Job Status parks its own token and
# checks once; a timeout alternates between two identical states (one transition per
# fallback check); the sample job brings its own completion events.

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
  name             = "evt"
  completion       = "event"
  fallback_seconds = 600
  timeout_seconds  = 3600
}

run "the_sample_job_brings_its_own_events" {
  command = plan

  assert {
    condition     = output.poll_loop_template == "poll-event.asl.json.tftpl" && jsondecode(output.definition).States["job Run Job"].Next == "job Await"
    error_message = "Run Job leads straight to the park."
  }
  assert {
    condition     = jsondecode(output.definition).States["job Await"].Catch[0].Next == "job Await Again" && jsondecode(output.definition).States["job Await Again"].Catch[0].Next == "job Await"
    error_message = "The fallback alternates between two identical parks."
  }
  assert {
    condition     = jsondecode(output.definition).States["job Await"].Parameters.Payload.completion == "event" && jsondecode(output.definition).States["job Await"].Parameters.Payload.max_checks == 6 && jsondecode(output.definition).States["job Await"].TimeoutSeconds == 600
    error_message = "Get Job Status parks, with ceil(3600 / 600) = 6 fallback checks of 600 s."
  }
  assert {
    condition     = output.token_table_name == "evt-job-poller-tokens" && output.completion_rule_name == "evt-job-poller-completion"
    error_message = "The token table and the rule exist in event mode."
  }
  assert {
    condition     = output.cost_model.transitions_fixed == 4 && output.cost_model.transitions_per_poll == 1
    error_message = "Four transitions per job plus one per fallback check."
  }
}

run "other_adapters_must_describe_their_events" {
  command = plan

  variables {
    job_adapter = { start = "my.jobs:start", status = "my.jobs:status" }
  }

  expect_failures = [var.completion_event]
}

run "poll_completion_creates_no_token_table" {
  command = plan

  variables {
    completion = "poll"
  }

  assert {
    condition     = output.token_table_name == null && output.completion_function_name == null
    error_message = "Nothing of event completion exists when polling."
  }
}

# The alarm counts docs/patterns/job-poller.md gives under "Cost" (alarms created with
# create = true; the Lambda poller with the sample job and the default S3 store).
run "alarm_count_event_completion" {
  command = plan
  variables {
    alarms = { create = true }
  }
  assert {
    condition     = length(output.alarms) == 21
    error_message = "completion = event with the sample job has the 21 alarms the pattern guide prices."
  }
}

run "alarm_count_polling" {
  command = plan
  variables {
    alarms     = { create = true }
    completion = "poll"
  }
  assert {
    condition     = length(output.alarms) == 13
    error_message = "A polling Lambda poller with the sample job has 13 alarms."
  }
}

run "alarm_count_polling_your_own_job" {
  command = plan
  variables {
    alarms            = { create = true }
    completion        = "poll"
    create_sample_job = false
    job_adapter       = { start = "my.jobs:start", status = "my.jobs:status" }
  }
  assert {
    condition     = length(output.alarms) == 10
    error_message = "A polling Lambda poller with your own job_adapter and no sample job has 10 alarms."
  }
}
