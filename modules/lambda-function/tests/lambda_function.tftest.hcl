# terraform test (plan only, mock providers): the three ways to bring code, the
# validations, the create switch, outputs and partition-aware ARNs.

mock_provider "aws" {
  mock_data "aws_partition" {
    defaults = { partition = "aws" }
  }
  mock_data "aws_region" {
    defaults = { region = "eu-west-1" }
  }
  mock_data "aws_caller_identity" {
    defaults = { account_id = "123456789012" }
  }
  mock_data "aws_iam_policy_document" {
    defaults = { json = "{}" }
  }
}

mock_provider "local" {
  mock_data "local_command" {
    defaults = { stdout = "{\"filename\": \"x.zip\", \"base64sha256\": \"c2hh\", \"sha256\": \"73\", \"size\": \"1\"}" }
  }
}

variables {
  function_name = "orders-worker"
  handler       = "app.handler"
  source_path   = [{ path = "src" }]
}

run "source_path_is_packaged_at_plan_time" {
  command = plan
  assert {
    condition     = aws_lambda_function.this[0].source_code_hash == "c2hh"
    error_message = "The zip's hash comes from the plan-time packager."
  }
  assert {
    condition     = endswith(aws_lambda_function.this[0].filename, "/orders-worker.zip")
    error_message = "Each function gets its own zip under build_dir."
  }
  assert {
    condition     = output.function_arn_static == "arn:aws:lambda:eu-west-1:123456789012:function:orders-worker"
    error_message = "The static ARN is known at plan time."
  }
  assert {
    condition     = one(one(data.aws_iam_policy_document.assume.statement).principals).identifiers == toset([data.aws_service_principal.lambda.name])
    error_message = "The role trusts data.aws_service_principal.lambda (a random value under this mock, so a literal principal fails)."
  }
}

run "a_prebuilt_zip_is_deployed_as_is" {
  command = plan
  variables {
    source_path            = []
    local_existing_package = "tests/lambda_function.tftest.hcl" # any file: its hash is what counts
  }
  assert {
    condition     = aws_lambda_function.this[0].source_code_hash == filebase64sha256("tests/lambda_function.tftest.hcl")
    error_message = "A local package's hash is the file's."
  }
  assert {
    condition     = length(data.local_command.package) == 0
    error_message = "Nothing is built when a package is given."
  }
}

run "an_s3_object_is_deployed_as_is" {
  command = plan
  variables {
    source_path         = []
    s3_existing_package = { bucket = "artifacts", key = "fn.zip", version_id = "3" }
  }
  assert {
    condition     = aws_lambda_function.this[0].s3_bucket == "artifacts" && aws_lambda_function.this[0].s3_object_version == "3"
    error_message = "The S3 object is passed through."
  }
}

run "exactly_one_code_source" {
  command = plan
  variables {
    s3_existing_package = { bucket = "artifacts", key = "fn.zip" }
  }
  expect_failures = [var.s3_existing_package]
}

run "no_code_source_is_refused" {
  command = plan
  variables {
    source_path = []
  }
  expect_failures = [var.s3_existing_package]
}

run "wildcard_actions_are_refused" {
  command = plan
  variables {
    policy_statements = [{ actions = ["dynamodb:*"], resources = ["*"] }]
  }
  expect_failures = [var.policy_statements]
}

run "requirements_must_be_pinned" {
  command = plan
  variables {
    pip_requirements = ["pynamodb>=6"]
  }
  expect_failures = [var.pip_requirements]
}

run "create_false_makes_nothing" {
  command = plan
  variables {
    create = false
  }
  assert {
    condition     = length(aws_lambda_function.this) == 0 && length(aws_iam_role.this) == 0 && length(data.local_command.package) == 0
    error_message = "create = false creates nothing and builds nothing."
  }
}

run "arns_follow_the_partition" {
  command = plan
  override_data {
    target = data.aws_partition.current
    values = { partition = "aws-us-gov" }
  }
  # As terraform-provider-aws computes it in aws-us-gov (service_principal_data_source.go).
  override_data {
    target = data.aws_service_principal.lambda
    values = { name = "lambda.amazonaws.com", suffix = "amazonaws.com" }
  }
  assert {
    condition     = startswith(output.function_arn_static, "arn:aws-us-gov:lambda:")
    error_message = "ARNs take the partition from data.aws_partition."
  }
  assert {
    condition     = one(one(data.aws_iam_policy_document.assume.statement).principals).identifiers == toset(["lambda.amazonaws.com"])
    error_message = "In aws-us-gov the role trusts lambda.amazonaws.com."
  }
}

run "rejects_a_kms_key_id_instead_of_an_arn" {
  command = plan
  variables {
    kms_key_arn = "1234abcd-12ab-34cd-56ef-1234567890ab"
  }
  expect_failures = [var.kms_key_arn]
}

run "rejects_an_alias_arn_as_kms_key_arn" {
  command = plan
  variables {
    kms_key_arn = "arn:aws-cn:kms:cn-north-1:123456789012:alias/data"
  }
  expect_failures = [var.kms_key_arn]
}

run "the_role_has_no_path_or_boundary_by_default" {
  command = plan

  assert {
    condition     = aws_iam_role.this[0].path == "/" && aws_iam_role.this[0].permissions_boundary == null
    error_message = "Without role_path and role_permissions_boundary the role is at / with no boundary."
  }
}

run "the_role_takes_a_path_and_a_permissions_boundary" {
  command = plan
  variables {
    role_path                 = "/platform/workloads/"
    role_permissions_boundary = "arn:aws:iam::123456789012:policy/workload-boundary"
  }

  assert {
    condition     = aws_iam_role.this[0].path == "/platform/workloads/" && aws_iam_role.this[0].permissions_boundary == "arn:aws:iam::123456789012:policy/workload-boundary"
    error_message = "The role is created under role_path with role_permissions_boundary."
  }
}

run "rejects_a_path_without_its_slashes" {
  command = plan
  variables {
    role_path = "platform"
  }
  expect_failures = [var.role_path]
}

run "rejects_a_boundary_that_is_not_a_managed_policy" {
  command = plan
  variables {
    role_permissions_boundary = "arn:aws:iam::123456789012:role/boundary"
  }
  expect_failures = [var.role_permissions_boundary]
}
