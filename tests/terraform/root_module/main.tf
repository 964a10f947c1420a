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

# What a caller's own root does on its first plan: the key, the target and the holder
# it hands to the patterns are created in the same apply, so every one of those values
# is unknown at plan time (terraform_data's output stands in for them). The plan must
# still know every count and for_each.
data "aws_partition" "current" {}
data "aws_region" "current" {}
data "aws_caller_identity" "current" {}

locals {
  arn_prefix = "arn:${data.aws_partition.current.partition}"
  in_account = "${data.aws_region.current.region}:${data.aws_caller_identity.current.account_id}"
}

resource "terraform_data" "same_apply" {
  count = var.same_apply ? 1 : 0

  input = {
    key       = "${local.arn_prefix}:kms:${local.in_account}:key/0f1e2d3c-4b5a-4978-8a9b-0c1d2e3f4a5b"
    target    = "${local.arn_prefix}:states:${local.in_account}:stateMachine:sfnp-root-same-target"
    holder    = "${local.arn_prefix}:states:${local.in_account}:stateMachine:sfnp-root-same-holder"
    workgroup = "${local.arn_prefix}:redshift-serverless:${local.in_account}:workgroup/same-apply"
  }
}

module "same_apply" {
  source = "../../.."
  count  = var.same_apply ? 1 : 0

  name_prefix       = "sfnp-root-same"
  kms_key_arn       = terraform_data.same_apply[0].output.key
  python_executable = var.python_executable

  job_poller = { create = true }
  sqs_throttle = {
    create                   = true
    target_state_machine_arn = terraform_data.same_apply[0].output.target
  }
  semaphore = {
    create                    = true
    create_wrapper            = true
    target_state_machine_arn  = terraform_data.same_apply[0].output.target
    target_kms_key_arn        = terraform_data.same_apply[0].output.key
    holder_state_machine_arns = [terraform_data.same_apply[0].output.holder]
  }
  dag_aggregate = {
    create  = true
    sql_dir = "${path.module}/../../../examples/dag-aggregate/sql"
    redshift = {
      database       = "dev"
      workgroup_name = "sfnp-local"
      workgroup_arn  = terraform_data.same_apply[0].output.workgroup
    }
  }
  status_table = { create = true }
}
