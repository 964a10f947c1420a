# The rendered ASL of every strategy, planned by Terraform itself (mock providers):
# the fragments callers embed (acquire_states, release_states) and the wrapper's
# whole definition, in the aws, aws-cn and aws-us-gov partitions. Replaces the Python
# re-rendering of the templates (tests/semaphore/render.py); the LocalStack tests
# create and run these definitions for real.

mock_provider "aws" {
  mock_data "aws_partition" {
    defaults = { partition = "aws", dns_suffix = "amazonaws.com" }
  }
  mock_data "aws_region" {
    defaults = { region = "us-east-1" }
  }
  mock_data "aws_caller_identity" {
    defaults = { account_id = "000000000000" }
  }
  mock_data "aws_iam_policy_document" {
    defaults = { json = "{}" }
  }
}

mock_provider "local" {
  mock_data "local_command" {
    defaults = { stdout = "{\"filename\": \"x.zip\", \"base64sha256\": \"c2hh\", \"sha256\": \"73\", \"size\": \"1\"}" }
  }
}

variables {
  name                     = "demo"
  strategy                 = "dynamodb"
  max_concurrency          = 3
  create_wrapper           = true
  target_state_machine_arn = "arn:aws:states:us-east-1:000000000000:stateMachine:target"
}

run "dynamodb_acquire_is_one_atomic_conditional_update" {
  command = plan

  assert {
    condition     = output.acquire_states["Semaphore: Acquire"].Resource == "arn:aws:states:::dynamodb:updateItem" && output.acquire_states["Semaphore: Acquire"].Parameters.TableName == "demo-semaphore"
    error_message = "Acquire is a Step Functions updateItem on the lock table (no Lambda)."
  }
  assert {
    # A true `<`, never the sample's `<>`, and never twice for one execution.
    condition     = strcontains(output.acquire_states["Semaphore: Acquire"].Parameters.ConditionExpression, "#count < :limit") && strcontains(output.acquire_states["Semaphore: Acquire"].Parameters.ConditionExpression, "attribute_not_exists(#holder)")
    error_message = "Acquire takes a slot only below the limit and only once per execution."
  }
  assert {
    condition     = output.acquire_states["Semaphore: Acquire"].Parameters.ExpressionAttributeValues[":limit"] == { N = "3" }
    error_message = "The limit is max_concurrency."
  }
  assert {
    condition     = strcontains(output.acquire_states["Semaphore: Acquire"].Parameters.ExpressionAttributeNames["#holder.$"], "States.Hash($$.Execution.Id, 'MD5')")
    error_message = "The holder attribute is derived from the execution ARN (as sfn_patterns.semaphore.lease.holder_attribute does)."
  }
  assert {
    condition     = toset(keys(output.acquire_states["Semaphore: Acquire"].Parameters.ExpressionAttributeValues[":lease"].M)) == toset(["execution_arn", "acquired_at", "lease_seconds"])
    error_message = "Each lease records the execution, when it was taken and for how long."
  }
  assert {
    condition     = output.acquire_states["Semaphore: Acquire"].Catch[0].ErrorEquals == ["DynamoDB.ConditionalCheckFailedException"]
    error_message = "A full semaphore goes to the bounded wait."
  }
  assert {
    # The condition failure is never retried in place: it goes to the bounded wait.
    condition     = alltrue([for r in output.acquire_states["Semaphore: Acquire"].Retry : !contains(r.ErrorEquals, "DynamoDB.ConditionalCheckFailedException") && !contains(r.ErrorEquals, "States.ALL")])
    error_message = "Retriers never retry the condition failure (nor everything)."
  }
  assert {
    condition     = output.acquire_start_state == "Semaphore: Prepare"
    error_message = "The dynamodb fragment starts at Prepare."
  }
}

