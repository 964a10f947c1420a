# A platform team's root module: every sfn-patterns module by git reference and tag,
# with the team's own Lambda, target state machines (one in another account) and SQL.

provider "aws" {
  region = "us-east-1"
}

# The analytics account, where the throttled workflow lives (in real life: an
# assume_role block; the test harness points the alias at a second LocalStack account).
provider "aws" {
  alias  = "analytics"
  region = "us-east-1"
}

data "aws_partition" "current" {}
data "aws_caller_identity" "current" {}

# The service principal as the partition writes it (aws-cn and aws-us-gov included).
data "aws_service_principal" "states" {
  service_name = "states"
}

data "aws_caller_identity" "analytics" {
  provider = aws.analytics
}

locals {
  partition = data.aws_partition.current.partition
}

# --8<-- [start:role-rules]
# The account's rule for roles: under /workloads/, with the platform's boundary. Every
# module below passes both to each role it creates.
resource "aws_iam_policy" "workload_boundary" {
  # A boundary only caps what the roles' own (resource-scoped) policies grant: this one
  # allows any of it but changes to identities.
  #checkov:skip=CKV_AWS_62:A permissions boundary, not a grant: the roles' inline policies grant, per resource.
  #checkov:skip=CKV_AWS_63:A permissions boundary, not a grant: the roles' inline policies grant, per resource.
  #checkov:skip=CKV_AWS_286:A permissions boundary, not a grant; it denies every IAM action.
  #checkov:skip=CKV_AWS_287:A permissions boundary, not a grant: the roles' inline policies grant, per resource.
  #checkov:skip=CKV_AWS_288:A permissions boundary, not a grant: the roles' inline policies grant, per resource.
  #checkov:skip=CKV_AWS_289:A permissions boundary, not a grant; it denies every IAM action.
  #checkov:skip=CKV_AWS_290:A permissions boundary, not a grant: the roles' inline policies grant, per resource.
  #checkov:skip=CKV_AWS_355:A permissions boundary, not a grant: the roles' inline policies grant, per resource.
  #checkov:skip=CKV2_AWS_40:A permissions boundary, not a grant; it denies every IAM action.
  name = "${var.name_prefix}-workload-boundary"
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      { Sid = "AtMostWhatTheRolesGrant", Effect = "Allow", Action = "*", Resource = "*" },
      { Sid = "NoIdentityChanges", Effect = "Deny", Action = ["iam:*", "organizations:*"], Resource = "*" },
    ]
  })
}

locals {
  role_rules = { path = "/workloads/", boundary = aws_iam_policy.workload_boundary.arn }
}
# --8<-- [end:role-rules]

# --- job-poller, with our own adapter Lambda -------------------------------------------

module "export_adapter" {
  source = "git::https://example.com/sfn-patterns.git//modules/lambda-function?ref=v1.0.0"
  # checkov:skip=CKV_TF_1:A team pins the release tag the README documents; the test serves it from a local clone.

  function_name     = "${var.name_prefix}-export-adapter"
  source_path       = [{ path = "${path.module}/adapter", patterns = ["*.py"] }]
  handler           = "export_job.handler"
  timeout           = 10
  python_executable = var.python_executable

  role_path                 = local.role_rules.path
  role_permissions_boundary = local.role_rules.boundary
}

module "export_poller" {
  source = "git::https://example.com/sfn-patterns.git//modules/job-poller?ref=v1.0.0"
  # checkov:skip=CKV_TF_1:A team pins the release tag the README documents; the test serves it from a local clone.

  name                  = "${var.name_prefix}-export"
  poller_name           = "export"
  initial_wait_seconds  = 1
  poll_interval_seconds = 1
  timeout_seconds       = 60
  timeout_strategy      = "wait-count"
  job_adapter = {
    start  = module.export_adapter.function_arn_static
    status = module.export_adapter.function_arn_static
  }
  python_executable = var.python_executable

  role_path                 = local.role_rules.path
  role_permissions_boundary = local.role_rules.boundary
}

# --- semaphore around our own load workflow --------------------------------------------

data "aws_iam_policy_document" "states_trust" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = [data.aws_service_principal.states.name]
    }
  }
}

resource "aws_iam_role" "load" {
  name               = "${var.name_prefix}-load"
  assume_role_policy = data.aws_iam_policy_document.states_trust.json
}

resource "aws_sfn_state_machine" "load" {
  #checkov:skip=CKV_AWS_284:Test fixture: a stand-in workflow, no X-Ray.
  #checkov:skip=CKV_AWS_285:Test fixture: a stand-in workflow, no execution logs.
  name     = "${var.name_prefix}-load"
  role_arn = aws_iam_role.load.arn
  definition = jsonencode({
    StartAt = "Load"
    States  = { Load = { Type = "Wait", Seconds = 1, End = true } }
  })
}

