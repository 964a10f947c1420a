#!/usr/bin/env bash
# Build the Terraform providers this project uses from their Go module source
# (through the Go module proxy) into a filesystem mirror, because the Terraform
# registry is unreachable on the machines this project is tested on.
#
# Idempotent: a provider whose binary is already in the mirror is never rebuilt.
# Usage: scripts/build-providers.sh MIRROR_DIR
set -euo pipefail

mirror=${1:?usage: build-providers.sh MIRROR_DIR}
log() { printf '  [providers] %s\n' "$*"; }

goos=$(go env GOOS); goarch=$(go env GOARCH)
mkdir -p "$mirror"
# One build at a time per mirror: a second bootstrap waits, then finds the binary cached.
exec 9>"$mirror/.build.lock"
if ! flock -n 9; then
  log "another build is running; waiting for it"
  flock 9
fi

# name  version-in-mirror  go-module  module-version  ldflags-version-symbol
# hashicorp/aws: main right after the 6.47.1 release (CHANGELOG head "6.48.0
#   (Unreleased)"); the Go module proxy serves no tagged v6 (the module path has
#   no /v6 suffix), and this pseudo-version is the one it serves.
# hashicorp/local: 2.9.0+; its local_command data source runs the DAG planner
#   at plan time (hashicorp/external is not served by the Go module proxy).
providers=(
  "aws 6.47.1 github.com/hashicorp/terraform-provider-aws v1.60.1-0.20260602190131-5f2286d6d836 github.com/hashicorp/terraform-provider-aws/version.ProviderVersion"
  "local 2.9.0 github.com/hashicorp/terraform-provider-local v1.4.1-0.20260806152022-9068a4b7aa37 main.version"
)

for spec in "${providers[@]}"; do
  read -r name version module modver symbol <<<"$spec"
  dest="$mirror/registry.terraform.io/hashicorp/$name/$version/${goos}_${goarch}"
  bin="$dest/terraform-provider-${name}_v${version}_x5"
  if [[ -x "$bin" ]]; then
    log "hashicorp/$name $version: cached ($bin)"
    continue
  fi
  log "hashicorp/$name $version: downloading $module@$modver"
  src=$(go mod download -json "$module@$modver" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')
  log "hashicorp/$name $version: building (the AWS provider takes tens of minutes on 2 cores; it is built once)"
  mkdir -p "$dest"
  start=$(date +%s)
  tmp="$bin.tmp.$$"
  # /usr/bin/time -v reports the peak memory of the build for the README.
  ( cd "$src" && GOFLAGS=-mod=readonly CGO_ENABLED=0 /usr/bin/time -v -o "$dest/build-stats.txt" \
      go build -trimpath -ldflags "-s -w -X $symbol=$version" -o "$tmp" . )
  mv "$tmp" "$bin"
  log "hashicorp/$name $version: built in $(( $(date +%s) - start )) s, peak RSS $(awk -F': ' '/Maximum resident/ {printf "%d MiB", $2/1024}' "$dest/build-stats.txt")"
done
