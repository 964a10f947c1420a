# The root module: every pattern behind one switch each and one set of shared
# inputs (name prefix, tags, KMS key, log retention). Patterns are added here as
# their modules land.

module "status_table" {
  source = "./modules/status-table"

  create            = var.status_table_enabled
  table_name        = "${var.name_prefix}-tasks"
  table_kms_key_arn = var.kms_key_arn
  tags              = var.tags
}
