# Your own Terraform root against LocalStack: the provider block that docs/getting-started.md
# shows (included from here) and a module call by a path that keeps the repository's
# lambda_src/ and templates/ reachable. tests/terraform/test_validate.py validates it.

# --8<-- [start:provider]
provider "aws" {
  region                      = "us-east-1"
  access_key                  = "test" # LocalStack's account 000000000000
  secret_key                  = "test"
  skip_credentials_validation = true
  skip_metadata_api_check     = true
  skip_requesting_account_id  = true
  s3_use_path_style           = true

  # Every service the modules call, at LocalStack's one endpoint. Or leave the block
  # out and export AWS_ENDPOINT_URL=http://localhost:4566 (what the test harness does).
  endpoints {
    cloudwatch = "http://localhost:4566"
    dynamodb   = "http://localhost:4566"
    events     = "http://localhost:4566"
    iam        = "http://localhost:4566"
    kms        = "http://localhost:4566"
    lambda     = "http://localhost:4566"
    logs       = "http://localhost:4566"
    s3         = "http://localhost:4566"
    sfn        = "http://localhost:4566"
    sqs        = "http://localhost:4566"
    sts        = "http://localhost:4566"
  }
}
# --8<-- [end:provider]

module "status_table" {
  # A relative path inside a checkout (or a git URL: the whole repository is fetched).
  source = "../../../modules/status-table"
  name   = "docs-localstack-root"
}