module "warehouse_slot" {
  source = "git::https://example.com/sfn-patterns.git//modules/semaphore?ref=v1.0.0"
  # checkov:skip=CKV_TF_1:A team pins the release tag the README documents; the test serves it from a local clone.

  name                     = "${var.name_prefix}-wh"
  max_concurrency          = 1
  create_wrapper           = true
  target_state_machine_arn = aws_sfn_state_machine.load.arn
  python_executable        = var.python_executable

  role_path                 = local.role_rules.path
  role_permissions_boundary = local.role_rules.boundary
}

# --- sqs-throttle in front of a workflow of the analytics account ----------------------

resource "aws_iam_role" "report_runner" {
  provider = aws.analytics

  name               = "${var.name_prefix}-report-runner"
  assume_role_policy = data.aws_iam_policy_document.states_trust.json
}

resource "aws_sfn_state_machine" "report" {
  #checkov:skip=CKV_AWS_284:Test fixture: a stand-in workflow, no X-Ray.
  #checkov:skip=CKV_AWS_285:Test fixture: a stand-in workflow, no execution logs.
  provider = aws.analytics

  name     = "${var.name_prefix}-report"
  role_arn = aws_iam_role.report_runner.arn
  definition = jsonencode({
    StartAt = "Report"
    States  = { Report = { Type = "Wait", Seconds = 1, End = true } }
  })
}

# --8<-- [start:cross-account-throttle]
# The role the starter assumes in the analytics account: trust and permissions come
# from the module's outputs.
resource "aws_iam_role" "throttle_target" {
  provider = aws.analytics

  name               = "${var.name_prefix}-throttle-target"
  assume_role_policy = module.report_throttle.target_role_trust_policy_json
}

resource "aws_iam_role_policy" "throttle_target" {
  provider = aws.analytics

  name   = "start-reports"
  role   = aws_iam_role.throttle_target.id
  policy = module.report_throttle.target_role_policy_json
}

module "report_throttle" {
  source = "git::https://example.com/sfn-patterns.git//modules/sqs-throttle?ref=v1.0.0"
  # checkov:skip=CKV_TF_1:A team pins the release tag the README documents; the test serves it from a local clone.

  name                     = "${var.name_prefix}-reports"
  target_state_machine_arn = "arn:${local.partition}:states:us-east-1:${data.aws_caller_identity.analytics.account_id}:stateMachine:${var.name_prefix}-report"
  target_role_arn          = "arn:${local.partition}:iam::${data.aws_caller_identity.analytics.account_id}:role/${var.name_prefix}-throttle-target"
  max_concurrency          = 2
  schedule_expression      = "rate(1 day)"
  max_seconds_per_run      = 10
  recheck_seconds          = 1
  python_executable        = var.python_executable

  role_path                 = local.role_rules.path
  role_permissions_boundary = local.role_rules.boundary
}
# --8<-- [end:cross-account-throttle]

# --- dag-aggregate on our own SQL -------------------------------------------------------

module "aggregates" {
  source = "git::https://example.com/sfn-patterns.git//modules/dag-aggregate?ref=v1.0.0"
  # checkov:skip=CKV_TF_1:A team pins the release tag the README documents; the test serves it from a local clone.

  name            = "${var.name_prefix}-aggregates"
  sql_dir         = "${path.module}/sql"
  external_tables = ["raw.*"] # loaded by the ingestion team, not by a task
  strategy        = "simple-level"
  max_concurrency = 2
  redshift = {
    database       = "dev"
    workgroup_name = var.redshift_workgroup_name
    workgroup_arn  = "arn:${local.partition}:redshift-serverless:us-east-1:${data.aws_caller_identity.current.account_id}:workgroup/${var.redshift_workgroup_id}"
  }
  poll = {
    initial_wait_seconds  = 1
    poll_interval_seconds = 1
    timeout_seconds       = 120
  }
  python_executable = var.python_executable

  role_path                 = local.role_rules.path
  role_permissions_boundary = local.role_rules.boundary
}

# --- status-table for our order tasks ---------------------------------------------------

# --8<-- [start:git-source]
module "order_tasks" {
  source = "git::https://example.com/sfn-patterns.git//modules/status-table?ref=v1.0.0"
  # checkov:skip=CKV_TF_1:A team pins the release tag the README documents; the test serves it from a local clone.

  name = "${var.name_prefix}-order-tasks"
}
# --8<-- [end:git-source]
