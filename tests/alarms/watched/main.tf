# Fixture of tests/alarms/test_alarms_on_localstack.py: modules/alarms watching one
# resource of each kind the test creates (a state machine, a function, a table, a
# rule), on 10-s periods, notifying one SNS topic. The watched resources come in as
# names and ARNs, as a pattern module hands its own in.

provider "aws" {
  region = "us-east-1"
}

module "alarms" {
  source = "../../../modules/alarms"

  name           = var.name
  period_seconds = 10
  state_machines = { machine = var.state_machine_arn }
  functions = {
    function  = { name = var.function_name, timeout_seconds = var.function_timeout_seconds }
    throttled = { name = var.throttled_function_name, timeout_seconds = var.function_timeout_seconds }
  }
  tables        = { table = { name = var.table_name, operations = ["GetItem", "PutItem", "UpdateItem"] } }
  rules         = { rule = var.rule_name }
  alarm_actions = [var.topic_arn]
  ok_actions    = [var.topic_arn]
}