run "dynamodb_wait_is_jittered_and_bounded" {
  command = plan

  assert {
    condition     = output.acquire_states["Semaphore: Check holder"].ResultSelector["next_wait_seconds.$"] == "States.MathRandom(5, 15)"
    error_message = "The wait is random between wait_min_seconds and wait_max_seconds."
  }
  assert {
    condition     = output.acquire_states["Semaphore: Held or wait?"].Choices[0].Next == "Critical section"
    error_message = "Once held, the fragment goes to fragment_acquired_next."
  }
  assert {
    condition     = output.acquire_states["Semaphore: Held or wait?"].Choices[1] == { Variable = "$.semaphore.waited_seconds", NumericGreaterThanEquals = 3600, Next = "Semaphore: Acquire timed out" }
    error_message = "The wait ends after acquire_timeout_seconds."
  }
  assert {
    condition     = output.acquire_states["Semaphore: Acquire timed out"].Error == "Semaphore.AcquireTimeout" && output.acquire_states["Semaphore: Wait for a slot"].Next == "Semaphore: Acquire"
    error_message = "A timed-out wait fails with Semaphore.AcquireTimeout; otherwise it tries again."
  }
}

run "dynamodb_release_cannot_go_negative_and_failure_is_reraised" {
  command = plan

  assert {
    condition = alltrue([for n in ["Semaphore: Release", "Semaphore: Release after failure"] :
      output.release_states[n].Parameters.UpdateExpression == "SET #count = #count - :one REMOVE #holder" && output.release_states[n].Parameters.ConditionExpression == "attribute_exists(#holder)"
    ])
    error_message = "A release decrements only while this execution holds a lease."
  }
  assert {
    condition     = output.release_states["Semaphore: Release"].End && output.release_states["Semaphore: Release after failure"].Next == "Semaphore: Re-raise"
    error_message = "A null fragment_release_next ends the machine; a failure is re-raised after the release."
  }
  assert {
    condition     = output.release_state == "Semaphore: Release" && output.critical_section_catch == [{ ErrorEquals = ["States.ALL"], ResultPath = "$.semaphore_error", Next = "Semaphore: Release after failure" }]
    error_message = "The critical section's Catch leads to Release after failure."
  }
}

run "dynamodb_wrapper_definition" {
  command = plan

  assert {
    condition     = jsondecode(output.wrapper_definition).StartAt == "Semaphore: Prepare"
    error_message = "The wrapper starts with the acquire fragment."
  }
  assert {
    condition     = jsondecode(output.wrapper_definition).States["Run target"].Resource == "arn:aws:states:::states:startExecution.sync:2" && jsondecode(output.wrapper_definition).States["Run target"].Catch[0].Next == "Semaphore: Release after failure"
    error_message = "The wrapper runs the target synchronously and releases on failure."
  }
  assert {
    condition     = jsondecode(output.wrapper_definition).States["Semaphore: Release"].Next == "Return target output" && jsondecode(output.wrapper_definition).States["Semaphore: Held or wait?"].Choices[0].Next == "Run target"
    error_message = "Acquire leads to Run target; Release leads to the target's output."
  }
  assert {
    condition = alltrue(flatten([for name, s in jsondecode(output.wrapper_definition).States : [
      for t in concat(try([s.Next], []), try([s.Default], []), [for c in try(s.Catch, []) : c.Next], [for c in try(s.Choices, []) : c.Next]) :
      contains(keys(jsondecode(output.wrapper_definition).States), t)
    ]]))
    error_message = "Every Next, Default, Catch and Choice target names a state of the wrapper."
  }
}

run "states_errors_are_reraised_under_the_module_name" {
  command = plan

  assert {
    # A Fail state may not raise States.*: those become Semaphore.CriticalSectionFailed.
    condition     = output.release_states["Semaphore: Re-raise"].Type == "Choice" && output.release_states["Semaphore: Re-raise"].Choices[0].StringMatches == "States.*"
    error_message = "Re-raise tells States.* errors apart."
  }
  assert {
    condition = [for f in [output.release_states[output.release_states[output.release_states["Semaphore: Re-raise"].Choices[0].Next].Next]] : {
      Type = f.Type, Error = f.Error, CausePath = f.CausePath
    }][0] == { Type = "Fail", Error = "Semaphore.CriticalSectionFailed", CausePath = "$.semaphore_error.Cause" }
    error_message = "A States.* error is raised as Semaphore.CriticalSectionFailed with its cause."
  }
  assert {
    condition     = output.release_states[output.release_states["Semaphore: Re-raise"].Default].ErrorPath == "$.semaphore_error.Error" && output.release_states[output.release_states["Semaphore: Re-raise"].Default].CausePath == "$.semaphore_error.Cause"
    error_message = "Any other error passes through unchanged."
  }
}

