# Metadata store: start times (start-time strategy) and the sample job's status.
# Encrypted at rest, private, and expiring, because it only matters while a job runs.

resource "aws_s3_bucket" "metadata" {
  #checkov:skip=CKV_AWS_18:The bucket holds short-lived job status and start-time objects only; access logging would need a second bucket per poller.
  #checkov:skip=CKV_AWS_21:Objects are status records rewritten on every poll and expired after s3_expiration_days; versions would only keep stale statuses.
  #checkov:skip=CKV_AWS_144:Ephemeral, re-creatable poll state: cross-region replication adds cost and protects nothing a new run would not rewrite.
  #checkov:skip=CKV2_AWS_62:Nothing consumes object events: the poller reads the status object itself.
  #checkov:skip=CKV_AWS_145:Encrypted with SSE-KMS and the caller's key when kms_key_arn is set, with SSE-S3 (AES256) when it is null.
  count = local.create_s3 ? 1 : 0

  bucket        = local.bucket_name
  force_destroy = var.s3_force_destroy
  tags          = var.tags
}

resource "aws_s3_bucket_public_access_block" "metadata" {
  count = local.create_s3 ? 1 : 0

  bucket                  = aws_s3_bucket.metadata[0].id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_server_side_encryption_configuration" "metadata" {
  count = local.create_s3 ? 1 : 0

  bucket = aws_s3_bucket.metadata[0].id
  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm     = var.kms_key_arn == null ? "AES256" : "aws:kms"
      kms_master_key_id = var.kms_key_arn
    }
    bucket_key_enabled = var.kms_key_arn != null
  }
}

resource "aws_s3_bucket_lifecycle_configuration" "metadata" {
  count = local.create_s3 ? 1 : 0

  bucket = aws_s3_bucket.metadata[0].id
  rule {
    id     = "expire-job-metadata"
    status = "Enabled"
    filter {
      prefix = "job-poller/"
    }
    expiration {
      days = var.s3_expiration_days
    }
  }
  # The store never uploads in parts; a stray multipart upload should not linger.
  rule {
    id     = "abort-incomplete-uploads"
    status = "Enabled"
    filter {}
    abort_incomplete_multipart_upload {
      days_after_initiation = 1
    }
  }
}

resource "aws_dynamodb_table" "metadata" {
  #checkov:skip=CKV_AWS_28:Start times and statuses expire by TTL once a job ends; a restore would bring back nothing a running poller needs.
  count = local.create_ddb ? 1 : 0

  name         = local.table_name
  billing_mode = "PAY_PER_REQUEST"
  hash_key     = "pk"
  range_key    = "sk"

  attribute {
    name = "pk"
    type = "S"
  }
  attribute {
    name = "sk"
    type = "S"
  }

  ttl {
    attribute_name = "expires_at"
    enabled        = true
  }

  server_side_encryption {
    enabled     = true
    kms_key_arn = var.kms_key_arn
  }

  tags = var.tags
}
