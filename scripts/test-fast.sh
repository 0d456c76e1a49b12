#!/usr/bin/env bash
# The fast tier, for the edit-test loop: domain, config and in-process tests on SQLite only, with
# no PostgreSQL, browser or child processes. `npm test` (CI's command) stays the full suite; this
# never replaces it.
#   npm run test:fast
set -euo pipefail
cd "$(dirname "$0")/.."
export WAGW_TEST_DIALECTS=sqlite
export WAGW_SECRET_KEY="${WAGW_SECRET_KEY:-7e57000000000000000000000000000000000000000000000000000000007e57}"

# Whole folders of in-process tests, minus the files that start processes, drive a browser, open
# PostgreSQL by name, or exist to run long (fuzzing over sockets, crash rounds).
mapfile -t files < <(
  find test/domain test/accounts test/http test/dashboard test/webhooks test/store test/engines test/config.test.ts -name '*.test.ts' | sort |
    grep -v -x -F -f scripts/test-fast.exclude
)
exec node --import tsx --test --test-concurrency=2 --test-reporter=dot "${files[@]}"