run "fifo_only_the_head_ticket_takes_a_slot" {
  command = plan

  variables {
    fairness = "fifo"
  }

  assert {
    # The fast path admits an arrival only when nobody is queued.
    condition     = strcontains(output.acquire_states["Semaphore: Acquire"].Parameters.ConditionExpression, "#served = #next") && output.acquire_states["Semaphore: Acquire"].Catch[0].Next == "Semaphore: Take ticket"
    error_message = "The fast path admits only with an empty queue; otherwise a ticket is taken."
  }
  assert {
    condition     = output.acquire_states["Semaphore: Take ticket"].Parameters.ReturnValues == "UPDATED_NEW" && strcontains(output.acquire_states["Semaphore: Take ticket"].Parameters.UpdateExpression, "#next = if_not_exists(#next, :zero) + :one")
    error_message = "Take ticket is an atomic counter."
  }
  assert {
    condition     = output.acquire_states["Semaphore: Join queue"].Parameters.ConditionExpression == "#served <= :ticket"
    error_message = "Join queue only for a ticket not yet served."
  }
  assert {
    condition = (startswith(output.acquire_states["Semaphore: Acquire in turn"].Parameters.ConditionExpression, "#served = :ticket AND #count < :limit")
      && strcontains(output.acquire_states["Semaphore: Acquire in turn"].Parameters.UpdateExpression, "#served = #served + :one")
    && endswith(output.acquire_states["Semaphore: Acquire in turn"].Parameters.UpdateExpression, "REMOVE #mine"))
    error_message = "Only the head ticket takes a free slot, and serves the next."
  }
  assert {
    condition     = output.acquire_states["Semaphore: Skip abandoned ticket"].Parameters.ConditionExpression == "#served = :head AND attribute_not_exists(#head)"
    error_message = "An abandoned head ticket is skipped only if nobody holds it."
  }
  assert {
    # A skip is tried only when the head did not move for a whole wait.
    condition = (output.acquire_states["Semaphore: My turn?"].Choices[length(output.acquire_states["Semaphore: My turn?"].Choices) - 2].Next == "Semaphore: Skip abandoned ticket"
    && contains(output.acquire_states["Semaphore: My turn?"].Choices[length(output.acquire_states["Semaphore: My turn?"].Choices) - 2].And, { Variable = "$.semaphore.check.served", NumericEqualsPath = "$.semaphore.last_served" }))
    error_message = "Skip only when the head did not move for a whole wait."
  }
}

run "fifo_timeout_gives_the_ticket_back_and_the_head_polls_fast" {
  command = plan

  variables {
    fairness = "fifo"
  }

  assert {
    condition     = contains(output.acquire_states["Semaphore: My turn?"].Choices, { Variable = "$.semaphore.waited_seconds", NumericGreaterThanEquals = 3600, Next = "Semaphore: Leave queue, timed out" })
    error_message = "A timed-out waiter leaves the queue."
  }
  assert {
    condition     = output.acquire_states["Semaphore: Leave queue, timed out"].Parameters.UpdateExpression == "REMOVE #mine" && output.acquire_states["Semaphore: Leave queue, timed out"].Next == "Semaphore: Acquire timed out"
    error_message = "Leaving the queue removes the ticket, then fails with the timeout."
  }
  assert {
    condition     = output.acquire_states["Semaphore: My turn?"].Choices[length(output.acquire_states["Semaphore: My turn?"].Choices) - 1] == { Variable = "$.semaphore.check.served", NumericEqualsPath = "$.semaphore.queue.ticket", Next = "Semaphore: Count wait, head" }
    error_message = "The head of the queue counts its own wait."
  }
  assert {
    condition     = output.acquire_states["Semaphore: Count wait, head"].Parameters.wait_seconds == 5 && output.acquire_states["Semaphore: Count wait, head"].Parameters["waited_seconds.$"] == "States.MathAdd($.semaphore.waited_seconds, 5)"
    error_message = "The head polls at wait_min_seconds."
  }
  assert {
    condition     = output.acquire_states["Semaphore: My turn?"].Default == "Semaphore: Count wait"
    error_message = "Everyone else waits the jittered wait."
  }
  assert {
    condition = alltrue(flatten([for name, s in jsondecode(output.wrapper_definition).States : [
      for t in concat(try([s.Next], []), try([s.Default], []), [for c in try(s.Catch, []) : c.Next], [for c in try(s.Choices, []) : c.Next]) :
      contains(keys(jsondecode(output.wrapper_definition).States), t)
    ]]))
    error_message = "Every transition of the fifo wrapper names one of its states."
  }
}

