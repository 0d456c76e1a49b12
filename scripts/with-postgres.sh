#!/usr/bin/env bash
# Runs a command with WAGW_TEST_POSTGRES_URL pointing at a throwaway PostgreSQL (see
# scripts/postgres.sh), unless one is already given. Used by the benchmarks.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${WAGW_TEST_POSTGRES_URL:-}" ]; then
  # shellcheck source=scripts/postgres.sh
  source scripts/postgres.sh
  start_throwaway_postgres
  trap stop_throwaway_postgres EXIT
fi
"$@"
