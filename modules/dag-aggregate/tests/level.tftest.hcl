# terraform test (plan only) of the level strategies: the Python planner really runs
# (the local provider is NOT mocked, so data.local_command renders the definition
# from the SQL fixture in tests/sql), only aws is mocked. Run by
# tests/terraform/test_native.py, which puts a python3 with the planner's
# dependencies first on PATH (by hand: PATH=<repo>/.venv/bin:$PATH terraform test).
#
# tests/sql, by hand: events_daily and events_by_type read raw.events (level 1),
# revenue_daily reads events_daily (level 2), kpi reads all three (level 3, append
# mode; the others reload with DELETE + INSERT in one batch).

mock_provider "aws" {
  mock_data "aws_caller_identity" {
    defaults = { account_id = "123456789012" }
  }
  mock_data "aws_partition" {
    defaults = { partition = "aws", dns_suffix = "amazonaws.com" }
  }
  mock_data "aws_region" {
    defaults = { region = "us-east-1" }
  }
  mock_data "aws_iam_policy_document" {
    defaults = { json = "{\"Version\":\"2012-10-17\",\"Statement\":[]}" }
  }
}

# Lambda zips are modules/lambda-function's business (its own tests): no packaging here.
override_data {
  target = module.completion.module.function.data.local_command.package
  values = { stdout = "{\"base64sha256\": \"bW9jaw==\"}" }
}

override_data {
  target = module.runtime.data.local_command.package
  values = { stdout = "{\"base64sha256\": \"bW9jaw==\"}" }
}

variables {
  name    = "dag"
  sql_dir = "tests/sql"
  redshift = {
    database           = "dev"
    cluster_identifier = "wh"
    db_user            = "etl"
  }
}

run "the_planner_reads_the_sql_into_a_reduced_dag" {
  command = plan

  assert {
    condition     = output.tasks == ["events_by_type", "events_daily", "kpi", "revenue_daily"]
    error_message = "One task per SQL file."
  }
  assert {
    condition     = output.edges == [["events_by_type", "kpi"], ["events_daily", "revenue_daily"], ["revenue_daily", "kpi"]]
    error_message = "Edges from the reads, without events_daily -> kpi (implied through revenue_daily)."
  }
  assert {
    condition     = output.operator_policy_json == null
    error_message = "The level strategies have no run, retry or status to operate: no operator policy."
  }
  assert {
    condition     = output.external_sources == ["raw.events"]
    error_message = "raw.events is the one external table the SQL reads."
  }
  assert {
    condition     = output.stages == [["events_daily"], ["events_by_type", "revenue_daily"], ["kpi"]]
    error_message = "parent-level runs events_by_type in the stage before its only child (level 3), not on level 1."
  }
}

