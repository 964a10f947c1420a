# poll_loop_embedder_policy_json: a machine that embeds the loop gets the statements the
# module's own machine gets. Planned with mock providers (the document's JSON is mocked;
# the statements it is built from are checked). Run by tests/terraform/test_native.py.

mock_provider "aws" {
  mock_data "aws_caller_identity" {
    defaults = { account_id = "123456789012" }
  }
  mock_data "aws_partition" {
    defaults = { partition = "aws-us-gov" }
  }
  mock_data "aws_region" {
    defaults = { region = "us-gov-west-1" }
  }
  mock_data "aws_iam_policy_document" {
    defaults = { json = "{\"Version\":\"2012-10-17\",\"Statement\":[]}" }
  }
}

mock_provider "local" {
  mock_data "local_command" {
    defaults = { stdout = "{\"base64sha256\": \"bW9jaw==\"}" }
  }
}

variables {
  name = "demo"
}

run "the_lambda_loop_needs_its_two_functions" {
  command = plan

  assert {
    condition     = [for s in data.aws_iam_policy_document.embedder[0].statement : s.sid] == ["InvokeJobLambdas"]
    error_message = "The Lambda variant's loop invokes Run Job and Get Job Status, nothing else."
  }
  assert {
    condition = toset(data.aws_iam_policy_document.embedder[0].statement[0].resources) == toset([
      "arn:aws-us-gov:lambda:us-gov-west-1:123456789012:function:demo-run-job",
      "arn:aws-us-gov:lambda:us-gov-west-1:123456789012:function:demo-run-job:*",
      "arn:aws-us-gov:lambda:us-gov-west-1:123456789012:function:demo-get-job-status",
      "arn:aws-us-gov:lambda:us-gov-west-1:123456789012:function:demo-get-job-status:*",
    ])
    error_message = "The two functions of this module, in the partition, with their versions."
  }
}

run "no_policy_without_the_module" {
  command = plan
  variables {
    create = false
  }
  assert {
    condition     = output.poll_loop_embedder_policy_json == null
    error_message = "create = false: no document."
  }
}
