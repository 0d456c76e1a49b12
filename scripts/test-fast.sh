#!/usr/bin/env bash
# The fast tier, for the edit-test loop: the unit tier (no I/O) and the integration tier (an
# in-process gateway) on SQLite only, with no PostgreSQL, browser or child process. `npm test`
# (CI's command) stays the full suite, with both databases and the process tier; this never
# replaces it. The tiers are folders, so a new or renamed file is in its tier by where it lives.
# The files run in shards, as in the full suite (scripts/test-shards.sh).
#   npm run test:fast
set -euo pipefail
cd "$(dirname "$0")/.."
export WAGW_TEST_DIALECTS=sqlite
# The request fuzzer's lighter round for the edit loop (2,000, the least that still checks every answer turns up); the full suite runs 5,000 per database.
export WAGW_FUZZ_RUNS="${WAGW_FUZZ_RUNS:-2000}"
export WAGW_SECRET_KEY="${WAGW_SECRET_KEY:-7e57000000000000000000000000000000000000000000000000000000007e57}"
# Its shards are dealt by its own last times (SQLite only), where it has them. Three processes
# with four files side by side in each kept both cores busiest: 22-25 s against 28-30 s for six
# processes of one file at a time, and a fifth less CPU, as each process loads the modules once.
export WAGW_SHARD_TIMES=test-artifacts/file-times-fast.md
export WAGW_TEST_SHARDS="${WAGW_TEST_SHARDS:-3}"
export WAGW_SHARD_CONCURRENCY="${WAGW_SHARD_CONCURRENCY:-4}"
mapfile -t files < <(find test/unit test/integration -name '*.test.ts' | sort)
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
# shellcheck source=scripts/test-shards.sh
source scripts/test-shards.sh
status=0
run_shards dot "$logs" "${files[@]}" || status=1
# Its own file times, which deal out the next run's shards when no full run has left its own.
mkdir -p test-artifacts
node scripts/file-times-merge.mjs test-artifacts/file-times-fast.md "$logs"/*.times.md
exit "$status"
