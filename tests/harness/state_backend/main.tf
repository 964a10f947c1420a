# A configuration with no cloud resource, for the harness's state backend tests.
resource "terraform_data" "this" {
  for_each = toset(var.names)
  input    = each.key
}
