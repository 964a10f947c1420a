# Test-only configuration: the event-completion building block as modules/dag-aggregate
# configures it (statement status-change events of "sfn-dag " statements), for the
# state machines tests/dag_aggregate/test_history_on_localstack.py renders and creates
# itself, so each scenario needs no Terraform apply of its own.

provider "aws" {
  region = "us-east-1"
}

module "completion" {
  source = "../../../modules/event-completion"

  name = var.name_prefix
  event_pattern = jsonencode({
    source        = ["aws.redshift-data"]
    "detail-type" = ["Redshift Data Statement Status Change"]
    detail        = { statementName = [{ prefix = "sfn-dag " }] }
  })
  job_id_path                = "$.detail.statementId"
  status_path                = "$.detail.state"
  terminal_statuses          = ["FINISHED", "FAILED", "ABORTED"]
  waiting_state_machine_arns = var.state_machine_arns
}
