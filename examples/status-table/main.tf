# status-table example: the task table, and a worker role that may use it and
# nothing else (the module's read-write policy output, attached inline).

provider "aws" {
  region = var.region
}

# The service principal as the partition writes it (aws-cn and aws-us-gov included).
data "aws_service_principal" "lambda" {
  service_name = "lambda"
}

# --8<-- [start:usage]
module "status_table" {
  source = "../../modules/status-table"

  alarms           = var.alarms
  create_dashboard = var.create_dashboard
  kms_key_arn      = var.kms_key_arn

  name = "${var.name_prefix}-tasks"
  tags = var.tags
}
# --8<-- [end:usage]

data "aws_iam_policy_document" "worker_assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = [data.aws_service_principal.lambda.name]
    }
  }
}

resource "aws_iam_role" "worker" {
  name               = "${var.name_prefix}-worker"
  assume_role_policy = data.aws_iam_policy_document.worker_assume.json
  tags               = var.tags
}

resource "aws_iam_role_policy" "worker" {
  name   = "${var.name_prefix}-worker-status-table"
  role   = aws_iam_role.worker.id
  policy = module.status_table.iam_policy_read_write_json
}
