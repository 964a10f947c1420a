#!/usr/bin/env bash
# Checks that Node.js and npm are installed and Node is at least MIN_VERSION; on
# failure prints one line saying what to install and exits 1.
#   The test suite runs asl-validator and iam-simulate on Node; npm installs them.
#   An older Node installs them and fails later, inside a test, with a syntax error.
# Usage: scripts/require-node.sh MIN_VERSION   (for example 20.16)
set -euo pipefail
if [[ "${1:-}" == -h || "${1:-}" == --help ]]; then
  sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
min=${1:?usage: require-node.sh MIN_VERSION}
install="install Node.js $min or later with npm (https://nodejs.org/en/download), or put it first on PATH"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "error: node or npm not found; the test suite runs asl-validator and iam-simulate: $install" >&2
  exit 1
fi
found=$(node --version 2>/dev/null || true)
found=${found#v}
if [[ ! "$found" =~ ^[0-9]+(\.[0-9]+)*$ ]]; then
  echo "error: 'node --version' printed '$found', not a version; $install" >&2
  exit 1
fi
lowest=$(printf '%s\n%s\n' "$min" "$found" | sort -V | head -1)
if [[ "$lowest" != "$min" ]]; then
  echo "error: Node.js $found at $(command -v node) is older than $min, the lowest that asl-validator's locked dependencies declare; $install" >&2
  exit 1
fi
