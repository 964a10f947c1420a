# Test fixture: the root module with whatever pattern settings the test passes,
# to check its switches and validations with `terraform plan` (nothing is applied).

provider "aws" {
  region = "us-east-1"
}

module "sfn_patterns" {
  source = "../../.."

  name_prefix                       = var.name_prefix
  tags                              = var.tags
  kms_key_arn                       = var.kms_key_arn
  cloudwatch_logs_retention_in_days = var.cloudwatch_logs_retention_in_days
  python_executable                 = var.python_executable

  job_poller    = var.job_poller
  sqs_throttle  = var.sqs_throttle
  semaphore     = var.semaphore
  dag_aggregate = var.dag_aggregate
  status_table  = var.status_table
}