run "event_completion_is_the_default_with_event_tasks_that_park" {
  command = plan

  variables {
    poll = { fallback_seconds = 120 }
  }

  assert {
    condition     = length([for s in values(jsondecode(output.definition).States) : s if s.Type == "Map"]) == 3 && alltrue([for s in values(jsondecode(output.definition).States) : s.MaxConcurrency == 10 if s.Type == "Map"])
    error_message = "One Map per stage, each with MaxConcurrency = max_concurrency (10)."
  }
  assert {
    condition     = [for k, s in jsondecode(output.definition).States : s.Result.items if s.Type == "Pass"] == [["events_daily"], ["events_by_type", "revenue_daily"], ["kpi"]]
    error_message = "Each stage's Pass hands its Map exactly that stage's tasks, in order."
  }
  assert {
    condition     = jsondecode(output.definition).States["Stage 1: L_*2"].ItemProcessor.States["S1 Execute batch"].Parameters == { Database = "dev", ClusterIdentifier = "wh", DbUser = "etl", "StatementName.$" = "States.Format('sfn-dag {}', $.task_id)", WithEvent = true, "Sqls.$" = "States.Array($.task.pre_sql, $.task.sql)" }
    error_message = "A reload task runs DELETE + INSERT as one batch on the cluster, WithEvent, named sfn-dag <task> (the completion rule's prefix)."
  }
  assert {
    condition     = jsondecode(output.definition).States["Stage 3: L_*E"].ItemProcessor.States["S3 Execute"].Parameters.WithEvent && jsondecode(output.definition).States["Stage 3: L_*E"].ItemProcessor.States["S3 Execute"].Resource == "arn:aws:states:::aws-sdk:redshiftdata:executeStatement"
    error_message = "The append task (kpi) runs a single statement, WithEvent."
  }
  assert {
    condition     = jsondecode(output.definition).States["Stage 1: L_*2"].ItemProcessor.States["S1 Execute batch"].Next == "S1 Poll Await"
    error_message = "With events, the statement's task parks right after it starts."
  }
  assert {
    condition     = jsondecode(output.definition).States["Stage 1: L_*2"].ItemProcessor.States["S1 Poll Await"].Resource == "arn:aws:states:::lambda:invoke.waitForTaskToken" && jsondecode(output.definition).States["Stage 1: L_*2"].ItemProcessor.States["S1 Poll Await"].Parameters.FunctionName == "arn:aws:lambda:us-east-1:123456789012:function:dag-completion"
    error_message = "The park is a waitForTaskToken call of the <name>-completion function."
  }
  assert {
    condition     = jsondecode(output.definition).States["Stage 1: L_*2"].ItemProcessor.States["S1 Poll Await"].TimeoutSeconds == 120
    error_message = "A park without its event times out after poll.fallback_seconds and describes the statement."
  }
  assert {
    condition     = jsondecode(output.definition).States["Stage 3: L_*E"].ItemProcessor.States["S3 SQL 0: kpi"].Result.max_polls == 30
    error_message = "The park allows ceil(3600 / 120) = 30 fallback checks before the task times out."
  }
  assert {
    condition     = !strcontains(output.definition, "Poll Start") && !strcontains(output.definition, "Poll Wait Poll")
    error_message = "No poll loop with event completion."
  }
  assert {
    condition     = output.token_table_name == "dag-tokens" && output.completion_function_name == "dag-completion" && output.completion_rule_name == "dag-completion"
    error_message = "Event completion creates its token table, function and rule, named after the module."
  }
  assert {
    condition     = contains([for s in local.state_machine_policy_statements : s.sid], "ParkOnCompletionEvents")
    error_message = "The state machine may invoke the completion function."
  }
}

run "poll_completion_renders_the_poll_loop_and_no_completion_resources" {
  command = plan

  variables {
    poll = {
      completion            = "poll"
      initial_wait_seconds  = 7
      poll_interval_seconds = 11
      timeout_seconds       = 600
    }
  }

  assert {
    condition     = !strcontains(output.definition, "WithEvent") && !strcontains(output.definition, "waitForTaskToken")
    error_message = "Polled statements are not started WithEvent and nothing parks."
  }
  assert {
    condition     = jsondecode(output.definition).States["Stage 1: L_*2"].ItemProcessor.States["S1 Execute batch"].Next == "S1 Poll Start"
    error_message = "The statement's task enters the poll loop."
  }
  assert {
    condition     = jsondecode(output.definition).States["Stage 1: L_*2"].ItemProcessor.States["S1 Poll Wait Poll"].Seconds == 11 && jsondecode(output.definition).States["Stage 1: L_*2"].ItemProcessor.States["S1 Poll Wait Poll"].Next == "S1 Poll Get Status"
    error_message = "The loop waits poll_interval_seconds between describes."
  }
  assert {
    condition     = jsondecode(output.definition).States["Stage 1: L_*2"].ItemProcessor.States["S1 Poll Get Status"].Resource == "arn:aws:states:::aws-sdk:redshiftdata:describeStatement"
    error_message = "Each poll describes the statement."
  }
  assert {
    condition     = jsondecode(output.definition).States["Stage 3: L_*E"].ItemProcessor.States["S3 SQL 0: kpi"].Result.wait == 7 && jsondecode(output.definition).States["Stage 3: L_*E"].ItemProcessor.States["S3 SQL 0: kpi"].Result.max_polls == 54
    error_message = "A task waits 7 s, then polls at most ceil((600 - 7) / 11) = 54 times."
  }
  assert {
    condition     = output.token_table_name == null && output.completion_function_name == null && output.completion_rule_name == null
    error_message = "Nothing of event completion exists when polling."
  }
  assert {
    condition     = !contains([for s in local.state_machine_policy_statements : s.sid], "ParkOnCompletionEvents")
    error_message = "No completion function to invoke when polling."
  }
}

