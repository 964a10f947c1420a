#!/usr/bin/env bash
# Generate (default) or check (--check) the terraform-docs block of every README:
# the root module, modules/*, examples/*. One directory at a time, so --check names
# every stale README, not just the first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tfdocs="$root/.venv/bin/terraform-docs"
[[ -x "$tfdocs" ]] || { echo "error: $tfdocs not found: run make bootstrap" >&2; exit 1; }
args=()
[[ "${1:-}" == "--check" ]] && args=(--output-check)
cd "$root"
stale=0
for dir in . modules/* examples/*; do
  [[ -f "$dir/main.tf" ]] || continue
  if ! "$tfdocs" -c .terraform-docs.yml "${args[@]}" "$dir" >/dev/null 2>"$root/.tfdocs.err"; then
    sed 's/^/  /' "$root/.tfdocs.err" >&2
    stale=1
  fi
done
rm -f "$root/.tfdocs.err"
if [[ ${#args[@]} -gt 0 && $stale -ne 0 ]]; then
  echo "error: README tables are stale: run make tf-docs" >&2
  exit 1
fi
exit $stale
