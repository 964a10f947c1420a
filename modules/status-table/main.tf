# The status-table: one DynamoDB table serving every use case of the task tracker
# in lambda_src/sfn_patterns/status_table. Its layout must equal the library's
# schema.py (terraform_schema()); tests/status_table checks both stay in step.

data "aws_partition" "current" {
  count = var.create ? 1 : 0
}

data "aws_region" "current" {
  count = var.create ? 1 : 0
}

data "aws_caller_identity" "current" {
  count = var.create ? 1 : 0
}

locals {
  hash_key      = "pk"
  index_name    = "status-update_time-index"
  index_hash    = "status_key"
  index_range   = "update_time"
  ttl_attribute = "expire_at"
  provisioned   = var.billing_mode == "PROVISIONED"
}

resource "aws_dynamodb_table" "this" {
  #checkov:skip=CKV_AWS_28:Point-in-time recovery is on by default (point_in_time_recovery_enabled); checkov cannot resolve a value passed through the root module.
  #checkov:skip=CKV2_AWS_16:The table is on-demand by default; PROVISIONED callers size it with provisioned_capacity or their own autoscaling.
  count = var.create ? 1 : 0

  name                        = var.name
  billing_mode                = var.billing_mode
  hash_key                    = local.hash_key
  read_capacity               = local.provisioned ? var.provisioned_capacity.read_capacity : null
  write_capacity              = local.provisioned ? var.provisioned_capacity.write_capacity : null
  deletion_protection_enabled = var.deletion_protection_enabled
  stream_enabled              = var.stream_enabled
  stream_view_type            = var.stream_enabled ? var.stream_view_type : null

  attribute {
    name = local.hash_key
    type = "S"
  }

  attribute {
    name = local.index_hash
    type = "S"
  }

  attribute {
    name = local.index_range
    type = "S"
  }

  # "All failed tasks of use case U since T" is one Query per shard on this index.
  global_secondary_index {
    name            = local.index_name
    projection_type = "ALL"
    read_capacity   = local.provisioned ? var.provisioned_capacity.index_read_capacity : null
    write_capacity  = local.provisioned ? var.provisioned_capacity.index_write_capacity : null

    # key_schema, not the deprecated hash_key/range_key (hashicorp/aws >= 6.37.0:
    # the first release without its perpetual diff and GSI-removal bugs).
    key_schema {
      attribute_name = local.index_hash
      key_type       = "HASH"
    }
    key_schema {
      attribute_name = local.index_range
      key_type       = "RANGE"
    }
  }

  ttl {
    attribute_name = local.ttl_attribute
    enabled        = var.ttl_enabled
  }

  point_in_time_recovery {
    enabled = var.point_in_time_recovery_enabled
  }

  server_side_encryption {
    enabled     = true
    kms_key_arn = var.kms_key_arn
  }

  tags = var.tags
}
