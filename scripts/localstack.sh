#!/usr/bin/env bash
# Start, stop or check LocalStack in-process on loopback (no Docker), with this
# project's plugins (DynamoDB on moto, Lambda as local processes, Redshift Data
# API on DuckDB). A thin wrapper over `sfn-patterns localstack ...`.
#   scripts/localstack.sh start [--port 4566]   # prints the endpoint once healthy
#   scripts/localstack.sh start --stock PORT    # stock LocalStack 4.14.0: no fixes or emulations
#   scripts/localstack.sh status [--endpoint URL]
#   scripts/localstack.sh stop [--stock PORT]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# Without a venv, the demo's bootstrap: LocalStack and its plugins, Terraform and the
# providers, with no Go, npm, root or checkers (make test's full bootstrap adds those).
[[ -x "$root/.venv/bin/sfn-patterns" ]] || bash "$root/scripts/bootstrap.sh" --demo
cmd=${1:-}
case "$cmd" in
  start|stop) shift; exec "$root/.venv/bin/sfn-patterns" localstack "$cmd" --state-dir "$root/.localstack" "$@" ;;
  status) shift; exec "$root/.venv/bin/sfn-patterns" localstack status "$@" ;;
  *) echo "usage: $0 start|stop|status [options]" >&2; exit 2 ;;
esac
