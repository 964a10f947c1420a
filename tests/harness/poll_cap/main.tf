# Fixture of tests/harness/test_provider_poll_cap.py: SQS queues, whose creation the
# AWS provider confirms with 6 matching reads at least 5 s apart (25 s or more
# upstream), so the provider's poll cap shows in "Creation complete after".

provider "aws" {
  region = "us-east-1"
}

resource "aws_sqs_queue" "this" {
  for_each = var.queues

  name                    = "${var.name_prefix}-${each.key}"
  sqs_managed_sse_enabled = true
}
