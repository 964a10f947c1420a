# dag-aggregate: SQL files -> dependency DAG -> one Map state per stage, rendered
# at plan time by the Python planner (cli/sfn_patterns_cli/dag_aggregate, run by
# planner.py, which first checks python_executable has its dependencies) from
# the Jinja templates in templates/dag-aggregate. ONE planner call per plan, for
# every strategy (`planner.py module-data`): it reads the SQL once (unchanged files
# come from its parse cache) and prints the plan and every definition the strategy
# needs. A cycle, invalid SQL, a table produced twice or a read that is neither a
# task nor a declared external table fails the plan with the planner's message.

data "aws_partition" "current" {}
data "aws_region" "current" {}
data "aws_caller_identity" "current" {}

# The service principal as the partition writes it (aws-cn and aws-us-gov included).
data "aws_service_principal" "events" {
  service_name = "events"
}

locals {
  partition  = data.aws_partition.current.partition
  region     = data.aws_region.current.region
  account_id = data.aws_caller_identity.current.account_id

  # strategy = "dependency" is provisioned by dependency.tf instead of the one state
  # machine below.
  dependency = var.strategy == "dependency"

  # Any python3 (3.9+) with the planner's dependencies runs it from this checkout;
  # without them the plan fails with one line naming the pip command that fixes it.
  planner = "${path.module}/planner.py"
  target_args = concat(
    ["--database", var.redshift.database],
    var.redshift.cluster_identifier != null ? ["--cluster-identifier", var.redshift.cluster_identifier] : [],
    var.redshift.db_user != null ? ["--db-user", var.redshift.db_user] : [],
    var.redshift.workgroup_name != null ? ["--workgroup-name", var.redshift.workgroup_name] : [],
    var.redshift.secret_arn != null ? ["--secret-arn", var.redshift.secret_arn] : [],
  )

  # How tasks wait for their statements (templates/job-poller): the statement's
  # status-change event with a fallback describe (completion.tf), or polls.
  event_completion        = var.poll.completion == "event"
  completion_function_arn = "arn:${local.partition}:lambda:${local.region}:${local.account_id}:function:${var.name}-completion"
  poll_args = concat(
    [
      "--default-wait", tostring(var.poll.initial_wait_seconds),
      "--poll-interval", tostring(var.poll.poll_interval_seconds),
      "--default-timeout", tostring(var.poll.timeout_seconds),
      "--completion", var.poll.completion,
      "--fallback-seconds", tostring(var.poll.fallback_seconds),
      "--partition", local.partition,
    ],
    local.event_completion ? ["--completion-function-arn", local.completion_function_arn] : [],
  )
  planner_args = concat(
    [local.planner, "module-data",
      "--sql-dir", var.sql_dir, "--schema", var.sql_schema,
      "--strategy", var.strategy, "--max-concurrency", tostring(var.max_concurrency),
    "--search-path", join(",", var.search_path)],
    flatten([for pattern in var.external_tables : ["--external", pattern]]),
    var.parse_cache_dir == null ? [] : ["--cache-dir", var.parse_cache_dir],
    local.poll_args,
    local.target_args,
    local.dependency ? ["--task-done-arn", local.runtime_function_arn] : [],
    local.dependency && var.task_execution_timeout_seconds != null ? ["--task-timeout", tostring(var.task_execution_timeout_seconds)] : [],
  )

  # {plan, definition (level strategies), dependency {sha256, document}, task_definition}
  planned    = var.create ? jsondecode(data.local_command.planner[0].stdout) : null
  plan       = var.create ? local.planned.plan : null
  definition = var.create && !local.dependency ? local.planned.definition : null

  cluster_arn = var.redshift.cluster_identifier == null ? null : "arn:${local.partition}:redshift:${local.region}:${local.account_id}:cluster:${var.redshift.cluster_identifier}"
}

locals {
  # What a state machine that runs the SQL may do on the target (level strategies'
  # state machine, or the dependency strategy's task state machine).
  redshift_policy_statements = concat(
    [
      {
        sid       = "RunStatementsOnTheTarget"
        actions   = ["redshift-data:ExecuteStatement", "redshift-data:BatchExecuteStatement"]
        resources = compact([local.cluster_arn, var.redshift.workgroup_arn])
      },
      # These Data API actions have no resource-level permissions; the owner
      # condition limits them to statements this role started.
      {
        sid       = "FollowOwnStatements"
        actions   = ["redshift-data:DescribeStatement", "redshift-data:CancelStatement"]
        resources = ["*"]
        conditions = [{
          test     = "StringEquals"
          variable = "redshift-data:statement-owner-iam-userid"
          values   = ["$${aws:userid}"]
        }]
      },
    ],
    var.redshift.db_user == null ? [] : [{
      sid     = "TemporaryClusterCredentials"
      actions = ["redshift:GetClusterCredentials"]
      resources = [
        "arn:${local.partition}:redshift:${local.region}:${local.account_id}:dbuser:${var.redshift.cluster_identifier}/${var.redshift.db_user}",
        "arn:${local.partition}:redshift:${local.region}:${local.account_id}:dbname:${var.redshift.cluster_identifier}/${var.redshift.database}",
      ]
    }],
    var.redshift.workgroup_name != null && var.redshift.secret_arn == null ? [{
      sid       = "TemporaryServerlessCredentials"
      actions   = ["redshift-serverless:GetCredentials"]
      resources = [var.redshift.workgroup_arn]
    }] : [],
    var.redshift.secret_arn == null ? [] : [{
      sid       = "ReadDatabaseSecret"
      actions   = ["secretsmanager:GetSecretValue"]
      resources = [var.redshift.secret_arn]
    }],
    # A secret under a customer managed key: Secrets Manager decrypts it as the caller of
    # GetSecretValue, which therefore needs kms:Decrypt on the key, through Secrets
    # Manager only (AWS's "Secret encryption and decryption in AWS Secrets Manager").
    var.redshift.secret_kms_key_arn == null ? [] : [{
      sid       = "DecryptDatabaseSecret"
      actions   = ["kms:Decrypt"]
      resources = [var.redshift.secret_kms_key_arn]
      conditions = [{
        test     = "StringEquals"
        variable = "kms:ViaService"
        values   = ["secretsmanager.${split(":", var.redshift.secret_kms_key_arn)[3]}.${data.aws_partition.current.dns_suffix}"]
      }]
    }],
  )

  # The level strategies' state machine: run the SQL, park tasks on completion events.
  state_machine_policy_statements = concat(local.redshift_policy_statements, module.completion.park_policy_statements)
}

data "local_command" "planner" {
  count = var.create ? 1 : 0

  command   = var.python_executable
  arguments = local.planner_args
}

module "state_machine" {
  source = "../state-machine"

  create     = var.create && !local.dependency
  name       = var.name
  definition = coalesce(local.definition, "{}")

  policy_statements = local.state_machine_policy_statements

  logging_level                     = var.logging_level
  logging_include_execution_data    = var.logging_include_execution_data
  cloudwatch_logs_retention_in_days = var.cloudwatch_logs_retention_in_days
  kms_key_arn                       = var.kms_key_arn
  tags                              = var.tags

  role_path                 = var.role_path
  role_permissions_boundary = var.role_permissions_boundary
}
