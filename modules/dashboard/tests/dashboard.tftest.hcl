# terraform test (plan only, mock providers): the body's widgets, the create switch and
# the validations. Run: make test (tests/terraform/test_native.py).

mock_provider "aws" {
  mock_data "aws_region" {
    defaults = { region = "eu-west-1" }
  }
}

variables {
  name           = "orders"
  state_machines = { flow = "arn:aws:states:eu-west-1:123456789012:stateMachine:orders-flow" }
  functions      = ["orders-worker"]
  alarm_arns     = ["arn:aws:cloudwatch:eu-west-1:123456789012:alarm:orders-worker-errors"]
  pattern_metrics = {
    dimensions = { Module = "orders", Pattern = "semaphore" }
    metrics    = [{ name = "SlotsHeld", stat = "Maximum" }]
  }
}

run "one_panel_per_kind_and_an_alarm_widget" {
  command = plan

  assert {
    condition     = length(aws_cloudwatch_dashboard.this) == 1 && output.dashboard_body == aws_cloudwatch_dashboard.this[0].dashboard_body
    error_message = "create = true makes the dashboard with the body the output shows."
  }
  assert {
    condition = [for w in jsondecode(output.dashboard_body).widgets : w.properties.title] == [
      "Executions started, succeeded, failed", "Execution time (ms)", "Pattern metrics",
      "Lambda errors and duration", "Alarms of orders",
    ]
    error_message = "Panels for what was given (none for queues or tables), then the alarm widget."
  }
  assert {
    condition     = jsondecode(output.dashboard_body).widgets[2].properties.metrics[0] == ["sfn-patterns", "SlotsHeld", "Module", "orders", "Pattern", "semaphore", { stat = "Maximum", label = "SlotsHeld", yAxis = "left" }]
    error_message = "A pattern metric row: namespace, name, the dimension pairs, then its options."
  }
  assert {
    condition     = jsondecode(output.dashboard_body).widgets[4].properties.alarms == ["arn:aws:cloudwatch:eu-west-1:123456789012:alarm:orders-worker-errors"] && jsondecode(output.dashboard_body).widgets[4].y == 12
    error_message = "The alarm widget lists the alarms on a row below the two rows of graphs (y = 12)."
  }
  assert {
    condition     = alltrue([for w in slice(jsondecode(output.dashboard_body).widgets, 0, 4) : w.properties.region == "eu-west-1" && w.properties.period == 60])
    error_message = "Every graph has the region and the period."
  }
}

run "create_false_makes_nothing" {
  command = plan

  variables {
    create = false
  }

  assert {
    condition     = length(aws_cloudwatch_dashboard.this) == 0 && output.dashboard_name == null
    error_message = "create = false makes no dashboard."
  }
}

run "rejects_a_name_cloudwatch_does_not_take" {
  command = plan

  variables {
    name = "orders dashboard"
  }

  expect_failures = [var.name]
}