run "simple_level_stages_by_level" {
  command = plan

  variables {
    strategy        = "simple-level"
    max_concurrency = 3
  }

  assert {
    condition     = output.stages == [["events_by_type", "events_daily"], ["revenue_daily"], ["kpi"]]
    error_message = "simple-level: one stage per DAG level."
  }
  assert {
    condition     = [for k, s in jsondecode(output.definition).States : s.Result.items if s.Type == "Pass"] == output.stages
    error_message = "The definition runs the stages the plan reports."
  }
  assert {
    condition     = alltrue([for s in values(jsondecode(output.definition).States) : s.MaxConcurrency == 3 if s.Type == "Map"])
    error_message = "Every Map runs at most max_concurrency tasks."
  }
}

run "level_strategies_make_one_state_machine_and_nothing_of_dependency" {
  command = plan

  assert {
    condition     = output.state_machine_arn_static == "arn:aws:states:us-east-1:123456789012:stateMachine:dag" && module.state_machine.state_machine_arn_static == output.state_machine_arn_static
    error_message = "The state machine to start is <name>, its ARN known at plan time."
  }
  assert {
    condition     = module.coordinator.state_machine_arn_static == null && module.task_machine.state_machine_arn_static == null && module.runtime.function_name == null
    error_message = "No coordinator, task machine or runtime Lambda with a level strategy."
  }
  assert {
    condition     = length(aws_dynamodb_table.runs) == 0 && length(aws_s3_bucket.plan) == 0 && length(aws_s3_object.plan) == 0 && length(aws_cloudwatch_event_rule.task_ended) == 0
    error_message = "No runs table, plan bucket or task-ended rule with a level strategy."
  }
  assert {
    condition     = output.task_definition == null && output.runs_table_name == null && output.plan_key == null && output.priorities == null && output.run_results_uri == null
    error_message = "The dependency outputs are null."
  }
  assert {
    condition     = [for s in local.state_machine_policy_statements : s.sid] == ["RunStatementsOnTheTarget", "FollowOwnStatements", "TemporaryClusterCredentials", "ParkOnCompletionEvents"]
    error_message = "The role may run statements on its target, follow its own statements, get cluster credentials and park: nothing else."
  }
  assert {
    condition     = local.state_machine_policy_statements[2].resources == ["arn:aws:redshift:us-east-1:123456789012:dbuser:wh/etl", "arn:aws:redshift:us-east-1:123456789012:dbname:wh/dev"]
    error_message = "Temporary credentials for that database user and database only."
  }
}

run "create_false_creates_nothing_and_runs_no_planner" {
  command = plan

  variables {
    create = false
  }

  assert {
    condition     = length(data.local_command.planner) == 0
    error_message = "create = false does not run the planner."
  }
  assert {
    condition     = module.state_machine.state_machine_arn_static == null && module.coordinator.state_machine_arn_static == null && module.task_machine.state_machine_arn_static == null
    error_message = "create = false creates no state machine."
  }
  assert {
    condition     = module.runtime.function_name == null && module.completion.function_name == null && module.completion.table_name == null
    error_message = "create = false creates no Lambda and no token table."
  }
  assert {
    condition     = length(aws_dynamodb_table.runs) == 0 && length(aws_s3_bucket.plan) == 0
    error_message = "create = false creates no runs table or bucket."
  }
  assert {
    condition     = output.definition == null && output.tasks == null && output.stages == null && output.state_machine_arn_static == null
    error_message = "create = false: the outputs are null."
  }
}

# The alarm counts docs/patterns/dag-aggregate.md gives under "Cost" (alarms created
# with create = true).
run "alarm_count_level_with_event_completion" {
  command = plan
  variables {
    alarms = { create = true }
  }
  assert {
    condition     = length(output.alarms) == 11
    error_message = "A level-order DAG with poll.completion = event (the default) has the 11 alarms the pattern guide prices."
  }
}

run "alarm_count_level_with_polls" {
  command = plan
  variables {
    alarms = { create = true }
    poll   = { completion = "poll" }
  }
  assert {
    condition     = length(output.alarms) == 4
    error_message = "A level-order DAG with poll.completion = poll has 4 alarms."
  }
}