run "callback_parks_on_a_task_token_with_a_fallback" {
  command = plan

  variables {
    strategy = "callback"
  }

  assert {
    condition     = toset(keys(output.acquire_states)) == toset(["Semaphore: Acquire", "Semaphore: Re-check"]) && output.acquire_start_state == "Semaphore: Acquire"
    error_message = "The callback fragment is Acquire and its fallback Re-check."
  }
  assert {
    condition = alltrue([for pair in [["Semaphore: Acquire", "Semaphore: Re-check"], ["Semaphore: Re-check", "Semaphore: Acquire"]] :
      output.acquire_states[pair[0]].Resource == "arn:aws:states:::lambda:invoke.waitForTaskToken"
      && output.acquire_states[pair[0]].Parameters.Payload["task_token.$"] == "$$.Task.Token"
      && output.acquire_states[pair[0]].Parameters.FunctionName == "arn:aws:lambda:us-east-1:000000000000:function:demo-semaphore"
      && output.acquire_states[pair[0]].TimeoutSeconds == 300
      && output.acquire_states[pair[0]].Next == "Critical section"
      && length(output.acquire_states[pair[0]].Catch) == 1
      && output.acquire_states[pair[0]].Catch[0].ErrorEquals == ["States.Timeout", "States.HeartbeatTimeout"]
      && output.acquire_states[pair[0]].Catch[0].ResultPath == null
      && output.acquire_states[pair[0]].Catch[0].Next == pair[1]
    ])
    error_message = "Acquire and Re-check park on a task token for fallback_seconds, then hand over to each other."
  }
  assert {
    condition = alltrue(flatten([for name, s in jsondecode(output.wrapper_definition).States : [
      for t in concat(try([s.Next], []), try([s.Default], []), [for c in try(s.Catch, []) : c.Next], [for c in try(s.Choices, []) : c.Next]) :
      contains(keys(jsondecode(output.wrapper_definition).States), t)
    ]]))
    error_message = "Every transition of the callback wrapper names one of its states."
  }
}

run "oldest_first_wrapper_is_closed" {
  command = plan

  variables {
    strategy = "oldest-first"
  }

  assert {
    condition     = output.acquire_states["Semaphore: Acquire"].Parameters.FunctionName == "arn:aws:lambda:us-east-1:000000000000:function:demo-oldest-first-gate"
    error_message = "oldest-first asks its gate Lambda."
  }
  assert {
    condition = alltrue(flatten([for name, s in jsondecode(output.wrapper_definition).States : [
      for t in concat(try([s.Next], []), try([s.Default], []), [for c in try(s.Catch, []) : c.Next], [for c in try(s.Choices, []) : c.Next]) :
      contains(keys(jsondecode(output.wrapper_definition).States), t)
    ]]))
    error_message = "Every transition of the oldest-first wrapper names one of its states."
  }
}

run "custom_prefix_and_release_next" {
  command = plan

  variables {
    fragment_state_prefix  = "Lock/"
    fragment_acquired_next = "Load"
    fragment_release_next  = "Report"
  }

  assert {
    condition     = output.acquire_states["Lock/Held or wait?"].Choices[0].Next == "Load" && output.release_states["Lock/Release"].Next == "Report"
    error_message = "The fragments use the caller's prefix and join the caller's states."
  }
}

# --- partitions: every service-integration ARN in the rendered ASL ---------------------

