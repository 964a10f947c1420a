#!/usr/bin/env bash
# Build the Terraform providers this project uses from their Go module source
# (through the Go module proxy) into a filesystem mirror, because the Terraform
# registry is unreachable on the machines this project is tested on.
#
# The AWS provider is built with only the service packages that this repository's
# Terraform uses (scripts/aws_provider_trim.py generates the list from the *.tf
# files; a type it cannot map, or SFN_PATTERNS_AWS_PROVIDER=full, builds all of it),
# plus an opt-in cap on its pauses between consistency checks that only the
# LocalStack harness turns on (SFN_PATTERNS_PROVIDER_MAX_POLL_DELAY; unset, the
# provider behaves as upstream's).
#
# Idempotent: a provider whose binary is already in the mirror, built for the same
# service list, is never rebuilt.
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

root=$(cd "$(dirname "$0")/.." && pwd)
for spec in "${providers[@]}"; do
  read -r name version module modver symbol <<<"$spec"
  dest="$mirror/registry.terraform.io/hashicorp/$name/$version/${goos}_${goarch}"
  bin="$dest/terraform-provider-${name}_v${version}_x5"
  src=""
  want="full"
  if [[ "$name" == aws ]]; then
    # The service list depends on the provider source (type -> package index); the
    # cache key also names the poll-cap patch, so a new patch rebuilds.
    full_flag=()
    [[ "${SFN_PATTERNS_AWS_PROVIDER:-trimmed}" == full ]] && full_flag=(--full)
    src=$(go mod download -json "$module@$modver" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')
    want=$(python3 "$root/scripts/aws_provider_trim.py" plan "${full_flag[@]}" --digest "$root" "$src")
  fi
  if [[ -x "$bin" && "$(cat "$dest/.services" 2>/dev/null || echo full)" == "$want" ]]; then
    log "hashicorp/$name $version: cached ($bin)"
    continue
  fi
  log "hashicorp/$name $version: downloading $module@$modver"
  [[ -n "$src" ]] || src=$(go mod download -json "$module@$modver" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')
  build_dir="$src"
  if [[ "$name" == aws ]]; then
    build_dir="$(dirname "$mirror")/build/aws-src-$$"
    [[ ${#full_flag[@]} -eq 0 ]] || log "hashicorp/aws $version: full build (SFN_PATTERNS_AWS_PROVIDER=full): about 30 minutes and 9 GiB on 2 cores"
    log "hashicorp/aws $version: $(python3 "$root/scripts/aws_provider_trim.py" apply "${full_flag[@]}" "$root" "$src" "$build_dir")"
  fi
  log "hashicorp/$name $version: building"
  mkdir -p "$dest"
  start=$(date +%s)
  tmp="$bin.tmp.$$"
  # /usr/bin/time -v reports the peak memory of the build for the README.
  ( cd "$build_dir" && GOFLAGS=-mod=readonly CGO_ENABLED=0 /usr/bin/time -v -o "$dest/build-stats.txt" \
      go build -trimpath -ldflags "-s -w -X $symbol=$version" -o "$tmp" . )
  mv "$tmp" "$bin"
  echo "$want" > "$dest/.services"
  [[ "$build_dir" == "$src" ]] || rm -rf "$build_dir"
  log "hashicorp/$name $version: built in $(( $(date +%s) - start )) s, peak RSS $(awk -F': ' '/Maximum resident/ {printf "%d MiB", $2/1024}' "$dest/build-stats.txt")"
done
