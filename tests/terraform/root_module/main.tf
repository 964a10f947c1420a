# Test fixture: the root module once per case the test passes (var.cases), each with
# its own pattern settings, to check its switches and validations with one
# `terraform plan` (nothing is applied).

provider "aws" {
  region = "us-east-1"
}

module "sfn_patterns" {
  source   = "../../.."
  for_each = var.cases

  # A setting a case leaves out gets the root module's own default.
  name_prefix                       = try(each.value.name_prefix, "sfnp-root-test")
  tags                              = try(each.value.tags, {})
  kms_key_arn                       = try(each.value.kms_key_arn, null)
  cloudwatch_logs_retention_in_days = try(each.value.cloudwatch_logs_retention_in_days, 30)
  python_executable                 = var.python_executable

  job_poller    = try(each.value.job_poller, {})
  sqs_throttle  = try(each.value.sqs_throttle, {})
  semaphore     = try(each.value.semaphore, {})
  dag_aggregate = try(each.value.dag_aggregate, {})
  status_table  = try(each.value.status_table, {})
}