run "partition_aws_cn_dynamodb" {
  command = plan

  # As terraform-provider-aws computes it in this partition (service_principal_data_source.go).
  override_data {
    target = data.aws_service_principal.events
    values = { name = "events.amazonaws.com", suffix = "amazonaws.com" }
  }

  override_data {
    target = data.aws_partition.current
    values = { partition = "aws-cn", dns_suffix = "amazonaws.com.cn" }
  }
  override_data {
    target = data.aws_region.current
    values = { region = "cn-north-1" }
  }

  variables {
    target_state_machine_arn = "arn:aws-cn:states:cn-north-1:000000000000:stateMachine:target"
  }

  assert {
    condition     = alltrue([for name, s in jsondecode(output.wrapper_definition).States : startswith(s.Resource, "arn:aws-cn:states:::") if s.Type == "Task"])
    error_message = "Every Task's Resource is an aws-cn service integration."
  }
  assert {
    condition     = !strcontains(output.wrapper_definition, "arn:aws:") && jsondecode(output.wrapper_definition).States["Run target"].Resource == "arn:aws-cn:states:::states:startExecution.sync:2"
    error_message = "No ARN of the aws partition is left in an aws-cn definition."
  }
  assert {
    condition     = output.wrapper_state_machine_arn_static == "arn:aws-cn:states:cn-north-1:000000000000:stateMachine:demo-wrapper"
    error_message = "The wrapper's static ARN is in aws-cn."
  }
  assert {
    condition     = aws_lambda_permission.reconcile[0].principal == "events.amazonaws.com"
    error_message = "EventBridge's principal comes from data.aws_service_principal: events.amazonaws.com in aws-cn too."
  }
}

run "partition_aws_us_gov_callback" {
  command = plan

  override_data {
    target = data.aws_partition.current
    values = { partition = "aws-us-gov", dns_suffix = "amazonaws.com" }
  }
  override_data {
    target = data.aws_region.current
    values = { region = "us-gov-west-1" }
  }

  variables {
    strategy                 = "callback"
    target_state_machine_arn = "arn:aws-us-gov:states:us-gov-west-1:000000000000:stateMachine:target"
  }

  assert {
    condition     = alltrue([for name, s in jsondecode(output.wrapper_definition).States : startswith(s.Resource, "arn:aws-us-gov:states:::") if s.Type == "Task"])
    error_message = "Every Task's Resource is an aws-us-gov service integration."
  }
  assert {
    condition     = output.acquire_states["Semaphore: Acquire"].Parameters.FunctionName == "arn:aws-us-gov:lambda:us-gov-west-1:000000000000:function:demo-semaphore" && output.release_states["Semaphore: Release"].Resource == "arn:aws-us-gov:states:::lambda:invoke"
    error_message = "The callback Lambda's ARN and the release's integration are in aws-us-gov."
  }
  assert {
    condition     = !strcontains(output.wrapper_definition, "arn:aws:") && !strcontains(jsonencode(output.acquire_states), "arn:aws:") && !strcontains(jsonencode(output.release_states), "arn:aws:")
    error_message = "No ARN of the aws partition is left in aws-us-gov fragments."
  }
}

run "partition_aws_cn_oldest_first_and_fifo_fragments" {
  command = plan

  override_data {
    target = data.aws_partition.current
    values = { partition = "aws-cn", dns_suffix = "amazonaws.com.cn" }
  }

  variables {
    strategy                 = "oldest-first"
    target_state_machine_arn = "arn:aws-cn:states:us-east-1:000000000000:stateMachine:target"
  }

  assert {
    condition     = output.acquire_states["Semaphore: Acquire"].Resource == "arn:aws-cn:states:::lambda:invoke" && output.acquire_states["Semaphore: Acquire"].Parameters.FunctionName == "arn:aws-cn:lambda:us-east-1:000000000000:function:demo-oldest-first-gate"
    error_message = "The gate's integration and function ARN are in aws-cn."
  }
  assert {
    condition     = !strcontains(output.wrapper_definition, "arn:aws:")
    error_message = "No ARN of the aws partition is left in an aws-cn definition."
  }
}

run "partition_aws_us_gov_fifo" {
  command = plan

  override_data {
    target = data.aws_partition.current
    values = { partition = "aws-us-gov", dns_suffix = "amazonaws.com" }
  }

  variables {
    fairness                 = "fifo"
    target_state_machine_arn = "arn:aws-us-gov:states:us-east-1:000000000000:stateMachine:target"
  }

  assert {
    condition     = alltrue([for name, s in jsondecode(output.wrapper_definition).States : startswith(s.Resource, "arn:aws-us-gov:states:::") if s.Type == "Task"]) && !strcontains(output.wrapper_definition, "arn:aws:")
    error_message = "Every integration of the fifo wrapper is in aws-us-gov."
  }
}

run "partition_aws_every_task_resource" {
  command = plan

  assert {
    condition     = alltrue([for name, s in jsondecode(output.wrapper_definition).States : startswith(s.Resource, "arn:aws:states:::") if s.Type == "Task"])
    error_message = "In the aws partition every Task's Resource is an aws service integration."
  }
}
