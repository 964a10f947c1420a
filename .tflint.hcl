# tflint configuration (`make check` runs `tflint --recursive` from the repository root).
#
# Only the terraform ruleset is enabled: it is bundled in the tflint binary, so no
# plugin download is needed. The aws ruleset (tflint-ruleset-aws: invalid instance
# types, deprecated runtimes, ...) is a plugin tflint installs from GitHub releases,
# which the machines this project is built on cannot reach; enable it where they can:
#
#   plugin "aws" {
#     enabled = true
#     version = "0.40.0"
#     source  = "github.com/terraform-linters/tflint-ruleset-aws"
#   }
config {
  # Module calls are inspected with the values passed to them (local sources only).
  call_module_type = "local"
}

# "recommended" plus the stricter naming, documentation and typing rules the
# modules already follow (terraform-aws-modules style).
plugin "terraform" {
  enabled = true
  preset  = "all"
}

# The root module declares aws and local although only its child modules use them:
# the constraints a caller must meet are then visible where the caller looks.
rule "terraform_unused_required_providers" {
  enabled = false
}
