#!/usr/bin/env bash
# Where `make demo` takes the Terraform providers from; prints one word:
#   mirror    the filesystem mirror already holds every provider (an earlier bootstrap
#             built them): offline, and the same binaries make test uses;
#   registry  the mirror is not built and registry.terraform.io answers: no Go build;
#   build     neither: build them from Go module source (scripts/build-providers.sh).
# Usage: scripts/provider-source.sh MIRROR_DIR
# SFNP_REGISTRY_URL overrides the registry probed (its /.well-known/terraform.json).
set -euo pipefail
if [[ "${1:-}" == -h || "${1:-}" == --help ]]; then
  sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
mirror=${1:?usage: provider-source.sh MIRROR_DIR}
registry=${SFNP_REGISTRY_URL:-https://registry.terraform.io}

# The providers and versions scripts/build-providers.sh puts in the mirror.
wanted=$(sed -n 's/^  "\([a-z]*\) \([0-9.]*\) .*/\1 \2/p' "$(dirname "$0")/build-providers.sh")
if [[ -z "$wanted" ]]; then
  echo "error: no provider list found in scripts/build-providers.sh" >&2
  exit 1
fi
built=1
while read -r name version; do
  found=$(ls "$mirror/registry.terraform.io/hashicorp/$name/$version"/*/"terraform-provider-${name}_v${version}_x5" 2>/dev/null | head -1 || true)
  [[ -n "$found" && -x "$found" ]] || built=0
done <<<"$wanted"
if ((built)); then
  echo mirror
elif python3 - "$registry/.well-known/terraform.json" <<'PY'
import json, sys, urllib.request
try:
    with urllib.request.urlopen(sys.argv[1], timeout=5) as answer:
        sys.exit(0 if "providers.v1" in json.load(answer) else 1)
except Exception:
    sys.exit(1)
PY
then
  echo registry
else
  echo build
fi
