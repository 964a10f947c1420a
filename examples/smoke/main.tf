# Smoke example: one Lambda from lambda_src/ and a STANDARD state machine that
# calls it with the context object ("Payload.$": "$$"), so the function sees the execution it runs in.
# It proves the toolchain end to end: packaging, IAM, Lambda, Step Functions.

provider "aws" {
  region = var.region
}

locals {
  state_machine_name = "${var.name_prefix}-machine"
}

data "aws_partition" "current" {}

module "echo" {
  source = "../../modules/lambda-function"

  function_name = "${var.name_prefix}-echo"
  source_path   = [{ path = "${path.module}/../../lambda_src", patterns = ["sfn_patterns_samples/__init__.py", "sfn_patterns_samples/smoke/**"] }]
  handler       = "sfn_patterns_samples.smoke.handler.handler"
  timeout       = 10
  tags          = var.tags
}

module "state_machine" {
  source = "../../modules/state-machine"

  name = local.state_machine_name
  definition = templatefile("${path.module}/../../templates/smoke/definition.asl.json.tftpl", {
    function_arn = module.echo.function_arn
    partition    = data.aws_partition.current.partition
  })

  policy_statements = [{
    sid       = "InvokeEcho"
    actions   = ["lambda:InvokeFunction"]
    resources = [module.echo.function_arn_static, "${module.echo.function_arn_static}:*"]
  }]

  tags = var.tags
}
