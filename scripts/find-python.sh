#!/usr/bin/env bash
# Print the path of a Python 3.13 interpreter for the development environment (the
# LocalStack harness needs 3.13: LocalStack 4.10 and later import only there).
# Uses $PYTHON when set (and only it); otherwise looks for python3.13 on PATH, then pyenv's and uv's installs.
# Exits 1 with a one-line hint when there is none.
set -euo pipefail
want=3.13
works() { "$1" -c "import sys; sys.exit(sys.version_info[:2] != (3, 13))" >/dev/null 2>&1; }
candidates=()
if [[ -n "${PYTHON:-}" ]]; then
  candidates+=("$PYTHON")  # the caller's choice, and only it
else
  candidates+=(python3.13 python3)
  pyenv_root=${PYENV_ROOT:-$HOME/.pyenv}
  for dir in "$pyenv_root"/versions/3.13.* "$HOME"/.local/share/uv/python/cpython-3.13.*; do
    [[ -x "$dir/bin/python3.13" ]] && candidates+=("$dir/bin/python3.13")
  done
fi
for c in "${candidates[@]}"; do
  path=$(command -v "$c" 2>/dev/null || true)
  if [[ -n "$path" ]] && works "$path"; then
    echo "$path"
    exit 0
  fi
done
if [[ -n "${PYTHON:-}" ]]; then
  echo "error: PYTHON=$PYTHON is not a Python $want; unset it or point it at one" >&2
else
  echo "error: no Python $want found; install one (pyenv install 3.13, uv python install 3.13, or apt-get install python3.13) or set PYTHON=/path/to/python3.13" >&2
fi
exit 1
